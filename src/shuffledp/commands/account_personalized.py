"""``shuffledp account personalized``: shuffle privacy bounds under personalized local privacy."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from shuffledp.accountants.validation import AccountantDomainError
from shuffledp.commands._grid import int_like, one_line_errors, parse_list, run_grid

if TYPE_CHECKING:  # numpy is imported where it is used (a light `shuffledp --help`)
    import numpy as np


def register(subparsers, account_subparsers) -> None:
    p = account_subparsers.add_parser(
        "personalized",
        help="HPS (Liu et al. CIKM'24) and baselines BGN, FV, CCC, LZX for personalized local epsilons",
        description="Central (eps, delta) of shuffling n reports with personalized local privacy. "
        "Give --eps-central to get delta, or --delta-central to get eps. Numeric flags take comma lists.",
    )
    p.add_argument("--bound", required=True, help="hps|bgn|fv|ccc|lzx|hpsvalid (comma list allowed; "
                   "hpsvalid = HPS with valid Laplace mixture weights)")
    p.add_argument("--mechanism", default="laplace", help="laplace (pure) | gaussian (approximate)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--setting", help="uniform1|gauss1|uniform2|gauss2 (Table 1), with --seed and --n")
    src.add_argument("--eps-local-file", help="file with one local epsilon per line (n = line count)")
    p.add_argument("--seed", default="0", help="seed of the --setting draw")
    p.add_argument("--n", help="number of users (with --setting)")
    p.add_argument("--delta-local", default="0", help="local delta of every user (0 = pure)")
    tgt = p.add_mutually_exclusive_group(required=True)
    tgt.add_argument("--eps-central", help="central eps: print delta")
    tgt.add_argument("--delta-central", help="central delta: print eps")
    p.add_argument("--calibration", default="analytic",
                   help="Gaussian noise calibration: analytic (exact) | classic (sqrt(2 ln(1.25/d))/eps) | "
                   "hps-code (the HPS authors' code's scale; not a valid DP calibration, for comparison)")
    p.add_argument("--method", default="theorem2",
                   help="HPS delta: theorem2 (the paper's formula 5) | exact (exact divergence of the pair)")
    p.set_defaults(func=one_line_errors(run))


def _eps_local(args, setting, n, seed) -> np.ndarray:
    import numpy as np

    from shuffledp.accountants.special.personalized import draw_local_eps
    from shuffledp.errors import UsageError

    if args.eps_local_file is not None:
        path = Path(args.eps_local_file)
        if not path.is_file():
            raise UsageError(f"--eps-local-file: no such file {path}")
        try:
            e = np.loadtxt(path, dtype=float, ndmin=1)
        except ValueError as exc:
            raise UsageError(f"--eps-local-file: {exc}") from None
        if e.size == 0 or np.any(~np.isfinite(e)) or np.any(e <= 0):
            raise UsageError("--eps-local-file: need positive finite local epsilons, one per line")
        return e
    if n is None:
        raise UsageError("--n: required with --setting")
    return draw_local_eps(setting, n, seed)


def _names(args, P) -> tuple[list, list]:
    """The ``--bound`` and ``--mechanism`` lists, each name checked."""
    from shuffledp.errors import UsageError

    bounds = parse_list(args.bound, "bound", str)
    mechs = parse_list(args.mechanism, "mechanism", str)
    for b in bounds:
        if b not in P.BOUNDS:
            raise UsageError(f"--bound: unknown {b!r} (one of {'|'.join(P.BOUNDS)})")
    for m in mechs:
        if m not in P.MECHANISMS:
            raise UsageError(f"--mechanism: unknown {m!r} (laplace|gaussian)")
    return bounds, mechs


def _population(args, P) -> tuple[list, list, list]:
    """(settings, ns, seeds) of ``--setting``/``--n``/``--seed``; ``[None]`` each with ``--eps-local-file``."""
    from shuffledp.errors import UsageError

    if args.setting is None:
        if args.n is not None:
            raise UsageError("--n: not used with --eps-local-file (its line count is n)")
        return [None], [None], [None]
    settings = parse_list(args.setting, "setting", str)
    for s in settings:
        if s not in P.SETTINGS:
            raise UsageError(f"--setting: unknown {s!r} (one of {'|'.join(P.SETTINGS)})")
    ns = parse_list(args.n, "n", int_like)
    if ns == [None]:
        raise UsageError("--n: required with --setting")
    if any(n < 2 for n in ns):
        raise UsageError("--n: need at least 2 users")
    from shuffledp.accountants.validation import PERSONALIZED_N_MAX

    if any(n > PERSONALIZED_N_MAX for n in ns):
        raise UsageError(f"--n: at most {PERSONALIZED_N_MAX:.0e} users (one local eps per user)")
    return settings, ns, parse_list(args.seed, "seed", int_like)


def _targets(args) -> tuple[list, str]:
    """(the central targets, their key): ``--eps-central`` (prints delta) or ``--delta-central``."""
    from shuffledp.errors import UsageError

    if args.eps_central is not None:
        targets, key = parse_list(args.eps_central, "eps-central"), "eps_central"
        if any(x < 0 for x in targets):
            raise UsageError("--eps-central: must be >= 0")
    else:
        targets, key = parse_list(args.delta_central, "delta-central"), "delta_central"
        if any(not 0 < x < 1 for x in targets):
            raise UsageError("--delta-central: must lie in (0, 1)")
    return targets, key


def _one_fn(args, key: str, P):
    """The grid's ``one(bound, mechanism, setting, n, seed, delta_local, <key>)``; local epsilons cached."""
    from shuffledp.errors import UsageError

    cache: dict = {}

    def one(bound, mechanism, setting, n, seed, delta_local, **kw):
        k = (setting, n, seed)
        if k not in cache:
            cache[k] = _eps_local(args, setting, n, seed)
        e = cache[k]
        if mechanism == "gaussian" and delta_local == 0:
            raise UsageError("--delta-local: the Gaussian mechanism needs delta_local > 0")
        if mechanism == "laplace" and delta_local > 0:
            raise UsageError("--delta-local: the Laplace mechanism is pure; use 0")
        if bound in ("bgn", "lzx", "hpsvalid") and mechanism == "gaussian":
            raise UsageError(f"--bound: {bound} is a pure-LDP bound (use --mechanism laplace)")
        extra = {}
        if bound == "hps":
            extra = {"calibration": args.calibration, "method": args.method}
        if bound == "hpsvalid":
            extra = {"method": args.method}
        try:
            if key == "eps_central":
                val = P.personalized_delta(bound, e, delta_local, kw[key], mechanism=mechanism, **extra)
                return {"n_users": int(e.size), "eps_local_max": float(e.max()), "delta": val}
            val = P.personalized_eps(bound, e, delta_local, kw[key], mechanism=mechanism, **extra)
            return {"n_users": int(e.size), "eps_local_max": float(e.max()), "eps": val}
        except AccountantDomainError:
            raise
        except ValueError as exc:
            raise UsageError(f"--bound {bound}: {exc}") from None
        except ImportError as exc:
            raise UsageError(f"--bound {bound}: accountant not available ({exc})") from None

    return one


def run(args: argparse.Namespace) -> int:
    from shuffledp.accountants.special import personalized as P
    from shuffledp.errors import UsageError

    bounds, mechs = _names(args, P)
    settings, ns, seeds = _population(args, P)
    dls = parse_list(args.delta_local, "delta-local")
    if any(not 0 <= d < 1 for d in dls):
        raise UsageError("--delta-local: must lie in [0, 1)")
    targets, key = _targets(args)
    if args.calibration not in ("analytic", "classic", "hps-code"):
        raise UsageError("--calibration: analytic|classic|hps-code")
    if args.method not in ("theorem2", "exact"):
        raise UsageError("--method: theorem2|exact")
    grid = {"bound": bounds, "mechanism": mechs, "setting": settings, "n": ns, "seed": seeds,
            "delta_local": dls, key: targets}
    return run_grid(grid, _one_fn(args, key, P))
