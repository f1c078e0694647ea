"""Upper bounds on the shuffled epsilon (never below the exact value).

* :mod:`.decomposition` -- the optimal blanket decomposition of a grouped pair;
* :mod:`.flags`, :mod:`.dependent_flags`, :mod:`.hoeffding_flags` -- exact and Hoeffding
  evaluations of four-group pairs with independent or negatively dependent flags;
* :mod:`.variation_ratio` -- the variation-ratio reduction (Wang et al., VLDB 2024);
* :mod:`.clones` -- clones bounds (FMT21 numerical and closed form, FMT23);
* :mod:`.blanket` -- the privacy blanket (Hoeffding, Bennett) and its inverse.
"""
