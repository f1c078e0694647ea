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
