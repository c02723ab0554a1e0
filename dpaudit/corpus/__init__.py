"""Real, documented privacy bugs rebuilt as black boxes, each with its source and true guarantee.

Kept apart from [`dpaudit.catalog`][dpaudit.catalog] (bugs written in this project): every entry
here is a mechanism that someone shipped or published, with that author's claim and neighbour
relation, the issue, pull request or paper that documents it, the guarantee it really
has (computed exactly where possible, or cited, and saying which), and its correct twin
where one exists. One module per family:

* ``sparse_vector`` — Lyu–Su–Li 2017's variants as StatDP and DP-Sniper test them, at
  both tools' settings (StatDP's iSVT1-4 with its one-number summary), CheckDP's gap
  and adaptive variants releasing the noisy answer, DP-Sniper's SVT34Parallel (Roth's
  and Lee & Clifton's variants side by side, c = 2), and NVFlare's ``SVTPrivacy`` filter
  releasing the coordinates it accepted and did not keep raw (issue 343);
* ``noisy_max`` — report noisy max releasing the maximum (StatDP, DP-Sniper, CheckDP),
  OpenDP's exponential-noise noisy max claiming the exponential mechanism's zCDP ρ, and
  JAM's exponential mechanism run at half its scores' sensitivity (mbi);
* ``histogram`` — noisy histograms with the Laplace scale inverted (StatDP, DP-Sniper) or
  the sensitivity of substitution underestimated (SmartNoise), SmartNoise's geometric noise
  censored at its sampling bounds with the release or its input left unclamped (PR 318, issue
  358), a noisy sum with half the noise it needs (CheckDP's BadPartialSum), running sums
  releasing exact block sums (CheckDP's BadSmartSum), DataSynthesizer's PrivBayes counts
  noised at the scale for probabilities, n times too little (issue 34), and diffprivlib's
  linear regression noising Σ x² with the sensitivity of its lower bound twice (issue 105);
* ``partition_selection`` — noisy thresholds with a wrong δ or threshold (OpenDP's
  Laplace and Gaussian thresholds and its first stability histogram,
  google/differential-privacy, SmartNoise SQL);
* ``float_noise`` — textbook floating-point Laplace (diffprivlib, Mironov 2012),
  diffprivlib's Box–Muller Gaussian in doubles (Jin et al. 2022; Haney et al. 2022), and
  numpy's Laplace as DP-Sniper audits it, with its snapping fix as the twin.

    import dpaudit
    from dpaudit.corpus import CORPUS
    for entry in CORPUS:
        result = dpaudit.audit(entry.build(), **entry.audit_options)
        print(entry.describe(), result.verdict)

On the command line: ``dpaudit audit corpus:NAME``.
"""

from __future__ import annotations

from . import float_noise, histogram, noisy_max, partition_selection, sparse_vector
from .entry import CorpusEntry, TrueGuarantee

__all__ = ["CORPUS", "CorpusEntry", "TrueGuarantee", "entry"]

CORPUS: tuple[CorpusEntry, ...] = (
    *sparse_vector.ENTRIES,
    *noisy_max.ENTRIES,
    *histogram.ENTRIES,
    *partition_selection.ENTRIES,
    *float_noise.ENTRIES,
)


def entry(name: str) -> CorpusEntry:
    """The corpus entry called ``name`` (KeyError naming the known ones otherwise)."""
    for candidate in CORPUS:
        if candidate.name == name:
            return candidate
    raise KeyError(f"no corpus entry {name!r}; known: {', '.join(e.name for e in CORPUS)}")
