"""shuffledp.accountants: privacy accountants of the shuffle model.

The practitioner's surface (docs/accountants_api.md): :func:`best_bounds` (one round, the best
upper and lower bounds), :func:`solve_eps0` and :func:`solve_n` (inverse queries),
:func:`rounds_eps` (T rounds), :func:`rounds_pld` and :func:`round_pld` (dp_accounting privacy-loss
distributions), :class:`ShuffleEvent` and :class:`ShuffleAccountant` (dp_accounting's conventions:
``compose``, ``get_epsilon``, ``get_delta``), all from
:mod:`~shuffledp.accountants.practitioner`.

Modules (import the module for everything; the names below are the public entry points):

* :mod:`~shuffledp.accountants.numerics.hockey_stick` -- hockey-stick divergence, eps(delta) by verified
  bisection, composition through dp-accounting's privacy-loss distributions;
* :mod:`~shuffledp.accountants.upper.variation_ratio` -- the variation-ratio reduction (Wang et al.,
  VLDB 2024): upper and lower bounds, parameters of the standard randomizers;
* :mod:`~shuffledp.accountants.special.poisson` -- random blanket counts, the Poisson randomizer, group
  privacy (segmented paper, Sec. 5.1), with the sound accountant that sees the message count;
* :mod:`~shuffledp.accountants.special.segmented_optimizer` -- lambda_k*, m_k, m* and the accountant tables;
* :mod:`~shuffledp.accountants.upper.clones` -- clones bounds (FMT21 numerical and closed form, FMT23);
* :mod:`~shuffledp.accountants.upper.blanket` -- the privacy blanket (Hoeffding, Bennett) and its
  inverse, the largest ``eps_local`` meeting ``(eps_central, delta_central)``;
* :mod:`~shuffledp.accountants.special.personalized` -- personalized bounds (HPS, BGN, FV, CCC, LZX);
* :mod:`~shuffledp.accountants.special.peruser` -- the per-user-histogram paper's bounds;
* :mod:`~shuffledp.accountants.lower.lower_bounds` -- exact divergences of neighbouring pairs of shuffled
  k-RR and the worst pair found (lower bounds on the true eps);
* :mod:`~shuffledp.accountants.validation` -- the accountants' domains and their one error type,
  :class:`~shuffledp.accountants.validation.AccountantDomainError`.

(The function ``hockey_stick`` is not re-exported: it would shadow its module.)
"""

# Names are loaded on first use (PEP 562), so `import shuffledp.accountants.<module>` and the CLI's
# light commands do not pay for scipy and every accountant module at start-up.
_EXPORTS = {
    "BlanketParams": "upper.blanket",
    "blanket_params": "upper.blanket",
    "delta_blanket": "upper.blanket",
    "delta_blanket_from_params": "upper.blanket",
    "eps_blanket": "upper.blanket",
    "max_eps_local": "upper.blanket",
    "ClonePair": "upper.clones",
    "clone_pair": "upper.clones",
    "clone_probability": "upper.clones",
    "delta_clones": "upper.clones",
    "delta_from_clone_pmf": "upper.clones",
    "eps_clones": "upper.clones",
    "eps_clones_closed_form": "upper.clones",
    "mixing_probability": "upper.clones",
    "composed_delta": "numerics.hockey_stick",
    "composed_eps": "numerics.hockey_stick",
    "eps_for_delta": "numerics.hockey_stick",
    "hockey_stick_symmetric": "numerics.hockey_stick",
    "krr_eps_lower": "lower.lower_bounds",
    "krr_pair_eps": "lower.lower_bounds",
    "krr_worst_pair": "lower.lower_bounds",
    "hps_delta": "special.personalized",
    "hps_eps": "special.personalized",
    "personalized_delta": "special.personalized",
    "personalized_eps": "special.personalized",
    "poisson_binomial_pmf": "special.personalized",
    "group_privacy": "special.poisson",
    "min_blanket_rate": "special.poisson",
    "poisson_delta": "special.poisson",
    "poisson_delta_lower": "special.poisson",
    "poisson_lambda": "special.poisson",
    "poisson_user_delta": "special.poisson",
    "optimize_segmented": "special.segmented_optimizer",
    "segmented_table": "special.segmented_optimizer",
    "AccountantDomainError": "validation",
    "best_bounds": "practitioner",
    "solve_eps0": "practitioner",
    "solve_n": "practitioner",
    "rounds_eps": "practitioner",
    "rounds_pld": "practitioner",
    "round_pld": "practitioner",
    "ShuffleEvent": "practitioner",
    "ShuffleAccountant": "practitioner",
    "VRParams": "upper.variation_ratio",
    "vr_delta": "upper.variation_ratio",
    "vr_delta_lower": "upper.variation_ratio",
    "vr_eps": "upper.variation_ratio",
    "vr_eps_lower": "upper.variation_ratio",
    "vr_params": "upper.variation_ratio",
    "witness_eps": "upper.variation_ratio",
}


__all__ = [
    "BlanketParams", "blanket_params", "delta_blanket", "delta_blanket_from_params", "eps_blanket",
    "max_eps_local",
    "ClonePair", "clone_pair", "clone_probability", "delta_clones", "delta_from_clone_pmf", "eps_clones",
    "eps_clones_closed_form", "mixing_probability",
    "composed_delta", "composed_eps", "eps_for_delta", "hockey_stick_symmetric",
    "krr_eps_lower", "krr_pair_eps", "krr_worst_pair",
    "hps_delta", "hps_eps", "personalized_delta", "personalized_eps", "poisson_binomial_pmf",
    "group_privacy", "min_blanket_rate", "poisson_delta", "poisson_delta_lower", "poisson_lambda",
    "poisson_user_delta",
    "optimize_segmented", "segmented_table",
    "AccountantDomainError",
    "best_bounds", "solve_eps0", "solve_n", "rounds_eps", "rounds_pld", "round_pld", "ShuffleEvent",
    "ShuffleAccountant",
    "VRParams", "vr_delta", "vr_delta_lower", "vr_eps", "vr_eps_lower", "vr_params", "witness_eps",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
