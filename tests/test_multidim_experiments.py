"""MHM amplification through the blanket accountant, OGM/NOGM, the CLI jobs and the report."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from shuffledp.accountants.upper import blanket
from shuffledp.claims.core import COLUMNS
from shuffledp.config import fill_defaults
from shuffledp.datasets.provenance import write_table
from shuffledp.protocols import mhm, personal_groups
from shuffledp.stages.multidim import jobs
from shuffledp.tasks.multidim import frequency_mse, true_frequencies


def table(rng, n, domains):
    cols = [rng.choice(c, size=n, p=rng.dirichlet(np.ones(c) * 0.7)) for c in domains]
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("eps,n,d", [(0.2, 20_000, 10), (1.0, 20_000, 14), (0.5, 5_000, 3)])
@pytest.mark.parametrize("bound", ["hoeffding", "bennett"])
def test_mhm_eps_local_meets_target(eps, n, d, bound):
    st = mhm.mhm_eps_local(eps, 1 / n, n, d, bound=bound)
    assert st.amplified and st.eps_l > eps
    # independent check through the accountant's forward direction, with the returned integer g
    delta = blanket.delta_blanket(st.eps_l, n, eps, mechanism="mhm", bound=bound, d=d, g=st.g)
    assert delta <= 1 / n
    # and a slightly larger eps_l must fail (the inverse is tight for this g)
    over = blanket.delta_blanket(st.eps_l * 1.01, n, eps, mechanism="mhm", bound=bound, d=d, g=st.g)
    assert over > 1 / n
    # the chosen (g, eps_l) is at least as good (Eq. (2)) as Eq. (3)'s g for the returned eps_l, taken
    # with the eps_l the accountant certifies for that g
    g3 = mhm.g_int(st.eps_l, d)
    e3 = blanket.max_eps_local(eps, 1 / n, n, mechanism="mhm", bound=bound, d=d, g=g3)
    assert mhm.approx_variance(st.eps_l, d, st.g, n) <= mhm.approx_variance(e3, d, g3, n) * (1 + 1e-9)


def test_mhm_eps_local_monotone_in_eps_and_n():
    vals = [mhm.mhm_eps_local(e, 1e-4, 10_000, 10).eps_l for e in (0.1, 0.2, 0.4, 0.8)]
    assert all(b > a for a, b in zip(vals, vals[1:], strict=False))
    assert mhm.mhm_eps_local(0.4, 1e-4, 40_000, 10).eps_l > vals[2]


def test_run_mhm_expected_mse():
    """Mean MSE over repetitions matches the exact expected MSE (Lemma 4 averaged)."""
    rng0 = np.random.default_rng(5)
    domains = [2, 5, 3, 4]
    n = 5000
    data = table(rng0, n, domains)
    truth = true_frequencies(data, domains)
    st = mhm.MHMSetting(eps_l=3.0, g=mhm.g_int(3.0, 4), amplified=True)
    R = 120
    mses = [frequency_mse(mhm.run_mhm(data, domains, 0.5, 1 / n, np.random.default_rng([3, r]),
                                      setting=st).estimates, truth) for r in range(R)]
    want = mhm.expected_mse(st.eps_l, 4, st.g, n, domains)
    # the MSE of one run is an average of ~14 squared errors: relative sd well below 1; 5 sd of the mean
    sd = np.std(mses, ddof=1) / math.sqrt(R)
    assert abs(np.mean(mses) - want) < 5 * sd


def test_ogm_and_nogm_respect_budgets():
    rng = np.random.default_rng(8)
    n = 6000
    domains = [3, 4, 2]
    data = table(rng, n, domains)
    eps = rng.choice([0.3, 0.6, 1.0], size=n)
    delta = np.where(eps == 0.3, 0.1 / n, np.where(eps == 0.6, 1 / n, 10 / n))
    truth = true_frequencies(data, domains)
    res_o = personal_groups.run_ogm(data, domains, eps, delta, np.random.default_rng(1))
    res_n = personal_groups.run_nogm(data, domains, eps, delta, np.random.default_rng(2))
    for res in (res_o, res_n):
        assert personal_groups.check_ledger(res)
        for c, (be, bd) in res.budgets.items():
            se, sd = res.spent[c]
            assert se <= be and sd <= bd and be - se < Fraction(1, 10**12)
        assert math.isclose(sum(res.weights), 1.0)
        assert frequency_mse(res.estimates, truth) < 0.01
    assert [r.users for r in res_o.rounds] == [n, int((eps >= 0.6).sum()), int((eps == 1.0).sum())]
    assert sorted(r.users for r in res_n.rounds) == sorted(np.unique(eps, return_counts=True)[1].tolist())


def _run(*args):
    """The CLI in-process (a subprocess per job would spend most of the test importing)."""
    from shuffledp.cli import main

    assert main(list(args)) == 0


def _step(folder, step, spec, inputs, outputs):
    """``shuffledp step multidim <step>`` in-process, with the job's spec and io written as JSON files."""
    from shuffledp.stages import content_file

    _run("step", "multidim", step, "--spec", content_file(folder, "spec", spec),
         "--io", content_file(folder, "io", {"input": inputs, "output": outputs}))


@pytest.mark.slow
def test_cli_jobs_and_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a job reads and writes only inside the working folder
    rng = np.random.default_rng(0)
    domains = {"A": 3, "B": 6, "C": 2, "D": 4}
    for ds, d in (("br", 3), ("mx", 4)):
        attrs = list(domains)[:d]
        df = pd.DataFrame({a: rng.integers(0, domains[a], 3000).astype("int16") for a in attrs})
        write_table(df, tmp_path / f"{ds}.parquet", {"dataset": f"ipums_{ds}", "standin": True,
                                                      "domains": {a: domains[a] for a in attrs}})
    cfg = {"seed": 7, "name": "test", "multidim": {
        "datasets": ["br", "mx"], "records": 3000, "mechanisms": ["mhm", "flame", "tcm"], "eps": [0.5, 1.0],
        "reps": 2, "reps_per_job": 2, "bound": "bennett", "hash_family_bits": 32, "flame_np_fraction": 1 / 3,
        "flame_variant": "balle", "topk": 5, "personal": {"ratios": ["2:4:4"], "reps": 1, "reps_per_job": 1}}}
    fill_defaults(cfg)  # as validation does
    uni, tim, per = [], [], []
    jobdir = tmp_path / "jobs"
    for job in jobs(cfg):
        w, spec = job.wildcards, job.spec
        stem = tmp_path / "_".join(w.values())
        data = {"data": [str(tmp_path / f"{w.get('dataset')}.parquet")]}
        if job.step == "uniform":
            _step(jobdir, "uniform", spec, data, {"table": f"{stem}.u.parquet", "timings": f"{stem}.t.parquet"})
            uni.append(f"{stem}.u.parquet")
            tim.append(f"{stem}.t.parquet")
        elif job.step == "personal":
            _step(jobdir, "personal", spec, data, {"table": f"{stem}.p.parquet"})
            per.append(f"{stem}.p.parquet")
        else:
            report_spec = spec
    # one uniform job per (dataset, mechanism, batch) with both eps inside; one personal per (dataset, method)
    assert len(uni) == 2 * 3 and len(per) == 2 * 2
    assert all(len(pd.read_parquet(u)["eps"].unique()) == 2 for u in uni)
    # only the keys a job uses: FLAME's options only in FLAME jobs
    assert all(("flame_variant" in j.spec) == (j.wildcards.get("mechanism") == "flame") for j in jobs(cfg)
               if j.step == "uniform")
    # reproducible: the same job twice gives byte-identical tables
    again = tmp_path / "again.parquet"
    first = next(j for j in jobs(cfg) if j.step == "uniform")
    _step(jobdir, "uniform", first.spec, {"data": [str(tmp_path / "br.parquet")]},
          {"table": str(again), "timings": str(tmp_path / "again_t.parquet")})
    assert again.read_bytes() == open(uni[0], "rb").read()
    from shuffledp.stages import discover

    report_step = discover()["multidim"].step("report")
    out = {o.name: str(tmp_path / o.path) for o in report_step.outputs}  # tables/..., figures/...
    _step(jobdir, "report", report_spec, {"uniform": uni, "timings": tim, "personal": per, "audits": [],
                                          "data": [str(tmp_path / "br.parquet"), str(tmp_path / "mx.parquet")]}, out)
    assert (tmp_path / "tables" / "multidim_fig3.parquet").is_file()
    for k in (3, 4, 5, 10):
        for ext in ("pdf", "png"):
            assert (tmp_path / "figures" / f"multidim_fig{k}.{ext}").stat().st_size > 1000
    claims = pd.read_parquet(tmp_path / "tables" / "multidim_claims.parquet")
    assert list(claims.columns) == [*COLUMNS, "audit"]   # multidim claims rest on audited protocols
    assert {"mhm_beats_flame_all_eps", "mhm_flame_gap_grows_with_eps", "mhm_beats_tcm", "ogm_beats_nogm",
            "ogm_vs_nogm_244_mx"} <= set(claims["id"])
    timed = pd.read_parquet(tmp_path / "tables" / "multidim_claims_timings.parquet")  # wall clock, own table
    assert "fig4_user_time_flame_lt_mhm_lt_tcm" in set(timed["id"]) and not timed["id"].isin(claims["id"]).any()
    # the stand-in's provenance reaches the claims: labelled, never evidence
    assert (claims["data"] == "stand-in").all() and not claims["evidence"].any()
    assert claims.set_index("id").loc["mhm_flame_gap_grows_with_eps", "held"] == "not testable at this scale"
    assert "offline stand-in data" in (tmp_path / "tables" / "multidim_claims.md").read_text()
    assert "offline stand-in data" in (tmp_path / "tables" / "multidim_table3.md").read_text()
    t3 = pd.read_parquet(tmp_path / "tables" / "multidim_table3.parquet")
    assert ((t3.TP + t3.FP) == 5).all() and ((t3.TP + t3.FN) == 5).all()


def test_cli_account_and_usage_errors(capsys, tmp_path):
    _run("account", "mhm", "--eps", "0.5", "--delta", "1e-4", "--n", "1e4", "--d", "10")
    out = capsys.readouterr().out
    assert '"eps_l"' in out and '"g"' in out
    data = tmp_path / "x.parquet"  # a readable input, so that the --spec error is the one reported
    pd.DataFrame({"a": [0, 1]}).to_parquet(data)
    classes = ('[{"name":"c","eps":0.1,"delta_n":0.1},{"name":"m","eps":0.5,"delta_n":1},'
               '{"name":"l","eps":1,"delta_n":10}]')
    spec = ('{"dataset":"br","method":"ogm","ratios":["2:4"],"reps":[0],"records":100,"seed":1,"bound":"bennett",'
            '"family_bits":32,"classes":' + classes + '}')
    (tmp_path / "spec.json").write_text(spec)
    (tmp_path / "io.json").write_text(json.dumps({"input": {"data": [str(data)]},
                                                  "output": {"table": str(tmp_path / "y")}}))
    bad = subprocess.run([sys.executable, "-m", "shuffledp", "step", "multidim", "personal", "--spec",
                          str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "--spec" in bad.stderr and "2:4" in bad.stderr and bad.stderr.count("\n") == 1
    assert not (tmp_path / "y").exists()


@pytest.mark.parametrize("d,g,eps_l,eps_s", [(2, 5, 1.5, 0.3), (3, 7, 2.0, 0.5), (3, 4, 0.8, 0.2)])
def test_blanket_params_cover_the_real_randomizer(d, g, eps_l, eps_s):
    """Independent check of the MHM blanket parameters: enumerate the actual randomizer's pmf over
    (hash index, report) for a small family and every pair of inputs x, x' of a small domain."""
    from shuffledp.mechanisms.collision import collision_p, collision_pmf
    from shuffledp.mechanisms.hashing import HashFamily

    prm = blanket.blanket_params("mhm", eps_l, eps=eps_s, d=d, g=g)
    fam = HashFamily(g=g, seed=17, size=32)
    p = collision_p(eps_l, d, g)
    domains = [3] * d
    grid = np.array(np.meshgrid(*[np.arange(c) for c in domains], indexing="ij")).reshape(d, -1).T
    H = fam.size
    # r[x, t, y] = pmf of report y given hash index t, times 1/H; omega = 1/(H g)
    r = np.array([[collision_pmf(fam.hash(t + np.arange(d), x), p, g) for t in range(H)] for x in grid]) / H
    omega = 1.0 / (H * g)
    ee = math.exp(eps_s)
    worst_sq, lo, hi = 0.0, np.inf, -np.inf
    for i in range(len(grid)):
        L = (r[i][None] - ee * r) / omega  # against every x'
        L = L[np.arange(len(grid)) != i]
        lo, hi = min(lo, L.min()), max(hi, L.max())
        worst_sq = max(worst_sq, float((L**2).mean(axis=(1, 2)).max()))
        assert np.allclose(L.mean(axis=(1, 2)), 1 - ee)  # Theorem 1, part 1
    assert prm.b_minus <= lo + 1e-9 and hi <= prm.b_plus + 1e-9
    assert worst_sq <= prm.c * (1 + 1e-9)


@pytest.mark.parametrize("mechanism", ["mhm", "mhm_paper", "tcm", "flame"])
def test_uniform_warms_every_mechanism_up_untimed_and_leaves_the_repetitions_as_they_were(mechanism, monkeypatch):
    """Figure 4 compares the mechanisms' user time by its mean over repetitions, and a job may run after
    others in one process (a batch): neither a compiled kernel's first call (MHM's, TCM's; FLAME is plain
    numpy) nor a cold process's first touch of the memory may land in a timed repetition. Every mechanism
    runs once whole on the first WARM_UP_USERS users, then its users' side WARM_UP_RUNS times on all the
    users before the first timed repetition, all untimed and with a generator of its own; the repetitions'
    results are those of runs without it."""
    from shuffledp.experiments import multidim as ex
    from shuffledp.mechanisms.collision import WARM_UP_RUNS
    from shuffledp.protocols import flame, tcm
    from shuffledp.seeding import rng as seeded_rng

    rng = np.random.default_rng(5)
    domains = [2, 3, 4]
    data = np.column_stack([rng.integers(0, k, size=3000) for k in domains])
    module = {"mhm": mhm, "mhm_paper": mhm, "tcm": tcm, "flame": flame}[mechanism]
    name = "run_flame" if mechanism == "flame" else "run_tcm" if mechanism == "tcm" else "run_mhm"
    side = {"mhm": "mhm_randomize", "mhm_paper": "mhm_randomize", "tcm": "tcm_randomize",
            "flame": "flame_randomize"}[mechanism]
    real, calls = getattr(module, name), []
    real_side, sides = getattr(module, side), []

    def spy(data, *args, **kwargs):
        calls.append(len(data))
        return real(data, *args, **kwargs)

    def spy_side(data, *args):
        sides.append((len(data), id(args[-2] if side == "mhm_randomize" else args[-1])))
        return real_side(data, *args)

    monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr(module, side, spy_side)
    res, tim = ex.run_uniform(data, domains, mechanism, 1.0, [0, 1], seed=11, dataset="toy")
    assert calls == [ex.WARM_UP_USERS, 3000, 3000]
    assert WARM_UP_RUNS >= 1 and [n for n, _ in sides] == [ex.WARM_UP_USERS] + [3000] * (WARM_UP_RUNS + 2)
    gens = [g for _, g in sides]  # the warm-ups' generator is one, never a repetition's
    assert len(set(gens[:WARM_UP_RUNS + 1])) == 1 and len(set(gens)) == 3
    assert list(tim["rep"]) == [0, 1] and len(res) == 2
    monkeypatch.setattr(module, name, real)
    monkeypatch.setattr(module, side, real_side)
    for rep in (0, 1):  # the repetition's own seed, as without the warm-up
        setting = (mhm.mhm_eps_local(1.0, 1 / 3000, 3000, 3, variant="paper" if mechanism == "mhm_paper" else "ours")
                   if mechanism.startswith("mhm") else None)
        r, _ = ex._run_mechanism(mechanism, data, domains, 1.0, 1 / 3000,
                                 seeded_rng(11, "multidim", "uniform", "toy", mechanism, 1.0, rep), setting,
                                 family_bits=32, np_fraction=1 / 3, flame_variant="balle")
        assert res.loc[rep, "mse"] == frequency_mse(r.estimates, true_frequencies(data, domains))
