"""Experiments for per-user histograms in the shuffle model.

The stage (jobs, config check, steps) is :mod:`shuffledp.stages.peruser`.
One job = (method, dataset, clustering, repetition batch); inside a job every eps, every eps1 split,
every c and every repetition of the batch runs. A job writes two Parquet tables: one summary row
per (eps, split, c, repetition) and a seeded sample of per-user rows (first repetition only) for the ECDF and
scatter figures. :func:`collect` concatenates them; :func:`claims` checks the paper's statements.

Methods: ``alg1`` (Algorithm 1, release R), ``alg1T`` (Algorithm 1 releasing T only), ``ldp``
(Laplace LDP with the whole eps), ``global`` (one uniform shuffle of all users), ``oracle``
(clustering on the TRUE histograms: a non-private utility upper bound), ``single`` (Algorithm 2,
one copy, with the server's re-clustering attack).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp import seeding
from shuffledp.accountants.special import peruser as acct
from shuffledp.datasets.peruser import HistogramData, dirichlet_mixture, msnbc_histograms
from shuffledp.experiments.peruser_names import CLUSTERED, METHODS
from shuffledp.protocols import peruser as proto


def fmt(x: float) -> str:
    """Wildcard spelling of a number (``1``, ``0.25``)."""
    return f"{float(x):g}"


# ----------------------------------------------------------------------------------------------
# data


def load_dataset(spec: Mapping, seed: int, msnbc_path: str | None = None) -> HistogramData:
    """One entry of ``peruser.datasets`` (its ``name`` seeds the draw)."""
    name = spec["name"]
    rng = seeding.rng(seed, "peruser-data", name)
    if spec["source"] == "msnbc":
        if msnbc_path is None:
            raise ValueError("msnbc_path: needed for an msnbc dataset")
        return msnbc_histograms(msnbc_path, min_views=spec.get("min_views", 10), n=spec.get("n"), rng=rng)
    v = spec.get("views", [10, 60])
    return dirichlet_mixture(spec["n"], spec["d"], spec["clusters"], rng, kind=spec["kind"],
                             concentration=spec.get("concentration", 50.0), views=(v[0], v[1]))


def true_clusters(data: HistogramData, hbar: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Generating clusters (synthetic) or k-means on the true histograms (real data)."""
    if data.clusters is not None:
        return np.asarray(data.clusters)
    return proto.cluster_kmeans(hbar, k, seed)


# ----------------------------------------------------------------------------------------------
# one job


def run_job(spec: Mapping, msnbc_path: str | None = None,
            bounds: tuple[str, ...] = ("closed", "numeric")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One ``job`` (see :func:`shuffledp.stages.peruser.jobs` for the spec): a summary row per (eps,
    split, c, repetition) and a seeded sample of per-user rows (repetition 0). ``spec["eps"]`` is a
    list (or one value); the rows of one eps do not depend on the others (the dataset is drawn once,
    from its name)."""
    if spec["method"] not in METHODS:
        raise ValueError(f"method: {spec['method']!r}")
    data, shared = _job_data(spec, msnbc_path, bounds)
    eps_list = spec["eps"] if isinstance(spec["eps"], list) else [spec["eps"]]
    rows, users = [], []
    for eps in eps_list:
        r, u = _run_eps({**spec, "eps": fmt(eps)}, data, bounds, shared)
        rows += r
        users += u
    runs = pd.DataFrame(rows)
    users_df = pd.concat(users, ignore_index=True) if users else pd.DataFrame()
    return runs, users_df


_JOB_DATA: list = []   # [(key, data, shared)] of the latest job run in this process (see _job_data)


def _job_data(spec: Mapping, msnbc_path: str | None, bounds: tuple[str, ...]) -> tuple[HistogramData, dict]:
    """The job's dataset and ``shared``: what no eps changes (the normalised histograms, their column
    orders and top-3 sets, the true grouping, the amplifiers and their cached values), all functions
    of the dataset's spec, the seed, the msnbc file and ``bounds`` only. A batch of jobs in one process
    (the default workflow's) runs the jobs of one dataset in a row: the latest job's are taken again
    when the key is the same (the file by path, size and modification time), else built anew. The
    arrays are read-only: nothing may change them in place."""
    import json

    from shuffledp.io import file_version

    version = file_version(msnbc_path) if msnbc_path is not None and spec["dataset"]["source"] == "msnbc" else None
    key = json.dumps([spec["dataset"], int(spec["seed"]), msnbc_path, version, list(bounds)], sort_keys=True)
    if _JOB_DATA and _JOB_DATA[0][0] == key:
        return _JOB_DATA[0][1], _JOB_DATA[0][2]
    data = load_dataset(spec["dataset"], int(spec["seed"]), msnbc_path)
    for a in (data.counts, data.clusters):
        if a is not None:
            a.flags.writeable = False
    shared: dict = {}  # filled by the first eps run (see _eps_run)
    _JOB_DATA[:] = [(key, data, shared)]
    return data, shared


@dataclass
class _EpsRun:
    """The fixed inputs of one eps of a run job, and the true grouping (computed once, when first
    needed)."""
    spec: Mapping
    data: HistogramData
    method: str
    eps: str
    clustering: str
    seed: int
    dataset: str
    eps_f: float
    hbar: np.ndarray
    n: int
    d: int
    delta: float
    k: int
    db: proto.DBSCANParams
    amps: dict
    truth: np.ndarray | None = None
    shared: dict | None = None   # the job's shared values (see _eps_run)

    def col_orders(self) -> np.ndarray:
        """The column orders of ``hbar`` (Theorem 3's sorts), computed once per job."""
        if self.shared is None:
            self.shared = {}
        if "col_orders" not in self.shared:
            self.shared["col_orders"] = acct.column_orders(self.hbar)
            self.shared["col_orders"].flags.writeable = False   # shared by every run of the job
        return self.shared["col_orders"]

    def top3_truth(self) -> tuple[np.ndarray, np.ndarray]:
        """The true top-3 sets of ``hbar`` (:func:`shuffledp.protocols.peruser.top_k_truth`), once per job."""
        if self.shared is None:
            self.shared = {}
        if "top3_truth" not in self.shared:
            truth = proto.top_k_truth(self.hbar, 3)
            for a in truth:
                a.flags.writeable = False   # shared by every run of the job
            self.shared["top3_truth"] = truth
        return self.shared["top3_truth"]


def _eps_run(spec: Mapping, data: HistogramData, bounds: tuple[str, ...], shared: dict | None = None) -> _EpsRun:
    """The run of one eps (``shared``: the job's histograms and true grouping, computed by its first
    eps, taken by the others)."""
    method, eps, clustering = spec["method"], spec["eps"], spec["clustering"]
    seed = int(spec["seed"])
    dataset = spec["dataset"]["name"]
    eps_f = float(eps)
    shared = {} if shared is None else shared
    if "hbar" not in shared:
        shared["hbar"] = proto.normalise_counts(data.counts)
        shared["hbar"].flags.writeable = False  # shared by every eps: nothing may change it in place
    hbar = shared["hbar"]
    n, d = hbar.shape
    delta = float(spec["delta"])
    k = int(spec["kmeans_k"])
    db = proto.DBSCANParams(**spec.get("dbscan", {}))
    if "amps" not in shared:   # an amplifier caches its values: one per bound for the whole job
        shared["amps"] = {b: acct.clones_amplifier(b) for b in bounds}
    amps = shared["amps"]
    return _EpsRun(spec, data, method, eps, clustering, seed, dataset, eps_f, hbar, n, d, delta, k, db, amps,
                   shared.get("truth"), shared)


def _run_eps(spec: Mapping, data: HistogramData, bounds: tuple[str, ...],
             shared: dict | None = None) -> tuple[list[dict], list[pd.DataFrame]]:
    """The rows of one eps (a wildcard spelling, ``fmt``) of a run job (``shared``: see :func:`_eps_run`)."""
    shared = {} if shared is None else shared
    x = _eps_run(spec, data, bounds, shared)
    rows, users = [], []
    for split in spec["splits"]:
        for c in spec["c"]:
            c = float(c)
            for rep in spec["reps"]:
                row, u = _run_one(x, split, c, rep)
                rows.append(row)
                if u is not None:
                    users.append(u)
    if x.truth is not None:  # the true grouping depends on the data and the seed only
        x.truth.flags.writeable = False   # shared by every later eps and job of the dataset
        shared["truth"] = x.truth
    return rows, users


def _run_one(x: _EpsRun, split, c: float, rep) -> tuple[dict, pd.DataFrame | None]:
    """One (split, c, repetition): its summary row, and its user sample at repetition 0."""
    rng = seeding.rng(x.seed, "peruser", x.dataset, x.method, x.eps, split, x.clustering, fmt(c), rep)
    row = {"method": x.method, "dataset": x.dataset, "eps": x.eps_f, "split": split,
           "clustering": x.clustering, "c": c, "rep": rep, "n": x.n, "d": x.d, "delta": x.delta,
           "note": x.data.note}
    eps1, eps2 = _split_eps(x, split, c, row)
    if x.method in CLUSTERED and not eps2 > 0:
        row["feasible"] = False
        return row, None
    row["feasible"] = True
    per_user = {}
    if x.method in CLUSTERED:
        est, labels, err_raw = _run_clustered(x, c, eps1, eps2, rng, row, per_user)
    else:
        est, labels, err_raw = _run_baseline(x, c, rng, row, per_user)
    err, top3, sizes = _summarise(x, row, per_user, est, labels, err_raw)
    if rep != 0:
        return row, None
    return row, _user_sample(x, row, per_user, labels, sizes, err, err_raw, top3)


def _split_eps(x: _EpsRun, split, c: float, row: dict) -> tuple[float, float]:
    """(eps1, eps2) of a split (NaN for unclustered methods); recorded in ``row``."""
    eps1 = eps2 = math.nan
    eps1_thm4 = math.nan
    if x.method in CLUSTERED:
        if split == "thm4":
            if x.truth is None:
                x.truth = true_clusters(x.data, x.hbar, x.k, seeding.derive_seed(x.seed, "peruser-truth", x.dataset))
            R = acct.separation_R(x.hbar, x.truth, c)
            eps1_thm4 = acct.theorem4_eps1(x.d, x.n, x.delta, R)
            row["R_sep"] = R
            eps1 = eps1_thm4
        else:
            eps1 = float(split) * x.eps_f
        eps2 = x.eps_f - eps1
    row.update(eps1=eps1, eps2=eps2, eps1_thm4=eps1_thm4)
    return eps1, eps2


def _run_clustered(x: _EpsRun, c, eps1, eps2, rng, row: dict, per_user: dict):
    """Algorithm 1: (estimate, labels, raw error); per-user eps', Theorem 3 and the attack recorded."""
    hbar, clustering, k, db = x.hbar, x.clustering, x.k, x.db
    out = proto.algorithm1(hbar, x.eps_f, eps1, c, rng, clustering=clustering, k=k, dbscan=db,
                           release="R" if x.method == "alg1" else "T")
    raw, est, labels = out.raw, out.output, out.labels
    accs = acct.per_user_eps_bounds(hbar, labels, eps1, eps2, c, x.delta, x.amps)
    for b, acc in accs.items():
        per_user[f"eps_prime_{b}"] = acc["eps_prime"]
    per_user["dist_centre"] = acc["dist_centre"]
    bound = acct.theorem3_bound(hbar, labels, c, x.delta, eps1, eps2, x.col_orders())
    err_raw = proto.l1_error(raw, hbar)
    row["thm3_bound_mean"] = float(bound.mean())
    row["thm3_share_under"] = float((err_raw <= bound).mean())
    # the server re-clusters the released R with the shuffler's function (it lacks W);
    # measured for k-means runs only (a second DBSCAN would double the job's cost)
    if clustering == "kmeans":
        server = proto.recluster_attack(raw, clustering=clustering, k=k, dbscan=db,
                                        cluster_seed=int(rng.integers(2**62)))
        agree = proto.partition_agreement(labels, server)
        row["attack_ari"], row["attack_identical"] = agree["ari"], float(agree["identical"])
    return est, labels, err_raw


def _baseline_output(x: _EpsRun, c, rng, row: dict):
    """The protocol output of ``ldp``, ``global``, ``oracle`` or ``single`` (with its attack recorded)."""
    hbar, eps_f, clustering, k, db = x.hbar, x.eps_f, x.clustering, x.k, x.db
    if x.method == "ldp":
        return proto.ldp_baseline(hbar, eps_f, c, rng)
    if x.method == "global":
        return proto.global_shuffle(hbar, eps_f, c, rng)
    if x.method == "oracle":
        return proto.oracle_clusters(hbar, eps_f, c, rng, clustering=clustering, k=k, dbscan=db)
    # single copy; the shuffler's clustering function is fixed and public
    fseed = seeding.derive_seed(x.seed, "peruser-f", x.dataset)
    out = proto.single_copy(hbar, eps_f, c, rng, clustering=clustering, k=k, dbscan=db, cluster_seed=fseed)
    out.raw.flags.writeable = False   # re-clustered twice below: renormalised and sorted once (proto.cluster)
    server = proto.recluster_attack(out.raw, clustering=clustering, k=k, dbscan=db, cluster_seed=fseed)
    agree = proto.partition_agreement(out.labels, server)
    row["attack_ari"], row["attack_identical"] = agree["ari"], float(agree["identical"])
    other = proto.recluster_attack(out.raw, clustering=clustering, k=k, dbscan=db, cluster_seed=fseed + 1)
    row["attack_ari_other_seed"] = proto.partition_agreement(out.labels, other)["ari"]
    return out


def _run_baseline(x: _EpsRun, c, rng, row: dict, per_user: dict):
    """A baseline method: (estimate, labels, raw error); per-user eps' recorded."""
    hbar, n, eps_f = x.hbar, x.n, x.eps_f
    out = _baseline_output(x, c, rng, row)
    raw, est, labels = out.raw, out.output, out.labels
    err_raw = proto.l1_error(raw, hbar)
    if x.method == "global":
        for b, acc in acct.per_user_eps_bounds(hbar, labels, 0.0, eps_f, c, x.delta, x.amps).items():
            per_user[f"eps_prime_{b}"] = acc["eps_prime"]
        per_user["dist_centre"] = acc["dist_centre"]
    elif x.method in ("ldp", "single"):
        # LDP: no shuffle. Single copy: Theorem 1, the server recovers the groups, so
        # no amplification is claimed.
        for b in x.amps:
            per_user[f"eps_prime_{b}"] = np.full(n, eps_f)
        per_user["dist_centre"] = acct.group_centre_distances(hbar, labels)
    else:   # oracle: the grouping leaks the true data; no privacy guarantee
        for b in x.amps:
            per_user[f"eps_prime_{b}"] = np.full(n, math.nan)
        per_user["dist_centre"] = acct.group_centre_distances(hbar, labels)
    return est, labels, err_raw


def _summarise(x: _EpsRun, row: dict, per_user: dict, est, labels, err_raw):
    """Errors, groups and eps' quantiles into ``row``; returns (error, top-3 accuracy, group sizes)."""
    hbar, data, eps_f = x.hbar, x.data, x.eps_f
    err = proto.l1_error(est, hbar)
    top3 = proto.top3_accuracy(est, hbar, truth=x.top3_truth())
    sizes = np.bincount(labels)
    if x.truth is None and data.clusters is not None:
        x.truth = np.asarray(data.clusters)
    row.update(err_mean=float(err.mean()), err_raw_mean=float(err_raw.mean()),
               top3_mean=float(top3.mean()), n_groups=int(len(sizes)),
               n_singletons=int((sizes == 1).sum()), largest_group=int(sizes.max()),
               median_group_size=float(np.median(sizes[labels])),
               # Laplace LDP's expected raw L1 error at the whole local eps: d * 2c/eps (E|Lap(b)| = b)
               ldp_err_raw_at_eps=2.0 * row["c"] * x.d / eps_f)
    if data.clusters is not None:  # only where there is a true partition
        row["ari_true"] = proto.adjusted_rand_index(data.clusters, labels)
    for b in x.amps:
        e = per_user[f"eps_prime_{b}"]
        for qn, q in (("min", 0.0), ("q10", 0.1), ("median", 0.5), ("q90", 0.9), ("max", 1.0)):
            row[f"epsp_{b}_{qn}"] = float(np.quantile(e, q)) if np.isfinite(e).all() else math.nan
        row[f"epsp_{b}_mean"] = float(e.mean())
        if x.method in CLUSTERED:
            row[f"amplified_share_{b}"] = float((e < eps_f - 1e-12).mean())
            # the paper's utility comparison at equal FINAL privacy: Laplace LDP run by each user at
            # her own eps' (expected raw L1 error 2 c d / eps'_i), against Algorithm 1's err_raw_mean
            row[f"ldp_err_raw_at_epsp_{b}"] = float(np.mean(2.0 * row["c"] * x.d / e))
    return err, top3, sizes


def _user_sample(x: _EpsRun, row: dict, per_user: dict, labels, sizes, err, err_raw, top3) -> pd.DataFrame:
    """The seeded sample of per-user rows (repetition 0)."""
    n = x.n
    m = min(n, int(x.spec["user_sample"]))
    pick = np.sort(seeding.rng(x.seed, "peruser-sample", x.dataset).choice(n, m, replace=False))
    cols = {"user": pick.astype(np.int64), "group_size": sizes[labels][pick].astype(np.int64),
            "dist_centre": per_user["dist_centre"][pick], "err": err[pick],
            "err_raw": err_raw[pick], "top3": top3[pick]}
    for b in x.amps:
        cols[f"eps_prime_{b}"] = per_user[f"eps_prime_{b}"][pick]
    # the identity columns: one value each, broadcast by the constructor (one frame, not a column at a time)
    cols.update({key: row[key] for key in ("method", "dataset", "eps", "split", "clustering", "c", "eps1", "eps2")})
    return pd.DataFrame(cols)


# ----------------------------------------------------------------------------------------------
# collection and claims


def collect(paths: list[str]) -> pd.DataFrame:
    """The job tables at ``paths`` in one table, sorted by identity (not by file or batch)."""
    return collect_frames([pd.read_parquet(p) for p in sorted(paths)])


def collect_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    keys = [k for k in ("dataset", "method", "clustering", "eps", "split", "c", "rep", "user") if k in df]
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


def report(spec: Mapping, runs_path: str, users_path: str, out: Mapping[str, str],
           audits: list[str] | None = None) -> pd.DataFrame:
    """The ``report`` step: figures 1-4 (``out["fig<k>_pdf"]``, ``out["fig<k>_png"]``) and the claims
    table (``out["claims"]`` Parquet, ``out["claims_md"]`` Markdown, with the datasets' notes), gated
    by the audits table at ``audits`` (:mod:`shuffledp.claims.audit_gate`; empty or None: not run)."""
    from shuffledp.io import write_table, write_text
    from shuffledp.plotting import peruser as F

    runs = pd.read_parquet(runs_path)
    users = pd.read_parquet(users_path)
    F.all_figures(runs, users, spec, out)
    from shuffledp.claims import peruser as CP

    cl = CP.gate(claims(runs, users, spec["scale"]), audits or [])
    notes = sorted({n for n in runs.get("note", pd.Series(dtype=str)).dropna() if n})
    write_table(cl, out["claims"])
    write_text(out["claims_md"], claims_markdown(cl, "; ".join(notes)))
    return cl


def claims(runs: pd.DataFrame, users: pd.DataFrame, scale: str) -> pd.DataFrame:
    """The paper's claims, checked on the runs: see :mod:`shuffledp.claims.peruser`."""
    from shuffledp.claims import peruser as C

    return C.claims(runs, users, scale)


def claims_markdown(df: pd.DataFrame, note: str = "") -> str:
    from shuffledp.claims import peruser as C

    return C.claims_markdown(df, note)
