"""Privacy claims and the neighbour relations they are stated for.

A mechanism's ``claim`` is a [`PrivacyClaim`][mechanisms.claims.PrivacyClaim] — ``(epsilon, delta,
neighbours)`` — computed by [`mechanisms.accounting`][mechanisms.accounting] from its paper's
theorem, never typed in by hand.

Relations (DESIGN.md, "Neighbours"):

* [`AddRemoveUser`][mechanisms.claims.AddRemoveUser] — add or remove one user; a user adds at most 1
  to any count, to any number of items (``max_items=None``, unrestricted) or to
  at most Δ items (``max_items=Δ``, the Δ-restricted setting).
  ``c' = c ± s``, ``s ∈ {0,1}^d``, ``|s| <= Δ``, ``c' >= 0``.
* [`BoundedChange`][mechanisms.claims.BoundedChange] — every count moves by at most ``max_change``
  in either direction independently (the relation DP-Sniper and most
  report-noisy-max analyses use); strictly larger than add/remove.
* [`Substitute`][mechanisms.claims.Substitute] — replace one user's record by another (bounded DP:
  the number of users is public). ``c' = c - s + s'``, ``s, s' ∈ {0,1}^d``, ``|s| = |s'| <= Δ``,
  ``c - s >= 0``; on histograms, ``c' - c`` has as many +1 as -1 entries (between 1 and
  Δ of each). ``Substitute(1)``, one record is one item, moves one count down and one
  up. Contained in ``BoundedChange(1)``; one substitution is a removal then an addition.

A claim may also be a curve δ(ε) ([`mechanisms.profiles`][mechanisms.profiles]):
[`PrivacyClaim.from_profile`][mechanisms.claims.PrivacyClaim.from_profile] builds a
[`ProfileClaim`][mechanisms.claims.ProfileClaim], still an ``(epsilon, delta, neighbours)`` tuple (a
point on its curve) that carries the curve; every claim answers
[`delta_at`][mechanisms.claims.PrivacyClaim.delta_at] and
[`epsilon_at`][mechanisms.claims.PrivacyClaim.epsilon_at].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .profiles import PrivacyProfile, ProfilePoints, profile_to_dict
from .validation import require_positive_int

__all__ = [
    "RELATIONS",
    "UNRESTRICTED",
    "AddRemoveUser",
    "BoundedChange",
    "NeighbourRelation",
    "PrivacyClaim",
    "ProfileClaim",
    "Substitute",
]


@dataclass(frozen=True)
class AddRemoveUser:
    """Add or remove one user who touches at most ``max_items`` items (None: any number)."""

    max_items: int | None = None

    def __post_init__(self) -> None:
        if self.max_items is not None:
            require_positive_int("max_items", self.max_items)

    def __str__(self) -> str:
        if self.max_items is None:
            return "add/remove one user (unrestricted)"
        return f"add/remove one user touching <= {self.max_items} items"


@dataclass(frozen=True)
class BoundedChange:
    """Every count may change by at most ``max_change`` in either direction."""

    max_change: int = 1

    def __post_init__(self) -> None:
        require_positive_int("max_change", self.max_change)

    def __str__(self) -> str:
        return f"each count moves by <= {self.max_change} either way"


@dataclass(frozen=True)
class Substitute:
    """Replace one user's record, touching at most ``max_items`` items, by another of the same size.

    Bounded DP (Kifer & Machanavajjhala 2011, "No free lunch in data privacy", SIGMOD:
    neighbours differ in the value of one record, the number of records is fixed; OpenDP
    calls the record-level distance ``ChangeOneDistance``). A histogram moves by one count
    down and one up per item of the record, so its L1 sensitivity is 2Δ, twice that under
    add/remove. ``max_items=1`` (default) is the one-record-one-item histogram; ``None``
    lets a record hold any number of items.
    """

    max_items: int | None = 1

    def __post_init__(self) -> None:
        if self.max_items is not None:
            require_positive_int("max_items", self.max_items)

    def __str__(self) -> str:
        if self.max_items is None:
            return "substitute one user's record (unrestricted)"
        if self.max_items == 1:
            return "substitute one record (one count down, one up)"
        return f"substitute one user's record touching <= {self.max_items} items"


NeighbourRelation = AddRemoveUser | BoundedChange | Substitute
#: Every neighbour relation, for ``isinstance`` checks.
RELATIONS = (AddRemoveUser, BoundedChange, Substitute)
UNRESTRICTED = AddRemoveUser(None)


class PrivacyClaim(NamedTuple):
    """``(epsilon, delta, neighbours)``: the mechanism is (ε, δ)-DP under ``neighbours``."""

    epsilon: float
    delta: float
    neighbours: NeighbourRelation

    def __str__(self) -> str:
        return f"({self.epsilon:.6g}, {self.delta:.6g})-DP, {self.neighbours}"

    @property
    def profile(self) -> PrivacyProfile:
        """The claim as a curve: the one point (ε, δ) ([`ProfilePoints`][mechanisms.profiles.ProfilePoints])."""
        return ProfilePoints(((self.epsilon, self.delta),))

    def delta_at(self, epsilon: float) -> float:
        """The δ this claim allows at ``epsilon`` (its [`profile`][mechanisms.claims.PrivacyClaim.profile]'s δ(ε))."""
        return self.profile.delta_at(epsilon)

    def epsilon_at(self, delta: float) -> float:
        """The smallest ε this claim allows at ``delta`` (``inf``: none)."""
        return self.profile.epsilon_at(delta)

    def with_neighbours(self, neighbours: NeighbourRelation) -> PrivacyClaim:
        """The same claim stated for another relation."""
        return PrivacyClaim(self.epsilon, self.delta, neighbours)

    @classmethod
    def from_profile(
        cls,
        profile: PrivacyProfile,
        neighbours: NeighbourRelation,
        *,
        delta: float | None = None,
        epsilon: float | None = None,
    ) -> ProfileClaim:
        """A claim that is the curve ``profile``, headed by its point at ``delta`` or ``epsilon``.

        The head point ``(epsilon, delta)`` is what single-point code (text, JSON, the ε
        audited by default) reads; [`delta_at`][mechanisms.claims.PrivacyClaim.delta_at] answers
        from the whole curve.

        Parameters
        ----------
        profile : a [`PrivacyProfile`][mechanisms.profiles.PrivacyProfile].
        neighbours : the relation the curve is stated for.
        delta, epsilon : exactly one: the head point's δ (ε = ``profile.epsilon_at(δ)``)
            or its ε (δ = ``profile.delta_at(ε)``).
        """
        return ProfileClaim(profile, neighbours, delta=delta, epsilon=epsilon)


class ProfileClaim(PrivacyClaim):
    """A [`PrivacyClaim`][mechanisms.claims.PrivacyClaim] whose head point lies on a privacy profile δ(ε) it carries.

    Compares equal to the ``(epsilon, delta, neighbours)`` tuple of its head point, and to
    another ``ProfileClaim`` only when the profiles are equal too.
    """

    def __new__(cls, profile, neighbours, *, delta=None, epsilon=None):
        if not isinstance(profile, PrivacyProfile):
            raise ValueError(
                "profile must be a mechanisms.profiles profile (ProfilePoints, "
                f"ZeroConcentratedDP, GaussianDP), got {profile!r}"
            )
        if (delta is None) == (epsilon is None):
            raise ValueError("give exactly one of delta= or epsilon= for the claim's head point")
        if delta is not None:
            epsilon = profile.epsilon_at(delta)
            if epsilon == float("inf"):
                raise ValueError(f"delta={delta!r} is below every δ the profile reaches; raise it")
        else:
            delta = profile.delta_at(epsilon)
        self = super().__new__(cls, float(epsilon), float(delta), neighbours)
        self.__dict__["_profile"] = profile
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"ProfileClaim is immutable (cannot set {name})")

    def __reduce__(self):
        return (_profile_claim, (self.profile, self.neighbours, self.epsilon, self.delta))

    def __eq__(self, other):
        if isinstance(other, ProfileClaim):
            return tuple(self) == tuple(other) and self.profile == other.profile
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((tuple(self), self.profile))

    def __repr__(self) -> str:
        return (
            f"ProfileClaim(profile={self.profile!r}, neighbours={self.neighbours!r}, "
            f"epsilon={self.epsilon!r}, delta={self.delta!r})"
        )

    def __str__(self) -> str:
        described = profile_to_dict(self.profile)
        kind = described.pop("kind")
        details = ", ".join(f"{k}={v}" for k, v in described.items())
        return f"{kind} ({details}): {PrivacyClaim.__str__(self)}"

    @property
    def profile(self) -> PrivacyProfile:
        """The curve this claim is."""
        return self.__dict__["_profile"]

    def with_neighbours(self, neighbours: NeighbourRelation) -> ProfileClaim:
        """The same curve and head point stated for another relation."""
        return _profile_claim(self.profile, neighbours, self.epsilon, self.delta)

    def _replace(self, **changes):
        if set(changes) - {"neighbours"}:
            raise ValueError("a ProfileClaim's head point lies on its profile; build a new one")
        return self.with_neighbours(changes["neighbours"])


def _profile_claim(
    profile: PrivacyProfile, neighbours: NeighbourRelation, epsilon: float, delta: float
) -> ProfileClaim:
    """A ProfileClaim with a head point already on ``profile`` (no root finding again)."""
    self = tuple.__new__(ProfileClaim, (epsilon, delta, neighbours))
    self.__dict__["_profile"] = profile
    return self
