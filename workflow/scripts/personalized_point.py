"""One Figure-4 job of the personalized bounds: writes one Parquet row."""

import sys

from shuffledp.experiments.personalized import point
from shuffledp.io import write_parquet

sm = snakemake  # noqa: F821
with open(sm.log[0], "w") as log:
    sys.stderr = log
    p = sm.params
    df = point(p.bound, p.setting, p.mechanism, int(p.n), int(p.seed), float(p.delta_central),
               float(p.delta_local), p.calibration)
    write_parquet(df, sm.output[0])
    print(df.to_string(), file=log)
