"""One row (bound) of Table 2 of the personalized bounds paper: delta_s over the eps_s grid."""

import sys

from shuffledp.experiments.personalized import table2_row
from shuffledp.io import write_parquet

sm = snakemake  # noqa: F821
with open(sm.log[0], "w") as log:
    sys.stderr = log
    p = sm.params
    df = table2_row(p.bound, p.setting, int(p.n), int(p.seed), float(p.delta_local), list(p.eps_grid),
                    p.calibration, method=p.method, clone_factor=p.clone_factor)
    write_parquet(df, sm.output[0])
    print(df.to_string(), file=log)
