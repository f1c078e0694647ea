"""shuffledp.accountants."""

# --- hockey_stick / variation_ratio / poisson / segmented_optimizer (acct-vr) ---
# (the function hockey_stick is not re-exported: it would shadow its module
#  shuffledp.accountants.hockey_stick; import it from there)
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
