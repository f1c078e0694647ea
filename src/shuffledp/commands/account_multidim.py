"""``shuffledp account mhm|tcm``: the local budgets of the multidimensional seed's mechanisms. (The
stage's jobs run through ``shuffledp step multidim <step>``: :mod:`shuffledp.stages.multidim`.)"""

from __future__ import annotations

from shuffledp.commands._grid import int_like, parse_list, run_grid
from shuffledp.errors import UsageError


def register(subparsers, account_subparsers) -> None:
    a = account_subparsers.add_parser("mhm", help="MHM's local budget eps_l and g for (eps_s, delta_s, n, d)")
    a.add_argument("--eps", required=True)
    a.add_argument("--delta", required=True)
    a.add_argument("--n", required=True)
    a.add_argument("--d", required=True)
    a.add_argument("--bound", default="bennett", choices=["hoeffding", "bennett"])
    a.set_defaults(func=_account_mhm)
    t = account_subparsers.add_parser("tcm", help="TCM's local budget (closed form) for (eps_s, delta_s, n, m)")
    t.add_argument("--eps", required=True)
    t.add_argument("--delta", required=True)
    t.add_argument("--n", required=True)
    t.add_argument("--m", required=True, help="items per user (= number of attributes)")
    t.set_defaults(func=_account_tcm)


def _account_mhm(args) -> int:
    from shuffledp.protocols.mhm import approx_variance, mhm_eps_local

    def fn(eps, delta, n, d):
        try:
            st = mhm_eps_local(eps, delta, n, d, bound=args.bound)
        except ValueError as exc:
            raise UsageError(f"--eps/--delta/--n/--d: {exc}") from None
        return {"eps_l": st.eps_l, "g": st.g, "amplified": st.amplified,
                "variance_times_n": approx_variance(st.eps_l, d, st.g, 1)}

    grid = {"eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
            "n": parse_list(args.n, "n", int_like), "d": parse_list(args.d, "d", int_like)}
    _check_grid(grid)
    return run_grid(grid, fn)


def _account_tcm(args) -> int:
    from shuffledp.protocols.tcm import tcm_eps_local

    def fn(eps, delta, n, m):
        try:
            st = tcm_eps_local(eps, delta, n, m)
        except ValueError as exc:
            raise UsageError(f"--eps/--delta/--n/--m: {exc}") from None
        return {"eps_l": st.eps_l, "g": st.g, "amplified": st.amplified, "valid_range": st.valid_range}

    grid = {"eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
            "n": parse_list(args.n, "n", int_like), "m": parse_list(args.m, "m", int_like)}
    _check_grid(grid)
    return run_grid(grid, fn)


def _check_grid(grid) -> None:
    """Domain checks shared by ``account mhm`` and ``account tcm``: name the flag before any work."""
    import math

    if any(not (math.isfinite(e) and e > 0) for e in grid["eps"]):
        raise UsageError("--eps: must be finite and > 0")
    if any(not 0 < d < 1 for d in grid["delta"]):
        raise UsageError("--delta: must lie in the open interval (0, 1)")
    if any(n < 2 for n in grid["n"]):
        raise UsageError("--n: must be an integer >= 2")
    for key, low in (("m", 1), ("d", 2)):
        if key in grid and any(v < low for v in grid[key]):
            raise UsageError(f"--{key}: must be an integer >= {low}")
