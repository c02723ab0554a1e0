"""JOINT: the exponential mechanism over size-k sets (seed 004) and over ordered k-sequences.

Seed 004 Definition 3 with the utility u* of Lemma 5, sampled exactly by a
mixture of uniform laws instead of Algorithm 1 (Lemmas 6-7, Thm 8); the
derivation, error bounds and cost are in docs/joint.md.

Modules: ``mechanism`` (Joint, JointSequence), ``prepared`` (per-histogram
tables), ``grid`` (utility grid and truncation), ``bounds`` (sequence counts,
bounds on set counts), ``set_count`` (the banded set count), ``set_sampling``
(uniform sets of bounded gap), ``subsets`` and ``shuffles`` (uniform subsets
and sequences), ``knots`` (the coarse knot mixture), ``limits`` (work limits).
"""

from .mechanism import Joint, JointSequence, joint_epsilon
from .prepared import JointPrepared

__all__ = ["Joint", "JointPrepared", "JointSequence", "joint_epsilon"]

# Results name a mechanism's class as "module:qualname" and recheck imports it back:
# the package is the stable name, not the file inside it.
for _cls in (Joint, JointPrepared, JointSequence):
    _cls.__module__ = __name__
