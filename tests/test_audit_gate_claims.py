"""The audits gate wired into the claims (issue 39): a violation for one protocol makes its claims
no evidence and names the audit, other protocols' rows are unchanged, an audits stage that did not
run leaves every row's evidence as it was; and the claims steps read the audits table in the job graph."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from shuffledp.claims import audit_gate as G
from shuffledp.claims import core
from shuffledp.claims import multidim as MD
from shuffledp.claims import multidim_frameworks as MF
from shuffledp.claims import peruser as PU
from shuffledp.claims import segmented as SG
from shuffledp.config import load_validated
from shuffledp.stages import discover, job_io
from shuffledp.stages.jobs import JobTable, Ref

REPO = Path(__file__).resolve().parents[1]
# the claims step of each stage whose claims rest on an audited implementation
CLAIMS_STEPS = {"segmented": "claims", "multidim": "report", "multidim_frameworks": "report", "peruser": "report"}


def _audits(violating: str) -> pd.DataFrame:
    """The audits table's gate columns as the audits stage writes them (protocols per audit from the
    science), every audit consistent but ``violating``."""
    from shuffledp.experiments import audits as A

    rows = [{"audit": a.name, "protocols": ",".join(a.protocols),
             "verdict": "violation" if a.name == violating else "consistent"} for a in A.AUDITS.values()]
    return pd.DataFrame(rows)


def _claims(ids, evidence=True) -> pd.DataFrame:
    return pd.DataFrame({"id": list(ids), "by": "paper", "held": core.HELD, "explanation": "",
                         "evidence": evidence, "scale": "test"})


def test_audit_rows_name_the_protocols_the_mappings_use():
    """Every protocol name a claims mapping returns is one some audit concerns (else the gate would
    silently find nothing for it)."""
    by = G.audits_by_protocol(_audits(""))
    ids = {SG: list(SG.CLAIMS) + ["ours_below_each_baseline_paper"], MD: list(MD.CLAIMS), MF: list(MF.FW_CLAIMS),
           PU: list(PU.CLAIMS)}
    for mod, cids in ids.items():
        for cid in cids:
            for p in mod.protocols_of(cid):
                assert p in by, (mod.__name__, cid, p)


@pytest.mark.parametrize("mod, violating, caught, spared", [
    (MD, "tcm_local", ["mhm_beats_tcm", "comm_flame_lt_mhm_lt_tcm", "mse_inversely_proportional_to_eps"],
     ["mhm_beats_flame_all_eps", "ogm_beats_nogm", "fig10_better_as_users_more_liberal"]),
    (SG, "mm_item", ["ours_below_each_baseline", "sepmm_worse_in_s3", "gap_wider_s3_than_s2"],
     ["optimal_m_msnbc_5k", "m_star_below_4"]),
    (SG, "segmented_count", ["optimal_m_msnbc_5k", "ours_below_each_baseline"], ["sepmm_worse_in_s3"]),
    (MF, "hdg_flame", ["Fig8_mhm_beats_flame", "Fig9_inverse_eps"], ["Fig6_mhm_beats_flame", "Fig7_inverse_eps"]),
    (MF, "flame_local", ["Fig6_gap_views_vs_attributes"], ["Fig6_flame_100x", "Fig8_inverse_eps"]),
    (PU, "peruser_alg1", ["error_under_theorem3_bound", "utility_improved_over_ldp"], []),
])
def test_violation_stops_that_protocols_claims_only(tmp_path, mod, violating, caught, spared):
    path = tmp_path / "audits.parquet"
    _audits(violating).to_parquet(path)
    df = mod.gate(_claims(caught + spared), [str(path)]).set_index("id")
    for cid in caught:
        assert not df.loc[cid, "evidence"], cid
        assert f"{violating}: violation" in df.loc[cid, "audit"], cid
        assert violating in df.loc[cid, "explanation"] and "not evidence" in df.loc[cid, "explanation"]
        assert df.loc[cid, "held"] == core.HELD  # the measurement stays; it is no evidence
    for cid in spared:
        assert df.loc[cid, "evidence"], cid
        assert "violation" not in df.loc[cid, "audit"] and df.loc[cid, "audit"], cid
        assert df.loc[cid, "explanation"] == ""


def test_no_violation_keeps_evidence_and_never_raises_it(tmp_path):
    path = tmp_path / "audits.parquet"
    _audits("").to_parquet(path)
    df = MD.gate(pd.concat([_claims(["mhm_beats_tcm"]), _claims(["ogm_beats_nogm"], evidence=False)]), [str(path)])
    assert df["evidence"].tolist() == [True, False]  # a stand-in row stays no evidence
    assert df["audit"].tolist() == ["mhm_local: consistent; tcm_local: consistent", "mhm_local: consistent"]


def test_audits_not_run_says_so_and_changes_nothing():
    df = PU.gate(_claims(["error_under_theorem3_bound"]).assign(evidence=[True]), [])
    assert df["audit"].tolist() == [G.NOT_RUN] and df["evidence"].tolist() == [True]


def test_markdown_counts_and_names_the_gated_rows(tmp_path):
    from test_claims_peruser import runs, users

    from shuffledp.claims.peruser import claims_markdown
    from shuffledp.experiments import peruser as E

    path = tmp_path / "audits.parquet"
    raw = E.claims(runs(), users(), "test")
    _audits("peruser_alg1").to_parquet(path)
    gated = PU.gate(raw, [str(path)])
    assert core.counts(raw)["evidence"] > 0 and core.counts(gated)["evidence"] == 0
    assert (gated["held"] == raw["held"]).all()
    md = claims_markdown(gated)
    assert "no (audit: peruser_alg1: violation)" in md and "0 decided verdicts" in md


@pytest.mark.parametrize("enabled", [True, False])
def test_claims_steps_read_the_audits_table(enabled):
    cfg = load_validated([REPO / "config" / "config.yaml"])
    if not enabled:
        cfg = {k: v for k, v in cfg.items() if k != "audits"}
    stages = discover()
    tables = {n: JobTable(s.jobs(cfg)) for n, s in stages.items() if s.enabled(cfg)}
    roots = {"results": "results", "data": "data"}
    audits_table = "results/tables/audits.parquet"
    for name, step in CLAIMS_STEPS.items():
        st = stages[name]
        assert "audits" in st.step(step).inputs
        (job,) = tables[name].of_step(step)
        io = job_io(st, st.step(step), job, roots, stages, tables)
        if enabled:
            assert job.inputs["audits"] == [Ref("report", "table", stage="audits")]
            assert io["input"]["audits"] == [audits_table]
            assert io["expect"]["audits"][0]["stage"] == "audits"
        else:
            assert io["input"]["audits"] == []
    # personalized's claims are about bounds (accountants against oracles), no implementation: not gated
    assert "audits" not in stages["personalized"].step("report").inputs


@pytest.mark.parametrize("violation", [True, False])
def test_peruser_report_step_writes_gated_claims(tmp_path, violation):
    """The stage's own report step (as ``shuffledp step`` runs it) on fabricated runs: its claims
    table and Markdown carry the gate; without the audits input (stage disabled) they say not run."""
    from test_claims_peruser import runs, users

    step = discover()["peruser"].step("report")
    r = runs().assign(top3_mean=0.5)
    r["epsp_numeric_median"] = r["epsp_closed_median"] = r["epsp_numeric_min"]
    u = users().assign(dist_centre=1.0)
    u["eps_prime_closed"] = u["eps_prime_numeric"]
    r.to_parquet(tmp_path / "r.parquet")
    u.to_parquet(tmp_path / "u.parquet")
    audits = []
    if violation:
        _audits("peruser_alg1").to_parquet(tmp_path / "a.parquet")
        audits = [str(tmp_path / "a.parquet")]
    ext = {"claims_md": ".md", "claims": ".parquet"}
    out = {o.name: str(tmp_path / (o.name + ext.get(o.name, ".png" if o.name.endswith("png") else ".pdf")))
           for o in step.outputs}
    spec = {"figure": {"dataset": "synth_sep", "clustering": "kmeans", "c": 0.1, "eps": 4.0}, "eps": [4.0],
            "eps1_fractions": [0.5, 0.8], "scale": "test"}
    step.run(spec, {"runs": [str(tmp_path / "r.parquet")], "users": [str(tmp_path / "u.parquet")],
                    "audits": audits}, out)
    df = pd.read_parquet(out["claims"])
    md = Path(out["claims_md"]).read_text()
    assert len(df) and (df["held"] == core.HELD).all()
    if violation:
        assert not df["evidence"].any() and (df["audit"] == "peruser_alg1: violation").all()
        assert "no (audit: peruser_alg1: violation)" in md
    else:
        assert df["evidence"].all() and (df["audit"] == G.NOT_RUN).all()
        assert "violation" not in md
