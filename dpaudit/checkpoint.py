"""Checkpoints: every finished sampling chunk or ``verify`` block is appended to a DuckDB file.

Why DuckDB: it is already the project's embedded data engine (the ``data`` extra), each
chunk is one committed INSERT, so a run killed at any moment leaves a consistent file,
and one file holds any number of chunks (Parquet would need one file per chunk, or a
rewrite per append). Why chunks: a chunk's counts are a pure function of its seed
(``SeedSequence`` spawn key = phase, round, histogram, chunk), so a resumed run that reads
the stored chunks and samples only the missing ones gives exactly the uninterrupted result.

The file records the plan it belongs to (a SHA-256 of the mechanism, the claim, the
audit's options, the seed and the dpaudit version); resuming with another plan is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import threading
from collections import Counter

__all__ = ["BlockStore", "ChunkStore", "plan_key"]


def plan_key(description: dict) -> str:
    """A stable SHA-256 of everything that determines an audit's samples."""
    text = json.dumps(description, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


@contextlib.contextmanager
def _interrupt_after():
    """Hold a Ctrl-C until the block is done, then deliver it.

    DuckDB reads a pending SIGINT as "interrupt the query" and raises its own
    ``InterruptException`` mid-INSERT; held here, a chunk is written whole and the
    ``KeyboardInterrupt`` arrives between chunks, where the auditor stops cleanly.
    """
    # Signals reach the main thread only; a process started with Ctrl-C ignored (nohup,
    # `cmd &` in a script) keeps it ignored.
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    ):
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and callable(previous):
            previous(signal.SIGINT, received[0])


def _chunk_key(seed) -> str:
    return f"{seed.entropy}:{','.join(map(str, seed.spawn_key))}"


class ChunkStore:
    """Finished chunks of one audit plan in a DuckDB file.

    Parameters
    ----------
    path : the file (created if missing).
    key : [`plan_key`][dpaudit.checkpoint.plan_key] of the audit's plan.
    description : what the key was made from, stored for the refusal message.
    """

    def __init__(self, path, key: str, description: dict):
        import duckdb  # imported on first use: it adds about 0.1 s to every start-up otherwise

        self.path = str(path)
        self.key = key
        self.connection = duckdb.connect(self.path)
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS plan (key VARCHAR, description VARCHAR)"
        )
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS chunks (chunk VARCHAR PRIMARY KEY, size BIGINT, counts VARCHAR)"
        )
        stored = self.connection.execute("SELECT key, description FROM plan").fetchall()
        if not stored:
            self.connection.execute(
                "INSERT INTO plan VALUES (?, ?)",
                [key, json.dumps(description, sort_keys=True, default=repr)],
            )
        elif stored[0][0] != key:
            theirs = json.loads(stored[0][1])
            differ = sorted(
                k
                for k in set(theirs) | set(description)
                if json.dumps(theirs.get(k), default=repr, sort_keys=True)
                != json.dumps(description.get(k), default=repr, sort_keys=True)
            )
            self.connection.close()
            raise ValueError(
                f"{self.path!r} holds another audit plan (it differs in: "
                f"{', '.join(differ) or 'version'}); resume with the same mechanism, "
                "options and seed, or use a new file"
            )
        self._cache = {
            row[0]: (row[1], row[2])
            for row in self.connection.execute("SELECT chunk, size, counts FROM chunks").fetchall()
        }

    @property
    def chunks(self) -> int:
        return len(self._cache)

    def get(self, seed):
        """``(Counter, n)`` of the chunk drawn from ``seed``, or None."""
        found = self._cache.get(_chunk_key(seed))
        if found is None:
            return None
        size, text = found
        return Counter({tuple(outcome): count for outcome, count in json.loads(text)}), int(size)

    def put(self, seed, counter, size: int) -> None:
        text = json.dumps([[list(outcome), int(count)] for outcome, count in counter.items()])
        key = _chunk_key(seed)
        with _interrupt_after():
            self.connection.execute(
                "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?)", [key, int(size), text]
            )
        self._cache[key] = (int(size), text)

    def close(self):
        with _interrupt_after():
            self.connection.close()


class BlockStore(ChunkStore):
    """Finished blocks of an exhaustive ``verify`` (same file format and plan check)."""

    def get(self, start: int):
        found = self._cache.get(f"block:{int(start)}")
        return None if found is None else found[1]

    def put(self, start: int, text: str) -> None:  # type: ignore[override]
        key = f"block:{int(start)}"
        with _interrupt_after():
            self.connection.execute(
                "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?)", [key, 0, text]
            )
        self._cache[key] = (0, text)
