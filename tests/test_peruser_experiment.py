"""The experiment pipeline end to end on a tiny synthetic config: jobs, determinism, claims,
figures, config checks."""

import copy
import io

import pandas as pd
import pytest

from shuffledp.config import ConfigError, fill_defaults
from shuffledp.experiments import peruser as E
from shuffledp.stages import peruser as S

SEC = {
    "datasets": [{"name": "tiny_sep", "source": "synthetic", "kind": "separated", "n": 400, "d": 6,
                  "clusters": 3, "concentration": 200.0, "views": [50, 100]}],
    "eps": [1, 4], "eps1_fractions": [0.5, 0.9], "theorem4_split": True, "c": [0.1], "delta": 1e-6,
    "kmeans_k": 3, "dbscan": {"min_samples": 5, "quantile": 0.9, "fit_size": 200, "candidates": 4},
    "methods": ["alg1", "alg1T", "ldp", "global", "oracle", "single"], "clusterings": ["kmeans"],
    "repetitions": 1, "batch_size": 1, "user_sample": 100, "figure": {"eps": 4, "c": 0.1, "split": 0.5},
}


def _bytes(df):
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def _config(sec=SEC, **top) -> dict:
    """A config of this section, with the schema's defaults filled in as validation fills them."""
    cfg = {**top, "peruser": copy.deepcopy(sec)}
    fill_defaults(cfg)
    return cfg


def _jobs(sec=SEC, step="job"):
    return [j for j in S.jobs(_config(sec, seed=5, name="test")) if j.step == step]


@pytest.fixture(scope="module")
def tables():
    runs, users = [], []
    for job in _jobs():
        r, u = E.run_job(job.spec)
        runs.append(r)
        users.append(u)
    return pd.concat(runs, ignore_index=True), pd.concat(users, ignore_index=True)


def test_jobs_grid():
    jobs = _jobs()
    alg = [j for j in jobs if j.wildcards["method"] == "alg1"]
    assert len(alg) == 1              # every eps inside (one clustering, one batch)
    assert alg[0].spec["eps"] == ["1", "4"] and "eps" not in alg[0].wildcards
    assert all(j.spec["splits"] == ["0.5", "0.9", "thm4"] for j in alg)
    assert {tuple(j.spec["splits"]) for j in jobs if j.wildcards["method"] == "ldp"} == {("none",)}
    assert all("dbscan" not in j.spec for j in jobs)   # only dbscan jobs carry its parameters
    assert all(j.spec["dataset"]["name"] == "tiny_sep" for j in jobs)


def test_batch_layout_does_not_change_rows():
    """Repetitions 0..2 in one job or in three: the same rows (seeds depend on the repetition)."""
    sec = dict(SEC, methods=["ldp"], eps=[1], repetitions=3, batch_size=3)
    whole = [E.run_job(j.spec)[0] for j in _jobs(sec)]
    split = [E.run_job(j.spec)[0] for j in _jobs(dict(sec, batch_size=1))]
    assert len(whole) == 1 and len(split) == 3
    assert _bytes(E.collect_frames(whole)) == _bytes(E.collect_frames(split))


def test_eps_inside_one_job_or_one_job_per_eps_gives_the_same_rows():
    """eps values share a job (issue 14) without changing a row: seeds depend on eps, not on the job."""
    sec = dict(SEC, methods=["alg1", "ldp"], eps1_fractions=[0.5], theorem4_split=False)
    for job in _jobs(sec):
        together = E.run_job(job.spec)
        apart = [E.run_job(dict(job.spec, eps=[e])) for e in job.spec["eps"]]
        assert len(together[0]) == sum(len(a[0]) for a in apart) > 0
        assert _bytes(E.collect_frames([together[0]])) == _bytes(E.collect_frames([a[0] for a in apart]))
        assert _bytes(E.collect_frames([together[1]])) == _bytes(E.collect_frames([a[1] for a in apart]))


def test_job_is_deterministic():
    job = next(j for j in _jobs() if j.wildcards["method"] == "alg1")
    a = E.run_job(job.spec)
    b = E.run_job(job.spec)
    assert _bytes(a[0]) == _bytes(b[0]) and _bytes(a[1]) == _bytes(b[1])


def test_jobs_in_one_process_give_the_rows_of_jobs_apart():
    """A batch of jobs in one process takes the latest job's dataset and shared values when its
    dataset is the same (E._job_data): every job's tables are those of the job run alone."""
    other = dict(SEC["datasets"][0], name="tiny_ovl", kind="overlapping", n=300)
    sec = dict(SEC, datasets=[SEC["datasets"][0], other], eps=[4], eps1_fractions=[0.5],
               methods=["alg1", "global", "oracle"])
    jobs = _jobs(sec)
    assert len({j.spec["dataset"]["name"] for j in jobs}) == 2
    batch = [E.run_job(j.spec) for j in jobs]   # in a row, as a batch runs them
    assert E._JOB_DATA and E._JOB_DATA[0][1].counts.shape[0] == 300
    for job, (r, u) in zip(jobs, batch, strict=True):
        E._JOB_DATA.clear()
        alone = E.run_job(job.spec)
        assert _bytes(r) == _bytes(alone[0]) and _bytes(u) == _bytes(alone[1]), job.wildcards


@pytest.mark.slow
def test_tables_and_claims(tables, tmp_path):
    runs, users = tables
    alg = runs[(runs.method == "alg1") & runs.feasible.astype(bool)]
    assert (alg.epsp_numeric_min >= alg.eps1 - 1e-12).all()
    assert (alg.epsp_numeric_max <= alg.eps + 1e-12).all()
    assert (alg.epsp_numeric_median <= alg.epsp_closed_median + 1e-12).all()
    # Theorem 4's eps1 is far above eps here: those rows are marked infeasible, not run
    t4 = runs[runs.split == "thm4"]
    assert (t4.eps1_thm4 > t4.eps).all() and not t4.feasible.astype(bool).any()
    single = runs[runs.method == "single"]
    assert (single.attack_identical == 1.0).all()
    assert (runs.loc[runs.method == "oracle", "epsp_numeric_median"].isna()).all()
    cl = E.claims(runs, users, "test")
    from shuffledp.claims.core import COLUMNS

    assert list(cl.columns) == COLUMNS
    assert set(cl.id) == {"error_under_theorem3_bound", "theorem4_split_near_best", "utility_improved_over_ldp",
                          "amplification_roughly_sqrt_n", "two_copies_hide_grouping"}
    from shuffledp.claims import peruser as C

    assert C.sanity_checks(runs)["single_copy_groups_recovered"]
    # Theorem 4's split is infeasible on this grid: not testable, not "not held"
    assert cl.set_index("id").loc["theorem4_split_near_best", "held"] == "not testable at this scale"
    from shuffledp.plotting import peruser as F

    F.all_figures(runs, users, SEC, F.figure_paths(str(tmp_path / "fig")))
    for k in range(1, 5):
        assert (tmp_path / f"fig{k}.png").stat().st_size > 1000
        assert (tmp_path / f"fig{k}.pdf").exists()
    assert "theorem4_split_near_best" in E.claims_markdown(cl)


def test_config_checks():
    S.check_config(_config(SEC))
    bad = copy.deepcopy(SEC)
    bad["repetitions"] = 3
    bad["batch_size"] = 2
    with pytest.raises(ConfigError, match="peruser.repetitions"):
        S.check_config(_config(bad))
    bad = copy.deepcopy(SEC)
    bad["figure"]["split"] = 0.3
    with pytest.raises(ConfigError, match="peruser.figure.split"):
        S.check_config(_config(bad))
