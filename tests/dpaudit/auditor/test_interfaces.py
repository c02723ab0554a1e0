"""``dpaudit.auditor.interfaces``: the roles as Protocols, met by the sources and families."""

import ast
from collections import Counter
from pathlib import Path

import numpy as np

import dpaudit.auditor.interfaces as interfaces
from dpaudit.auditor import LocalExecutor, PairSource, SampleSource
from dpaudit.auditor.interfaces import ChosenEvent, Tally
from dpaudit.auditor.planning.options import AuditOptions
from dpaudit.auditor.run.live import LiveSource
from dpaudit.neighbours.candidates import Family, default_families
from mechanisms import AddRemoveUser, GumbelTopK


def test_a_tally_is_a_counter_and_its_size():
    tally = Tally(Counter({(0,): 3, (1,): 2}), 5)
    counter, n = tally
    assert n == sum(counter.values()) == tally.n
    assert tally == (Counter({(0,): 3, (1,): 2}), 5)


def test_a_chosen_event_names_its_fields():
    chosen = ChosenEvent("pair", "oriented", "event")
    assert (chosen.pair, chosen.oriented, chosen.event) == ("pair", "oriented", "event")


def test_the_live_source_is_a_sample_source():
    mech = GumbelTopK(k=2, epsilon=1.0)
    executor = LocalExecutor(mech, 1, 1000)
    try:
        source = LiveSource(AuditOptions(samples=10_000, seed=1).plan(), executor, mech)
        assert isinstance(source, SampleSource)
        tallies = source.draw("select", 0, [(3, 1, 0)], 200)
        assert set(tallies) == {(3, 1, 0)}
        assert isinstance(tallies[(3, 1, 0)], Tally) and tallies[(3, 1, 0)].n == 200
        assert source.samples >= 200
    finally:
        executor.close()


def test_what_lacks_a_draw_is_not_a_sample_source():
    class NoDraw:
        width = 1
        value_width = 0
        samples = 0
        description = "x"

        def raw(self, phase, round_, histograms, per_histogram):
            return []

    assert not isinstance(NoDraw(), SampleSource)


def test_families_are_pair_sources():
    family = Family("one", lambda rng: [], targeted=True)
    assert isinstance(family, PairSource)
    defaults = default_families(AddRemoveUser(), 4)
    for member in defaults.members:
        assert isinstance(member, PairSource)
        assert member.pairs(np.random.default_rng(0)) is not None


def test_the_module_imports_nothing_of_dpaudit_at_run_time():
    tree = ast.parse(Path(interfaces.__file__).read_text())
    runtime = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    modules = {alias.name for n in runtime if isinstance(n, ast.Import) for alias in n.names}
    modules |= {n.module or "" for n in runtime if isinstance(n, ast.ImportFrom) if n.level == 0}
    assert not any(n.level for n in runtime if isinstance(n, ast.ImportFrom))
    assert not {m for m in modules if m.split(".")[0] in ("dpaudit", "mechanisms", "numpy")}
