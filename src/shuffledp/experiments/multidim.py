"""Experiments of the multidimensional seed (Figures 3, 4, 5, 10, Table 3 and a claims table).

Jobs (one per (mechanism, dataset, eps, batch of repetitions) and per (method, dataset, ratio,
batch)) write small Parquet tables; :func:`report` aggregates them into the figures and tables.
Every random draw comes from ``shuffledp.seeding.rng(seed, "multidim", ...)``; the records used for
a dataset are one seeded sample shared by every job, so mechanisms are compared on the same users.
Timings (Figure 4) are written to separate ``*_timings`` files, never into reproducible tables.
The jobs and config check of the stage are in :mod:`shuffledp.stages.multidim`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from shuffledp.datasets.provenance import public_domains, read_provenance, standin_note  # noqa: F401  (multidim_report)

# the experiments' names and ratio helpers (light, so the workflow imports them while parsing)
from shuffledp.experiments.multidim_names import (  # noqa: F401  (re-exported)
    ADULT,
    ADULT_ATTRIBUTES,
    DEFAULT_CLASSES,
    MECHANISMS,
    METHODS,
    parse_ratio,
    ratio_tag,
)
from shuffledp.seeding import rng as seeded_rng
from shuffledp.tasks.multidim import frequency_mse, topk_confusion, true_frequencies

# ------------------------------------------------------------------ provenance (data stage contract)


def dataset_label(dataset: str, prov: Mapping | None = None) -> str:
    """Panel / caption label of a dataset: IPUMS keys upper-cased; Adult says it is not IPUMS and
    whether the table is the real one or its stand-in (from the table's provenance)."""
    if dataset == ADULT:
        kind = "stand-in" if (prov or {}).get("standin", False) else "real"
        return f"Adult ({kind}), not IPUMS"
    return dataset.upper()

# ------------------------------------------------------------------ data


def prepare_adult(table: pd.DataFrame, prov: Mapping, attributes) -> tuple[pd.DataFrame, dict]:
    """The multidim input of Adult: one int column per categorical attribute, its domain sizes and
    the source's real/stand-in flag in the provenance (``load_dataset`` reads the domains)."""
    attributes = list(attributes)
    missing = [a for a in attributes if a not in table.columns]
    if missing:
        raise ValueError(f"adult table: missing attribute column(s) {missing}")
    domains = prov.get("domains") or {}
    if any(a not in domains for a in attributes):
        raise ValueError("adult table: its provenance gives no domain size for " +
                         ", ".join(a for a in attributes if a not in domains))
    out = table[attributes].astype(np.int16).reset_index(drop=True)
    for a in attributes:
        if out[a].min() < 0 or out[a].max() >= int(domains[a]):
            raise ValueError(f"adult table: {a} has codes outside 0..{int(domains[a]) - 1}")
    new = {"dataset": ADULT, "source": prov.get("source", "?"), "standin": bool(prov.get("standin", False)),
           "derived_from": "data/processed/adult.parquet (categorical attributes only)",
           "citation": prov.get("citation", ""), "rows": int(len(out)),
           "domains": {a: int(domains[a]) for a in attributes}}
    return out, new


def load_dataset(path: str | Path, records: int | None, seed: int, dataset: str):
    """``(data int64 (n, d), domains, attributes, provenance)``; a seeded sample of ``records`` rows."""
    table = pq.read_table(path)
    prov = read_provenance(path)
    attrs = list(table.column_names)
    data = np.stack([table.column(a).to_numpy().astype(np.int64) for a in attrs], axis=1)
    domains = public_domains(prov, attrs, path)
    if data.min() < 0 or np.any(data.max(axis=0) >= np.array(domains)):
        raise ValueError(f"{path}: codes outside 0..|C|-1")
    if records is not None and records < data.shape[0]:
        idx = np.sort(seeded_rng(seed, "multidim", "records", dataset).choice(data.shape[0], records, replace=False))
        data = data[idx]
    return data, domains, attrs, prov


# ------------------------------------------------------------------ jobs


WARM_UP_USERS = 256  # users of the untimed whole run (kernels loaded) before a job's timed repetitions


def _run_mechanism(mechanism: str, data, domains, eps: float, delta: float, rng, setting, *,
                   family_bits: int, np_fraction: float, flame_variant: str, warm_up=None):
    """One run of ``mechanism``: its result and the row fields it adds (``warm_up``: the generator of the
    untimed runs of its users' side before the timed one, or None)."""
    from shuffledp.accountants.upper.blanket import mhm_printed_ldp_eps
    from shuffledp.protocols import flame, mhm, tcm

    if setting is not None:  # MHM, ours or the paper's printed choices
        r = mhm.run_mhm(data, domains, eps, delta, rng, family_size=1 << family_bits, setting=setting,
                        warm_up=warm_up)
        row = dict(eps_l=r.eps_l, g=r.g, amplified=r.amplified, valid_range=True,
                   bits_sent=float(r.bits), bits_received=0.0)
        if mechanism == "mhm_paper":  # the LDP budget its randomizer really has (> eps_l)
            row["ldp_eps"] = mhm_printed_ldp_eps(r.eps_l, data.shape[1], r.g)
    elif mechanism == "tcm":
        r = tcm.run_tcm(data, domains, eps, delta, rng, family_size=1 << family_bits, warm_up=warm_up)
        row = dict(eps_l=r.eps_l, g=r.g, amplified=r.amplified, valid_range=r.valid_range,
                   bits_sent=float(r.bits["sent"]), bits_received=float(r.bits["received"]))
    elif mechanism == "flame":
        r = flame.run_flame(data, domains, eps, delta, rng, np_fraction=np_fraction, variant=flame_variant,
                            warm_up=warm_up)
        row = dict(eps_l=float(np.mean(r.eps_l)), g=0, amplified=True, valid_range=r.valid_range,
                   bits_sent=r.bits, bits_received=0.0, flame_capped=bool(r.capped))
    else:
        raise ValueError(f"mechanism: unknown {mechanism!r}")
    return r, row


def run_uniform(data, domains, mechanism: str, eps: float, reps: list[int], *, seed: int, dataset: str,
                bound: str = "bennett", family_bits: int = 32, np_fraction: float = 1 / 3,
                flame_variant: str = "balle", topk: int = 50) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One job: ``mechanism`` at ``(eps, 1/n)`` for repetitions ``reps``. Returns (results, timings).

    Before the timed repetitions, untimed and with a generator of its own, the whole mechanism runs
    once on the first :data:`WARM_UP_USERS` users (the compiled kernels of both sides loaded: MHM's and
    TCM's; FLAME is plain numpy), then before the first timed repetition its users' side runs on all the
    users (:data:`shuffledp.mechanisms.collision.WARM_UP_RUNS` times): a cold process's first runs pay for
    loading the kernels and for the memory they touch first (a kernel's loading included), which would
    land in the first repetitions' user time and make it depend on what ran before in the process (a
    batch's earlier members). The timings are the warm per-user cost whatever the process layout
    (benchmarks/multidim_user_time_order.py); the repetitions' draws come from their own seeds, so their
    results do not change."""
    from shuffledp.protocols import mhm

    n, d = data.shape
    delta = 1.0 / n
    truth = true_frequencies(data, domains)
    rows, times = [], []
    setting = None
    if mechanism in ("mhm", "mhm_paper"):
        setting = mhm.mhm_eps_local(eps, delta, n, d, bound=bound,
                                    variant="paper" if mechanism == "mhm_paper" else "ours")
    opts = dict(family_bits=family_bits, np_fraction=np_fraction, flame_variant=flame_variant)
    warm = seeded_rng(seed, "multidim", "uniform", "warm-up", dataset, mechanism, float(eps))
    _run_mechanism(mechanism, data[:WARM_UP_USERS], domains, eps, delta, warm, setting, **opts)
    for i, rep in enumerate(reps):
        rng = seeded_rng(seed, "multidim", "uniform", dataset, mechanism, float(eps), rep)
        row = {"dataset": dataset, "mechanism": mechanism, "eps": float(eps), "delta": delta, "rep": rep,
               "n": n, "d": d}
        r, fields = _run_mechanism(mechanism, data, domains, eps, delta, rng, setting,
                                   warm_up=warm if i == 0 else None, **opts)
        row.update(fields)
        row.setdefault("ldp_eps", row["eps_l"])  # every other randomizer is eps_l-LDP
        row.setdefault("flame_capped", False)  # FLAME's eps_l capped to certify the whole-record claim
        row["bits_total"] = row["bits_sent"] + row["bits_received"]
        row["mse"] = frequency_mse(r.estimates, truth)
        row.update(topk_confusion(r.estimates, truth, k=min(topk, sum(domains))))
        rows.append(row)
        times.append({"dataset": dataset, "mechanism": mechanism, "eps": float(eps), "rep": rep,
                      "user_seconds_per_user": r.user_seconds / n})
    return pd.DataFrame(rows), pd.DataFrame(times)


def assign_budgets(n: int, ratio: tuple[int, ...], classes: list[dict], rng) -> tuple[np.ndarray, np.ndarray]:
    """Per-user ``(eps, delta)``: classes in proportion ``ratio`` (largest remainder), random users."""
    w = np.asarray(ratio, float) / sum(ratio)
    counts = np.floor(w * n).astype(int)
    rest = n - counts.sum()
    order = np.argsort(-(w * n - counts), kind="stable")
    counts[order[:rest]] += 1
    cls = rng.permutation(np.repeat(np.arange(3), counts))
    eps = np.array([c["eps"] for c in classes])[cls]
    delta = np.array([c["delta_n"] / n for c in classes])[cls]
    return eps, delta


def run_personal(data, domains, method: str, ratio: str, reps: list[int], *, seed: int, dataset: str,
                 classes: list[dict] | None = None, bound: str = "bennett", family_bits: int = 32) -> pd.DataFrame:
    from shuffledp.protocols import personal_groups

    classes = classes or DEFAULT_CLASSES
    rt = parse_ratio(ratio)
    n = data.shape[0]
    truth = true_frequencies(data, domains)
    rows = []
    for rep in reps:
        # the budget assignment is shared by OGM and NOGM (same users, same budgets)
        eps, delta = assign_budgets(n, rt, classes, seeded_rng(seed, "multidim", "assign", dataset, ratio, rep))
        rng = seeded_rng(seed, "multidim", "personal", dataset, method, ratio, rep)
        fn = {"ogm": personal_groups.run_ogm, "nogm": personal_groups.run_nogm}[method]
        res = fn(data, domains, eps, delta, rng, family_size=1 << family_bits, bound=bound)
        if not personal_groups.check_ledger(res):
            raise AssertionError("sequential composition exceeded a user's budget")
        rows.append({"dataset": dataset, "method": method, "ratio": ":".join(map(str, rt)), "rep": rep, "n": n,
                     "mse": frequency_mse(res.estimates, truth), "invocations": len(res.rounds),
                     "eps_l": json.dumps([round(r.eps_l, 12) for r in res.rounds]),
                     "group_sizes": json.dumps([r.users for r in res.rounds]),
                     "weights": json.dumps([round(w, 12) for w in res.weights])})
    return pd.DataFrame(rows)

