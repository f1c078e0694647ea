"""The local randomizers as the accountants see them: output matrices for small instances and
grouped victim pairs for any size.

* :mod:`.standard` -- k-RR, OUE, local hashing, subset-exp, ...;
* :mod:`.mhm` -- MHM's hash randomizer (the multidimensional seed).
"""
