"""The user's own mechanism in an audit's evidence: ``module:attr`` or ``--command``, rebuilt.

``dpaudit audit mymod:fn --claim 1,0 --width 2`` and ``dpaudit audit --command CMD`` audit
code dpaudit does not ship, so
[`dpaudit.provenance.mechanism_spec`][dpaudit.provenance.mechanism_spec] cannot record it. The
CLI records instead what it was given (``evidence.mechanism_source``):

* ``{"kind": "module:attr", "target": "mymod:fn", "file": "mymod.py", "sha256": ...,
  "claim": "1,0", "width": 2, "values": 0, "relation": null}`` — the target, the SHA-256
  of the module's source file when audited, and the options it was wrapped with;
* ``{"kind": "command", "command": "python child.py", "claim": ..., "width": ...,
  "values": ..., "relation": ..., "timeout": ...}``.

``rebuild_user_mechanism`` builds the same mechanism again the way the CLI built it.
A module whose source changed since the audit is refused with both digests (the result
is about the code that was audited). A command is run again only when asked
(``allow_command=True``, ``dpaudit recheck --allow-command``): a result file can come from
anyone, and its command line is not checked.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from types import SimpleNamespace

from .errors import UsageError
from .user_mechanism import command_mechanism, module_mechanism

__all__ = ["rebuild_user_mechanism", "source_record"]


def _module_file(module_name: str) -> str | None:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as the CLI does: the user's own modules import
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None)
    return origin if origin and os.path.isfile(origin) else None


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_record(args) -> dict | None:
    """``evidence.mechanism_source`` for the CLI's ``args`` (None for built-in mechanisms)."""
    common = {
        "claim": args.claim,
        "width": args.width,
        "values": int(args.values or 0),
        "relation": args.relation,
    }
    if args.child_command is not None:
        return {"kind": "command", "command": args.child_command, **common, "timeout": args.timeout}
    target = args.mechanism or ""
    if ":" not in target or target.startswith("catalog:"):
        return None
    path = _module_file(target.partition(":")[0])
    return {
        "kind": "module:attr",
        "target": target,
        "file": None if path is None else os.path.basename(path),
        "sha256": None if path is None else _sha256(path),
        **common,
    }


def rebuild_user_mechanism(source: dict, *, allow_command: bool = False):
    """The mechanism ``source_record`` describes, built as the CLI built it.

    Raises ValueError naming the problem: a changed source file, a missing module, a
    command not allowed to run.
    """
    kind = source.get("kind")
    args = SimpleNamespace(
        mechanism=None,
        child_command=None,
        claim=source.get("claim"),
        width=source.get("width"),
        values=int(source.get("values") or 0),
        relation=source.get("relation"),
        timeout=float(source.get("timeout") or 60.0),
    )
    if kind == "command":
        if not allow_command:
            raise ValueError(
                f"the audit ran the command {source.get('command')!r}; a recheck runs it again "
                "only when allowed (dpaudit recheck --allow-command, or "
                "recheck(..., allow_command=True))"
            )
        args.child_command = source.get("command")
        build = command_mechanism
    elif kind == "module:attr":
        target = str(source.get("target", ""))
        module_name = target.partition(":")[0]
        path = _module_file(module_name)
        if path is None:
            raise ValueError(
                f"cannot find module {module_name!r} of {target} (run the recheck from the "
                "directory the audit ran in, or put it on PYTHONPATH)"
            )
        recorded, now = source.get("sha256"), _sha256(path)
        if recorded is not None and recorded != now:
            raise ValueError(
                f"{path} changed since the audit (sha256 {recorded[:12]}... when audited, "
                f"{now[:12]}... now): the result is about the code that was audited"
            )
        args.mechanism = target
        build = module_mechanism
    else:
        raise ValueError(f"not a recorded mechanism source: {source!r}")
    try:
        return build(args)
    except UsageError as error:
        raise ValueError(str(error)) from None
