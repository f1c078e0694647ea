"""Accountants of particular protocols and settings.

* :mod:`.personalized` -- personalized bounds (HPS, BGN, FV, CCC, LZX);
* :mod:`.peruser` -- the per-user-histogram paper's bounds;
* :mod:`.poisson` -- random blanket counts, the Poisson randomizer, group privacy;
* :mod:`.segmented_full` -- the segmented protocol on its full output (searched worst case, small sizes);
* :mod:`.segmented_optimizer` -- lambda_k*, m_k, m* and the accountant tables;
* :mod:`.luo` -- Luo, Wang and Yi's analysis of balls-into-bins (CCS 2022).
"""
