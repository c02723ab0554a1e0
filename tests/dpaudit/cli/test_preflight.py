"""``dpaudit.cli.preflight``: refuse an audit too large for the machine, naming the option."""

from types import SimpleNamespace

import pytest

from dpaudit.cli.errors import UsageError
from dpaudit.cli.preflight import (
    CHUNK_ROWS,
    audit_domain,
    check_memory,
    physical_memory,
    readable_bytes,
)


def test_readable_bytes_picks_the_largest_unit_below_1024():
    assert readable_bytes(0) == "0 B"
    assert readable_bytes(1023) == "1,023 B"
    assert readable_bytes(1024) == "1 KiB"
    assert readable_bytes(1.5 * 1024**2) == "1.5 MiB"
    assert readable_bytes(3 * 1024**3) == "3 GiB"
    # Past PiB there is no larger unit: the count of PiB grows instead.
    assert readable_bytes(71 * 1024**5) == "71 PiB"
    assert readable_bytes(5000 * 1024**5) == "5,000 PiB"


def test_physical_memory_is_positive_where_the_platform_says():
    memory = physical_memory()
    assert memory is None or memory > 0


@pytest.mark.parametrize(
    "mech, domain_size, counts, expected",
    [
        (SimpleNamespace(k=2), 9, [1, 2], (9, "--domain-size")),
        (SimpleNamespace(k=2), None, [1, 2, 3, 4], (4, "--counts")),
        (SimpleNamespace(k=2, kbar=6), None, None, (9, "--kbar")),
        (SimpleNamespace(k=2, kbar_max=7), None, None, (10, "--kbar-max")),
        (SimpleNamespace(k=1), None, None, (5, "--k")),  # max(5, k + 3)
        (SimpleNamespace(k=4), None, None, (7, "--k")),
        (SimpleNamespace(), None, None, (5, "the default domain")),
        # A bool is not a size, nor is a float.
        (SimpleNamespace(k=True, kbar=2.0), None, None, (5, "the default domain")),
    ],
)
def test_audit_domain_follows_the_auditors_order(mech, domain_size, counts, expected):
    assert audit_domain(mech, domain_size, counts) == expected


def test_a_domain_that_fits_exactly_passes():
    mech = SimpleNamespace(k=1, width=1)
    d = 1000
    check_memory(mech, domain_size=d, counts=None, samples=10, memory=8 * d * d)


def test_a_domain_one_item_too_large_is_refused_with_the_largest_that_fits():
    mech = SimpleNamespace(k=1, width=1)
    memory = 8 * 1000 * 1000
    with pytest.raises(UsageError) as caught:
        check_memory(mech, domain_size=1001, counts=None, samples=10, memory=memory)
    message = str(caught.value)
    assert message.startswith("--domain-size: the audit needs at least ")
    assert "the neighbour moves of 1,001 items" in message
    assert message.endswith("use a domain of at most 1,000 items")
    # ... and that largest domain does fit.
    check_memory(mech, domain_size=1000, counts=None, samples=10, memory=memory)


def test_the_option_named_is_the_one_that_set_the_domain():
    with pytest.raises(UsageError, match=r"^--kbar: "):
        check_memory(
            SimpleNamespace(kbar=997, width=1),
            domain_size=None,
            counts=None,
            samples=1,
            memory=8 * 999**2,
        )
    with pytest.raises(UsageError, match=r"^the domain: "):
        check_memory(
            SimpleNamespace(width=1), domain_size=None, counts=None, samples=1, memory=8 * 4 * 4
        )


def test_a_wide_outcome_is_refused_with_the_width_fix():
    mech = SimpleNamespace(k=1, width=10**9)
    with pytest.raises(
        UsageError,
        match=r"one chunk of 1,000 outcomes of width 1,000,000,000.*use a smaller k or width$",
    ):
        check_memory(mech, domain_size=5, counts=None, samples=1000, memory=10**9)


def test_a_chunk_is_at_most_chunk_rows_outcomes():
    width = 100
    memory = 8 * CHUNK_ROWS * width
    mech = SimpleNamespace(k=1, width=width)
    check_memory(mech, domain_size=5, counts=None, samples=10 * CHUNK_ROWS, memory=memory)
    with pytest.raises(UsageError, match=f"one chunk of {CHUNK_ROWS:,} outcomes"):
        check_memory(mech, domain_size=5, counts=None, samples=10 * CHUNK_ROWS, memory=memory - 1)


def test_an_unreadable_width_counts_as_one():
    class Broken:
        k = 1

        @property
        def width(self):
            raise RuntimeError("no width")

    check_memory(Broken(), domain_size=5, counts=None, samples=100, memory=8 * 100)
    with pytest.raises(UsageError):
        check_memory(Broken(), domain_size=5, counts=None, samples=101, memory=8 * 100)
