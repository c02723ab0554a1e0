"""Refuse, before any sampling, an audit whose size this machine cannot hold.

The estimate is a lower bound made of the largest single allocations an audit makes,
from the options alone:

* the neighbour moves of the default families: ``dpaudit.neighbours.pairs`` builds each
  single-item move as a row of ``numpy.eye(d)``, ``8 d²`` bytes for a domain of ``d`` items;
* one chunk of outcomes: ``min(samples, chunk) × width`` int64 entries (the auditor samples
  ``chunk`` rows per call, ``dpaudit.auditor.sources.sampling.DEFAULT_CHUNK``).

Refusing costs a product of a few integers; running into the limit cost 90 s and a
``MemoryError`` (``GumbelTopK --k 100000000``: 71 PiB).
"""

from __future__ import annotations

import os

from .errors import UsageError

__all__ = ["audit_domain", "check_memory", "physical_memory", "readable_bytes"]

#: Rows per sampling call of the auditor (dpaudit.auditor.sources.sampling.DEFAULT_CHUNK; not
#: imported here so a refusal stays cheap).
CHUNK_ROWS = 250_000


def physical_memory() -> int | None:
    """Bytes of RAM of this machine (None when the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def readable_bytes(n: float) -> str:
    """``7.9e16`` -> ``'71 PiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit in ("B", "PiB") else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _public_int(mech, name: str) -> int | None:
    value = getattr(mech, name, None)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def audit_domain(mech, domain_size, counts) -> tuple[int, str]:
    """The domain size of the default histograms and the option that sets it.

    As the auditor chooses it: ``--domain-size``, else the length of ``--counts``, else
    ``kbar + 3`` or ``max(5, k + 3)`` from the mechanism, else 5.
    """
    if domain_size is not None:
        return int(domain_size), "--domain-size"
    if counts is not None:
        return len(counts), "--counts"
    for name in ("kbar", "kbar_max"):
        value = _public_int(mech, name)
        if value is not None:
            return value + 3, f"--{name.replace('_', '-')}"
    k = _public_int(mech, "k")
    if k is not None:
        return max(5, k + 3), "--k"
    return 5, "the default domain"


def check_memory(mech, *, domain_size, counts, samples: int, memory: int | None = None) -> None:
    """Raise a UsageError naming the option when the audit cannot fit in ``memory`` bytes."""
    memory = physical_memory() if memory is None else memory
    if memory is None:
        return
    d, option = audit_domain(mech, domain_size, counts)
    try:
        width = int(mech.width)
    except Exception:  # a width that cannot be read is the auditor's to report
        width = 1
    needs = {
        f"the neighbour moves of {d:,} items (8·d² bytes)": 8.0 * d * d,
        f"one chunk of {min(samples, CHUNK_ROWS):,} outcomes of width {width:,}": 8.0
        * min(samples, CHUNK_ROWS)
        * max(width, 1),
    }
    what, size = max(needs.items(), key=lambda item: item[1])
    if size <= memory:
        return
    if what.startswith("the neighbour"):
        largest = int((memory / 8) ** 0.5)
        fix = f"use a domain of at most {largest:,} items"
    else:
        fix = "use a smaller k or width"
    name = option if option.startswith("--") else "the domain"
    raise UsageError(
        f"{name}: the audit needs at least {readable_bytes(size)} of memory for {what}; "
        f"this machine has {readable_bytes(memory)}: {fix}"
    )
