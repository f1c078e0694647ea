"""``shuffledp account best``: the tightest sound eps we have and the best lower bound (JSON).

Every numeric flag takes a comma list; a grid prints one object per combination. Invalid input
exits with status 2 and one line naming the flag.
"""

from __future__ import annotations

import math
import re

from shuffledp.commands._grid import int_like, parse_list, run_grid
from shuffledp.errors import UsageError

_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): (.*)$", re.S)
_FLAGS = {"mechanism", "k", "d", "s", "g", "eps0", "n", "delta", "rtol", "bounds", "target-eps", "solve", "rounds"}


def register(subparsers, account_subparsers) -> None:
    from shuffledp.accountants import registry  # light: names only

    uppers = ", ".join(registry.names(kind="upper", costs=("fixed", "grows")))
    p = account_subparsers.add_parser(
        "best",
        help="tightest sound shuffled eps (min over upper bounds) and best lower bound",
        description="Minimum over every sound upper bound on the shuffled eps of n reports of the "
        "randomizer and maximum over every lower bound, with the bound that gave each and the "
        "seconds each took. Numeric flags take comma lists.",
    )
    p.add_argument("--mechanism", required=True,
                   help=f"{' | '.join(registry.RANDOMIZERS)} (general: any eps0-LDP randomizer)")
    p.add_argument("--k", help="krr: domain size (integer >= 2); subset-exp: subset size "
                   "(default: PrivSet's best for eps0)")
    p.add_argument("--d", help="subset-exp: items (integer >= 2, plus s padding items); oue: domain size; "
                   "mhm: attributes (integer in [1, 16])")
    p.add_argument("--s", help="subset-exp: items per user set (integer >= 1)")
    p.add_argument("--g", help="olh: hash range (integer >= 2; default round(e^eps0 + 1)); mhm: hash range "
                   "(integer >= d + 1; default: Eq. (3) of the multidimensional seed, rounded)")
    p.add_argument("--domain", help="olh, mhm (optional): number of values of the input (mhm: of each attribute, "
                   "the smallest); unknown, the lower bounds that put the others at a third input are left out; "
                   "they need --domain >= 3")
    p.add_argument("--eps0", help="local epsilon in (0, 50] (required unless --solve eps0)")
    p.add_argument("--n", help="number of users (integer in [2, 1e15]; required unless --solve n)")
    p.add_argument("--delta", required=True, help="central delta in [1e-300, 1)")
    p.add_argument("--rtol", default="1e-5", help="relative precision of every eps search (default 1e-5)")
    p.add_argument("--bounds", help=f"comma list of upper bounds to evaluate, of {uppers} (default: every one "
                   "that applies to the randomizer)")
    p.add_argument("--detail", action="store_true", help="also print every bound's eps and seconds")
    p.add_argument("--solve", choices=("eps0", "n"),
                   help="inverse query: the largest eps0 (at --n) or the smallest n (at --eps0) whose "
                   "shuffled eps is at most --target-eps; the answer carries its forward eps")
    p.add_argument("--target-eps", help="the shuffled eps an inverse query (--solve) must meet")
    p.add_argument("--rounds", help="also the eps at --delta after T rounds, a fresh shuffle each "
                   "(integer in [1, 10000]; the least of: one round's dominating pair's privacy-loss distribution "
                   "composed with dp_accounting, its decomposition profile's pair (T <= 100), the advanced and "
                   "basic composition of the one-round eps at delta/(2T); composed_by names it)")
    p.set_defaults(func=run_best)


def _usage(exc: ValueError) -> UsageError:
    from shuffledp.accountants.validation import AccountantDomainError

    if isinstance(exc, AccountantDomainError):
        return UsageError(str(exc))  # "--flag: message"
    text = " ".join(str(exc).split())
    match = _NAME.match(text)
    if match and match.group(1) in _FLAGS:
        return UsageError(f"--{match.group(1)}: {match.group(2)}")
    return UsageError(text)


def _check_mechanism_flags(args, mechanisms) -> None:
    """``--mechanism`` known, and ``--k --d --s --g --domain`` given exactly where it uses them."""
    if args.mechanism not in mechanisms:
        raise UsageError(f"--mechanism: {args.mechanism!r} is not one of {', '.join(mechanisms)}")
    if args.mechanism == "krr" and args.k is None:
        raise UsageError("--k: required for krr")
    if args.mechanism not in ("krr", "subset-exp") and args.k is not None:
        raise UsageError("--k: only used by krr and subset-exp")
    uses = {"subset-exp": ("d", "s"), "oue": ("d",), "olh": ("g", "domain"), "mhm": ("d", "g", "domain")}
    for flag in ("d", "s", "g", "domain"):
        if getattr(args, flag) is not None and flag not in uses.get(args.mechanism, ()):
            raise UsageError(f"--{flag}: not used by {args.mechanism}")
    for flag in {"subset-exp": ("d", "s"), "oue": ("d",), "mhm": ("d",)}.get(args.mechanism, ()):
        if getattr(args, flag) is None:
            raise UsageError(f"--{flag}: required for {args.mechanism}")


def _rtol(args) -> float:
    try:
        rtol = float(args.rtol)
    except ValueError:
        raise UsageError(f"--rtol: cannot read {args.rtol!r} as a number") from None
    if not (math.isfinite(rtol) and 1e-12 <= rtol <= 1e-1):
        raise UsageError(f"--rtol: {rtol!r} must lie in [1e-12, 0.1]")
    return rtol


def _grid(args) -> dict:
    grid = {
        "k": parse_list(args.k, "k", int_like),
        "d": parse_list(args.d, "d", int_like),
        "s": parse_list(args.s, "s", int_like),
        "g": parse_list(args.g, "g", int_like),
        "domain": parse_list(args.domain, "domain", int_like),
        "eps0": parse_list(args.eps0, "eps0"),
        "n": parse_list(args.n, "n", int_like),
        "delta": parse_list(args.delta, "delta"),
    }
    for name, values in grid.items():
        for v in values:
            if v is not None and isinstance(v, float) and not math.isfinite(v):
                raise UsageError(f"--{name}: must be finite, got {v}")
    return grid


def _check_solve_flags(args) -> None:
    """``--solve`` and ``--target-eps`` together, and the solved flag not given."""
    if args.solve is not None and args.rounds is not None:
        raise UsageError("--rounds: not used with --solve")
    if args.solve is None:
        if args.target_eps is not None:
            raise UsageError("--target-eps: only used with --solve eps0 or --solve n")
        for flag in ("eps0", "n"):
            if getattr(args, flag) is None:
                raise UsageError(f"--{flag}: required")
        return
    if args.target_eps is None:
        raise UsageError("--target-eps: required with --solve")
    if getattr(args, args.solve) is not None:
        raise UsageError(f"--{args.solve}: not given with --solve {args.solve} (it is the answer)")
    other = "n" if args.solve == "eps0" else "eps0"
    if getattr(args, other) is None:
        raise UsageError(f"--{other}: required with --solve {args.solve}")


def _run_solve(args, best, rtol: float, grid: dict) -> int:
    grid = {name: values for name, values in grid.items() if name != args.solve}
    grid["target_eps"] = parse_list(args.target_eps, "target-eps")

    from shuffledp.accountants import inverse

    def one(k, d, s, g, domain, delta, target_eps, eps0=None, n=None):
        kw = {"k": k, "d": d, "s": s, "g": g, "domain": domain, "rtol": rtol}
        try:
            if args.solve == "eps0":
                res = inverse.solve_eps0(args.mechanism, target_eps, n, delta, **kw)
            else:
                res = inverse.solve_n(args.mechanism, target_eps, eps0, delta, **kw)
        except ValueError as exc:
            raise _usage(exc) from None
        return {"mechanism": args.mechanism, "solve": args.solve, **res}

    return run_grid(grid, one)


def run_best(args) -> int:
    from shuffledp.accountants import best

    _check_mechanism_flags(args, best.MECHANISMS)
    _check_solve_flags(args)
    rtol = _rtol(args)
    bounds = None if args.bounds is None else [b.strip() for b in args.bounds.split(",")]
    grid = _grid(args)
    if args.solve is not None:
        return _run_solve(args, best, rtol, grid)
    rounds = None if args.rounds is None else parse_list(args.rounds, "rounds", int_like)
    if rounds is not None and len(rounds) != 1:
        raise UsageError("--rounds: one value")
    rounds = None if rounds is None else rounds[0]

    def one(k, d, s, g, domain, eps0, n, delta):
        try:
            res = best.best_eps(args.mechanism, eps0, n, delta, k=k, d=d, s=s, g=g, domain=domain, rtol=rtol,
                                bounds=bounds)
        except ValueError as exc:
            raise _usage(exc) from None
        out = {"mechanism": args.mechanism, "eps": res["eps"], "eps_lower": res["eps_lower"],
               "upper_by": res["upper_by"], "lower_by": res["lower_by"], "gap": res["gap"],
               "ratio": res["ratio"], "seconds": res["seconds"]}
        if args.detail:
            out["bounds"] = res["bounds"]
        if rounds is not None:
            from shuffledp.accountants.composition import rounds as composition

            try:
                comp = composition.composed_eps(args.mechanism, eps0, n, delta, rounds, k=k, d=d, s=s, g=g,
                                                domain=domain, rtol=rtol, forward=None if bounds else res)
            except ValueError as exc:
                raise _usage(exc) from None
            out.update(rounds=comp["rounds"], eps_composed=comp["eps"], composed_by=comp["by"],
                       composed_candidates=comp["candidates"],
                       round_profile=[list(pt) for pt in comp["profile"] or []])
        return out

    return run_grid(grid, one)
