"""Every shuffle accountant on one grid (docs/accountants_internals.md).

Jobs: one ``run`` per mechanism with its (eps0, n, delta) grid inside (one per (mechanism, eps0) was
shorter than its own start-up: the process and the accountants' imports); one ``report`` (the table in
Parquet and Markdown, the run times' Markdown table, the figure); one ``gain`` (what the tighter
accountant buys: local eps and MSE; only with ``accountants_compare.gain``). The computations are in
:mod:`shuffledp.experiments.accountants_compare` and :mod:`shuffledp.experiments.accountants_gain`.
"""

from __future__ import annotations

from collections.abc import Mapping

from shuffledp.accountants import registry
from shuffledp.accountants.validation import AccountantDomainError
from shuffledp.errors import ConfigError, UsageError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable, Ref, check_spellings

TITLE = "Shuffle accountants (all papers)"


def mechanisms(sec: Mapping) -> list[tuple[str, str, int | None]]:
    """``(label, mechanism, k)`` for every mechanism of the section."""
    out = []
    for m in sec["mechanisms"]:
        if m == "general":
            out.append(("general", "general", None))
        else:
            out.append((m, "krr", int(m[len("krr"):])))
    return out


def check_config(config: Mapping) -> None:
    sec = config.get("accountants_compare")
    if not sec:
        return
    for m in sec["mechanisms"]:
        if m != "general" and not (m.startswith("krr") and m[3:].isdigit() and int(m[3:]) >= 2):
            raise ConfigError(f"config key accountants_compare.mechanisms: {m!r} is neither "
                              "'general' nor 'krr<k>' with k >= 2")
    check_spellings(sec["eps0"], "accountants_compare.eps0")
    for b in sec["bounds"]:
        try:
            registry.get(b)
        except AccountantDomainError as exc:  # unknown, or an old spelling (named with its new one)
            raise ConfigError(f"config key accountants_compare.bounds: {exc.message}") from None
    for n in sec["n_grid"]:
        if int(n) < 2:
            raise ConfigError(f"config key accountants_compare.n_grid: {n} must be >= 2")
    for d in sec["deltas"]:
        if not 0 < float(d) < 1:
            raise ConfigError(f"config key accountants_compare.deltas: {d} must lie in (0, 1)")
    g = sec.get("gain")
    if g:
        from shuffledp.experiments.accountants_gain import check_randomizer

        for r in g["randomizers"]:
            try:
                check_randomizer(r)
            except ValueError as exc:
                raise ConfigError(f"config key accountants_compare.gain.randomizers: {exc}") from None
        for n in list(g["n_grid"]) + [g["measure"]["n"]]:
            if float(g["delta_n"]) / int(n) >= 1:
                raise ConfigError(f"config key accountants_compare.gain.delta_n: delta_n / n = "
                                  f"{float(g['delta_n']) / int(n)} must be < 1 (n = {n})")


def subexp_settings_of(config: Mapping) -> list[dict]:
    """The segmented experiment's Subexp-shuffle settings (every dataset's ``d, s`` and every ``n``;
    ``eps_s = uniform_eps``, ``delta_s = delta_factor / n``); none without a ``segmented`` section."""
    seg = config.get("segmented")
    if not seg:
        return []
    out = []
    for name in sorted(seg["datasets"]):
        ds = seg["datasets"][name]
        for n in sorted(int(x) for x in seg["n"]):
            out.append({"d": int(ds["d"]), "s": int(ds["s"]), "n": n,
                        "eps_s": float(seg["uniform_eps"]), "delta_s": float(seg["delta_factor"]) / n})
    # datasets sharing (d, s) give the same rows once
    return [dict(t) for t in dict.fromkeys(tuple(sorted(c.items())) for c in out)]


def _subexp_params_refs(config: Mapping, settings: list[dict]) -> tuple[list[dict], list[Ref]]:
    """``settings`` with, where the segmented stage builds the parameter table of a dataset with that
    (d, s) at that n, the index ``params`` of that table among the returned references: the gain job
    reads Subexp-shuffle's eps0 there instead of searching for it again."""
    seg = config.get("segmented")
    if not seg:
        return settings, []
    from shuffledp.experiments.segmented import panels

    built = sorted({d for d, _ in panels(seg)})  # the datasets whose (dataset, n) params jobs exist
    refs: list[Ref] = []
    out = []
    for c in settings:
        ds = next((d for d in built if (int(seg["datasets"][d]["d"]), int(seg["datasets"][d]["s"]))
                   == (c["d"], c["s"])), None)
        if ds is None or c["n"] not in {int(x) for x in seg["n"]}:
            out.append(c)
            continue
        refs.append(Ref("params", "table", {"segds": ds, "segn": str(c["n"])}, stage="segmented"))
        out.append(dict(c, params=len(refs) - 1))
    return out, refs


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage. ``run``: one per mechanism, its (eps0, n, delta) grid inside;
    ``report``: one (the table and the figure, from every run's table and run times); ``gain``: one,
    if the section has ``gain``."""
    sec = config.get("accountants_compare")
    if not sec:
        return []
    out = []
    for label, mech, k in mechanisms(sec):
        spec = {"mechanism": mech, "k": k, "label": label,
                # order-free in the config: ascending here (the job's rows follow it)
                "eps0": sorted(float(e) for e in sec["eps0"]),
                "n_grid": [int(n) for n in sec["n_grid"]],
                "deltas": [float(d) for d in sec["deltas"]],
                # the registry's order (the config's list is order-free: x-order canonical)
                "bounds": sorted(sec["bounds"], key=registry.NAMES.index),
                "personalized_max_n": int(sec["personalized_max_n"]),
                "exact_max_n": int(sec["exact_max_n"]),
                "rtol": float(sec["rtol"])}
        out.append(Job("run", {"acmech": label}, spec))
    table = JobTable(out)
    out.append(Job("report", {}, {"scale": str(config["name"])},
                   inputs={"runs": table.refs("run", "run"), "timings": table.refs("run", "timings")}))
    g = sec.get("gain")
    if g:
        m = g["measure"]
        subexp, params = _subexp_params_refs(config, subexp_settings_of(config))
        out.append(Job("gain", {}, {
            "randomizers": list(g["randomizers"]), "mhm_domain": int(g["mhm_domain"]),
            "eps_s": [float(x) for x in g["eps_s"]], "n_grid": [int(n) for n in g["n_grid"]],
            "delta_n": float(g["delta_n"]), "rtol": float(g["rtol"]), "seed": int(config["seed"]),
            "measure": {"n": int(m["n"]), "eps_s": float(m["eps_s"]), "reps": int(m["reps"]),
                        "tolerance": float(m["tolerance"])},
            "subexp": subexp,
            "scale": str(config["name"])}, inputs={"params": params}))
    return out


# ----------------------------------------------------------------------------------------- steps


def _run(spec, inputs, outputs) -> None:
    from shuffledp.experiments import accountants_compare as E
    from shuffledp.io import write_table

    try:
        df = E.run_job(spec)
    except ValueError as exc:
        raise UsageError(f"--spec: {exc}") from None
    rows, sec = E.split_timings(df)
    write_table(rows, outputs["run"])
    write_table(sec, outputs["timings"])
    print(f"wrote {len(df)} rows to {outputs['run']}")


def _report(spec, inputs, outputs) -> None:
    from shuffledp.experiments import accountants_compare as E

    E.report(spec, inputs["runs"], inputs["timings"], outputs)
    print(f"wrote {', '.join(outputs.values())}")


def _gain(spec, inputs, outputs) -> None:
    from shuffledp.experiments import accountants_gain as G

    _preset_subexp(spec, inputs["params"])
    G.run_gain(spec, outputs)
    print(f"wrote {', '.join(outputs.values())}")


def _preset_subexp(spec, tables: list[str]) -> None:
    """Subexp-shuffle's settings read from the segmented parameter tables (``params`` index of a
    ``subexp`` entry): the same searches at the same precision, so the same numbers as computing
    them here (checked: the row must be the entry's n, eps_s and delta_s)."""
    import pandas as pd

    from shuffledp.experiments import accountants_gain as G

    for i, c in enumerate(spec.get("subexp", [])):
        if "params" not in c:
            continue
        idx = c["params"]
        if idx >= len(tables):
            raise UsageError(f"--spec: subexp.{i}.params must index the job's params inputs (got {idx!r})")
        df = pd.read_parquet(tables[idx])
        row = df[df["baseline"] == "subexp_shuffle"]
        if len(row) != 1 or int(row["n"].iloc[0]) != int(c["n"]) or float(row["eps"].iloc[0]) != float(
                c["eps_s"]) or float(row["delta"].iloc[0]) != float(c["delta_s"]):
            raise UsageError(f"input params {tables[idx]}: no Subexp-shuffle row at n = {c['n']}, "
                             f"eps = {c['eps_s']}, delta = {c['delta_s']}")
        r = row.iloc[0]
        G.preset_subexp_settings(int(c["d"]), int(c["s"]), int(c["n"]), float(c["eps_s"]), float(c["delta_s"]),
                                 float(spec["rtol"]), eps0_vr=float(r["eps0_vr"]), eps0=float(r["eps0"]),
                                 k=int(r["k"]), by=str(r["certified_by"]))


COMPARE = Report("captions/figure.rst", "every bound on one grid")
GAIN = Report("captions/gain.rst", "what the tighter accountant buys")

STAGE = Stage(
    name="accountants_compare",
    title=TITLE,
    section="accountants_compare",
    check=check_config,
    jobs=jobs,
    steps=(
        Step("run", _run, spec="Run",
             outputs=(Output("run", "accountants_compare/runs/{acmech}.parquet"),
                      # wall-clock run times: not reproducible, so kept out of the table
                      Output("timings", "accountants_compare/timings/{acmech}_timings.parquet")),
             wildcards={"acmech": "general|krr[0-9]+"},
             mem_mb=2000, runtime=60),
        Step("report", _report, spec="Report",
             inputs=("runs", "timings"), required_inputs=frozenset(("runs", "timings")),
             outputs=(Output("table", "tables/accountants_compare.parquet", final=True),
                      Output("md", "tables/accountants_compare.md", final=True,
                             report=Report("captions/table.rst", COMPARE.subcategory)),
                      Output("timings_md", "tables/accountants_compare_timings.md"),
                      Output("pdf", "figures/accountants_compare.pdf", final=True),
                      Output("png", "figures/accountants_compare.png", final=True, report=COMPARE)),
             mem_mb=1000, runtime=10),
        Step("gain", _gain, spec="Gain",
             inputs=("params",),
             outputs=(Output("table", "tables/accountants_gain.parquet", final=True),
                      Output("measured", "tables/accountants_gain_measured.parquet", final=True),
                      Output("md", "tables/accountants_gain.md", final=True, report=GAIN),
                      Output("pdf", "figures/accountants_gain.pdf", final=True),
                      Output("png", "figures/accountants_gain.png", final=True, report=GAIN)),
             mem_mb=1000, runtime=40,
             priority=10),  # the longest job of the default run, and no job waits on it
    ),
)
