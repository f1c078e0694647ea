"""The one registry of shuffle accountants: every bound's name, kind, randomizers and citation.

Light to import (standard library only): the workflow reads the names while parsing. Each entry
is an :class:`Accountant`; its two functions, :meth:`Accountant.eps_for_delta` and
:meth:`Accountant.delta_for_eps`, import the module that computes it on first use.

Who reads it: ``shuffledp account best`` (:mod:`~shuffledp.accountants.best`: its upper and lower
bounds are the entries of cost ``fixed`` and ``grows``), the cross-paper table (stage
``accountants_compare``: any registered name may be a column; its config check refuses a name not
registered here, the schema lists none), the CLI's ``--bounds`` choices, and
``tests/test_accountant_contract.py``, which every entry inherits.

Adding an accountant (at most three files): its module with the computation (``upper/`` or
``lower/``, on the public numerics of ``shuffledp.accountants.numerics``) and its two
functions (interface below; they compute that bound and nothing else), one entry here naming
them (``eps=`` and ``delta=``, ``"module:function"``: every entry holds its own functions, there
is no dispatch by name and no default), and a test against an independent computation. The
contract test (``tests/test_accountant_contract.py``) then holds it to the common properties
(domain errors, inverse consistency, monotonicity where claimed, upper >= exact >= lower at
exact-enumeration points, values distinct from every other registered bound's) without being
edited; ``best``, the cross-paper table, the config check and the CLI read the name from here.

Interface of the two functions (the entry checks the common arguments first; a violation raises
:class:`~shuffledp.accountants.validation.AccountantDomainError` naming the flag)::

    eps_for_delta(mechanism, eps0, n, delta, *, rtol=1e-5, k=None, d=None, s=None, g=None, domain=None,
                  **options)
    delta_for_eps(mechanism, eps0, n, eps, *, k=None, d=None, s=None, g=None, domain=None, **options)

which call the entry's own functions with the randomizer's parameters filled in (``p``, a dict)::

    eps(mechanism, eps0, n, delta, p, *, rtol, **options)     delta(mechanism, eps0, n, eps, p, **options)

``premise`` (optional, ``"module:function"``, ``(mechanism, p) -> None or a reason``): the
condition for the neighbouring pair a lower bound evaluates to exist (a third input needs
k >= 3, d >= 3, ...); where it fails the entry refuses the point (:class:`NotEvaluated`) and
``best`` leaves the bound out.

``kind``: ``upper`` -- a sound upper bound on the worst-case shuffled eps (delta) of every
randomizer in ``randomizers``; ``lower`` -- a lower bound (an impossibility) for them;
``reference`` -- a published bound shown for comparison, not a guarantee for these randomizers
(its scope is in ``summary``). Upper bounds return verified points rounded up, lower bounds
rounded down.

``cost``: ``fixed`` (independent of n; the decomposition evaluates its counts in blocks above a
width), ``grows`` (about sqrt(n): ``best`` evaluates it only up to
its ``HEAVY_N_MAX``), ``per-user`` (an array per user: the table evaluates it up to its
``personalized_max_n``, ``best`` never), ``enumeration`` (every configuration: the table up to
``exact_max_n``), ``aggregate`` (the largest of the lower bounds ``best`` evaluates: a table column).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from shuffledp.accountants.params import GROUPED, RANDOMIZERS

__all__ = ["RANDOMIZERS", "KINDS", "COSTS", "Accountant", "NotEvaluated", "REGISTRY", "NAMES", "RENAMED",
           "get", "names", "for_randomizer"]

KINDS = ("upper", "lower", "reference")
COSTS = ("fixed", "grows", "per-user", "enumeration", "aggregate")
_IMPL = "shuffledp.accountants.interface"
_FILL = f"{_IMPL}:filled"  # the randomizer's parameters with their defaults (params.mechanism_params)
_THIRD = f"{_IMPL}:third_input_exists"     # premise: a third input for the other users to hold
_TWO_SETS = f"{_IMPL}:two_disjoint_sets"  # premise: subset-exp has two disjoint sets
_KRR = f"{_IMPL}:is_krr"  # premise: the randomizer is k-RR (subset-exp with s = 1, subset size 1)
_KRR3 = f"{_IMPL}:is_krr_with_third_value"
_FLAGS = f"{_IMPL}:has_three_flags"  # OUE d >= 3, OLH / MHM with d = 1 (= OLH) with domain >= 3


class NotEvaluated(Exception):
    """An accountant declines a point inside its domain (a cost guard, a rate that rounds to 0 or
    1): ``best`` leaves it out, the table records the reason in its ``note``."""


@dataclass(frozen=True)
class Accountant:
    """One registered bound. ``k_range``: the k-RR sizes it applies to (``(low, high)``, ``None``
    unbounded); ``exact_on``: randomizers on which its value is exact (the table's kind
    ``exact``); ``monotone_n``: its value is claimed non-increasing in n (contract-tested)."""

    name: str
    kind: str
    randomizers: tuple[str, ...]
    cost: str
    citation: str
    summary: str
    eps_impl: str
    delta_impl: str
    k_range: tuple[int, int | None] = (2, None)
    exact_on: tuple[str, ...] = ()
    monotone_n: bool = False
    options: tuple[str, ...] = field(default=())
    notes: tuple[tuple[str, str], ...] = ()  # (randomizer or "*", the table's note on its scope)
    rounding: str = ""  # "up" / "down": the side its eps is rounded to (default: up for upper and
    # reference bounds, down for lower bounds); "up" for an exact value, which lies within rtol above
    premise: str = ""  # "module:function" (mechanism, params) -> None or why its pair does not exist

    @property
    def rounds(self) -> str:
        """``up``: the eps returned is a verified point where its delta meets the target (its delta
        there is at most the target); ``down``: a point where its delta still exceeds the target."""
        return self.rounding or ("down" if self.kind == "lower" else "up")

    def note(self, mechanism: str) -> str:
        """The scope note the cross-paper table prints beside this bound for ``mechanism``."""
        return next((txt for m, txt in self.notes if m in (mechanism, "*")), "")

    def applies(self, mechanism: str, k: int | None = None) -> bool:
        """Whether the bound applies to ``mechanism`` (and, for k-RR, to its size ``k``)."""
        if mechanism not in self.randomizers:
            return False
        if mechanism == "krr" and k is not None:
            low, high = self.k_range
            return k >= low and (high is None or k <= high)
        return True

    def refusal(self, mechanism: str, params: dict) -> str | None:
        """Why the bound's pair does not exist for the randomizer with the (filled) ``params``, or
        None (no premise, or it holds)."""
        return _resolve(self.premise)(mechanism, params) if self.premise else None

    def _call(self, impl: str, mechanism: str, eps0, n, x, params: dict, *, at_eps: bool = False, **kw) -> float:
        """Checks, the randomizer's parameters filled in, the premise, then the entry's function;
        ``at_eps``: ``x`` is an eps (an upper bound's delta is 0 from ``eps >= eps0`` on)."""
        from shuffledp.accountants.validation import AccountantDomainError, check_choice, check_eps0, check_n

        check_choice(mechanism, "mechanism", self.randomizers)
        eps0, n = check_eps0(eps0), check_n(n)
        unknown = sorted(set(kw) - set(self.options) - {"rtol"})
        if unknown:
            raise AccountantDomainError(unknown[0], f"not an option of {self.name}")
        if mechanism == "krr" and not self.applies(mechanism, params.get("k")):
            raise AccountantDomainError("k", f"{params.get('k')!r} outside {self.name}'s k-RR sizes {self.k_range}")
        p = _resolve(_FILL)(mechanism, eps0, params)   # by name: the registry stays light to import
        why = self.refusal(mechanism, p)
        if why:
            raise NotEvaluated(why)
        if at_eps and self.kind != "lower" and x >= eps0:   # shuffling eps0-LDP reports is eps0-DP
            return 0.0
        return float(_resolve(impl)(mechanism, eps0, n, x, p, **kw))

    def eps_for_delta(self, mechanism: str, eps0: float, n: int, delta: float, *, rtol: float = 1e-5,
                      k=None, d=None, s=None, g=None, domain=None, **options) -> float:
        """The bound on the shuffled eps at ``delta`` (upper: rounded up; lower: rounded down)."""
        from shuffledp.accountants.validation import check_delta, check_rtol

        delta, rtol = check_delta(delta), check_rtol(rtol)
        value = self._call(self.eps_impl, mechanism, eps0, n, delta, _params(k, d, s, g, domain), rtol=rtol, **options)
        return value if self.kind == "lower" else min(value, float(eps0))

    def delta_for_eps(self, mechanism: str, eps0: float, n: int, eps: float, *, k=None, d=None, s=None, g=None,
                      domain=None, **options) -> float:
        """The bound on the shuffled delta at ``eps`` (upper: an upper bound; lower: a lower bound)."""
        from shuffledp.accountants.validation import check_eps

        eps = check_eps(eps)
        return self._call(self.delta_impl, mechanism, eps0, n, eps, _params(k, d, s, g, domain), at_eps=True, **options)


def _resolve(impl: str):
    module, func = impl.split(":")
    return getattr(importlib.import_module(module), func)


def _params(k, d, s, g, domain=None) -> dict:
    return {name: v for name, v in (("k", k), ("d", d), ("s", s), ("g", g), ("domain", domain)) if v is not None}


def _entry(name, kind, randomizers, cost, citation, summary, *, eps: str, delta: str, **kw) -> Accountant:
    return Accountant(name, kind, tuple(randomizers), cost, citation, summary, eps, delta, **kw)


_ALL = RANDOMIZERS
_REF = "the personalized bound with every user at eps0 (per-user arrays)"
REGISTRY: dict[str, Accountant] = {a.name: a for a in (
    # ---- upper bounds (the order is the cross-paper table's column order)
    _entry("decomposition", "upper", ("krr",) + GROUPED, "fixed",
           "this project (accountants.decomposition; docs/accountants.md)",
           "the optimal blanket decomposition of the victim's grouped pair, evaluated grid-free",
           options=("guess", "ceiling"), monotone_n=True,
           eps=f"{_IMPL}:decomposition_eps", delta=f"{_IMPL}:decomposition_delta"),
    _entry("variation-ratio", "upper", _ALL, "fixed", "Wang et al., VLDB 2024 (variation-ratio reduction)",
           "the variation-ratio reduction with its sound parameters (k-RR: exact; others: general)",
           options=("coarse",), monotone_n=True,
           eps=f"{_IMPL}:variation_ratio_eps", delta=f"{_IMPL}:variation_ratio_delta"),
    _entry("fmt21", "upper", _ALL, "fixed", "Feldman, McMillan, Talwar, FOCS 2021 (hiding among the clones)",
           "clones, numerical", monotone_n=True,
           eps=f"{_IMPL}:fmt21_eps", delta=f"{_IMPL}:fmt21_delta"),
    _entry("fmt23", "upper", _ALL, "fixed", "Feldman, McMillan, Talwar, SODA 2023 (stronger clones)",
           "stronger clones, numerical", monotone_n=True,
           eps=f"{_IMPL}:fmt23_eps", delta=f"{_IMPL}:fmt23_delta"),
    _entry("fmt21-closed-form", "upper", _ALL, "fixed", "Feldman, McMillan, Talwar, FOCS 2021, Theorem 3.1",
           "clones, closed form", monotone_n=True,
           eps=f"{_IMPL}:fmt21_closed_form_eps", delta=f"{_IMPL}:fmt21_closed_form_delta"),
    _entry("blanket-hoeffding", "upper", _ALL, "fixed", "Balle, Bell, Gascon, Nissim, CRYPTO 2019 (privacy blanket)",
           "privacy blanket, Hoeffding tail (exact k-RR moments; generic constants otherwise)", monotone_n=True,
           eps=f"{_IMPL}:blanket_hoeffding_eps", delta=f"{_IMPL}:blanket_hoeffding_delta"),
    _entry("blanket-bennett", "upper", _ALL, "fixed", "Balle, Bell, Gascon, Nissim, CRYPTO 2019 (privacy blanket)",
           "privacy blanket, Bennett tail (exact k-RR moments; generic constants otherwise)", monotone_n=True,
           eps=f"{_IMPL}:blanket_bennett_eps", delta=f"{_IMPL}:blanket_bennett_delta"),
    _entry("hps-uniform", "reference", _ALL, "per-user", "Liu, Liu, Xiong, Gu, Chen, CIKM 2024 (HPS)",
           f"{_REF}; Laplace randomizer on [0,1] only", notes=(("*", "Laplace randomizer on [0,1] only"),),
           eps=f"{_IMPL}:hps_uniform_eps", delta=f"{_IMPL}:hps_uniform_delta"),
    _entry("ccc", "reference", _ALL, "per-user", "Chen, Cao, Ge, AAAI 2024 (CCC, mu-GDP)",
           f"{_REF}; Gaussian-DP (CLT) approximation", notes=(("*", "Gaussian-DP (CLT) approximation"),),
           eps=f"{_IMPL}:ccc_eps", delta=f"{_IMPL}:ccc_delta"),
    _entry("lzx", "upper", _ALL, "per-user", "Liu et al., AAAI 2023 (LZX, per-user echo probabilities)",
           f"{_REF}; any eps0-LDP randomizer", notes=(("*", "any eps0-LDP randomizer"),), monotone_n=True,
           eps=f"{_IMPL}:lzx_eps", delta=f"{_IMPL}:lzx_delta"),
    # ---- lower bounds
    _entry("lower", "lower", _ALL, "aggregate", "this project",
           "the largest of the lower bounds `best` evaluates for the randomizer",
           eps=f"{_IMPL}:lower_eps", delta=f"{_IMPL}:lower_delta"),
    _entry("exact", "lower", ("krr", "general"), "enumeration", "this project (exact enumeration)",
           "binary randomized response, exact worst case over every configuration of the others "
           "(exact for k-RR with k = 2; a lower bound for the general class)",
           k_range=(2, 2), exact_on=("krr",), rounding="up",
           notes=(("general", "binary RR, exact worst case (lower bound for the class)"),),
           eps=f"{_IMPL}:exact_eps", delta=f"{_IMPL}:exact_delta"),
    _entry("worst-pair", "lower", ("krr", "general", "subset-exp"), "fixed",
           "this project (lower_bounds.krr_worst_pair)",
           "worst real pair found over the others' splits between the victim's two values "
           "(binary RR for the general class; subset-exp with s = 1 and subset size 1 is (d + 1)-RR)",
           premise=_KRR, eps=f"{_IMPL}:worst_pair_eps", delta=f"{_IMPL}:worst_pair_delta"),
    _entry("pair-third-value", "lower", ("krr", "subset-exp"), "grows",
           "this project (exact_pairs.krr_pair_lower_eps)",
           "real pairs with the others at the victim's values or a third one (k >= 3; subset-exp with s = 1 and "
           "subset size 1 is (d + 1)-RR)", k_range=(3, None), premise=_KRR3,
           eps=f"{_IMPL}:pair_third_value_eps", delta=f"{_IMPL}:pair_third_value_delta"),
    _entry("group-one-count", "lower", GROUPED, "fixed", "this project (best.group_count_lower_eps)",
           "exact divergence of the count of reports favouring the victim's first input only",
           premise=_TWO_SETS, eps=f"{_IMPL}:group_one_count_eps", delta=f"{_IMPL}:group_one_count_delta"),
    _entry("pair-group-counts", "lower", GROUPED, "grows", "this project (exact_pairs.pair_lower_eps)",
           "exact divergence of three group counts of real pairs (Su, Cheng, Wang's class)",
           premise=_TWO_SETS, eps=f"{_IMPL}:pair_group_counts_eps", delta=f"{_IMPL}:pair_group_counts_delta"),
    _entry("pair-third-input", "lower", ("oue", "olh", "mhm"), "grows", "this project (third_flag)",
           "the others at a third input, three flags seen per report (OUE d >= 3; OLH and MHM with d = 1, which is "
           "OLH, given an input domain of at least 3 values)",
           options=("guess",), premise=_FLAGS,
           eps=f"{_IMPL}:pair_third_input_eps", delta=f"{_IMPL}:pair_third_input_delta"),
    _entry("third-input-blocked", "lower", ("krr", "general", "subset-exp", "oue", "olh", "mhm"), "fixed",
           "this project (blocked_pairs)",
           "the others at a third input (k-RR: a third value; the general class: 3-RR; subset-exp with s = 1 and "
           "subset size 1: (d + 1)-RR; OUE d >= 3, OLH and MHM with d = 1 with domain >= 3), every count seen, "
           "evaluated in blocks at any n (Jensen: rounded down)", k_range=(3, None), options=("guess",),
           premise=f"{_IMPL}:third_input_blocked_premise",
           eps=f"{_IMPL}:third_input_blocked_eps", delta=f"{_IMPL}:third_input_blocked_delta"),
    _entry("cells-blocked", "lower", ("subset-exp",), "fixed", "this project (cell_pairs)",
           "the others at a third set or at x, the counts of reports meeting x, x' (and the third set) "
           "seen, evaluated in blocks at any n (Jensen: rounded down)", options=("guess",),
           premise=_THIRD, eps=f"{_IMPL}:cells_blocked_eps", delta=f"{_IMPL}:cells_blocked_delta"),
)}

NAMES: tuple[str, ...] = tuple(REGISTRY)
# old spellings (``account best`` before the registry): refused with the new name, never aliased
RENAMED = {"clones-fmt21": "fmt21", "clones-fmt23": "fmt23", "clones-closed-form": "fmt21-closed-form",
           # the variation-ratio module's witness was the worst-pair search itself (k-RR) or its maximum
           # with 3-RR's, which never exceeded binary RR's (the contract test found them equal)
           "witness": "worst-pair"}


def get(name: str, flag: str = "bounds") -> Accountant:
    """The entry ``name``; an old spelling or an unknown name raises
    :class:`~shuffledp.accountants.validation.AccountantDomainError` naming ``flag``."""
    from shuffledp.accountants.validation import AccountantDomainError

    if name in REGISTRY:
        return REGISTRY[name]
    if name in RENAMED:
        raise AccountantDomainError(flag, f"{name!r} is now spelled {RENAMED[name]!r}")
    raise AccountantDomainError(flag, f"unknown bound {name!r}; choose from {', '.join(NAMES)}")


def names(*, kind: str | None = None, costs: tuple[str, ...] = COSTS) -> tuple[str, ...]:
    """Registered names (in registry order), optionally of one kind and of the given costs."""
    return tuple(a.name for a in REGISTRY.values() if (kind is None or a.kind == kind) and a.cost in costs)


def for_randomizer(mechanism: str, *, k: int | None = None, kind: str | None = None,
                   costs: tuple[str, ...] = COSTS, params: dict | None = None) -> list[Accountant]:
    """The entries that apply to ``mechanism`` (k-RR: of size ``k``), in registry order; with
    ``params`` (the randomizer's, filled in) only those whose premise holds there."""
    out = [REGISTRY[nm] for nm in names(kind=kind, costs=costs) if REGISTRY[nm].applies(mechanism, k)]
    if params is not None:
        out = [a for a in out if not a.refusal(mechanism, params)]
    return out
