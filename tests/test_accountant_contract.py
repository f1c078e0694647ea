"""The contract every registered accountant inherits (issue 25, item 6).

Every test here is parametrised over :data:`shuffledp.accountants.registry.REGISTRY`, so a new
entry is held to all of it without editing this file:

* domain errors: a bad eps0, n, delta, eps or mechanism raises one
  :class:`AccountantDomainError` naming that flag;
* inverse consistency: ``delta_for_eps(eps_for_delta(delta))`` is on the side the bound claims
  (an upper bound's eps is a point where its delta meets the target; a lower bound's, where its
  delta still exceeds it);
* monotone in n where the entry claims it (``monotone_n``);
* at exact-enumeration points (tests/_oracle.py, tests/_oracle_decomposition.py: small n, every
  configuration of the other users) every upper bound >= the exact value >= every lower bound,
  and away from them every upper bound >= every lower bound of the same randomizer;
* one registry: the schema's enum, the cross-paper table's names, ``best``'s bounds and the CLI
  read it; old spellings are refused with the new name.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import _oracle
import _oracle_decomposition as O
import pytest

from shuffledp.accountants import registry
from shuffledp.accountants.validation import AccountantDomainError

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = list(registry.REGISTRY.values())
IDS = [a.name for a in ENTRIES]
# one randomizer instance per mechanism (small, so that every bound answers fast)
PARAMS = {"krr": {"k": 3}, "general": {}, "subset-exp": {"d": 6, "s": 2, "k": 2}, "oue": {"d": 4}, "olh": {"g": 3},
          "mhm": {"d": 2, "g": 3}}
RTOL = 1e-5


# where an entry's premise refuses PARAMS (its pair does not exist there): an instance where it holds
# (OLH / MHM: the third-input bounds need the input domain given, >= 3)
ALT_PARAMS = {"subset-exp": {"d": 6, "s": 1, "k": 1}, "olh": {"g": 3, "domain": 3},
              "mhm": {"d": 1, "g": 3, "domain": 3}}


def _params(acc, mech: str) -> dict:
    from shuffledp.accountants.best import mechanism_params

    p = dict(PARAMS[mech])
    if mech == "krr":
        p["k"] = max(p["k"], acc.k_range[0]) if acc.k_range[1] is None else acc.k_range[1]
    if mech in ALT_PARAMS and acc.refusal(mech, mechanism_params(mech, 1.0, **p)):
        p = dict(ALT_PARAMS[mech])
    return p


def _eps(acc, mech: str, eps0: float, n: int, delta: float, p: dict) -> float | None:
    """The entry's eps, or None where it declines the point (:class:`registry.NotEvaluated`)."""
    try:
        return acc.eps_for_delta(mech, eps0, n, delta, rtol=RTOL, **p)
    except registry.NotEvaluated:
        return None


def _cases():
    """(entry, mechanism) for every entry and every randomizer it applies to."""
    return [pytest.param(a, m, id=f"{a.name}-{m}") for a in ENTRIES for m in a.randomizers]


# ----------------------------------------------------------------------------- registry itself
@pytest.mark.parametrize("acc", ENTRIES, ids=IDS)
def test_entry_is_well_formed(acc):
    assert acc.kind in registry.KINDS and acc.cost in registry.COSTS and acc.rounds in ("up", "down")
    assert acc.randomizers and set(acc.randomizers) <= set(registry.RANDOMIZERS)
    assert acc.citation.strip() and acc.summary.strip()
    assert acc.name not in registry.RENAMED and registry.get(acc.name) is acc


def test_every_entry_holds_its_own_functions():
    """No dispatch by name: each entry names two functions of its own (no other entry shares
    them), they resolve, and neither takes the bound's name."""
    import importlib
    import inspect

    seen: dict[str, str] = {}
    for acc in ENTRIES:
        for impl in (acc.eps_impl, acc.delta_impl, *((acc.premise,) if acc.premise else ())):
            module, func = impl.split(":")
            fn = getattr(importlib.import_module(module), func)
            assert "name" not in inspect.signature(fn).parameters, (acc.name, impl)
        for impl in (acc.eps_impl, acc.delta_impl):
            assert impl not in seen, f"{acc.name} and {seen.get(impl)} share {impl}"
            seen[impl] = acc.name


def test_old_spellings_are_refused_with_the_new_name():
    assert registry.RENAMED and set(registry.RENAMED.values()) <= set(registry.NAMES)
    for old, new in registry.RENAMED.items():
        with pytest.raises(AccountantDomainError, match=f"now spelled '{new}'") as err:
            registry.get(old)
        assert err.value.flag == "bounds"
    with pytest.raises(AccountantDomainError, match="unknown bound 'nope'"):
        registry.get("nope")


def test_config_names_come_from_the_registry():
    """The schema lists no bound names (a new accountant needs no edit there); the stage's check
    reads the registry: every registered name passes, an unknown one is refused naming the key."""
    from shuffledp.config import load_schema
    from shuffledp.errors import ConfigError
    from shuffledp.stages.accountants_compare import check_config

    schema = load_schema()  # the section lives in src/shuffledp/stages/accountants_compare/schema.yaml
    items = schema["properties"]["accountants_compare"]["properties"]["bounds"]["items"]
    assert "enum" not in items
    sec = {"mechanisms": ["krr2"], "eps0": [1.0], "n_grid": [100], "deltas": [1e-6]}
    check_config({"accountants_compare": {**sec, "bounds": list(registry.NAMES)}})
    with pytest.raises(ConfigError, match="accountants_compare.bounds: unknown bound 'nope'"):
        check_config({"accountants_compare": {**sec, "bounds": ["decomposition", "nope"]}})


def test_table_best_and_cli_read_the_registry(capsys):
    from shuffledp.accountants import best
    from shuffledp.cli import main
    from shuffledp.experiments import accountants_compare as C

    assert C.BOUNDS == registry.NAMES and best.MECHANISMS == registry.RANDOMIZERS
    for mech in registry.RANDOMIZERS:
        p = PARAMS[mech]
        ups = best.upper_bounds(mech, 1.0, 500, 1e-6, **p)
        lows = best.lower_bounds(mech, 1.0, 500, 1e-6, **p)
        filled = best.mechanism_params(mech, 1.0, **p)
        assert list(ups) == [a.name for a in registry.for_randomizer(mech, k=p.get("k"), kind="upper",
                                                                      costs=("fixed", "grows"), params=filled)]
        assert list(lows) == [a.name for a in registry.for_randomizer(mech, k=p.get("k"), kind="lower",
                                                                       costs=("fixed", "grows"), params=filled)]
    assert main(["account", "best", "--mechanism", "krr", "--k", "3", "--eps0", "1", "--n", "100",
                 "--delta", "1e-6", "--bounds", "clones-fmt23"]) == 2
    assert capsys.readouterr().err.strip() == "shuffledp: error: --bounds: 'clones-fmt23' is now spelled 'fmt23'"


def test_config_refuses_an_old_spelling():
    from shuffledp.errors import ConfigError
    from shuffledp.stages.accountants_compare import check_config

    sec = {"mechanisms": ["krr2"], "eps0": [1.0], "bounds": ["decomposition", "clones-fmt21"], "n_grid": [100],
           "deltas": [1e-6]}
    with pytest.raises(ConfigError, match="accountants_compare.bounds: 'clones-fmt21' is now spelled 'fmt21'"):
        check_config({"accountants_compare": sec})


def test_registry_is_light_to_import():
    code = ("import sys; import shuffledp.accountants.registry as r; r.names(); "
            "print(sorted(m for m in ('numpy', 'scipy', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- domain errors
BAD = [("eps0", {"eps0": -1.0}), ("eps0", {"eps0": math.nan}), ("n", {"n": 1}), ("n", {"n": 2.5}),
       ("delta", {"delta": 0.0}), ("delta", {"delta": 1.0}), ("rtol", {"rtol": 0.5})]


@pytest.mark.parametrize("acc,mech", _cases())
def test_domain_errors_name_the_flag(acc, mech):
    p = _params(acc, mech)
    for flag, bad in BAD:
        args = {"eps0": 1.0, "n": 50, "delta": 1e-6, "rtol": RTOL, **bad}
        with pytest.raises(AccountantDomainError) as err:
            acc.eps_for_delta(mech, args["eps0"], args["n"], args["delta"], rtol=args["rtol"], **p)
        assert err.value.flag == flag and "\n" not in str(err.value), (flag, str(err.value))
    with pytest.raises(AccountantDomainError) as err:
        acc.delta_for_eps(mech, 1.0, 50, -0.1, **p)
    assert err.value.flag == "eps"
    with pytest.raises(AccountantDomainError) as err:
        acc.eps_for_delta("nonsense", 1.0, 50, 1e-6, **p)
    assert err.value.flag == "mechanism"


# ----------------------------------------------------------------------------- inverse consistency
@pytest.mark.parametrize("acc,mech", _cases())
def test_eps_and_delta_inverse_consistent(acc, mech):
    p = _params(acc, mech)
    checked = 0
    for eps0, n, delta in ((1.0, 200, 1e-3), (2.0, 120, 1e-6)):
        e = _eps(acc, mech, eps0, n, delta, p)
        if e is None:
            continue
        checked += 1
        assert 0.0 <= e <= eps0
        if acc.rounds == "up":
            if e < eps0:  # at eps0 every upper bound holds trivially (its delta is 0 there)
                assert acc.delta_for_eps(mech, eps0, n, e, **p) <= delta * (1 + 1e-6), (eps0, n, e)
        elif e > 0:
            assert acc.delta_for_eps(mech, eps0, n, e, **p) >= delta * (1 - 1e-3), (eps0, n, e)
    if not checked:
        pytest.skip(f"{acc.name} declines every point tried for {mech}")


# ----------------------------------------------------------------------------- monotone in n
@pytest.mark.parametrize("acc,mech", [c for c in _cases() if c.values[0].monotone_n])
def test_monotone_in_n_where_claimed(acc, mech):
    p = _params(acc, mech)
    for eps0 in (0.5, 3.0):
        top = 10**6 if acc.cost == "fixed" else 6400  # per-user arrays, windows growing with n: small n
        vals = [_eps(acc, mech, eps0, n, 1e-6, p) for n in (100, 400, 1600, 6400, 10**5, 10**6) if n <= top]
        vals = [v for v in vals if v is not None]
        for a, b in zip(vals, vals[1:], strict=False):
            assert b <= a * (1 + RTOL), (eps0, vals)


# ----------------------------------------------------------------------------- exact points
def _exact_krr(k: int, eps0: float, n: int, delta: float) -> float:
    return _oracle.exact_krr_eps(k, eps0, n, delta)[0]


def _exact_matrix_eps(matrix, n: int, delta: float, top: float) -> float:
    """Exact worst-case eps of a small randomizer (every victim pair, every configuration):
    bisection on the oracle's worst delta, to 1e-9."""
    lo, hi = 0.0, top
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if O.worst_shuffle_delta(matrix, n, [mid])[0][0] <= delta else (mid, hi)
    return hi


# (mechanism, params, eps0, n, delta, exact eps); "general": binary RR, a member of the class
POINTS = [("krr", {"k": 2}, 1.0, 6, 0.05), ("krr", {"k": 3}, 2.0, 5, 1e-3), ("general", {}, 1.0, 6, 0.05),
          ("oue", {"d": 3}, 1.5, 4, 0.02), ("olh", {"g": 2, "domain": 3}, 1.0, 4, 0.02),
          ("mhm", {"d": 2, "g": 3}, 1.0, 4, 0.02)]


def _exact(mech, p, eps0, n, delta) -> float:
    if mech in ("krr", "general"):
        return _exact_krr(p.get("k", 2), eps0, n, delta)
    if mech == "mhm":  # every function [2] -> [g] per attribute
        from shuffledp.accountants.randomizers.mhm import mhm_matrix

        return _exact_matrix_eps(mhm_matrix(p["d"], 2, p["g"], eps0), n, delta, eps0)
    matrix = O.oue_matrix(p["d"], eps0) if mech == "oue" else O.olh_matrix(3, p["g"], eps0)
    return _exact_matrix_eps(matrix, n, delta, eps0)


@pytest.fixture(scope="module")
def exact_values():
    return {i: _exact(*pt) for i, pt in enumerate(POINTS)}


def _point_cases():
    out = []
    for i, (mech, p, *_rest) in enumerate(POINTS):
        for a in ENTRIES:
            if a.kind != "reference" and a.applies(mech, p.get("k")):
                out.append(pytest.param(i, a, id=f"{a.name}-{mech}{p.get('k', p.get('d', p.get('g', '')))}"))
    return out


@pytest.mark.parametrize("i,acc", _point_cases())
def test_upper_above_exact_above_lower(i, acc, exact_values):
    mech, p, eps0, n, delta = POINTS[i]
    exact = exact_values[i]
    e = _eps(acc, mech, eps0, n, delta, p)
    if e is None:
        pytest.skip(f"{acc.name} declines this point")
    if acc.kind == "upper":
        assert e >= exact * (1 - 1e-9), (e, exact)
    else:  # a lower bound (an exact value lies within its rtol above)
        assert e <= exact * (1 + 2 * RTOL) + 1e-12, (e, exact)


@pytest.mark.parametrize("mech", registry.RANDOMIZERS)
def test_every_upper_above_every_lower(mech):
    p = PARAMS[mech]
    for eps0, n in ((1.0, 1000), (4.0, 3000)):
        vals = {a.name: (a.kind, _eps(a, mech, eps0, n, 1e-6, p))
                for a in registry.for_randomizer(mech, k=p.get("k"), costs=("fixed", "grows", "aggregate"))
                if a.kind != "reference"}
        vals = {nm: kv for nm, kv in vals.items() if kv[1] is not None}
        ups = {nm: v for nm, (kind, v) in vals.items() if kind == "upper"}
        lows = {nm: v for nm, (kind, v) in vals.items() if kind == "lower"}
        assert ups and lows
        assert min(ups.values()) >= max(lows.values()) * (1 - 1e-9), (eps0, n, ups, lows)


# ----------------------------------------------------------------------------- no silent fallback
# grid where every bound answers non-trivially for its randomizers (n large enough that the upper
# bounds are below eps0, small enough for the per-user and enumeration bounds)
DISTINCT_GRID = [(0.5, 2000, 1e-6), (2.0, 2000, 1e-4), (1.0, 600, 1e-3)]


def _grid_values(acc, mech: str) -> tuple | None:
    vals = []
    for eps0, n, delta in DISTINCT_GRID:
        v = _eps(acc, mech, eps0, n, delta, _params(acc, mech))
        if v is None:
            return None
        vals.append(v)
    return tuple(vals)


@pytest.mark.parametrize("mech", registry.RANDOMIZERS)
def test_no_two_bounds_answer_alike(mech):
    """A bound registered without functions of its own (e.g. answering another's numbers through a
    shared fallback) returns that bound's values: two entries identical at every point of a grid
    fail here. The aggregate ``lower`` is the largest of the others by definition: left out."""
    accs = [a for a in registry.for_randomizer(mech, k=PARAMS[mech].get("k")) if a.cost != "aggregate"]
    values = {a.name: _grid_values(a, mech) for a in accs}
    values = {nm: v for nm, v in values.items() if v is not None}
    assert len(values) >= 4, values
    names_ = sorted(values)
    for i, a in enumerate(names_):
        for b in names_[i + 1:]:
            assert values[a] != values[b], f"{a} and {b} answer alike over the grid for {mech}: {values[a]}"
