"""Repeat an audit from its spec, seed, options and version, and compare the whole result.

An audit is a deterministic function of the mechanism, its options and the seed (every
draw has its own ``SeedSequence`` stream, [`dpaudit.auditor.planning.plan`][dpaudit.auditor.planning.plan]). ``rerun``
rebuilds the mechanism ([`dpaudit.rebuild.audited_mechanism`][dpaudit.rebuild.audited_mechanism]),
runs [`dpaudit.audit`][dpaudit.auditor.audit] again with ``evidence.options`` (an offline result:
reads its plan directory's files again, when they are still there with the recorded hashes), and
compares the recorded result with the new one field by field, every field but the clock
(``IGNORED``). This is the one check that sees witnesses left out of a file, a
changed seed or a result assembled from several runs: the recorded result must be the
one the recorded inputs give. When the library versions differ from the recorded ones,
the result says so (a difference may then come from them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["IGNORED", "RerunResult", "rerun"]

#: Fields not compared: the clock, the installation and where the samples were drawn.
IGNORED = (
    "format_version",
    "seconds",
    "evidence.date",
    "evidence.versions",
    "evidence.engine",
    "evidence.resume",
)

#: Evidence entries ``dpaudit.audit`` writes itself (the others are passed back in).
_OWN_EVIDENCE = (
    "relation",
    "seed",
    "mechanism_spec",
    "versions",
    "date",
    "engine",
    "options",
    "greybox",
)


@dataclass(frozen=True)
class RerunResult:
    """Outcome of ``rerun``: the first disagreeing field (None: identical), digests, versions."""

    difference: str | None
    recorded_digest: str
    rerun_digest: str
    versions_differ: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        return self.difference is None

    @property
    def line(self) -> str:
        """One line: what disagrees first, or that the rerun reproduced the result."""
        versions = (
            f" (versions differ: {', '.join(self.versions_differ)}; the difference may come "
            "from them)"
            if self.versions_differ
            else ""
        )
        if self.agrees:
            return f"rerun agrees: the same result field by field ({self.recorded_digest})" + (
                f"; versions differ: {', '.join(self.versions_differ)}" if versions else ""
            )
        return f"rerun DISAGREES at {self.difference}{versions}"

    def __str__(self) -> str:
        return self.line

    def to_dict(self) -> dict:
        return {
            "agrees": self.agrees,
            "difference": self.difference,
            "recorded_digest": self.recorded_digest,
            "rerun_digest": self.rerun_digest,
            "versions_differ": list(self.versions_differ),
        }


def _versions_differ(recorded: dict) -> tuple[str, ...]:
    from dpaudit.provenance import versions

    now = versions()
    return tuple(
        f"{name} {value} recorded, {now.get(name)} here"
        for name, value in sorted(recorded.items())
        if now.get(name) != value
    )


def _rerun_offline(data: dict):
    from dpaudit.auditor.offline import audit_from_samples, file_sha256
    from dpaudit.rebuild import CannotRecheck

    offline = data["evidence"]["offline"]
    folder = offline.get("directory")
    if not folder or not os.path.isdir(folder):
        raise CannotRecheck(
            f"the offline plan directory {folder!r} is not there; an offline audit is rerun "
            "from its files"
        )
    for name, digest in (offline.get("files") or {}).items():
        path = os.path.join(folder, "outcomes", name)
        if not os.path.exists(path) or file_sha256(path) != digest:
            raise CannotRecheck(f"{path} is not the file the audit read (its sha256 changed)")
    extra = {k: v for k, v in data["evidence"].items() if k not in (*_OWN_EVIDENCE, "offline")}
    return audit_from_samples(
        folder,
        power_factor=float(data.get("power_factor", 2.0)),
        evidence=extra,
        epsilon_only=bool(data.get("epsilon_only", False)),
    )


def _audit_keywords(options: dict) -> dict:
    """The keywords of [`dpaudit.audit`][dpaudit.auditor.audit] that ``evidence.options`` records
    (those that fix its result), as ``audit`` takes them."""
    from dpaudit.provenance import relation_from_dict

    pairs = options.get("pairs")
    neighbours = options.get("neighbours")
    return {
        "width": options.get("width"),
        "counts": options.get("counts"),
        "pairs": None if pairs is None else [tuple(p) for p in pairs],
        "restrict": bool(options.get("restrict", False)),
        "neighbours": None if neighbours is None else relation_from_dict(neighbours),
        "samples": int(options["samples"]),
        "alpha": float(options["alpha"]),
        "seed": int(options["seed"]),
        "keep": int(options["keep"]),
        "max_pairs": int(options["max_pairs"]),
        "events_per_pair": int(options["events_per_pair"]),
        "chunk": int(options["chunk"]),
        "domain_size": options.get("domain_size"),
        "search": bool(options.get("search", True)),
        "power_factor": float(options.get("power_factor", 2.0)),
        "looks": int(options.get("looks", 1)),
        "epsilon_only": bool(options.get("epsilon_only", False)),
        "refine": bool(options.get("refine", False)),
        "black_box": bool(options.get("black_box", False)),
        "name": options.get("name"),
        "batched": bool(options.get("batched", False)),
        "values": int(options.get("values", 0) or 0),
    }


def _rerun_live(data: dict, mechanism, allow_command: bool):
    """The live audit of ``data`` run again from its recorded options, on ``mechanism`` (default:
    rebuilt); [`CannotRecheck`][dpaudit.rebuild.CannotRecheck] when it cannot run."""
    from dpaudit.auditor import audit
    from dpaudit.provenance import relation_from_dict
    from dpaudit.rebuild import CannotRecheck, audited_mechanism

    evidence = data.get("evidence") or {}
    options = evidence.get("options")
    if not options:
        raise CannotRecheck(
            "the result records no audit options (evidence.options): it cannot be rerun"
        )
    given = audited_mechanism(data, mechanism, allow_command=allow_command)[0]
    claim = None
    if options.get("claim") is not None:
        claim = (
            *map(float, options["claim"]),
            relation_from_dict(options.get("claim_relation") or {"kind": "add-remove"}),
        )
    elif not hasattr(given, "claim"):
        claim = (float(data["claim"]["epsilon"]), float(data["claim"]["delta"]))
    extra = {k: v for k, v in evidence.items() if k not in (*_OWN_EVIDENCE, "resume")}
    try:
        return audit(given, claim=claim, evidence=extra, **_audit_keywords(options))
    except (KeyboardInterrupt, CannotRecheck):
        raise
    except Exception as error:  # the mechanism's (or the options') failure: could not run
        raise CannotRecheck(f"the rerun raised {type(error).__name__}: {error}") from error
    finally:
        if mechanism is None and hasattr(given, "close"):
            given.close()  # a rebuilt --command child


def rerun(source, mechanism=None, *, allow_command: bool = False) -> RerunResult:
    """Run the recorded audit again and compare the results (module docstring).

    Parameters
    ----------
    source : an AuditResult, its ``to_dict()``, or the path of the JSON ``--json`` wrote.
    mechanism : the mechanism audited, anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts
        (default: rebuilt from the recorded spec).
    allow_command : run a recorded ``--command`` child again (``dpaudit.user_source``).

    Raises [`dpaudit.rebuild.CannotRecheck`][dpaudit.rebuild.CannotRecheck] when the audit cannot be
    repeated (no
    options recorded, mechanism not rebuildable, the mechanism raised).
    """
    from dpaudit.auditor.results.result_format import (
        as_of_version,
        check_format_version,
        first_difference,
        result_digest,
    )
    from dpaudit.provenance import at_present_paths
    from dpaudit.recheck import load_result_data

    data = load_result_data(source)
    evidence = data.get("evidence") or {}
    if "offline" in evidence:
        result = _rerun_offline(data)
    else:
        result = _rerun_live(data, mechanism, allow_command)
    # An older file is compared as its version would hold the rerun's result.
    again = as_of_version(result.to_dict(), check_format_version(data))
    return RerunResult(
        first_difference(at_present_paths(data), again, skip=IGNORED, label="rerun"),
        result_digest(data),
        result_digest(again),
        _versions_differ(evidence.get("versions") or {}),
    )
