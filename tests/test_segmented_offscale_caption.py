"""The segmented figures' caption explains each off-scale point of our error from the run itself."""

import numpy as np
import pandas as pd

from shuffledp.plotting import segmented as pl


def test_off_scale_notes_name_the_point_and_its_rates():
    p = pd.DataFrame({"protocol": ["segmented"] * 3, "m": [0.1, 2.0, 10.0], "error_mean": [0.05, 0.02, 736.0],
                      "mse_bound": [0.05, 0.02, 748.0], "lambda_1": [0.02, 0.1, 1.9e-5],
                      "lambda_2": [0.04, 0.2, 6.4e-3]})
    notes = pl.off_scale_notes(p, (1e-3, 1.0), "T=128 S1 n = 5,000")
    assert len(notes) == 1
    assert "m = 10: MSE 736 (its bound 748)" in notes[0] and "largest lambda_k 0.0064" in notes[0]
    assert "almost no data-dependent message" in notes[0]
    assert pl.off_scale_notes(p, (1e-3, 1e4), "x") == []          # on scale: nothing to explain
    assert pl.off_scale_notes(p.assign(error_mean=np.nan), (1e-3, 1.0), "x") == []
