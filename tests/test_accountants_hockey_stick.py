"""bisect_switch: the one monotone-predicate bisection shared by the accountants."""

import math


def test_bisect_switch_brackets_the_switch_point():
    from shuffledp.accountants.numerics.hockey_stick import bisect_switch

    root = math.sqrt(2)
    calls = []

    def below(x):
        calls.append(x)
        return x <= root

    lo, hi = bisect_switch(below, 1.0, 2.0, 1e-9)
    assert lo <= root < hi and hi - lo <= 1e-9 * hi
    assert len(calls) <= 31          # halving a width-1 bracket to 2e-9
    lo, hi = bisect_switch(lambda x: x >= root, 1.0, 2.0, 1e-9, ok_lo=False)   # smallest x with ok
    assert lo < root <= hi and hi - lo <= 1e-9 * hi
