"""Lower bounds on the shuffled epsilon (never above the exact value): exact divergences of real
neighbouring pairs.

* :mod:`.lower_bounds` -- neighbouring pairs of shuffled k-RR and the worst pair found;
* :mod:`.third_flag` -- "every other user at a third input", seen through three flags;
* :mod:`.blocked_pairs` -- the same pairs at any n, evaluated in blocks;
* :mod:`.cell_pairs` -- subset-exp's pairs seen through a few report cells.
"""
