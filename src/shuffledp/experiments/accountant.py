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


def settings(config: Mapping, experiment: str) -> list[str]:
    """Names of the level settings of ``config[<experiment>]`` (config order)."""
    exp = config.get(experiment)
    if exp is None or "settings" not in exp:
        raise ConfigError(f"config key {experiment}.settings: missing (an accountant table was requested)")
    return [str(k) for k in exp["settings"]]


def table_args(config: Mapping, experiment: str, dataset: str, n, setting, out=None) -> str:
    """Arguments of ``shuffledp account-table segmented`` for one (dataset, n) and one setting name
    or a list of them; with ``out`` (one path per setting) each ``--shares`` is paired with its
    ``--out``, so one process writes every setting's table."""
    exp = config.get(experiment)
    if exp is None:
        raise ConfigError(f"config key {experiment}: missing (an accountant table was requested)")
    for key in REQUIRED:
        if key not in exp:
            raise ConfigError(f"config key {experiment}.{key}: missing")
    names = [setting] if isinstance(setting, str) else list(setting)
    for name in names:
        if name not in exp["settings"]:
            raise ConfigError(f"config key {experiment}.settings: no setting {name!r}")
    outs = None if out is None else [str(o) for o in out]
    if outs is not None and len(outs) != len(names):
        raise ConfigError(f"{len(outs)} output paths for {len(names)} settings")
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
    parts = [
        f"--n {n}", f"--d {int(d)}", f"--s {int(s)}",
        "--levels " + ",".join(repr(float(e)) for e in exp["levels"]),
        f"--delta {float(exp['delta_factor']) / n!r}",
        f"--m-grid log:{float(grid['min'])!r}:{float(grid['max'])!r}:{int(grid['num'])}",
        "--accountants " + ",".join(str(a) for a in accountants),
    ]
    for k, name in enumerate(names):
        parts.append("--shares " + ",".join(repr(float(x)) for x in exp["settings"][name]))
        if outs is not None:
            parts.append(f"--out {outs[k]}")
    return " ".join(parts)
