"""A toy paper for tests/test_stage_discovery.py: a stage outside the package, found through
SHUFFLEDP_STAGE_PATH and run end to end by Snakemake without any list being edited.

Two steps: ``draw`` (one job per k: k seeded uniform draws) and ``report`` (one figure, one
claims table: the mean of every draw lies in [0, 1]).
"""

from __future__ import annotations

from shuffledp.errors import ConfigError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable


def check(config):
    c = config.get("toy")
    if c is not None and len(set(c["ks"])) != len(c["ks"]):
        raise ConfigError(f"config key toy.ks: {c['ks']} must not repeat a value")


def jobs(config):
    c = config.get("toy")
    if not c:
        return []
    out = [Job("draw", {"k": str(k)}, {"k": int(k), "seed": int(config["seed"]) + int(k)}) for k in c["ks"]]
    table = JobTable(out)
    out.append(Job("report", {}, {"scale": config.get("name", "default")},
                   inputs={"draws": table.refs("draw", "table")}))
    return out


def _draw(spec, inputs, outputs):
    import numpy as np
    import pandas as pd

    from shuffledp.io import write_table

    x = np.random.default_rng(spec["seed"]).random(spec["k"])
    write_table(pd.DataFrame({"k": spec["k"], "x": x}), outputs["table"])


def _report(spec, inputs, outputs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from shuffledp.io import markdown_table, save_figure_file, write_table, write_text

    df = pd.concat([pd.read_parquet(p) for p in inputs["draws"]], ignore_index=True)
    means = df.groupby("k")["x"].mean().reset_index()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(means["k"], means["x"], marker="o")
    save_figure_file(fig, outputs["png"], dpi=60)
    plt.close(fig)
    claims = pd.DataFrame({"id": ["mean_in_unit_interval"], "held": [bool(means["x"].between(0, 1).all())],
                           "scale": [spec["scale"]]})
    write_table(claims, outputs["claims"])
    write_text(outputs["claims_md"], markdown_table(claims, "Toy claims"))


STAGE = Stage(
    name="toy",
    title="Toy paper (tests)",
    section="toy",
    check=check,
    jobs=jobs,
    claims=("report.claims",),
    schema={"type": "object", "additionalProperties": False, "required": ["ks"],
            "properties": {"ks": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}}}},
    steps=(
        Step("draw", _draw, spec="Draw", outputs=(Output("table", "toy/draws/{k}.parquet"),),
             wildcards={"k": "[0-9]+"}, runtime=2),
        Step("report", _report, spec="Report", inputs=("draws",),
             outputs=(Output("png", "figures/toy_fig.png", final=True, report=Report("captions/fig.rst", "Fig. 1")),
                      Output("claims", "tables/toy_claims.parquet", final=True),
                      Output("claims_md", "tables/toy_claims.md", final=True,
                             report=Report("captions/claims.rst", "claims"))),
             runtime=2),
    ),
)
