"""shuffledp.accountants."""

# --- clones ---
from shuffledp.accountants import clones as _clones  # noqa: E402

ClonePair = _clones.ClonePair
clone_pair = _clones.clone_pair
clone_probability = _clones.clone_probability
delta_clones = _clones.delta_clones
delta_from_clone_pmf = _clones.delta_from_clone_pmf
eps_clones = _clones.eps_clones
eps_clones_closed_form = _clones.eps_clones_closed_form
mixing_probability = _clones.mixing_probability

# --- blanket ---
from shuffledp.accountants import blanket as _blanket  # noqa: E402

BlanketParams = _blanket.BlanketParams
blanket_params = _blanket.blanket_params
delta_blanket = _blanket.delta_blanket
delta_blanket_from_params = _blanket.delta_blanket_from_params
eps_blanket = _blanket.eps_blanket
max_eps_local = _blanket.max_eps_local

# --- hockey_stick / variation_ratio / poisson / segmented_optimizer (acct-vr) ---
# (the function hockey_stick is not re-exported: it would shadow its module
#  shuffledp.accountants.hockey_stick; import it from there)
# --- personalized ---
from shuffledp.accountants import personalized as _personalized  # noqa: E402
from shuffledp.accountants.hockey_stick import (  # noqa: E402,F401
    composed_delta,
    composed_eps,
    eps_for_delta,
    hockey_stick_symmetric,
)
from shuffledp.accountants.poisson import (  # noqa: E402,F401
    group_privacy,
    min_blanket_rate,
    poisson_delta,
    poisson_delta_lower,
    poisson_lambda,
    poisson_user_delta,
)
from shuffledp.accountants.segmented_optimizer import optimize_segmented, segmented_table  # noqa: E402,F401
from shuffledp.accountants.variation_ratio import (  # noqa: E402,F401
    VRParams,
    vr_delta,
    vr_delta_lower,
    vr_eps,
    vr_eps_lower,
    vr_params,
    witness_eps,
)

hps_delta = _personalized.hps_delta
hps_eps = _personalized.hps_eps
personalized_delta = _personalized.personalized_delta
personalized_eps = _personalized.personalized_eps
poisson_binomial_pmf = _personalized.poisson_binomial_pmf
