"""``shuffledp account peruser``: Theorem 2's per-user eps' (the per-user histogram stage's steps run
through ``shuffledp step peruser ...``, :mod:`shuffledp.stages.peruser`)."""

from __future__ import annotations

from shuffledp.errors import UsageError


def register(subparsers, account_subparsers) -> None:
    a = account_subparsers.add_parser(
        "peruser", help="Theorem 2's eps' for a user whose subset Q has the given size and diameter")
    a.add_argument("--eps", required=True, help="total local budget (comma list)")
    a.add_argument("--eps1", required=True, help="budget of the clustering copy W (comma list)")
    a.add_argument("--c", required=True, help="neighbourhood fraction c (comma list)")
    a.add_argument("--group-size", required=True, help="|Q| (comma list)")
    a.add_argument("--radius", required=True, help="r(Q), L1 diameter of normalised histograms")
    a.add_argument("--delta", required=True)
    a.add_argument("--bound", default="numeric", help="closed|numeric (comma list)")
    a.set_defaults(func=_account)


def _account(args) -> int:
    from shuffledp.accountants.special import peruser as acct
    from shuffledp.commands._grid import int_like, parse_list, run_grid

    grid = {
        "eps": parse_list(args.eps, "eps"),
        "eps1": parse_list(args.eps1, "eps1"),
        "c": parse_list(args.c, "c"),
        "group_size": parse_list(args.group_size, "group-size", int_like),
        "radius": parse_list(args.radius, "radius"),
        "delta": parse_list(args.delta, "delta"),
        "bound": parse_list(args.bound, "bound", str),
    }
    for b in grid["bound"]:
        if b not in ("closed", "numeric"):
            raise UsageError(f"--bound: {b!r} (closed|numeric)")
    for e, e1 in ((e, e1) for e in grid["eps"] for e1 in grid["eps1"]):
        if not 0 <= e1 < e:
            raise UsageError(f"--eps1: {e1} must lie in [0, eps={e})")
    for name, key in (("c", "c"), ("delta", "delta")):
        if any(not 0 < v < 1 + (key == "c") for v in grid[key]):
            raise UsageError(f"--{name}: must lie in (0, 1)")
    if any(r < 0 or r > 2 for r in grid["radius"]):
        raise UsageError("--radius: an L1 distance of normalised histograms lies in [0, 2]")
    if any(m < 1 for m in grid["group_size"]):
        raise UsageError("--group-size: must be >= 1")
    amps = {b: acct.clones_amplifier(b) for b in ("closed", "numeric")}

    def one(eps, eps1, c, group_size, radius, delta, bound):
        eps2 = eps - eps1
        e0 = acct.local_eps(eps2, radius, c)
        sh = amps[bound](e0, group_size, delta) if group_size >= 2 else float("inf")
        return {"eps0_local": e0, "eps_shuffle": min(eps2, sh), "eps_prime": eps1 + min(eps2, sh)}

    return run_grid(grid, one)
