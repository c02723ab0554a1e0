"""Forgeries of three genuine audit results, as a second reviewer would try them.

``real`` is the JSON of ``dpaudit audit GumbelTopK --k 2 --epsilon 1`` (claim ε = 2; at
these small budgets INCONCLUSIVE: some confirmed event lacks power, ``AuditResult.event_power``), ``broken`` of ``dpaudit audit catalog:joint-no-half`` (VIOLATION), ``refined`` of
the first with ``--refine`` (INCONCLUSIVE). Each forgery is a function of a genuine dict
returning a forged dict; ``DROPPED`` names the ones that only leave confirmed witnesses out
of a consistent file (which only a rerun sees). Where a forger would keep the file
self-consistent (claims, dropped witnesses, edited hits), every derived field is recomputed
with dpaudit's own functions; the level forgeries (``LEVEL_FORGERIES``) recompute them at
the looser level the edit would have bought from a recheck that read the level off the file.

    python tests/forgeries.py [SAMPLES]   # the table: forgery -> recheck, recheck --rerun
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from pathlib import Path

from dpaudit.auditor.values.outcome_events import event_from_dict

#: Sizes of the genuine audits (small: the fixture of tests/dpaudit/test_recheck.py).
SAMPLES = 150_000
REAL = ["audit", "GumbelTopK", "--k", "2", "--epsilon", "1", "--seed", "3", "--no-progress"]
BROKEN = ["audit", "catalog:joint-no-half", "--seed", "3", "--no-progress"]
REFINED = [*REAL, "--refine"]


def genuine(folder: Path, samples: int = SAMPLES) -> dict[str, Path]:
    """Write ``real.json``, ``broken.json`` and ``refined.json`` into ``folder`` with the CLI;
    their paths."""
    paths = {}
    for name, argv, status in (("real", REAL, 3), ("broken", BROKEN, 1), ("refined", REFINED, 3)):
        path = folder / f"{name}.json"
        got, _ = run_cli([*argv, "--samples", str(samples), "--json", str(path)])
        if got != status:
            raise RuntimeError(f"the genuine {name} audit exited {got}, expected {status}")
        paths[name] = path
    return paths


def consistent(data: dict, epsilon: float | None = None, keep=None) -> dict:
    """``data`` with claim ε (and kept witnesses) changed, every derived field recomputed."""
    from dpaudit.consistency import recomputed_result
    from dpaudit.provenance import relation_from_dict
    from mechanisms import PrivacyClaim

    data = copy.deepcopy(data)
    if keep is not None:
        data["witnesses"] = [w for w in data["witnesses"] if keep(w)]
        data["events_confirmed"] = len(data["witnesses"])
    relation = relation_from_dict(data["evidence"]["relation"])
    claim = PrivacyClaim(
        float(data["claim"]["epsilon"] if epsilon is None else epsilon),
        float(data["claim"]["delta"]),
        relation,
    )
    rebuilt, level, _ = recomputed_result(data, claim, relation)
    forged = json.loads(json.dumps(dict(rebuilt.to_dict(), seconds=data["seconds"])))
    looks = forged["evidence"].get("confirmation_looks")
    if looks is not None:  # the level of the looks' bounds, as the options now give it
        looks["alpha_each_look"] = level.alpha_each
    return forged


def at_level(data: dict, level: float) -> dict:
    """``data`` with every derived field recomputed at ``level`` (the forger's choice)."""
    from dpaudit.auditor import AuditResult
    from dpaudit.consistency import result_at_level
    from dpaudit.provenance import relation_from_dict
    from mechanisms import PrivacyClaim

    relation = relation_from_dict(data["evidence"]["relation"])
    claim = PrivacyClaim(float(data["claim"]["epsilon"]), float(data["claim"]["delta"]), relation)
    rebuilt = result_at_level(AuditResult.from_dict(data), level, claim, relation)
    forged = json.loads(json.dumps(dict(rebuilt.to_dict(), seconds=data["seconds"])))
    looks = forged["evidence"].get("confirmation_looks")
    if looks is not None:
        looks["alpha_each_look"] = level
    return forged


def plan_level(data: dict, in_looks: bool = True) -> float:
    """``alpha_each`` of the plan the file's options give, over its looks when ``in_looks``."""
    from dpaudit.auditor.planning.plan import AuditPlan

    options = data["evidence"]["options"]
    plan = AuditPlan(
        samples=int(options["samples"]),
        seed=0,
        alpha=float(data["alpha"]),
        keep=int(options["keep"]),
        events_per_pair=int(options["events_per_pair"]),
        looks=int(options["looks"]),
    )
    each = plan.alpha_each(int(data["pairs_screened"]))
    return each / plan.looks if in_looks else each


def _looks_deleted(data):
    # Format 1's recheck split the level over the looks only when this record was there.
    data = copy.deepcopy(data)
    del data["evidence"]["confirmation_looks"]
    return at_level(data, plan_level(data, in_looks=False))


def _refine_set(data):
    # Format 1's recheck bounded the one witness of a file with refine set at alpha / 2.
    data = copy.deepcopy(data)
    data["evidence"]["options"]["refine"] = True
    del data["evidence"]["confirmation_looks"]
    data["witnesses"] = [data["epsilon_witness"]]
    return at_level(data, data["alpha"] / 2)


def _refine_set_with_a_record(data):
    # As above, with a refine record made from the file's own witnesses and looks, and the
    # options' budget made to leave exactly the witness's samples to a "refined draw".
    original = copy.deepcopy(data)
    data = _refine_set(data)
    w = data["witnesses"][0]
    spent = int(original["samples"]) - 2 * w["samples_p"]
    data["evidence"]["options"]["samples"] = data["samples"] = spent + 2 * w["samples_p"]
    data["evidence"]["refine"] = {
        "samples": spent,
        "events_confirmed": original["events_confirmed"],
        "epsilon_lower": original["epsilon_lower"],
        "delta_lower": original["delta_lower"],
        "violation": original["violation"],
        "chosen": w,
        "witnesses": original["witnesses"],
        "confirmation_looks": original["evidence"]["confirmation_looks"],
        "samples_per_side": w["samples_p"],
    }
    return data


def _refine_record_dropped(data):
    data = copy.deepcopy(data)
    del data["evidence"]["refine"]
    return data


def _refine_flag_cleared(data):
    data = copy.deepcopy(data)
    data["evidence"]["options"]["refine"] = False
    return at_level(data, plan_level(data))


def _refine_dropped_entirely(data):
    # Flag and record gone, no looks record: format 1's recheck gave it alpha_each.
    data = copy.deepcopy(data)
    data["evidence"]["options"]["refine"] = False
    del data["evidence"]["refine"]
    return at_level(data, plan_level(data, in_looks=False))


def _option(name: str, value, sizes=None):
    def forge(data):
        data = copy.deepcopy(data)
        data["evidence"]["options"][name] = value
        if sizes is not None:
            data["evidence"]["confirmation_looks"]["sizes"] = sizes(data)
        return at_level(data, plan_level(data))

    return forge


def _one_pair_screened(data):
    # The level counts min(keep, pairs screened) pairs: one pair's witnesses kept, one screened.
    data = copy.deepcopy(data)
    first = {tuple(data["witnesses"][0]["counts"]), tuple(data["witnesses"][0]["counts2"])}
    data["witnesses"] = [
        w for w in data["witnesses"] if {tuple(w["counts"]), tuple(w["counts2"])} == first
    ]
    data["pairs_screened"] = 1
    return at_level(data, plan_level(data))


def _largest_witness(data) -> list[int]:
    return [max(w["samples_p"] for w in data["witnesses"])]


def _edit_witness(data: dict, index: int, edit) -> dict:
    """Apply ``edit`` to witness ``index`` and to the headline copies of it."""
    data = copy.deepcopy(data)
    original = copy.deepcopy(data["witnesses"][index])
    for key in ("epsilon_witness", "delta_witness"):
        if data[key] == original:
            edit(data[key])
    edit(data["witnesses"][index])
    return data


def _every_witness(data: dict, edit) -> dict:
    data = copy.deepcopy(data)
    for w in data["witnesses"] + [data["epsilon_witness"], data["delta_witness"]]:
        if w is not None:
            edit(w)
    return data


def _set(**values):
    def forge(data):
        return dict(copy.deepcopy(data), **values)

    return forge


def most_separating(data: dict) -> int:
    """The witness whose two histograms differ most on its event (a swap there shows)."""
    rates = [
        abs(w["hits_p"] / w["samples_p"] - w["hits_q"] / w["samples_q"]) for w in data["witnesses"]
    ]
    return max(range(len(rates)), key=rates.__getitem__)


def _swap(w):
    w["counts"], w["counts2"] = w["counts2"], w["counts"]


def _other_event(w):
    w["event"] = {"kind": "outcomes", "outcomes": [[0, 1]]}
    w["event_text"] = event_from_dict(w["event"]).describe(limit=None)


def _more_hits(w):
    w["hits_p"] = min(w["samples_p"], w["hits_p"] + 50)


def _weaker(w):
    w["p_low"] /= 3


def _inflated(w):
    w["p_low"] = min(1.0, 3 * w["p_hat"])


def _seed(data):
    data = copy.deepcopy(data)
    data["seed"] = data["evidence"]["seed"] = 4
    return data


def _spec(data):
    data = copy.deepcopy(data)
    data["evidence"]["mechanism_spec"]["params"]["epsilon"] = 0.5
    return data


def _boosted(data):
    data = copy.deepcopy(data)
    for w in data["witnesses"]:
        w["hits_p"] = min(w["samples_p"], int(w["hits_p"] * 1.5))
    return consistent(data)


def _violates(w) -> bool:
    return w["epsilon_lower"] > 1.0 and w["delta_lower"] > 0.0


#: name -> (genuine file, forgery)
FORGERIES = {
    "claim lowered to 1 (bounds recomputed)": ("real", lambda d: consistent(d, epsilon=1.0)),
    "claim raised to 3 (bounds recomputed)": ("broken", lambda d: consistent(d, epsilon=3.0)),
    "violation flag set": ("real", _set(violation=True)),
    "violation flag cleared": ("broken", _set(violation=False)),
    "verdict set to violation": ("real", _set(verdict="violation", exit_status=1)),
    "verdict set to passed": ("broken", _set(verdict="passed", exit_status=0)),
    "violating witnesses dropped": (
        "broken",
        lambda d: consistent(d, keep=lambda w: not _violates(w)),
    ),
    "all witnesses dropped": ("broken", lambda d: consistent(d, keep=lambda w: False)),
    "every p_low divided by 3": ("broken", lambda d: _every_witness(d, _weaker)),
    "hits edited, bounds left alone": ("real", lambda d: _every_witness(d, _more_hits)),
    "hits edited, bounds recomputed": ("broken", _boosted),
    "seed changed": ("real", _seed),
    "forged bounds (p_low = 3 p_hat)": ("broken", lambda d: _every_witness(d, _inflated)),
    "swapped pair": ("broken", lambda d: _edit_witness(d, most_separating(d), _swap)),
    "edited event": ("broken", lambda d: _edit_witness(d, 1, _other_event)),
    "edited mechanism spec": ("real", _spec),
}

#: Forgeries of the level of the bounds: every derived field recomputed at the level the edit
#: would have bought. name -> (genuine file, forgery)
LEVEL_FORGERIES = {
    "confirmation_looks deleted": ("real", _looks_deleted),
    "refine set, one witness kept": ("real", _refine_set),
    "refine set, with a made-up refine record": ("broken", _refine_set_with_a_record),
    "refine record dropped": ("refined", _refine_record_dropped),
    "refine flag cleared": ("refined", _refine_flag_cleared),
    "refine flag and record dropped": ("refined", _refine_dropped_entirely),
    "looks lowered to 1": ("real", _option("looks", 1)),
    "looks lowered to 1, sizes rewritten": ("broken", _option("looks", 1, _largest_witness)),
    "keep lowered to 1": ("broken", _option("keep", 1)),
    "events_per_pair lowered to 1": ("broken", _option("events_per_pair", 1)),
    "pairs_screened lowered to 1": ("broken", _one_pair_screened),
}
FORGERIES.update(LEVEL_FORGERIES)

#: Forgeries only a rerun can see: confirmed witnesses left out of a consistent file.
DROPPED = ("violating witnesses dropped", "all witnesses dropped")


def forge(name: str, files: dict[str, Path], folder: Path) -> Path:
    """Write forgery ``name`` of the genuine ``files`` into ``folder``; its path."""
    which, make = FORGERIES[name]
    data = json.loads(files[which].read_text(encoding="utf-8"))
    path = folder / (
        name.replace(" ", "_").replace("/", "_").replace("(", "").replace(")", "") + ".json"
    )
    path.write_text(json.dumps(make(data), indent=1), encoding="utf-8")
    return path


def run_cli(argv) -> tuple[int, str]:
    """``(exit status, last line of stderr, else of stdout)`` of ``dpaudit ARGV``."""
    import contextlib
    import io

    from dpaudit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    lines = (err.getvalue() or out.getvalue()).strip().splitlines()
    return status, (lines[-1] if lines else "")


def table(samples: int = SAMPLES) -> str:
    """Markdown table: forgery -> exit of ``recheck``, of ``recheck --rerun``, messages."""
    rows = [
        "| forgery | file | recheck | --sampled | --rerun | recheck says | --rerun says |",
        "|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = genuine(folder, samples)
        cases = [("genuine", files[which], which) for which in files]
        cases += [(name, forge(name, files, folder), FORGERIES[name][0]) for name in FORGERIES]
        for name, path, which in cases:
            plain, said = run_cli(["recheck", str(path), "--seed", "1"])
            sampled, _ = run_cli(["recheck", str(path), "--sampled", "--seed", "1"])
            again, said_again = run_cli(["recheck", "--rerun", str(path)])
            rows.append(
                f"| {name} | {which} | {plain} | {sampled} | {again} | {said[:110]} "
                f"| {said_again[:110]} |"
            )
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(int(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES))
