"""A battery of bad and odd inputs: each is refused before any work, in one line, naming it.

Every CLI case asserts: the exit status (2 usage error unless said), exactly one line on
stderr, no traceback, and a fragment of that line that names the argument (and, where it
matters, the fix). Every API case asserts the exception type and that its message names
the argument. Nothing here samples: a case that started working would be slow and is a bug.
"""

import json

import pytest

import mechanisms as M
from dpaudit.cli import main

GUMBEL = ["GumbelTopK", "--k", "2", "--epsilon", "1"]
FUNCTION = ["user_mechanisms:rnm_batched", "--width", "1"]
MISSING_DIR = "/nonexistent-dir-of-dpaudit-tests/out"

# (argv, status, fragment of the one stderr line)
CLI_CASES = [
    # -- the command itself
    ([], 2, "give a command"),
    (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    (["--bogus"], 2, "unknown option --bogus"),
    (["mechanisms", "--k", "3"], 2, "unknown option --k"),
    (["mechanisms", "extra"], 2, "unexpected argument 'extra'"),
    # -- audit: the budget and the statistics
    (["audit", "--samples", "0"], 2, "--samples: must be >= 1"),
    (["audit", "--samples", "-5"], 2, "--samples: must be >= 1"),
    (["audit", "--samples", "abc"], 2, "--samples: expected an integer"),
    (["audit", "--samples", "1.5"], 2, "--samples: expected a whole number"),
    (["audit", "--samples", "1e-3"], 2, "--samples: expected a whole number"),
    (["audit", "--samples", "nan"], 2, "--samples: expected a whole number"),
    (["audit", "--samples", "inf"], 2, "--samples: expected a whole number"),
    (["audit", "--samples", ""], 2, "--samples: expected an integer"),
    (["audit", "--samples"], 2, "--samples: expected one argument"),
    (["audit", "--alpha", "0"], 2, "--alpha: must lie in (0, 1)"),
    (["audit", "--alpha", "1"], 2, "--alpha: must lie in (0, 1)"),
    (["audit", "--alpha", "1.5"], 2, "--alpha: must lie in (0, 1)"),
    (["audit", "--alpha", "-0.1"], 2, "--alpha: must lie in (0, 1)"),
    (["audit", "--alpha", "abc"], 2, "--alpha: expected a number"),
    (["audit", "--alpha", "nan"], 2, "--alpha: expected a number"),
    (["audit", "--seed", "-1"], 2, "--seed: must be >= 0"),
    (["audit", "--seed", "abc"], 2, "--seed: expected an integer"),
    (["audit", "--seed", "1.5"], 2, "--seed: expected a whole number"),
    (["audit", "--workers", "0"], 2, "--workers: must be >= 1"),
    (["audit", "--workers", "-2"], 2, "--workers: must be >= 1"),
    (["audit", "--workers", "two"], 2, "--workers: expected an integer"),
    (["audit", "--power-factor", "0.5"], 2, "--power-factor: must be a finite number >= 1"),
    (["audit", "--power-factor", "0"], 2, "--power-factor: must be a finite number >= 1"),
    (["audit", "--power-factor", "inf"], 2, "--power-factor: must be a finite number >= 1"),
    (["audit", "--power-factor", "nan"], 2, "--power-factor: expected a number"),
    (["audit", "--power-factor", "x"], 2, "--power-factor: expected a number"),
    (["audit", "--values", "-1"], 2, "--values: must be >= 0"),
    (["audit", "--values", "many"], 2, "--values: expected an integer"),
    (["audit", "--width", "-1"], 2, "--width: must be >= 0"),
    # -- audit: the domain and the histograms
    (["audit", "--domain-size", "0"], 2, "--domain-size: must be >= 1"),
    (["audit", "--domain-size", "-3"], 2, "--domain-size: must be >= 1"),
    (["audit", "--domain-size", "ten"], 2, "--domain-size: expected an integer"),
    (["audit", "--domain-size", "100000000"], 2, "--domain-size: the audit needs at least"),
    (["audit", "--domain-size", "1e8"], 2, "PiB of memory"),
    (["audit", *GUMBEL, "--domain-size", "1"], 2, "--domain-size: 1 items, fewer than the k=2"),
    (["audit", "GumbelTopK", "--k", "100000000", "--epsilon", "1"], 2, "--k: the audit needs"),
    (
        [
            "audit",
            "LimitDomain",
            "--k",
            "3",
            "--kbar",
            "100000000",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
        ],
        2,
        "--kbar: the audit needs at least",
    ),
    (["audit", *GUMBEL, "--counts", "5"], 2, "--counts: 1 items, fewer than the k=2"),
    (["audit", "--counts", ""], 2, "--counts: empty histogram"),
    (["audit", "--counts", ","], 2, "--counts: empty histogram"),
    (["audit", "--counts", "a,b"], 2, "--counts: cannot read 'a,b'"),
    (["audit", "--counts", "1,-1,0"], 2, "--counts: counts must be >= 0"),
    (["audit", "--counts", "1.5,2"], 2, "--counts: cannot read '1.5,2'"),
    (
        ["audit", "--counts", "3,2,1", "--domain-size", "5"],
        2,
        "--counts has 3 items but --domain-size is 5",
    ),
    (["audit", "--pair", "1,2"], 2, "--pair wants 'C;C2'"),
    (["audit", "--pair", "1;2;3"], 2, "--pair wants 'C;C2'"),
    (["audit", "--pair", "a;b"], 2, "--pair: cannot read 'a'"),
    (["audit", "--pair", ";1"], 2, "--pair: empty histogram"),
    (["audit", "--pair", "1,0;1,0,0"], 2, "--pair: the two histograms of '1,0;1,0,0' have 2 and 3"),
    (["audit", "--pair", "1,-1;1,0"], 2, "--pair: counts must be >= 0"),
    (["audit", "--pair", "3,2,1,0;3,2,1,1", "--counts", "1,2,3,4,5"], 2, "--pair and --counts"),
    (["audit", "--restrict-to-given"], 2, "--restrict-to-given needs --counts or --pair"),
    # -- audit: the claim and the relation
    (["audit", "--claim", "1"], 2, "--claim wants EPS,DELTA"),
    (["audit", "--claim", "a,b"], 2, "--claim wants EPS,DELTA"),
    (["audit", "--claim", "1,0,0"], 2, "--claim wants EPS,DELTA"),
    (["audit", "--claim", "-1,0"], 2, "--claim: epsilon must be finite and >= 0"),
    (["audit", "--claim", "-.5,0"], 2, "--claim: epsilon must be finite and >= 0"),
    (["audit", "--claim", "inf,0"], 2, "--claim: epsilon must be finite and >= 0"),
    (["audit", "--claim", "nan,0"], 2, "--claim: epsilon must be finite and >= 0"),
    (["audit", "--claim", "1,1"], 2, "--claim: delta must lie in [0, 1)"),
    (["audit", "--claim", "1,-0.1"], 2, "--claim: delta must lie in [0, 1)"),
    (["audit", "--claim", "1,nan"], 2, "--claim: delta must lie in [0, 1)"),
    (["audit", "--claim=-1,0"], 2, "--claim: epsilon must be finite and >= 0"),
    (["audit", "--relation", "foo"], 2, "--relation: cannot read 'foo'"),
    (["audit", "--relation", "add-remove:x"], 2, "--relation: cannot read 'add-remove:x'"),
    (["audit", "--relation", "add-remove:0"], 2, "--relation: cannot read 'add-remove:0'"),
    (["audit", "--relation", "add-remove:-1"], 2, "--relation: cannot read 'add-remove:-1'"),
    (["audit", "--relation", "bounded-change:0"], 2, "--relation: cannot read"),
    (["audit", "--relation", "bounded-change:x"], 2, "--relation: cannot read"),
    # -- audit: output files
    (["audit", "--report", "r.txt"], 2, "--report: 'r.txt' has no .md or .html suffix"),
    (["audit", "--report", "report"], 2, "--report: 'report' has no .md or .html suffix"),
    (["audit", "--report", "r.pdf"], 2, "--report: 'r.pdf' has no .md or .html suffix"),
    (["audit", "--report", "-"], 2, "--report needs a file name"),
    (["audit", "--report", MISSING_DIR + ".md"], 2, "--report: cannot write"),
    (["audit", "--report", "/"], 2, "--report"),
    (["audit", "--json", MISSING_DIR + ".json"], 2, "--json: cannot write"),
    (["audit", "--json", "/"], 2, "--json: '/' is a directory"),
    (["audit", "--json", ""], 2, "--json: empty file name"),
    (["audit", "--resume", MISSING_DIR + ".duckdb"], 2, "--resume: cannot write"),
    # -- audit: executors
    (
        ["audit", "--resume", "a.duckdb", "--dask", "local:8"],
        2,
        "--resume works with local sampling only, not with --dask",
    ),
    (["audit", "--resume", "a.duckdb", "--scheduler", "tcp://h:8786"], 2, "not with --scheduler"),
    (
        ["audit", "--dask", "local:2", "--scheduler", "tcp://h:8786"],
        2,
        "give --dask or --scheduler, not both",
    ),
    (["audit", "--dask", "cloud"], 2, "--dask: expected local or local:N"),
    (["audit", "--dask", "local:0"], 2, "--dask: expected local or local:N"),
    (["audit", "--dask", "local:x"], 2, "--dask: expected local or local:N"),
    (["audit", "--dask", "local:2", "--workers", "4"], 2, "--workers applies to local sampling"),
    (["audit", "--timeout", "5"], 2, "--timeout applies to --command children only"),
    (["audit", "--timeout", "0"], 2, "--timeout: must be a finite number > 0"),
    (["audit", "--timeout", "-1"], 2, "--timeout: must be a finite number > 0"),
    # -- audit: naming the mechanism
    (["audit", "--sample", "5"], 2, "unknown option --sample (did you mean --samples?)"),
    (["audit", "--sampels", "5"], 2, "unknown option --sampels (did you mean --samples?)"),
    # A prefix of an option is offered that option, not the nearest by letters (--help).
    (["audit", "GumbelTopK", "--k", "2", "--eps", "1"], 2, "--eps (did you mean --epsilon?)"),
    (
        ["audit", "GumbelTopKK", "--k", "2"],
        2,
        "unknown mechanism 'GumbelTopKK' (did you mean GumbelTopK?)",
    ),
    (["audit", "gumbel", "--k", "2"], 2, "unknown mechanism 'gumbel'"),
    (["audit", "Nope"], 2, "unknown mechanism 'Nope'"),
    (["audit", "catalog:nope"], 2, "no catalog entry 'nope'"),
    (["audit", "catalog:em-non-monotone", "--k", "3"], 2, "catalog entries take no parameters"),
    (["audit", "GumbelTopK", "--k", "2"], 2, "GumbelTopK needs --epsilon"),
    (["audit", "GumbelTopK", "--k", "0", "--epsilon", "1"], 2, "--k must"),
    (["audit", "GumbelTopK", "--k", "abc", "--epsilon", "1"], 2, "--k: cannot read 'abc'"),
    (["audit", "GumbelTopK", "--k", "2.5", "--epsilon", "1"], 2, "--k: cannot read '2.5'"),
    (["audit", "GumbelTopK", "--k", "2", "--epsilon", "-1"], 2, "--epsilon must"),
    (["audit", "GumbelTopK", "--k", "2", "--epsilon", "nan"], 2, "--epsilon: cannot read 'nan'"),
    (["audit", "GumbelTopK", "--k", "2", "--epsilon", "abc"], 2, "--epsilon: cannot read 'abc'"),
    (["audit", "GumbelTopK", "--k", "2", "--epsilon", "1", "--kk", "3"], 2, "unknown option --kk"),
    (["audit", "GumbelTopK", "--epsilon", "1", "--k"], 2, "parameter --k needs a value"),
    (
        ["audit", "GumbelTopK", "--k", "2", "--epsilon", "1", "stray"],
        2,
        "expected --PARAM VALUE, got 'stray'",
    ),
    (
        ["audit", "LimitDomain", "--k", "2", "--kbar", "3", "--epsilon", "1", "--delta", "2"],
        2,
        "--delta must",
    ),
    (
        ["audit", "LimitDomain", "--k", "4", "--kbar", "3", "--epsilon", "1", "--delta", "1e-6"],
        2,
        "LimitDomain:",
    ),
    (["audit", "-x"], 2, "unknown option -x"),
    # -- audit: the user's own code
    (
        ["audit", "no_such_module_xyz:f", "--claim", "1,0", "--width", "1"],
        2,
        "cannot import 'no_such_module_xyz'",
    ),
    (
        ["audit", "user_mechanisms:nope", "--claim", "1,0", "--width", "1"],
        2,
        "'user_mechanisms' has no attribute 'nope'",
    ),
    (["audit", "user_mechanisms:", "--claim", "1,0"], 2, "expected package.module:attr"),
    (["audit", ":f", "--claim", "1,0"], 2, "expected package.module:attr"),
    (["audit", "user_mechanisms:np.pi"], 2, "is neither a mechanism nor a function"),
    (["audit", *FUNCTION], 2, "is a function: give --claim EPS,DELTA and --width N"),
    (
        ["audit", "user_mechanisms:rnm_batched", "--claim", "1,0"],
        2,
        "give --claim EPS,DELTA and --width N",
    ),
    (
        ["audit", "user_mechanisms:np.isscalar", "--claim", "1,0", "--width", "1"],
        2,
        "takes 1 arguments",
    ),
    (["audit", *FUNCTION, "--claim", "1,0", "--k", "2"], 2, "unknown option --k"),
    (
        ["audit", *FUNCTION, "--claim", "1,0", "--domain-size", "100000000"],
        2,
        "--domain-size: the audit needs",
    ),
    (
        ["audit", "--command", "sh x", "GumbelTopK"],
        2,
        "give a mechanism name or --command, not both",
    ),
    (["audit", "--command", "sh x"], 2, "--command needs --claim EPS,DELTA and --width N"),
    (
        ["audit", "--command", "sh x", "--claim", "1,0"],
        2,
        "--command needs --claim EPS,DELTA and --width N",
    ),
    (["audit", "--command", " ", "--claim", "1,0", "--width", "1"], 2, "--command: empty command"),
    # -- audit --from-samples
    (["audit", "--from-samples", "/nonexistent-plan-dir"], 2, "/nonexistent-plan-dir"),
    (
        ["audit", "--from-samples", "d", "--samples", "5"],
        2,
        "--from-samples takes --samples from DIR/plan.json",
    ),
    (["audit", "--from-samples", "d", "GumbelTopK"], 2, "--from-samples takes MECH"),
    (["audit", "--from-samples", "d", "--seed", "3"], 2, "--from-samples takes --seed"),
    (["audit", "--from-samples", "d", "--values", "2"], 2, "--from-samples takes --values"),
    (["audit", "--from-samples", "d", "--report", "r.txt"], 2, "--report: 'r.txt' has no .md"),
    # -- plan
    (["plan", *GUMBEL], 2, "the following arguments are required: --out"),
    (["plan", "--out", "pl", "--samples", "0", *GUMBEL], 2, "--samples: must be >= 1"),
    (["plan", "--out", "pl", "--keep", "0", *GUMBEL], 2, "--keep: must be >= 1"),
    (
        ["plan", "--out", "pl", "--events-per-pair", "0", *GUMBEL],
        2,
        "--events-per-pair: must be >= 1",
    ),
    (["plan", "--out", "pl", "--max-pairs", "0", *GUMBEL], 2, "--max-pairs: must be >= 1"),
    (
        ["plan", "--out", "pl", "--select-share", "0", *GUMBEL],
        2,
        "--select-share: must lie in (0, 1)",
    ),
    (
        ["plan", "--out", "pl", "--select-share", "1", *GUMBEL],
        2,
        "--select-share: must lie in (0, 1)",
    ),
    (
        ["plan", "--out", "pl", "--simulate", "xml", *GUMBEL],
        2,
        "--simulate: expected csv, jsonl or parquet",
    ),
    (
        ["plan", "--out", "pl", "--simulate", "csv", "--claim", "1,0", "--width", "1"],
        2,
        "--simulate needs MECH",
    ),
    (["plan", "--out", "pl"], 2, "give MECH, or --claim EPS,DELTA and --width N"),
    (["plan", "--out", "pl", "--claim", "1,0"], 2, "give MECH, or --claim EPS,DELTA and --width N"),
    (["plan", "--out", "pl", "--claim", "x", "--width", "1"], 2, "--claim wants EPS,DELTA"),
    (["plan", "--out", "pl", "--alpha", "2", *GUMBEL], 2, "--alpha: must lie in (0, 1)"),
    (["plan", "--out", "pl", "--counts", "", *GUMBEL], 2, "--counts: empty histogram"),
    (["plan", "--out", "pl", "--pair", "1,2", *GUMBEL], 2, "--pair wants 'C;C2'"),
    (["plan", "--out", "pl", "--restrict-to-given", *GUMBEL], 2, "--restrict-to-given needs"),
    (["plan", "--out", "pl", "--values", "-1", *GUMBEL], 2, "--values: must be >= 0"),
    (["plan", "--out", "pl", "--domain-size", "0", *GUMBEL], 2, "--domain-size: must be >= 1"),
    (["plan", "--out", "pl", "--sampels", "3", *GUMBEL], 2, "unknown option --sampels"),
    (["plan", "--out", MISSING_DIR, *GUMBEL], 2, "--out: cannot write"),
    (["plan", "--out", "pl", "--relation", "x", *GUMBEL], 2, "--relation: cannot read 'x'"),
    (
        ["plan", "--out", "pl", "--domain-size", "100000000", *GUMBEL],
        2,
        "--domain-size: the audit needs at least 71 PiB",
    ),
    (
        ["plan", "--out", "pl", "--claim", "1,0", "--width", "1", "--domain-size", "1e8"],
        2,
        "--domain-size: the audit needs at least 71 PiB",
    ),
    # -- verify
    (["verify"], 2, "the following arguments are required: MECH"),
    (["verify", "Nope"], 2, "unknown mechanism 'Nope'"),
    (["verify", *GUMBEL, "--d", "0"], 2, "--d must"),
    # Refused at once, with the figure (not after computing 4 ** 10**9 exactly).
    (["verify", *GUMBEL, "--d", "1000000000"], 2, "about 10^6.021e+08 histograms"),
    (["verify", *GUMBEL, "--d", "five"], 2, "argument --d: invalid int value: 'five'"),
    (["verify", *GUMBEL, "--max-count", "-1"], 2, "--max-count"),
    (["verify", *GUMBEL, "--max-items", "0"], 2, "--max-items must be a positive integer"),
    (["verify", *GUMBEL, "--max-items", "abc"], 2, "--max-items must be a positive integer"),
    (["verify", *GUMBEL, "--relation", "foo"], 2, "argument --relation: invalid choice: 'foo'"),
    (["verify", *GUMBEL, "--block", "0"], 2, "--block must be >= 1"),
    (["verify", *GUMBEL, "--dask", "cloud"], 2, "--dask: expected local or local:N"),
    (["verify", *GUMBEL, "--json", MISSING_DIR + ".json"], 2, "--json: cannot write"),
    (["verify", *GUMBEL, "--resume", MISSING_DIR + ".duckdb"], 2, "--resume: cannot write"),
    (
        ["verify", *GUMBEL, "--relation", "bounded-change", "--max-items", "2"],
        2,
        "--max-items applies to add/remove",
    ),
    (
        ["verify", *GUMBEL, "--epsilon-check", "abc"],
        2,
        "argument --epsilon-check: invalid float value",
    ),
    (
        ["verify", *GUMBEL, "--d", "40", "--max-count", "40"],
        2,
        "--d 40 --max-count 40: the histogram family would hold",
    ),
    (["verify", "GumbelTopK", "--k", "2"], 2, "GumbelTopK needs --epsilon"),
    # -- recheck
    (["recheck"], 2, "the following arguments are required: RESULT.json"),
    (["recheck", "/nonexistent/r.json"], 2, "/nonexistent/r.json"),
    (["recheck", "r.json", "--samples", "0"], 2, "--samples must be >= 1"),
    (["recheck", "r.json", "--json", MISSING_DIR + ".json"], 2, "--json: cannot write"),
    (["recheck", "r.json", "--k", "2"], 2, "unknown option --k"),
    # -- select
    (["select", *GUMBEL], 2, "the following arguments are required: --data"),
    (["select", *GUMBEL, "--data", "/nonexistent/log.csv"], 2, "/nonexistent/log.csv"),
    (["select", "Nope", "--data", "x.csv"], 2, "unknown mechanism 'Nope'"),
    # -- bounds
    (["bounds", "--epsilons", ""], 2, "--epsilons must list at least one number"),
    (["bounds", "--epsilons", "abc"], 2, "--epsilons must be a comma-separated list"),
    (["bounds", "--epsilons", "0"], 2, "--epsilons must all be finite and > 0"),
    (["bounds", "--epsilons", "-1"], 2, "--epsilons must all be finite and > 0"),
    (["bounds", "--deltas", "0"], 2, "--deltas must all lie in (0, 1)"),
    (["bounds", "--deltas", "1"], 2, "--deltas must all lie in (0, 1)"),
    (["bounds", "--kbar", "0"], 2, "--kbar must be >= 1"),
    (["bounds", "--p1", "1"], 2, "--p1 must lie in (0, 1)"),
    (["bounds", "--json", MISSING_DIR + ".json"], 2, "--json: cannot write"),
]


def _id(case) -> str:
    return " ".join(case[0])[:60] or "(nothing)"


@pytest.mark.parametrize("argv, status, fragment", CLI_CASES, ids=[_id(c) for c in CLI_CASES])
def test_cli_refuses_in_one_line(argv, status, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative output names (pl, r.json, a.duckdb) land here
    (tmp_path / "r.json").write_text(json.dumps({"format": "not a result"}))
    assert main(list(argv)) == status
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert fragment in err, err
    assert not (tmp_path / "pl").exists()  # refused before anything was written


def test_the_battery_is_large():
    assert len(CLI_CASES) + len(API_CASES) >= 150


# -- the Python API: the exception names the argument -------------------------------------


def _audit(**options):
    from dpaudit import audit

    return lambda: audit(M.GumbelTopK(k=1, epsilon=1.0), **{"samples": 1000, **options})


API_CASES = [
    (lambda: M.GumbelTopK(k=0, epsilon=1.0), ValueError, "k"),
    (lambda: M.GumbelTopK(k=2, epsilon=-1.0), ValueError, "epsilon"),
    (lambda: M.GumbelTopK(k=2, epsilon=float("nan")), ValueError, "epsilon"),
    (lambda: M.GumbelTopK(k=2.5, epsilon=1.0), ValueError, "k"),
    (lambda: M.GumbelTopK(k=True, epsilon=1.0), ValueError, "k"),
    (lambda: M.LimitDomain(k=3, kbar=2, epsilon=1.0, delta=1e-6), ValueError, "kbar"),
    (lambda: M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1.5), ValueError, "delta"),
    (lambda: M.LimitDomain(k=2, kbar=3, epsilon=0.0, delta=1e-6), ValueError, "epsilon"),
    (lambda: M.LaplaceTopK(k=0, epsilon=1.0), ValueError, "k"),
    (lambda: M.AddRemoveUser(0), ValueError, "max_items"),
    (lambda: M.BoundedChange(0), ValueError, "max_change"),
    (_audit(samples=0), ValueError, "samples"),
    (_audit(alpha=0.0), ValueError, "alpha"),
    (_audit(alpha=1.5), ValueError, "alpha"),
    (_audit(seed=-1), ValueError, "seed"),
    (_audit(workers=0), ValueError, "workers"),
    (_audit(power_factor=0.5), ValueError, "power_factor"),
    (_audit(max_pairs=0), ValueError, "max_pairs"),
    (_audit(domain_size=0), ValueError, "domain_size"),
    (_audit(domain_size=2.5), ValueError, "domain_size"),
    (_audit(counts=[3, 2], domain_size=5), ValueError, "domain_size"),
    (
        lambda: __import__("dpaudit").audit(M.GumbelTopK(k=2, epsilon=1.0), counts=[1]),
        ValueError,
        "counts: 1 items, fewer than the k=2",
    ),
    (
        lambda: __import__("dpaudit").audit(M.GumbelTopK(k=3, epsilon=1.0), domain_size=2),
        ValueError,
        "domain_size: 2 items, fewer than the k=3",
    ),
    (_audit(neighbours="add-remove"), ValueError, "neighbours"),
    (_audit(counts=[1, -1, 0]), ValueError, "count"),
    (_audit(pairs=[([1, 0], [1, 0, 0])]), ValueError, "counts2"),
    (_audit(claim=(1.0,)), ValueError, "claim"),
    (_audit(claim=(-1.0, 0.0)), ValueError, "epsilon"),
    (
        lambda: __import__("dpaudit").audit(lambda c, r: (0,), claim=(1.0, 0.0)),
        ValueError,
        "width",
    ),
    (lambda: __import__("dpaudit").audit(42, samples=1000), (TypeError, ValueError), "mechanism"),
    (lambda: __import__("dpaudit").recheck("/nonexistent/r.json"), (OSError, ValueError), "r.json"),
    (
        lambda: __import__("dpaudit.exact", fromlist=["verify"]).verify(
            M.GumbelTopK(k=1, epsilon=1.0), d=0, max_count=1
        ),
        ValueError,
        "d",
    ),
    (
        lambda: __import__("dpaudit.exact", fromlist=["verify"]).verify(
            M.GumbelTopK(k=1, epsilon=1.0), d=2, max_count=-1
        ),
        ValueError,
        "max_count",
    ),
    (
        lambda: M.GumbelTopK(k=1, epsilon=1.0).sample(
            [1, 2], -1, __import__("numpy").random.default_rng(0)
        ),
        ValueError,
        "size",
    ),
    (
        lambda: M.GumbelTopK(k=1, epsilon=1.0).sample([1, 2], 5, 0),
        (TypeError, ValueError),
        "rng",
    ),
    (
        lambda: M.GumbelTopK(k=1, epsilon=1.0).sample(
            [1, -2], 5, __import__("numpy").random.default_rng(0)
        ),
        ValueError,
        "counts",
    ),
]


@pytest.mark.parametrize(
    "call, error, word", API_CASES, ids=[str(i) for i in range(len(API_CASES))]
)
def test_api_refuses_naming_the_argument(call, error, word):
    with pytest.raises(error) as info:
        call()
    assert word in str(info.value), str(info.value)


# -- odd inputs that are accepted, and read as documented ---------------------------------


@pytest.mark.parametrize(
    "argv, dest, value",
    [
        (["audit", "--samples", "1e6"], "samples", 1_000_000),
        (["audit", "--samples", "2_000_000"], "samples", 2_000_000),
        (["audit", "--samples", "1.0e5"], "samples", 100_000),
        (["audit", "--seed", "0"], "seed", 0),
        (["audit", "--alpha", "1e-3"], "alpha", 1e-3),
        (["audit", "--power-factor", "1"], "power_factor", 1.0),
        (["audit", "--claim", "-1,0"], "claim", "-1,0"),  # a value (then refused), not an option
    ],
)
def test_numbers_are_read_as_written(argv, dest, value):
    from dpaudit.cli import _attach_negative_values, build_parser

    args, extra = build_parser().parse_known_args(_attach_negative_values(argv))
    assert getattr(args, dest) == value and extra == []


def test_mechanism_parameters_in_exponent_form():
    from dpaudit.cli.mechanism_args import build_mechanism

    mech = build_mechanism("GumbelTopK", ["--k", "1e1", "--epsilon", "1e-1"])
    assert mech.k == 10 and mech.epsilon == pytest.approx(0.1)
