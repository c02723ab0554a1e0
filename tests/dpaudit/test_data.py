import gzip

import numpy as np
import pytest

from dpaudit import data
from mechanisms import top_counts


def _write(tmp_path, name, text):
    folder = tmp_path / name
    folder.mkdir()
    with gzip.open(folder / "pairs.tsv.gz", "wt") as handle:
        handle.write(text)


def test_load_histogram_counts_distinct_users_per_item(tmp_path, monkeypatch):
    _write(tmp_path, "toy", "user\titem\n0\t10\n1\t10\n1\t10\n2\t5\n0\t7\n")
    monkeypatch.setenv("DPAUDIT_DATA", str(tmp_path))
    # items 5, 7, 10 -> ids 0, 1, 2; the duplicated (1, 10) row counts once
    assert data.load_histogram("toy").tolist() == [1, 1, 2]
    assert data.available_datasets() == ["toy"]


def test_missing_data_set_names_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="DPAUDIT_DATA"):
        data.load_histogram("nope")
    with pytest.raises(ValueError, match="name"):
        data.load_histogram("../etc")


def test_bad_header_is_rejected(tmp_path, monkeypatch):
    _write(tmp_path, "bad", "a\tb\n1\t2\n")
    monkeypatch.setenv("DPAUDIT_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="header"):
        data.load_histogram("bad")


@pytest.mark.skipif("lastfm" not in data.available_datasets(), reason="shared data not present")
def test_lastfm_matches_the_data_readme():
    # ../shared/data/README.md: 17,632 items, 92,834 pairs, top count 611,
    # count at rank 10 / 100 = 399 / 124
    h = data.load_histogram("lastfm")
    s = np.sort(h)[::-1]
    assert (h.size, int(h.sum()), int(s[0]), int(s[9]), int(s[99])) == (17632, 92834, 611, 399, 124)


def test_load_top_counts_by_sql_equals_the_numpy_route_with_ties_and_duplicates(
    tmp_path, monkeypatch
):
    # items 70 and 9 tie at 2 users (user 1 listed twice for item 70: one distinct pair);
    # relabelled ids: 9 -> 0, 30 -> 1, 70 -> 2, 500 -> 3; the tie goes to the lower id.
    _write(
        tmp_path,
        "tiny",
        "user\titem\n1\t70\n1\t70\n2\t70\n3\t9\n4\t9\n5\t500\n5\t30\n6\t30\n7\t30\n",
    )
    monkeypatch.setenv("DPAUDIT_DATA", str(tmp_path))
    top = data.load_top_counts("tiny", 3)
    assert top.items.tolist() == [1, 0, 2]
    assert top.counts.tolist() == [3, 2, 2]
    assert top.domain_size == 4
    expected = top_counts(data.load_histogram("tiny"), 3)
    assert top.items.tolist() == expected.items.tolist()


@pytest.mark.skipif(
    "amazon-beauty" not in data.available_datasets(), reason="shared data not present"
)
def test_load_top_counts_on_real_data_with_a_tie_at_the_top():
    # amazon-beauty's two largest counts tie at 539 (shared/data/README.md)
    top = data.load_top_counts("amazon-beauty", 101)
    expected = top_counts(data.load_histogram("amazon-beauty"), 101)
    assert top.counts[:2].tolist() == [539, 539]
    assert top.items.tolist() == expected.items.tolist()
    assert top.counts.tolist() == expected.counts.tolist()
    assert top.domain_size == expected.domain_size == 57289
