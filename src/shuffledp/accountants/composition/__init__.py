"""Composition of T rounds.

* :mod:`.rounds` -- T-round epsilon and dp_accounting privacy-loss distributions of a round;
* :mod:`.pair_pld` -- the privacy-loss distribution of the dominating pair itself;
* :mod:`.profile` -- composition of `account best` from its privacy profile;
* :mod:`.profile_pld` -- a dominating PLD from one round's whole profile (the ``curve`` candidate);
* :mod:`.enumerated` -- one round's exact profile at tiny n, every neighbouring pair enumerated;
* :mod:`.exact` -- the exact T-fold composition of a pair at small n (the oracle).
"""
