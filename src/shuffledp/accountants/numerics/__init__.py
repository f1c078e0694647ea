"""Numerics shared by the upper and the lower bounds: the public interface.

Everything here is public (no leading underscore) and documented; the other subpackages of
:mod:`shuffledp.accountants` use only these names, never a private one.

* :mod:`.hockey_stick` -- hockey-stick divergence, eps(delta) by verified bisection, composition
  through dp-accounting's privacy-loss distributions;
* :mod:`.tolerances` -- the rounding and underflow guards every evaluation shares;
* :mod:`.binomial_blocks` -- blocks of consecutive counts of a binomial law (fixed cost at huge n);
* :mod:`.grouped` -- grouped pairs (:class:`~.grouped.GroupedPair`), the per-count divergence of a
  decomposed pair, windows and the secant solve of eps;
* :mod:`.windows` -- the window of a binomial count (Bernstein and Chernoff ends) the sums visit;
* :mod:`.count_sums` -- the per-count sums of :mod:`.grouped` in fewer passes where the threshold's
  slope has one sign (the same numbers);
* :mod:`.walk_blocks` -- three-group decomposed pairs in blocks of one convex count;
* :mod:`.lattice_sums` -- decomposed divergences of pairs whose two ratios live on a lattice.
"""
