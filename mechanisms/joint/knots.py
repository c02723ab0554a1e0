"""The coarse knot mixture of Joint: exact counts at a few knots, corrected by rejection.

Derived in docs/joint.md ("Knots"): a proposal over knot segments whose
weights dominate e^{-ε g/2}, so the kept sets follow seed 004 Definition 3 exactly.
"""

import functools
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from . import limits
from .grid import _cut_index, _log_mixture
from .set_count import _full_set_counts, _set_forward, _set_row_work


def _segment_log_h(grid, knots, epsilon):
    """log H_j = log Σ_{t in segment j} w_t and log ℓ_j = -ε u_{s_j}/2 for knot segments.

    Segment j holds grid indices s_j = knots[j-1] + 1 .. knots[j] (s_0 = 0); the
    last knot is the end of the (cut) grid, whose weight runs to infinity.
    """
    half = epsilon / 2.0
    starts = np.concatenate([[0], knots[:-1] + 1])
    u_start = grid[starts].astype(np.float64)
    log_level = -half * u_start
    log_h = log_level.copy()
    nxt = np.minimum(knots[:-1] + 1, grid.size - 1)
    span = grid[nxt].astype(np.float64) - u_start[:-1]
    log_h[:-1] += np.log(-np.expm1(-half * span))
    return log_h, log_level


def _place_knots(grid, log_mass, log_n, epsilon):
    """Knot indices (ascending, last = end of grid) for estimated masses and log counts.

    From the top down, each segment [s, κ] is made as long as its proposal
    mass H(s, κ) N(κ) exceeds its estimated mass by at most
    (1/KNOT_ACCEPTANCE - 1)/KNOT_SEGMENTS of the estimated total (equal excess
    per segment): wide segments where the mass is negligible, narrow ones at the
    peak; about KNOT_SEGMENTS segments give an acceptance of KNOT_ACCEPTANCE.
    """
    half = epsilon / 2.0
    last = grid.size - 1
    cum = np.logaddexp.accumulate(log_mass)
    slack = float(cum[-1]) + np.log((1.0 / limits.KNOT_ACCEPTANCE - 1.0) / limits.KNOT_SEGMENTS)
    u = grid.astype(np.float64)
    knots = [last]
    kappa = last
    while kappa > 0:
        s = np.arange(kappa + 1)
        before = np.concatenate([[-np.inf], cum[:kappa]])
        with np.errstate(divide="ignore", invalid="ignore"):
            log_q = cum[kappa] + np.log1p(-np.exp(np.minimum(before - cum[kappa], 0.0)))
            log_h = -half * u[s]
            if kappa < last:
                log_h = log_h + np.log(-np.expm1(-half * (u[kappa + 1] - u[s])))
        ok = log_h + log_n[kappa] <= np.logaddexp(log_q, slack)
        bad = np.flatnonzero(~ok)
        start = int(bad[-1]) + 1 if bad.size else 0
        start = min(start, kappa)
        if start == 0:
            break
        kappa = start - 1
        knots.append(kappa)
    return np.array(sorted(knots), dtype=np.int64)


class _Proposal(NamedTuple):
    """The knot proposal of one round of ``coarse_tables``, and its planned acceptance."""

    cut: int
    bound: float
    knots: np.ndarray
    log_level: np.ndarray
    exact: np.ndarray  # whether each knot's count is exact
    log_u: np.ndarray  # log count at each knot (exact, or its upper bound)
    log_p: np.ndarray  # log proposal mass of each segment
    log_zh: float
    starts: np.ndarray
    w_cut: np.ndarray
    log_q: np.ndarray  # log of each segment's mass under the lower bound
    guess: np.ndarray  # log N interpolated between exact counts
    acceptance: float


def _first_probes(half_grid, upper, lower, last):
    """Probes across the range between the two bounds' peaks, and at doubling distances on
    both sides (where the log-count estimate comes from)."""
    peaks = sorted(
        (
            int(np.argmax((lower - half_grid)[: last + 1])),
            int(np.argmax((upper - half_grid)[: last + 1])),
        )
    )
    width = max(peaks[1] - peaks[0], 16)
    new = np.concatenate(
        [
            np.linspace(peaks[0], peaks[1], 8),
            peaks[0] - width * np.array([0.5, 1.5, 3.5]),
            peaks[1] + width * np.array([0.5, 1.5, 3.5]),
        ]
    )
    return np.unique(np.clip(new.round(), 0, last).astype(np.int64))


def _count_rows(sorted_counts, k, grid, new, ex_idx, ex_val, spent):
    """Exact counts at the grid indices ``new`` added to ``(ex_idx, ex_val)`` (sorted), and the
    counting work ``spent`` so far (cell estimates)."""
    # rows of similar gaps share one call (a call pays the widest band of its rows)
    for part in np.array_split(new, max(1, -(-new.size // limits.KNOT_ROWS))):
        if part.size:
            cells, blocks, _ = _set_row_work(sorted_counts, k, int(grid[part[-1]]), merge=True)
            spent += part.size * cells + blocks * limits.BLOCK_OVERHEAD_CELLS
            values = _set_forward(sorted_counts, k, grid[part], merge=True)[0]
            ex_idx = np.concatenate([ex_idx, part])
            ex_val = np.concatenate([ex_val, values])
    sort = np.argsort(ex_idx)
    return ex_idx[sort], ex_val[sort], spent


def _tightened_bounds(ex_idx, ex_val, upper, lower):
    """The log-count bounds tightened by the exact counts: N is non-decreasing in u, so exact
    counts bound their neighbours (from above with a relative margin of 1e-10 for the
    programme's rounding)."""
    every = np.arange(upper.size)
    above = np.searchsorted(ex_idx, every, side="left")
    up = upper.copy()
    has = above < ex_idx.size
    ceiling = ex_val + 1e-10 * (1.0 + np.abs(ex_val))
    up[has] = np.minimum(up[has], ceiling[above[has]])
    below = np.searchsorted(ex_idx, every, side="right") - 1
    lo = lower.copy()
    has = below >= 0
    lo[has] = np.maximum(lo[has], ex_val[below[has]])
    return up, lo


def _proposal(grid, tail, epsilon, log_w, half_grid, ex_idx, ex_val, up, lo):
    """The knot proposal at the exact counts so far (docs/joint.md, "Knots")."""
    # Σ_t w_t N_lower(u_t) <= Z (every term is the mass of some outcomes)
    z_lower = float(logsumexp(log_w + lo))
    cut, bound = _cut_index(grid, up, tail, np.full(grid.size, z_lower), epsilon)
    knots = np.union1d(ex_idx[ex_idx <= cut], [cut]).astype(np.int64)
    log_h, log_level = _segment_log_h(grid[: cut + 1], knots, epsilon)
    exact = np.isin(knots, ex_idx)
    log_u = up[knots]
    log_u[exact] = ex_val[np.searchsorted(ex_idx, knots[exact])]
    log_p = log_h + log_u
    log_zh = float(logsumexp(log_p))
    starts = np.concatenate([[0], knots[:-1] + 1])
    w_cut = log_w[: cut + 1].copy()
    w_cut[cut] = -half_grid[cut]
    log_q = np.logaddexp.reduceat(w_cut + lo[: cut + 1], starts)
    # planned acceptance Z/Z_h with log N interpolated between exact counts
    guess = np.clip(np.interp(grid[: cut + 1], grid[ex_idx], ex_val), lo[: cut + 1], up[: cut + 1])
    acceptance = float(np.exp(logsumexp(w_cut + guess) - log_zh))
    return _Proposal(
        cut, bound, knots, log_level, exact, log_u, log_p, log_zh, starts, w_cut, log_q, guess,
        acceptance,
    )  # fmt: skip


def _planned_knots(grid, epsilon, proposal, ex_idx, ex_val, up, lo):
    """Knots placed from the interpolated log counts; exact counts at them follow (the
    estimate only steers the work)."""
    cut = proposal.cut
    # beyond the last exact count: extrapolate log N along its last slope
    # (within the bounds), and the proposal's own upper bound at the cut
    plan = proposal.guess.copy()
    top = ex_idx[-1]
    if ex_idx.size >= 2 and top < cut:
        slope = (ex_val[-1] - ex_val[-2]) / float(grid[top] - grid[ex_idx[-2]])
        ahead = ex_val[-1] + slope * (grid[top + 1 : cut + 1] - grid[top])
        plan[top + 1 :] = np.clip(ahead, lo[top + 1 : cut + 1], up[top + 1 : cut + 1])
    plan[cut] = up[cut]
    return _place_knots(grid[: cut + 1], proposal.w_cut + plan, plan, epsilon)


def _refinements(proposal: _Proposal, up: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Grid indices to count next: in the segments whose proposal mass most exceeds its
    monotone lower bound, the knot (when not exact) or cuts of the segment."""
    with np.errstate(divide="ignore"):
        excess = proposal.log_p + np.log1p(
            -np.exp(np.minimum(proposal.log_q - proposal.log_p, 0.0))
        )
    knots, starts = proposal.knots, proposal.starts
    refine: list[int] = []
    for j in np.argsort(-excess):
        if excess[j] < proposal.log_zh - 7.0 or len(refine) >= 4 * limits.KNOT_ROWS:
            break  # negligible segments: refining them cannot move the acceptance
        if not proposal.exact[j]:
            refine.append(knots[j])
        elif knots[j] > starts[j]:
            # split so that log N grows by about KNOT_LOG_STEP per piece
            pieces = int(min(8, np.ceil((up[knots[j]] - lo[starts[j]]) / limits.KNOT_LOG_STEP)))
            cuts = np.linspace(starts[j], knots[j], max(2, pieces) + 1)[1:-1]
            refine.extend(np.unique(np.floor(cuts).astype(np.int64)).tolist())
    return np.array(refine, dtype=np.int64)


def _check_table(sorted_counts, k, epsilon, cut_gap):
    """Refuse a coarse mixture whose sampling tables would exceed ``MAX_SET_TABLE`` cells."""
    _, _, table = _set_row_work(sorted_counts, k, cut_gap, merge=True)
    if table > limits.MAX_SET_TABLE:
        raise ValueError(
            f"Joint(k={k}, epsilon={epsilon}) on d={sorted_counts.size}+ items would need "
            f"{table:.1e}-cell sampling tables (limit MAX_SET_TABLE={limits.MAX_SET_TABLE:.0e}); "
            f"use JointSequence, a smaller k, or a larger epsilon"
        )


def coarse_tables(
    sorted_counts: np.ndarray,
    k: int,
    epsilon: float,
    grid: np.ndarray,
    tail: float,
    upper: np.ndarray,
    lower: np.ndarray,
    last: int,
) -> dict:
    """Knots, counts and proposal weights of the coarse mixture (docs/joint.md, "Knots").

    Exact counts are computed at a few probes between the peaks of the two
    bounds, then at the knots and segment midpoints that carry the largest
    gap between the proposal's mass and its monotone lower bound, until the
    planned acceptance reaches KNOT_ACCEPTANCE or the counting work reaches
    KNOT_COUNT_WORK (cell estimates, not clock time: the plan, hence the
    random stream, does not depend on the machine's load).
    """
    half_grid = epsilon * grid / 2.0
    log_w = _log_mixture(grid, np.zeros(grid.size), epsilon)
    ex_idx, ex_val, spent = np.empty(0, dtype=np.int64), np.empty(0), 0.0
    new = _first_probes(half_grid, upper, lower, last)
    placements = 0
    while True:
        new = np.setdiff1d(new, ex_idx)
        ex_idx, ex_val, spent = _count_rows(sorted_counts, k, grid, new, ex_idx, ex_val, spent)
        up, lo = _tightened_bounds(ex_idx, ex_val, upper, lower)
        proposal = _proposal(grid, tail, epsilon, log_w, half_grid, ex_idx, ex_val, up, lo)
        acceptance = proposal.acceptance
        if placements < limits.KNOT_PLACEMENTS and acceptance < limits.KNOT_ACCEPTANCE:
            # Place the knots from the interpolated log counts (twice: the
            # second time from the counts at the first knots).
            placements += 1
            new = np.setdiff1d(
                _planned_knots(grid, epsilon, proposal, ex_idx, ex_val, up, lo), ex_idx
            )
            if new.size:
                continue
        if acceptance >= limits.KNOT_ACCEPTANCE or (
            spent >= limits.KNOT_COUNT_WORK and acceptance >= limits.KNOT_MIN_ACCEPTANCE
        ):
            break  # (below the floor, refine on: every grid value a knot means 1)
        new = np.setdiff1d(_refinements(proposal, up, lo), ex_idx)
        if not new.size:
            break
    _check_table(sorted_counts, k, epsilon, int(grid[proposal.cut]))
    return {
        "grid": grid[: proposal.cut + 1],
        "knots": proposal.knots,
        "log_knot_n": proposal.log_u,
        "knot_exact": proposal.exact,
        "log_mix": proposal.log_p,
        "log_level": proposal.log_level,
        "log_tail_bound": float(proposal.bound),
        "exact_mixture": False,
        "acceptance": acceptance,
        "_full_counter": functools.partial(_full_set_counts, k=k, epsilon=epsilon),
    }
