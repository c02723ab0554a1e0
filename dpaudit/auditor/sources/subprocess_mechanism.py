"""Audit a mechanism written in any language: a long-lived child process speaking JSON lines.

Protocol (one JSON object per line, UTF-8):

* request, on the child's stdin: ``{"counts": [5, 4, 4, 1], "size": 1000, "seed": 12345}``;
* answer, on its stdout: ``{"outcomes": [[2, 0], [1, -1], ...]}`` — ``size`` outcomes, each
  a list of integer item ids, ``-1`` (⊥) last when the mechanism stops early; or
  ``{"error": "message"}``.

The child draws its randomness from ``seed`` (the auditor derives it from its own seeded
generator), so the same audit seed gives the same requests, and a deterministic child
gives the same result. The child is started on the first request, kept for the whole audit
(one per worker process), and killed when the audit ends, on an error, on a time-out, and
on Ctrl-C: no orphan is left behind. Its stderr is kept and quoted in every error.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mechanisms import PAD, MixedBatch, PrivacyClaim, TopKMechanism, check_rng, check_size

from .blackbox import BlackBox

__all__ = ["ChildMechanismError", "SubprocessMechanism"]

#: Live children of this process, by (command, id of the mechanism): reused across calls.
_CHILDREN: dict = {}


class ChildMechanismError(RuntimeError):
    """The child mechanism crashed, answered nonsense, or did not answer in time."""


def _kill(process) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
        process.wait(timeout=10)


@atexit.register
def _kill_all() -> None:
    for child in list(_CHILDREN.values()):
        _kill(child[0])
    _CHILDREN.clear()


@dataclass(frozen=True)
class SubprocessMechanism(TopKMechanism):
    """A mechanism run as ``command`` (a shell-free argument list), spoken to in JSON lines.

    Parameters
    ----------
    command : the program and its arguments, a string (split like a shell) or a list.
    declared_claim : the claim it is audited against.
    max_width : the longest outcome it returns (0 with ``values``: values only).
    timeout : seconds to wait for one answer before the child is killed.
    values : real values per outcome; answers then carry ``"values": [[v, ...], ...]``
        (``null`` for a missing value), one list of ``values`` numbers per outcome.
    """

    command: tuple
    declared_claim: PrivacyClaim
    max_width: int
    timeout: float = 60.0
    values: int = 0

    outcome_validation: ClassVar[str] = "strict"

    def __post_init__(self):
        command = self.command
        if isinstance(command, str):
            command = tuple(shlex.split(command))
        if not command:
            raise ValueError("command must name a program")
        object.__setattr__(self, "command", tuple(command))
        if not (isinstance(self.values, int) and self.values >= 0):
            raise ValueError(f"values must be an integer >= 0, got {self.values!r}")
        least = 0 if self.values else 1
        if not (isinstance(self.max_width, int) and self.max_width >= least):
            raise ValueError(f"width must be an integer >= {least}, got {self.max_width!r}")
        if not self.timeout > 0:
            raise ValueError(f"timeout must be > 0, got {self.timeout!r}")

    width = BlackBox.width
    claim = BlackBox.claim

    @property
    def value_width(self) -> int:
        return self.values

    def __str__(self) -> str:
        return "command: " + " ".join(shlex.quote(c) for c in self.command)

    def _child(self):
        key = (self.command, os.getpid())
        child = _CHILDREN.get(key)
        if child is not None and child[0].poll() is None:
            return child
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- kept as long as the child lives
        try:
            process = subprocess.Popen(
                list(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        except OSError as error:
            raise ChildMechanismError(f"cannot start {self}: {error.strerror or error}") from None
        _CHILDREN[key] = child = (process, stderr)
        return child

    def close(self) -> None:
        """Stop this mechanism's child (it restarts on the next request)."""
        child = _CHILDREN.pop((self.command, os.getpid()), None)
        if child is not None:
            _kill(child[0])

    def _failure(self, child, what: str) -> ChildMechanismError:
        process, stderr = child
        _kill(process)
        _CHILDREN.pop((self.command, os.getpid()), None)
        stderr.seek(0)
        tail = stderr.read()[-2000:].decode("utf-8", "replace").strip()
        code = process.returncode
        detail = f"; its stderr: {tail}" if tail else ""
        return ChildMechanismError(f"{self} {what} (exit status {code}){detail}")

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray | MixedBatch:
        check_rng(rng)
        size = check_size(size)
        out = np.full((size, self.max_width), PAD, dtype=np.int64)
        if size == 0:
            return out
        request = {
            "counts": [int(c) for c in np.asarray(counts).ravel()],
            "size": size,
            "seed": int(rng.integers(0, 2**62)),
        }
        child, answer = self._ask(request)
        self._fill_outcomes(child, answer, out)
        if not self.values:
            return out
        return MixedBatch(out, self._answered_values(child, answer, size))

    def _ask(self, request: dict) -> tuple:
        """``(child, answer)``: ``request`` sent as one JSON line, the child's JSON answer read."""
        child = self._child()
        process = child[0]
        try:
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
            line = self._read_line(child)
        except BrokenPipeError:
            raise self._failure(child, "exited before reading the request") from None
        except BaseException:  # Ctrl-C or a time-out: never leave the child behind
            _kill(process)
            _CHILDREN.pop((self.command, os.getpid()), None)
            raise
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise self._failure(child, f"answered {line[:200]!r}, not a JSON line") from None
        if isinstance(answer, dict) and "error" in answer:
            raise self._failure(child, f"reported an error: {answer['error']}")
        return child, answer

    def _fill_outcomes(self, child, answer, out: np.ndarray) -> None:
        """The answer's ``"outcomes"`` checked and written into ``out`` (PAD-padded rows)."""
        size = out.shape[0]
        outcomes = answer.get("outcomes") if isinstance(answer, dict) else None
        if not isinstance(outcomes, list) or len(outcomes) != size:
            raise self._failure(
                child, f'answered {str(answer)[:200]}, not {{"outcomes": [{size} lists]}}'
            )
        for row, outcome in enumerate(outcomes):
            if (
                not isinstance(outcome, list)
                or len(outcome) > self.max_width
                or any(isinstance(v, bool) or not isinstance(v, int) for v in outcome)
            ):
                raise self._failure(
                    child,
                    f"answered the outcome {outcome!r}: a list of at most "
                    f"{self.max_width} integer ids is expected",
                )
            out[row, : len(outcome)] = outcome

    def _answered_values(self, child, answer, size: int) -> np.ndarray:
        """The answer's ``"values"`` checked, as a ``(size, values)`` array (NaN if missing)."""
        values = answer.get("values")
        if not isinstance(values, list) or len(values) != size:
            raise self._failure(
                child,
                f'answered {str(answer)[:200]} without "values": '
                f"[{size} lists of {self.values} numbers]",
            )
        array = np.full((size, self.values), np.nan)
        for row, given in enumerate(values):
            if (
                not isinstance(given, list)
                or len(given) != self.values
                or any(
                    v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))
                    for v in given
                )
            ):
                raise self._failure(
                    child,
                    f"answered the values {given!r}: a list of "
                    f"{self.values} numbers (null if missing) is expected",
                )
            array[row] = [np.nan if v is None else float(v) for v in given]
        return array

    def _read_line(self, child) -> str:
        process, _ = child
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + self.timeout
        chunks = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(timeout=left):
                    raise self._failure(child, f"gave no answer within {self.timeout:g} s")
                data = os.read(process.stdout.fileno(), 1 << 20)
                if not data:
                    process.wait(timeout=10)
                    raise self._failure(child, "exited without answering")
                chunks.append(data)
                if data.endswith(b"\n"):
                    return b"".join(chunks).decode("utf-8", "replace")
        finally:
            selector.close()
