"""``shuffledp account vr | poisson | segmented`` and ``shuffledp account-table segmented``.

Variation-ratio accountants (JSON on stdout; every numeric flag takes a comma list and the command
prints one object per combination). Library ``ValueError``\\ s become one-line usage errors naming
the flag (exit status 2).
"""

from __future__ import annotations

import math
import re
import sys

from shuffledp.commands import _args as A
from shuffledp.commands._grid import int_like, one_line_errors, parse_list, progress, run_grid
from shuffledp.errors import UsageError

_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): (.*)$", re.S)
_FLAG_ALIASES = {"lambda": "m", "eps_single": "eps", "m_grid": "m-grid", "params": "p"}


def _usage(exc: ValueError, known: set[str]) -> UsageError:
    """``"eps0: must be > 0"`` or ``AccountantDomainError("eps0", ...)`` -> ``UsageError("--eps0: ...")``."""
    from shuffledp.accountants.validation import AccountantDomainError

    if isinstance(exc, AccountantDomainError):
        flag = _FLAG_ALIASES.get(exc.flag.replace("-", "_"), exc.flag).replace("_", "-")
        return UsageError(f"--{flag}: {exc.message}")
    text = " ".join(str(exc).split())
    match = _NAME.match(text)
    if match:
        name, msg = match.groups()
        name = _FLAG_ALIASES.get(name, name)
        flag = name.replace("_", "-")
        if flag in known:
            return UsageError(f"--{flag}: {msg}")
    return UsageError(text)


def _call(fn, known, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        raise _usage(exc, known) from None


def _check_common(n=None, delta=None, eps=None, eps0=None):
    if n is not None and n < 2:
        raise UsageError(f"--n: {n} must be an integer >= 2")
    if delta is not None and not (0.0 < delta < 1.0):
        raise UsageError(f"--delta: {delta!r} must lie in the open interval (0, 1)")
    if eps is not None and not (math.isfinite(eps) and eps > 0):
        raise UsageError(f"--eps: {eps!r} must be a finite number > 0")
    if eps0 is not None and not (math.isfinite(eps0) and eps0 > 0):
        raise UsageError(f"--eps0: {eps0!r} must be a finite number > 0")


# ----------------------------------------------------------------------------- vr
def _cmd_vr(args) -> int:
    from shuffledp.accountants.upper import variation_ratio as vr

    known = {"mechanism", "k", "d", "s", "eps0", "n", "delta", "p", "beta", "q", "eps", "rtol"}
    if any(x is not None for x in (args.p, args.beta, args.q)):
        return _vr_parameter_form(args, vr, known)
    return _vr_mechanism_form(args, vr, known)


def _vr_parameter_form(args, vr, known) -> int:
    """``--p --beta --q --n`` with ``--eps`` (prints delta) or ``--delta`` (prints eps)."""
    if args.mechanism is not None:
        raise UsageError("--mechanism: give either --mechanism or --p/--beta/--q, not both")
    for flag in ("p", "beta", "q"):
        if getattr(args, flag) is None:
            raise UsageError(f"--{flag}: required with --p/--beta/--q")
    for flag in ("eps0", "k", "d", "s"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag}: only with --mechanism")
    if (args.eps is None) == (args.delta is None):
        raise UsageError("--eps: give exactly one of --eps (prints delta) or --delta (prints eps)")
    grid = {
        "p": parse_list(args.p, "p"), "beta": parse_list(args.beta, "beta"),
        "q": parse_list(args.q, "q"), "n": parse_list(args.n, "n", int_like),
        "eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
    }

    def one(p, beta, q, n, eps, delta):
        _check_common(n=n, delta=delta, eps=eps)
        params = _call(vr.VRParams, known, p, beta, q)
        if eps is not None:
            lo, hi = _call(vr.vr_delta_bounds, known, params, n, eps)
            return {"delta": hi, "delta_lower": lo}
        lo, hi = _call(vr.vr_eps_bounds, known, params, n, delta, rtol=args.rtol)
        return {"eps": hi, "eps_lower": lo, "gap": hi - lo}

    return run_grid(grid, one)


def _check_mechanism_flags(args) -> None:
    if args.mechanism is None:
        raise UsageError("--mechanism: required (or give --p --beta --q)")
    if args.eps is not None:
        raise UsageError("--eps: only with --p/--beta/--q (the mechanism form takes --delta)")
    if args.delta is None:
        raise UsageError("--delta: required")
    if args.mechanism == "balls-into-bins":
        if args.eps0 is not None:
            raise UsageError("--eps0: not used by balls-into-bins (its privacy comes from the blankets)")
    elif args.eps0 is None:
        raise UsageError("--eps0: required")
    if args.mechanism == "krr" and args.k is None:
        raise UsageError("--k: required for krr")
    if args.mechanism in ("subset-exp", "balls-into-bins"):
        for flag in ("d", "s") + (("k",) if args.mechanism == "subset-exp" else ()):
            if getattr(args, flag) is None:
                raise UsageError(f"--{flag}: required for {args.mechanism}")


def _vr_mechanism_form(args, vr, known) -> int:
    """``--mechanism --eps0 --n --delta`` -> eps, its lower bound and the gap."""
    _check_mechanism_flags(args)
    grid = {
        "eps0": parse_list(args.eps0, "eps0"), "k": parse_list(args.k, "k", int_like),
        "d": parse_list(args.d, "d", int_like), "s": parse_list(args.s, "s", int_like),
        "n": parse_list(args.n, "n", int_like), "delta": parse_list(args.delta, "delta"),
    }
    mech = args.mechanism

    def one(eps0, k, d, s, n, delta):
        _check_common(n=n, delta=delta, eps0=eps0)
        params = _call(vr.vr_params, known, mech, eps0, k=k, d=d, s=s)
        lo_red, hi = _call(vr.vr_eps_bounds, known, params, n, delta, rtol=args.rtol)
        if mech == "balls-into-bins":
            lower, kind = lo_red, "reduction (attained by balls-into-bins)"
        else:
            lower = _call(vr.witness_eps, known, mech, eps0, n, delta, k=k, d=d, s=s, rtol=args.rtol)
            kind = "witness datasets (exact)"
        return {"mechanism": mech, "p": params.p, "beta": params.beta, "q": params.q,
                "eps": hi, "eps_lower": lower, "gap": hi - lower, "eps_reduction_lower": lo_red,
                "lower_kind": kind}

    return run_grid(grid, one)


# ----------------------------------------------------------------------------- poisson
def _cmd_poisson(args) -> int:
    from shuffledp.accountants.special import poisson as ps

    known = {"n", "m", "d", "s", "eps", "delta", "accountant"}
    grid = {
        "n": parse_list(args.n, "n", int_like), "m": parse_list(args.m, "m"),
        "d": parse_list(args.d, "d", int_like), "s": parse_list(args.s, "s", int_like),
        "eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
    }

    def one(n, m, d, s, eps, delta):
        _check_common(n=n, delta=delta, eps=eps)
        if not (math.isfinite(m) and m >= 0):
            raise UsageError(f"--m: {m!r} must be a finite number >= 0")
        if d < 2:
            raise UsageError(f"--d: {d} must be an integer >= 2")
        if s < 1:
            raise UsageError(f"--s: {s} must be an integer >= 1")
        res = _call(ps.solve_poisson_lambda, known, n, m, d, s, eps, delta, accountant=args.accountant)
        out = {"lambda": res.lam, "eps_single": res.eps_single, "delta_single": res.delta_single,
               "delta_single_target": res.delta_target, "delta_user": res.delta_user,
               "feasible": res.feasible, "accountant": args.accountant}
        if s == 1 and res.feasible:
            out["delta_single_lower"] = _call(ps.poisson_delta_lower, known, res.lam, n, m, d, res.eps_single)
        return out

    return run_grid(grid, one)


# ----------------------------------------------------------------------------- segmented
def _levels_shares(args, shares_text: str | None = None):
    """Parsed ``--levels`` and ``--shares`` (or the given shares text), validated together."""
    levels = parse_list(args.levels, "levels")
    shares = parse_list(args.shares if shares_text is None else shares_text, "shares")
    if any(not (math.isfinite(e) and e > 0) for e in levels):
        raise UsageError(f"--levels: {levels} must all be finite and > 0")
    if any(b <= a for a, b in zip(levels, levels[1:], strict=False)):
        raise UsageError(f"--levels: {levels} must be strictly increasing")
    if len(shares) != len(levels):
        raise UsageError(f"--shares: {len(shares)} shares for {len(levels)} levels")
    if any(x < 0 for x in shares) or abs(math.fsum(shares) - 1.0) > 1e-9:
        raise UsageError(f"--shares: {shares} must be >= 0 and sum to 1")
    return levels, shares


def _check_nds(n, d, s, delta):
    _check_common(n=n, delta=delta)
    if d < 2:
        raise UsageError(f"--d: {d} must be an integer >= 2")
    if s < 1:
        raise UsageError(f"--s: {s} must be an integer >= 1")


def _cmd_segmented(args) -> int:
    from shuffledp.accountants.special import segmented_optimizer as so

    known = {"n", "d", "s", "levels", "shares", "delta", "m", "accountant"}
    levels, shares = _levels_shares(args)
    grid = {
        "n": parse_list(args.n, "n", int_like), "d": parse_list(args.d, "d", int_like),
        "s": parse_list(args.s, "s", int_like), "delta": parse_list(args.delta, "delta"),
        "m": parse_list(args.m, "m"),
    }

    def one(n, d, s, delta, m):
        _check_nds(n, d, s, delta)
        if m is not None and not (math.isfinite(m) and m >= 0):
            raise UsageError(f"--m: {m!r} must be a finite number >= 0")
        pad = _padding(args, s)
        out = _call(so.optimize_segmented, known, n, d + pad, s, levels, shares, delta, m=m,
                    accountant=args.accountant)
        out = dict(out)
        out["padding"] = pad  # the accountants ran over d + padding items
        out["m_given"] = m is not None
        return out

    return run_grid(grid, one)


def _padding(args, s: int) -> int:
    """``--padding``: 0, or ``s`` (users short of ``s`` items send padding items; accountants over ``d + s``)."""
    try:
        pad = int_like(str(args.padding))
    except ValueError:
        raise UsageError(f"--padding: {args.padding!r} must be 0 or s = {s}") from None
    if pad not in (0, s):
        raise UsageError(f"--padding: {args.padding!r} must be 0 or s = {s} (the padding domain's size)")
    return pad


def parse_m_grid(text: str) -> list[float]:
    """``"0.1,0.5,1"`` or ``"log:MIN:MAX:NUM"`` (NUM log-spaced values, both ends included)."""
    if text.startswith("log:"):
        parts = text.split(":")
        if len(parts) != 4:
            raise UsageError(f"--m-grid: {text!r} must be log:MIN:MAX:NUM")
        try:
            lo, hi, num = float(parts[1]), float(parts[2]), int(parts[3])
        except ValueError:
            raise UsageError(f"--m-grid: cannot read {text!r} as log:MIN:MAX:NUM") from None
        if not (0 < lo <= hi and math.isfinite(hi) and num >= 1):
            raise UsageError(f"--m-grid: need 0 < MIN <= MAX and NUM >= 1 in {text!r}")
        return log_grid(lo, hi, num)
    values = parse_list(text, "m-grid")
    if any(not (math.isfinite(v) and v >= 0) for v in values):
        raise UsageError(f"--m-grid: {values} must be finite numbers >= 0")
    return values


def log_grid(lo: float, hi: float, num: int) -> list[float]:
    """``numpy.geomspace(lo, hi, num)`` rounded to 12 significant digits (so 1.0 is exactly 1.0);
    experiments that build the same grid the same way get bit-identical m values."""
    import numpy as np

    return [float(f"{x:.12g}") for x in np.geomspace(float(lo), float(hi), int(num))]


def _cmd_table_segmented(args) -> int:
    from shuffledp.accountants.special import segmented_optimizer as so
    from shuffledp.io import write_table

    known = {"n", "d", "s", "levels", "shares", "delta", "m-grid", "accountants", "padding"}
    shares_list, outs = list(args.shares), list(args.out)
    if len(shares_list) != len(outs):
        raise UsageError(f"--out: {len(outs)} output files for {len(shares_list)} --shares (pair each --shares "
                         "with its --out)")
    if len(set(outs)) != len(outs):
        raise UsageError("--out: output files must be distinct")
    settings = [_levels_shares(args, text) for text in shares_list]
    n = parse_list(args.n, "n", int_like)
    d = parse_list(args.d, "d", int_like)
    s = parse_list(args.s, "s", int_like)
    delta = parse_list(args.delta, "delta")
    if any(len(x) != 1 for x in (n, d, s, delta)):
        raise UsageError("--n: account-table takes one value each of --n --d --s --delta")
    n, d, s, delta = n[0], d[0], s[0], delta[0]
    _check_nds(n, d, s, delta)
    grid = parse_m_grid(args.m_grid)
    accountants = [a.strip() for a in args.accountants.split(",") if a.strip()]
    for acc in accountants:
        if acc not in ("sound", "indicator", "paper"):
            raise UsageError(f"--accountants: {acc!r} is not sound, indicator or paper")
    # one process for every setting: the per-level Poisson rates (the costly part) do not depend on
    # the shares and are cached across settings (shuffledp.accountants.special.segmented_optimizer)
    for (levels, shares), out in zip(settings, outs, strict=True):
        table = _call(so.segmented_table, known, n, d, s, levels, shares, delta, grid, accountants=accountants,
                      progress=lambda items, _out=out: progress(items, desc=_out), padding=_padding(args, s))
        write_table(table, out)  # atomic, as every table
        sys.stdout.write(f"{out}\n")
    return 0


# ----------------------------------------------------------------------------- registration
def register(sub, account_sub) -> None:
    _register_vr(account_sub)
    _register_poisson(account_sub)
    _register_segmented(account_sub)
    _register_table(sub)


def _register_vr(account_sub) -> None:
    p = account_sub.add_parser(
        "vr", help="variation-ratio amplification bound (Wang et al., VLDB 2024)",
        description="Mechanism form: --mechanism general|krr|subset-exp|balls-into-bins --eps0 --n --delta "
        "-> eps, eps_lower (witness / reduction lower bound), gap. Parameter form: --p --beta --q --n "
        "--eps -> delta (or --delta -> eps). P may be inf.")
    p.add_argument("--mechanism", choices=["general", "krr", "subset-exp", "balls-into-bins"])
    p.add_argument("--k", help="krr: number of values; subset-exp: output subset size")
    p.add_argument("--d", help="subset-exp: domain size (padded domain for PrivSet); balls-into-bins: bins")
    p.add_argument("--s", help="subset-exp: input set size; balls-into-bins: special bins")
    p.add_argument("--eps0", help="local epsilon")
    p.add_argument("--n", required=True, help="number of users (n-1 blanket senders)")
    p.add_argument("--delta")
    p.add_argument("--p")
    p.add_argument("--beta")
    p.add_argument("--q")
    p.add_argument("--eps")
    p.add_argument("--rtol", type=float, default=1e-6, help="relative precision of eps (default 1e-6)")
    p.set_defaults(func=one_line_errors(_cmd_vr))


def _register_poisson(account_sub) -> None:
    p = account_sub.add_parser(
        "poisson", help="largest Poisson rate lambda for a user with s items (segmented paper, Thm 3)",
        description="Largest lambda meeting user-level (eps, delta) with n users, blanket rate m, d items, s items "
        "per user (Theorem 2, Lemma 3, Theorem 3; constraint (7)).")
    for flag in ("n", "m", "d", "s", "eps", "delta"):
        p.add_argument(f"--{flag}", required=True)
    p.add_argument("--accountant", choices=["sound", "indicator", "paper", "pair"], default="sound",
                   help="sound (default): exact, message count included; indicator: send indicator revealed; "
                   "paper: Theorem 3 as printed (optimistic); pair: Proposition 1's lower bound")
    p.set_defaults(func=one_line_errors(_cmd_poisson))


def _register_segmented(account_sub) -> None:
    p = account_sub.add_parser(
        "segmented", help="optimised blanket rate m and Poisson rates of the segmented protocol (Sec. 5.2)")
    for flag in ("n", "d", "s", "levels", "shares", "delta"):
        p.add_argument(f"--{flag}", required=True)
    p.add_argument("--padding", default="0",
                   help="padding domain size: 0 (default; every user holds exactly s items) or s (users may hold "
                   "fewer; their padding items are sent and every accountant is over d + s items)")
    p.add_argument("--m", help="evaluate this blanket rate instead of searching for m*")
    p.add_argument("--accountant", choices=["sound", "indicator", "paper"], default="sound",
                   help="sound (default), indicator, or paper (Theorem 3 as printed; optimistic)")
    p.set_defaults(func=one_line_errors(_cmd_segmented))


def _register_table(sub) -> None:
    table = sub.add_parser("account-table", help="accountant tables written to Parquet (workflow targets)")
    table_sub = table.add_subparsers(dest="table", required=True, metavar="TABLE")
    p = table_sub.add_parser("segmented", help="one row per (m, level) plus the optimum m*")
    for flag in ("n", "d", "s", "levels", "delta"):
        p.add_argument(f"--{flag}", required=True)
    p.add_argument("--shares", required=True, action="append",
                   help="level shares (comma list); repeat --shares/--out pairs to write several settings' "
                   "tables in one process")
    p.add_argument("--padding", default="0",
                   help="padding domain size: 0 (default; every user holds exactly s items) or s (users may hold "
                   "fewer; their padding items are sent and every accountant is over d + s items)")
    p.add_argument("--m-grid", required=True, help="comma list, or log:MIN:MAX:NUM")
    p.add_argument("--accountants", default="sound,paper", help="comma list of sound, paper")
    p.add_argument("--out", required=True, action="append", type=A.output_file,
                   help="output Parquet file (one per --shares)")
    p.set_defaults(func=one_line_errors(_cmd_table_segmented))
