"""Candidate pairs of an audit: pair families as values, composed with ``|`` and thinned.

A family knows its pairs and whether it is *targeted* — built for the mechanism at hand
(the restricted-domain family, the threshold ladder, the threshold search) or given by
the user — so that thinning to ``max_pairs`` keeps every targeted pair and samples the
generic ones (DESIGN.md, "How the auditor is organised": pair sources). Families compose
like hypothesis strategies: ``given | default_families(relation, d) | search``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mechanisms.claims import AddRemoveUser, BoundedChange

from .local_pairs import REFINE_SHARE, local_search_pairs, sampled_epsilon
from .local_search import SearchSpace
from .pairs import (
    NAMED,
    NeighbourPair,
    base_histograms,
    explicit_pairs,
    moves_on,
    random_pairs,
    relation_pairs,
    restricted_domain_pairs,
    threshold_ladder_pairs,
    threshold_offset,
)
from .threshold_search import threshold_search_pairs

__all__ = [
    "TARGETED_FAMILIES",
    "Families",
    "Family",
    "candidate_pairs",
    "default_domain",
    "default_families",
    "given_family",
    "local_search_family",
    "public_int",
    "thinned",
    "threshold_search_family",
]


@dataclass(frozen=True)
class Family:
    """One family of neighbouring pairs: its name, whether it is targeted, how to build it.

    Parameters
    ----------
    name : what the family is (its pairs carry their own ``family`` tag for reports).
    build : ``build(rng) -> [NeighbourPair, ...]``; ``rng`` for families that draw.
    targeted : built for the mechanism or by the user: never thinned.
    """

    name: str
    build: Callable[[np.random.Generator], list[NeighbourPair]]
    targeted: bool = False

    def pairs(self, rng: np.random.Generator) -> list[NeighbourPair]:
        return self.build(rng)

    def __or__(self, other) -> Families:
        return Families((self,)) | other


@dataclass(frozen=True)
class Families:
    """Families in order; the first family proposing a pair names it (duplicates dropped)."""

    members: tuple = ()

    def __or__(self, other) -> Families:
        extra = other.members if isinstance(other, Families) else (other,)
        return Families(self.members + tuple(extra))

    def tagged(self, rng: np.random.Generator) -> list[tuple[NeighbourPair, bool]]:
        """Every distinct pair with whether its family is targeted, families built in order."""
        seen, found = set(), []
        for family in self.members:
            for pair in family.pairs(rng):
                key = frozenset([pair.counts, pair.counts2])
                if pair.counts != pair.counts2 and key not in seen:
                    seen.add(key)
                    found.append((pair, bool(family.targeted)))
        return found

    def pairs(self, rng: np.random.Generator, max_pairs: int | None = None) -> list[NeighbourPair]:
        """The distinct pairs, thinned to ``max_pairs``: targeted ones kept, others sampled."""
        tagged = self.tagged(rng)
        if max_pairs is None or len(tagged) <= max_pairs:
            return [pair for pair, _ in tagged]
        targeted = [pair for pair, is_targeted in tagged if is_targeted]
        others = [pair for pair, is_targeted in tagged if not is_targeted]
        room = max(max_pairs - len(targeted), max_pairs // 2)
        targeted = targeted[: max_pairs - min(room, len(others))]
        index = rng.choice(len(others), size=min(room, len(others)), replace=False)
        return targeted + [others[i] for i in sorted(index)]


def public_int(mechanism, *names) -> int | None:
    """The first of ``names`` that ``mechanism`` exposes as an integer (``kbar``, ``k``)."""
    for name in names:
        value = getattr(mechanism, name, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    return None


def default_domain(mechanism) -> int:
    """Items of the default histograms: ``k̄ + 3``, else ``max(5, k + 3)``, else 5."""
    kbar = public_int(mechanism, "kbar", "kbar_max")
    k = public_int(mechanism, "k")
    if kbar is not None:
        return kbar + 3
    if k is not None:
        return max(5, k + 3)
    return 5


def given_family(counts, pairs, relation) -> Family:
    """The user's pairs, then the neighbours of the user's histogram (targeted)."""
    found = []
    if pairs is not None:
        found += explicit_pairs(pairs, relation)
    if counts is not None:
        found += relation_pairs(np.asarray(counts), relation, family="given counts")
    return Family("given", lambda rng: found, targeted=True)


def default_families(relation, d: int, kbar=None, threshold=None, n_random=8) -> Families:
    """The auditor's default families on ``d`` items ([`pairs.default_pairs`][dpaudit.neighbours.pairs.default_pairs]'s).

    Structured moves on the base histograms (generic), the restricted-domain family when
    ``kbar`` is known and the threshold ladder when ``threshold`` is known too (both
    targeted), and ``n_random`` random pairs (generic).
    """
    bases = base_histograms(d)

    families = Families(
        (Family("moves on base histograms", lambda rng: moves_on(bases, relation)),)
    )
    if kbar is not None and d >= kbar + 1:
        families |= Family(
            "restricted domain",
            lambda rng: restricted_domain_pairs(d, kbar, relation),
            targeted=True,
        )
        if threshold is not None:
            families |= Family(
                "threshold ladder",
                lambda rng: threshold_ladder_pairs(d, kbar, threshold, relation),
                targeted=True,
            )
    if n_random:
        max_count = int(max(8, max(b.max() for b in bases)))
        families |= Family(
            "random", lambda rng: random_pairs(relation, bases[0].size, max_count, n_random, rng)
        )
    return families


def threshold_search_family(
    draw, relation, *, domain_size, kbar, k, samples, hint_offset, cap
) -> Family:
    """Pairs where the output law changes, found from samples ([`threshold_search`][dpaudit.neighbours.threshold_search]).

    At most ``cap`` of them, chosen with the pair stream, so the fixed families keep room.
    """

    def build(rng):
        searched = threshold_search_pairs(
            draw,
            relation,
            domain_size=domain_size,
            kbar=kbar,
            k=k,
            rng=rng,
            samples=samples,
            hint_offset=hint_offset,
        )
        if len(searched) > cap:
            keep_index = np.sort(rng.choice(len(searched), size=cap, replace=False))
            searched = [searched[i] for i in keep_index]
        return searched

    return Family("threshold search", build, targeted=True)


def _start_states(pairs, space: SearchSpace, chains: int) -> list[tuple]:
    """Up to ``chains`` of ``pairs``, evenly spread, as local-search states ``(counts, step)``."""
    steps = space.steps
    states = []
    for pair in pairs:
        low, high = np.array(pair.counts), np.array(pair.counts2)
        if np.any(high - low < 0):  # a removal: the same pair read from the smaller side
            low, high = high, low
        match = np.flatnonzero(np.all(steps == high - low, axis=1))
        if match.size and low.size == space.d and low.max(initial=0) <= space.max_count:
            states.append((low, int(match[0])))
    spread = max(1, len(states) // chains)
    return states[::spread][:chains]


def local_search_family(
    draw, relation, delta: float, after: Family, *, domain_size, samples, per_histogram, seed
) -> Family:
    """``after``'s pairs, then the best pairs of a local search from samples ([`local_search`][dpaudit.neighbours.local_search]).

    The search box follows what ``after`` (the threshold search) found: counts up to twice
    the largest count of its pairs (at least the default bases' largest, 8), chains started
    from its pairs; so a mechanism whose output changes at height ``s`` is searched around
    ``s`` and a black box without a threshold on the small counts the fixed families use.
    Each pair scored costs ``2 · per_histogram`` draws at most; ``local_pairs.REFINE_SHARE``
    of ``samples`` goes to the halving of the best pairs found, so the search draws at most
    ``samples``; it runs only under add/remove or bounded change.

    Parameters
    ----------
    draw : ``draw(histograms, per_histogram) -> [(Counter, n)]`` on the search's own streams.
    relation : the neighbour relation.
    delta : the claimed δ (the search's score is the shrunk plug-in ε at δ).
    after : the family whose pairs seed the search (its pairs come first).
    domain_size : items of the histograms searched.
    samples : the search's budget; per_histogram : draws per histogram scored.
    seed : the ``SeedSequence`` of the search's own moves.
    """
    chains = 8

    def build(rng):
        found = list(after.pairs(rng))
        explore = int((1.0 - REFINE_SHARE) * int(samples))
        budget = explore // (2 * int(per_histogram))
        if budget < chains or not isinstance(relation, (AddRemoveUser, BoundedChange)):
            return found
        largest = max((max(p.counts + p.counts2) for p in found), default=0)
        bases = int(max(8, max(b.max() for b in base_histograms(domain_size))))
        space = SearchSpace(domain_size, max(2 * int(largest), bases), relation)
        searched = local_search_pairs(
            sampled_epsilon(draw, delta, per_histogram),
            space.d,
            space.max_count,
            relation,
            seed=seed,
            budget=budget,
            chains=chains,
            starts=_start_states(found, space, chains),
            draws=int(samples),
        )
        return found + list(searched)

    return Family(after.name + " and local search", build, targeted=True)


#: The ``family`` tags of pairs built for the mechanism at hand or given by the user:
#: ``thinned`` keeps them first.
TARGETED_FAMILIES = (
    "threshold search",
    "local search",
    "threshold ladder",
    "restricted domain",
    NAMED,
    "given counts",
)


def thinned(pairs: Sequence, size: int, rng: np.random.Generator) -> list[NeighbourPair]:
    """``pairs`` cut to ``size``: the targeted ones first (in order), then a sample of the rest.

    The others keep their order; ``rng`` is the audit's pair stream.
    """
    targeted = [p for p in pairs if p.family in TARGETED_FAMILIES][:size]
    others = [p for p in pairs if p.family not in TARGETED_FAMILIES]
    room = min(size - len(targeted), len(others))
    index = sorted(rng.choice(len(others), size=room, replace=False)) if room > 0 else []
    return targeted + [others[i] for i in index]


def _searched_family(
    draw, relation, d, kbar, k, offset, samples, max_pairs,
    local_draw, local_samples, local_per_histogram, local_seed, delta,
) -> Family:  # fmt: skip
    """The threshold search's family, refined by the local search when it has a budget (the
    arguments of [`candidate_pairs`][dpaudit.neighbours.candidates.candidate_pairs])."""
    search = threshold_search_family(
        draw,
        relation,
        domain_size=d,
        kbar=kbar,
        k=k,
        samples=samples,
        hint_offset=offset,
        # A quarter of the screening slots at most, so the fixed families keep their room.
        cap=max(max_pairs // 4, 1),
    )
    if local_draw is not None and local_samples > 0:
        search = local_search_family(
            local_draw,
            relation,
            delta,
            search,
            domain_size=d,
            samples=local_samples,
            per_histogram=local_per_histogram,
            seed=local_seed,
        )
    return search


def candidate_pairs(
    mechanism,
    relation,
    *,
    counts=None,
    pairs: Sequence | None = None,
    restrict: bool = False,
    domain_size: int | None = None,
    max_pairs: int = 600,
    rng: np.random.Generator,
    draw=None,
    search_samples: int = 0,
    local_draw=None,
    local_samples: int = 0,
    local_per_histogram: int = 0,
    local_seed: np.random.SeedSequence | None = None,
    delta: float = 0.0,
) -> list[NeighbourPair]:
    """Every pair an audit screens: the given pairs, the default families, the search.

    Parameters
    ----------
    mechanism : read for its public ``kbar``/``k`` and fixed threshold (family hints).
    relation : the neighbour relation.
    counts, pairs : the user's histogram and pairs; they ADD to the defaults.
    restrict : keep only the given pairs.
    domain_size : items of the default histograms (default
        [`default_domain`][dpaudit.neighbours.candidates.default_domain]).
    max_pairs : cap after thinning (targeted families are kept).
    rng : the audit's pair stream.
    draw : ``draw(histograms, per_histogram) -> [(Counter, n)]`` for the threshold search
        (skipped when None or ``search_samples`` is 0).
    search_samples : the threshold search's budget.
    local_draw, local_samples, local_per_histogram, local_seed : the local search's
        sampler on its own streams, budget, draws per histogram and move seed
        ([`local_search_family`][dpaudit.neighbours.candidates.local_search_family]; skipped when
        ``local_draw`` is None or the budget is 0).
    delta : the claimed δ (the local search's score).
    """
    given = given_family(counts, pairs, relation)
    if restrict:
        if counts is None and pairs is None:
            raise ValueError("restrict=True needs counts= or pairs= to restrict to")
        return Families((given,)).pairs(rng)
    d = domain_size or default_domain(mechanism)
    kbar = public_int(mechanism, "kbar")
    offset = threshold_offset(mechanism, d) if kbar is not None else None
    families = given | default_families(relation, d, kbar=kbar, threshold=offset)
    if draw is not None and search_samples > 0:
        families |= _searched_family(
            draw, relation, d, kbar, public_int(mechanism, "k"), offset, search_samples, max_pairs,
            local_draw, local_samples, local_per_histogram, local_seed, delta,
        )  # fmt: skip
    return families.pairs(rng, max_pairs)
