"""The practitioner's surface of the shuffle accountant (docs/accountants_api.md).

Functions (each checks its arguments and raises
:class:`~shuffledp.accountants.validation.AccountantDomainError` naming the one at fault):

* :func:`best_bounds` -- one round: the tightest sound upper bound on the shuffled eps and the
  best lower bound, which bounds gave them (``shuffledp account best``);
* :func:`solve_eps0`, :func:`solve_n` -- the inverse queries: the largest local eps0, the
  smallest number of users, that meet a target eps;
* :func:`rounds_eps` -- T rounds, a fresh shuffle each (adaptive composition);
* :func:`rounds_pld`, :func:`round_pld` -- the same as dp_accounting
  ``PrivacyLossDistribution`` objects, to keep composing with other mechanisms.

And, following dp_accounting's conventions (an event describes what ran; an accountant composes
events and answers ``get_epsilon(target_delta)`` and ``get_delta(target_epsilon)``):
:class:`ShuffleEvent` (one round of a shuffled randomizer) and :class:`ShuffleAccountant`.

Randomizers (``mechanism``): ``krr`` (flag ``k``), ``general`` (any eps0-LDP randomizer),
``subset-exp`` (``d``, ``s``, optional ``k``), ``oue`` (``d``), ``olh`` (optional ``g``), ``mhm``
(``d``, optional ``g``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["best_bounds", "solve_eps0", "solve_n", "rounds_eps", "rounds_pld", "round_pld", "ShuffleEvent",
           "ShuffleAccountant"]


def best_bounds(mechanism: str, eps0: float, n: int, delta: float, *, k: int | None = None,
                d: int | None = None, s: int | None = None, g: int | None = None,
                domain: int | None = None) -> dict[str, Any]:
    """One shuffle round of ``n`` reports of an ``eps0``-LDP ``mechanism``: ``{"eps"`` (a sound
    upper bound on the shuffled eps at ``delta``), ``"eps_lower"`` (a sound lower bound: the true
    eps lies between), ``"ratio"``, ``"upper_by"``, ``"lower_by"`` (which bounds gave them),
    ``"seconds", "bounds"}`` (every bound evaluated). ``domain``: the number of values of the input
    where known (OLH, MHM: the lower bounds that place the others at a third input need it >= 3;
    unknown, they refuse). See :func:`best.best_eps`."""
    from shuffledp.accountants import best

    return best.best_eps(mechanism, eps0, n, delta, k=k, d=d, s=s, g=g, domain=domain)


def solve_eps0(mechanism: str, target_eps: float, n: int, delta: float, *, k: int | None = None,
               d: int | None = None, s: int | None = None, g: int | None = None,
               domain: int | None = None, tol: float = 1e-3) -> dict[str, Any]:
    """The largest local ``eps0`` whose shuffled eps at ``n`` users and ``delta`` is certified at
    most ``target_eps``: ``{"eps0", "eps"`` (its forward answer, at most the target), ``"fails_at"``
    (a point within ``tol``, relative, above it where the forward answer exceeds the target, or
    None), ...``}``. See :func:`inverse.solve_eps0`."""
    from shuffledp.accountants import inverse

    return inverse.solve_eps0(mechanism, target_eps, n, delta, k=k, d=d, s=s, g=g, domain=domain, tol=tol)


def solve_n(mechanism: str, target_eps: float, eps0: float, delta: float, *, k: int | None = None,
            d: int | None = None, s: int | None = None, g: int | None = None,
            domain: int | None = None, tol: float = 1e-3) -> dict[str, Any]:
    """The smallest number of users ``n`` whose shuffled eps at ``eps0`` and ``delta`` is certified
    at most ``target_eps`` (it then holds at every larger n): ``{"n", "eps", "fails_at", ...}``.
    See :func:`inverse.solve_n`."""
    from shuffledp.accountants import inverse

    return inverse.solve_n(mechanism, target_eps, eps0, delta, k=k, d=d, s=s, g=g, domain=domain, tol=tol)


def rounds_eps(mechanism: str, eps0: float, n: int, delta: float, rounds: int, *, k: int | None = None,
               d: int | None = None, s: int | None = None, g: int | None = None,
               domain: int | None = None) -> dict[str, Any]:
    """``rounds`` adaptive shuffle rounds (``1 <= rounds <= 10_000``), a fresh shuffle of ``n``
    reports each: ``{"eps"`` (a sound upper bound at ``delta``), ``"by"`` (which candidate gave it:
    ``curve``, ``pld``, ``profile``, ``advanced``, ``basic``, ``pure`` or, at one round,
    ``one-round``),
    ``"candidates"`` (each evaluated candidate's eps), ...``}``. Never above the advanced or basic
    composition of the one-round eps at ``delta / (2 rounds)``. See
    :func:`composition.composed_eps`."""
    from shuffledp.accountants.composition import rounds as composition

    return composition.composed_eps(mechanism, eps0, n, delta, rounds, k=k, d=d, s=s, g=g, domain=domain)


def rounds_pld(mechanism: str, eps0: float, n: int, rounds: int, *, delta: float = 1e-6,
               k: int | None = None, d: int | None = None, s: int | None = None, g: int | None = None):
    """dp_accounting's ``PrivacyLossDistribution`` of ``rounds`` adaptive shuffle rounds
    (pessimistic: an upper bound on every delta it reports; sized for deltas down to ``delta``).
    Its ``get_epsilon_for_delta`` is the ``pld`` candidate of :func:`rounds_eps`; compose it with
    other PLDs of the same discretization (``pld.compose(other)``)."""
    from shuffledp.accountants.composition import rounds as composition

    return composition.composed_pld(mechanism, eps0, n, rounds, delta=delta, k=k, d=d, s=s, g=g)[0]


def round_pld(mechanism: str, eps0: float, n: int, *, value_discretization_interval: float = 1e-4,
              k: int | None = None, d: int | None = None, s: int | None = None, g: int | None = None):
    """dp_accounting's ``PrivacyLossDistribution`` of one shuffle round on dp_accounting's grid
    (default ``1e-4``, as its own ``from_*`` constructors): compose it with PLDs of other mechanisms
    built on the same grid."""
    from shuffledp.accountants.composition import rounds as composition

    return composition.round_pld(mechanism, eps0, n, interval=value_discretization_interval, k=k, d=d, s=s, g=g)


@dataclass(frozen=True)
class ShuffleEvent:
    """One round of ``n`` reports of an ``eps0``-LDP randomizer, shuffled (dp_accounting calls such
    a description an *event*). ``k``, ``d``, ``s``, ``g``: the randomizer's flags; ``domain``: the
    number of values of the input, where known."""

    mechanism: str
    eps0: float
    n: int
    k: int | None = None
    d: int | None = None
    s: int | None = None
    g: int | None = None
    domain: int | None = None

    def flags(self) -> dict[str, int | None]:
        """The randomizer's flags (``domain`` apart: :meth:`query_flags`)."""
        return {"k": self.k, "d": self.d, "s": self.s, "g": self.g}

    def query_flags(self) -> dict[str, int | None]:
        """The flags and the input ``domain``, as the one-round queries take them."""
        return {**self.flags(), "domain": self.domain}


@dataclass
class ShuffleAccountant:
    """Composes :class:`ShuffleEvent` rounds, dp_accounting style::

        acc = ShuffleAccountant().compose(ShuffleEvent("krr", 1.0, 10_000, k=10), count=100)
        acc.get_epsilon(1e-6)

    One kind of event (any count): :func:`rounds_eps`'s answer (the least of its candidates).
    Several kinds: their rounds' privacy-loss distributions composed (each event's dominating pair;
    one grid for all). ``get_delta``: the composed PLD's delta, and for one kind also basic
    composition of the one-round delta at ``target_epsilon / T`` (the smaller)."""

    events: list[tuple[ShuffleEvent, int]] = field(default_factory=list)

    def compose(self, event: ShuffleEvent, count: int = 1) -> ShuffleAccountant:
        if not isinstance(event, ShuffleEvent):
            raise TypeError(f"event: expected a ShuffleEvent, got {type(event).__name__}")
        if not (isinstance(count, int) and count >= 1):
            raise ValueError(f"count: {count!r} must be an integer >= 1")
        for i, (ev, c) in enumerate(self.events):
            if ev == event:
                self.events[i] = (ev, c + count)
                return self
        self.events.append((event, count))
        return self

    @property
    def rounds(self) -> int:
        return sum(c for _, c in self.events)

    def _need(self) -> None:
        if not self.events:
            raise ValueError("no event composed yet")

    def get_epsilon(self, target_delta: float) -> float:
        """A sound upper bound on the eps of every round composed so far, at ``target_delta``."""
        self._need()
        if len(self.events) == 1:
            ev, count = self.events[0]
            return float(rounds_eps(ev.mechanism, ev.eps0, ev.n, target_delta, count, **ev.query_flags())["eps"])
        return float(self.pld(target_delta).get_epsilon_for_delta(target_delta))

    def get_delta(self, target_epsilon: float) -> float:
        """A sound upper bound on the delta of every round composed so far, at ``target_epsilon``."""
        from shuffledp.accountants.validation import check_eps

        self._need()
        target_epsilon = check_eps(target_epsilon, "target_epsilon")
        value = float(self.pld(1e-10).get_delta_for_epsilon(target_epsilon))
        if len(self.events) == 1:
            from shuffledp.accountants import best

            ev, count = self.events[0]
            one = best.delta_upper(ev.mechanism, ev.eps0, ev.n, target_epsilon / count, **_given(ev.query_flags()))
            value = min(value, count * one)
        return min(value, 1.0)

    def pld(self, target_delta: float = 1e-6):
        """The composed dp_accounting ``PrivacyLossDistribution`` (pessimistic), sized for deltas
        down to ``target_delta``."""
        from shuffledp.accountants.composition import rounds as composition

        self._need()
        if len(self.events) == 1:
            ev, count = self.events[0]
            return rounds_pld(ev.mechanism, ev.eps0, ev.n, count, delta=target_delta, **ev.flags())
        return composition.mixed_pld([(ev.mechanism, ev.eps0, ev.n, count, ev.flags()) for ev, count in self.events],
                                     delta=target_delta)


def _given(flags: dict) -> dict:
    return {name: v for name, v in flags.items() if v is not None}
