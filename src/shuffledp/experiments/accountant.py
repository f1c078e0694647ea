"""Workflow glue for the accountant tables (``workflow/rules/accountant.smk``).

:func:`table_args` turns ``config[<experiment>]`` into the arguments of
``shuffledp account-table segmented``. Keys read (see docs/accountants.md):
``levels``, ``settings`` (``{name: shares}``), ``datasets`` (``{name: {d, s}}``; ``domain`` and
``set_size`` are accepted as aliases), ``delta_factor`` (``delta = delta_factor / n``),
``m_grid`` (``{min, max, num}``: ``numpy.geomspace``, both ends, rounded to 12 significant
digits) and optionally ``accountants`` (default ``[sound, paper]``).
"""

from __future__ import annotations

from collections.abc import Mapping

from shuffledp.config import ConfigError

REQUIRED = ("levels", "settings", "datasets", "delta_factor", "m_grid")


def table_args(config: Mapping, experiment: str, dataset: str, n, setting: str) -> str:
    exp = config.get(experiment)
    if exp is None:
        raise ConfigError(f"config key {experiment}: missing (an accountant table was requested)")
    for key in REQUIRED:
        if key not in exp:
            raise ConfigError(f"config key {experiment}.{key}: missing")
    if setting not in exp["settings"]:
        raise ConfigError(f"config key {experiment}.settings: no setting {setting!r}")
    if dataset not in exp["datasets"]:
        raise ConfigError(f"config key {experiment}.datasets: no dataset {dataset!r}")
    ds = exp["datasets"][dataset]
    d = ds.get("d", ds.get("domain"))
    s = ds.get("s", ds.get("set_size"))
    if d is None or s is None:
        raise ConfigError(f"config key {experiment}.datasets.{dataset}: needs d and s")
    n = int(n)
    grid = exp["m_grid"]
    accountants = exp.get("accountants", ["sound", "paper"])
    return " ".join([
        f"--n {n}", f"--d {int(d)}", f"--s {int(s)}",
        "--levels " + ",".join(repr(float(e)) for e in exp["levels"]),
        "--shares " + ",".join(repr(float(x)) for x in exp["settings"][setting]),
        f"--delta {float(exp['delta_factor']) / n!r}",
        f"--m-grid log:{float(grid['min'])!r}:{float(grid['max'])!r}:{int(grid['num'])}",
        "--accountants " + ",".join(str(a) for a in accountants),
    ])
