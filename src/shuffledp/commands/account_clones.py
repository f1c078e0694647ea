"""``shuffledp account clones`` and ``shuffledp account blanket``: JSON accountants.

Every numeric flag (and the choice flags) accepts a comma-separated list; a grid prints a JSON
array with one object per combination, each carrying its inputs beside the result.
"""

from __future__ import annotations

import argparse
import math

from shuffledp.commands._grid import int_like, one_line_errors, parse_list, run_grid


def register(subparsers, account_subparsers) -> None:
    p = account_subparsers.add_parser(
        "clones",
        help="clones bound of Feldman, McMillan, Talwar (FOCS'21 numerical/closed form; SODA'23)",
        description="Central eps (given --delta) or delta (given --eps) of shuffling n eps0-LDP "
        "reports by the clones analysis. Numeric flags take comma lists.",
    )
    p.add_argument("--eps0", required=True, help="local epsilon (> 0)")
    p.add_argument("--n", required=True, help="number of users (>= 2)")
    tgt = p.add_mutually_exclusive_group(required=True)
    tgt.add_argument("--delta", help="central delta in (0, 1): print {\"eps\": ...}")
    tgt.add_argument("--eps", help="central eps >= 0: print {\"delta\": ...} (numerical bound)")
    p.add_argument("--variant", default="fmt21", help="fmt21 (FOCS'21) | fmt23 (SODA'23 stronger clones)")
    p.add_argument("--closed-form", action="store_true",
                   help="FMT21's closed form (Thm 3.1) instead of the numerical bound")
    p.add_argument("--closed-form-version", default="code",
                   help="code (authors' public code; default) | theorem (formula as printed)")
    p.set_defaults(func=one_line_errors(run_clones))

    b = account_subparsers.add_parser(
        "blanket",
        help="privacy-blanket bound of Balle, Bell, Gascon, Nissim (Hoeffding or Bennett)",
        description="Central eps (given --eps0 and --delta) of shuffling n reports by the privacy "
        "blanket bound, or the largest local eps meeting (--eps-central, --delta). Numeric flags "
        "take comma lists.",
    )
    b.add_argument("--bound", required=True, help="hoeffding | bennett")
    b.add_argument("--mechanism", required=True, help="generic | krr | laplace | mhm")
    b.add_argument("--k", help="domain size of krr (>= 2)")
    b.add_argument("--d", help="number of attributes of mhm (>= 1)")
    b.add_argument("--g", help="hash range of mhm (> d; default: Eq. (3) of the MHM paper, rounded)")
    b.add_argument("--source", default="exact",
                   help="mhm moments: exact (maximum over hashed-set configurations) | paper (Thm 1)")
    loc = b.add_mutually_exclusive_group(required=True)
    loc.add_argument("--eps0", help="local epsilon (> 0): print {\"eps\": ...}")
    loc.add_argument("--eps-central", help="central epsilon (> 0): print {\"eps_local\": ...}")
    b.add_argument("--n", required=True, help="number of users (>= 2)")
    b.add_argument("--delta", required=True, help="central delta in (0, 1)")
    b.set_defaults(func=one_line_errors(run_blanket))


# --------------------------------------------------------------------------- checks
def _positive(values, flag: str) -> None:
    from shuffledp.errors import UsageError

    for v in values:
        if v is not None and not (math.isfinite(v) and v > 0):
            raise UsageError(f"--{flag}: must be a positive finite number, got {v}")


def _nonnegative(values, flag: str) -> None:
    from shuffledp.errors import UsageError

    for v in values:
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise UsageError(f"--{flag}: must be a finite number >= 0, got {v}")


def _n_values(text) -> list:
    from shuffledp.errors import UsageError

    ns = parse_list(text, "n", int_like)
    for n in ns:
        if n < 2:
            raise UsageError(f"--n: need at least 2 users, got {n}")
    return ns


def _delta_values(text, flag: str = "delta") -> list:
    from shuffledp.errors import UsageError

    ds = parse_list(text, flag, float)
    for d in ds:
        if not (0.0 < d < 1.0):
            raise UsageError(f"--{flag}: must lie in (0, 1), got {d}")
    return ds


def _choices(text, flag: str, allowed) -> list:
    from shuffledp.errors import UsageError

    vals = parse_list(text, flag, str)
    for v in vals:
        if v not in allowed:
            raise UsageError(f"--{flag}: unknown {v!r} (one of {'|'.join(allowed)})")
    return vals


def _call(fn, *args, **kw):
    """Run an accountant; a ValueError (bad combination of values) becomes a one-line error."""
    from shuffledp.errors import UsageError

    try:
        return fn(*args, **kw)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# --------------------------------------------------------------------------- clones
def run_clones(args: argparse.Namespace) -> int:
    from shuffledp.accountants.upper import clones as C
    from shuffledp.errors import UsageError

    eps0s = parse_list(args.eps0, "eps0", float)
    _positive(eps0s, "eps0")
    ns = _n_values(args.n)
    variants = _choices(args.variant, "variant", C.VARIANTS)
    version = args.closed_form_version
    if version not in C.CLOSED_FORMS:
        raise UsageError(f"--closed-form-version: unknown {version!r} (one of {'|'.join(C.CLOSED_FORMS)})")
    if args.closed_form and any(v != "fmt21" for v in variants):
        raise UsageError("--variant: a closed form exists only for fmt21")
    if args.delta is not None:
        deltas = _delta_values(args.delta)

        def one(eps0, n, delta, variant):
            return {"eps": _call(C.eps_clones, eps0, n, delta, variant=variant,
                                 closed_form=args.closed_form, closed_form_version=version)}

        grid = {"eps0": eps0s, "n": ns, "delta": deltas, "variant": variants}
    else:
        if args.closed_form:
            raise UsageError("--closed-form: gives eps for a --delta, not delta for an --eps")
        epss = parse_list(args.eps, "eps", float)
        _nonnegative(epss, "eps")

        def one(eps0, n, eps, variant):
            return {"delta": _call(C.delta_clones, eps0, n, eps, variant=variant)}

        grid = {"eps0": eps0s, "n": ns, "eps": epss, "variant": variants}
    if args.closed_form:
        grid["closed_form"] = [True]
    return run_grid(grid, lambda closed_form=False, **kw: one(**kw))


# --------------------------------------------------------------------------- blanket
def _mechanism_params(args, mechs: list, sources: list) -> tuple[list, list, list]:
    """(ks, ds, gs): ``--k`` only with krr, ``--d``/``--g`` only with mhm, checked."""
    from shuffledp.errors import UsageError

    ks = parse_list(args.k, "k", int_like)
    ds = parse_list(args.d, "d", int_like)
    gs = parse_list(args.g, "g", int_like)
    if "krr" in mechs:
        if ks == [None]:
            raise UsageError("--k: required with --mechanism krr")
        if any(k < 2 for k in ks):
            raise UsageError("--k: the krr domain needs at least 2 values")
    elif ks != [None]:
        raise UsageError("--k: only used with --mechanism krr")
    if "mhm" in mechs:
        if ds == [None]:
            raise UsageError("--d: required with --mechanism mhm")
        if any(d < 1 for d in ds):
            raise UsageError("--d: need at least 1 attribute")
        if gs != [None] and any(g <= d for g in gs for d in ds):
            raise UsageError("--g: the hash range must exceed --d")
    elif ds != [None] or gs != [None]:
        raise UsageError("--d/--g: only used with --mechanism mhm")
    if sources != ["exact"] and "mhm" not in mechs:
        raise UsageError("--source: only used with --mechanism mhm")
    specific = ks != [None] or ds != [None] or gs != [None] or sources != ["exact"]
    if len(mechs) > 1 and specific:
        raise UsageError("--mechanism: give a single mechanism when using --k, --d, --g or --source")
    return ks, ds, gs


def _blanket_one(args, grid: dict, ns: list, deltas: list, B):
    """The per-point function: eps from ``--eps0``, or the largest local eps from ``--eps-central``
    (its values added to ``grid``)."""
    if args.eps0 is not None:
        eps0s = parse_list(args.eps0, "eps0", float)
        _positive(eps0s, "eps0")
        grid.update({"eps0": eps0s, "n": ns, "delta": deltas})

        def one(bound, mechanism, eps0, n, delta, **kw):
            out = {"eps": _call(B.eps_blanket, eps0, n, delta, mechanism=mechanism, bound=bound, **kw)}
            if mechanism == "mhm" and kw.get("g") is None:
                out["g_used"] = B.mhm_domain(eps0, kw["d"], None)
            return out
    else:
        epscs = parse_list(args.eps_central, "eps-central", float)
        _positive(epscs, "eps-central")
        grid.update({"eps_central": epscs, "n": ns, "delta": deltas})

        def one(bound, mechanism, eps_central, n, delta, **kw):
            return {"eps_local": _call(B.max_eps_local, eps_central, delta, n, mechanism=mechanism,
                                       bound=bound, **kw)}
    return one


def run_blanket(args: argparse.Namespace) -> int:
    from shuffledp.accountants.upper import blanket as B

    bounds = _choices(args.bound, "bound", B.BOUNDS)
    mechs = _choices(args.mechanism, "mechanism", B.MECHANISMS)
    sources = _choices(args.source, "source", B.SOURCES)
    ks, ds, gs = _mechanism_params(args, mechs, sources)
    ns = _n_values(args.n)
    deltas = _delta_values(args.delta)
    grid = {"bound": bounds, "mechanism": mechs}
    mechanism = mechs[0]
    if mechanism == "krr":
        grid["k"] = ks
    if mechanism == "mhm":
        grid.update({"d": ds, "g": gs, "source": sources})
    one = _blanket_one(args, grid, ns, deltas, B)
    return run_grid(grid, one)
