"""The auditor's checkpoint store: ``dpaudit.checkpoint``, where ``verify`` shares it."""

from dpaudit.checkpoint import BlockStore, ChunkStore, plan_key

__all__ = ["BlockStore", "ChunkStore", "plan_key"]
