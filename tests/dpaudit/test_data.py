import gzip

import numpy as np
import pytest

from dpaudit import data


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
    # /work/shared/data/README.md: 17,632 items, 92,834 pairs, top count 611,
    # count at rank 10 / 100 = 399 / 124
    h = data.load_histogram("lastfm")
    s = np.sort(h)[::-1]
    assert (h.size, int(h.sum()), int(s[0]), int(s[9]), int(s[99])) == (17632, 92834, 611, 399, 124)
