"""A seeded Carter-Wegman universal hash family, evaluated in bulk with numpy.

Function number ``t`` of the family (``0 <= t < size``) is

    h_t(x) = ((a_t * x + b_t) mod P) mod g,     P = 2**31 - 1 (a Mersenne prime),

with ``a_t`` in [1, P) and ``b_t`` in [0, P) derived from ``(seed, t)`` by the SplitMix64 finaliser,
so the family needs no table: any index up to 2**63 can be evaluated on the fly and a family of
``2**32`` functions costs no memory. For a family drawn at random (random seed), the pairs
``(a_t, b_t)`` of distinct indices are independent and each is uniform, so for ``x != y`` in
[0, P) the pair ``(h_t(x), h_t(y))`` is (up to the ``mod g`` rounding, relative bias at most
``g / P``) uniform on [g]^2: the family is 2-universal, and distinct indices give independent
functions. This is what MHM's estimator (Lemma 4) and CM's need.

Inputs must be integers in [0, P). All arithmetic is in int64/uint64: ``a * x < 2**62``.

``kind="mix"`` gives instead ``h_t(x) = SplitMix64(k_t XOR SplitMix64(x)) mod g`` with a per-function
key ``k_t``: a pseudo-random family with no proven independence beyond what the finaliser's mixing
gives, but free of the linear family's structure. CM/TCM needs it: a user hashes ``m`` items with ONE
function and the curator's estimate needs ``h_t(k)`` independent of all ``m`` hashed items
(``(m+1)``-wise independence), which the linear family does not have (its TCM estimates are biased,
see tests). MHM hashes each attribute with its own function, so pairwise independence suffices and
MHM uses the provably 2-universal linear family.
"""

from __future__ import annotations

import functools

import numpy as np

from shuffledp.environment import compiled_kernels

PRIME = (1 << 31) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):  # wrapping is intended (0-d inputs would warn)
        z = np.asarray(x, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


class HashFamily:
    """``size`` functions from [0, P) to [0, g), keyed by ``seed``.

    ``size`` is the number of functions (a user's hash index costs ``ceil(log2(size))`` bits).
    """

    def __init__(self, g: int, seed: int, size: int = 1 << 32, kind: str = "linear"):
        if kind not in ("linear", "mix"):
            raise ValueError(f"kind: 'linear' or 'mix', got {kind!r}")
        self.kind = kind
        if int(g) < 2:
            raise ValueError(f"g: need at least 2 buckets, got {g}")
        if int(size) < 1:
            raise ValueError(f"size: need at least one function, got {size}")
        self.g = int(g)
        self.size = int(size)
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self._key = splitmix64(np.array([self.seed], dtype=np.uint64))[0]

    @property
    def index_bits(self) -> int:
        return max(1, int(np.ceil(np.log2(self.size)))) if self.size > 1 else 0

    def params(self, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """Parameters of the functions ``idx`` (taken modulo ``size``): ``(a, b)`` or ``(key,)``.

        Compiled (:mod:`shuffledp.mechanisms._hashing_numba`) when numba is there; the same integers."""
        kernels = _compiled_params()
        if kernels is not None and self.size < 1 << 63:
            t = np.asarray(idx, dtype=np.int64)
            flat = np.ascontiguousarray(t.reshape(-1))
            if self.kind == "mix":
                key = np.empty(flat.size, dtype=np.uint64)
                kernels[1](flat, np.int64(self.size), self._key, key)
                return (key.reshape(t.shape),)
            a = np.empty(flat.size, dtype=np.int64)
            b = np.empty(flat.size, dtype=np.int64)
            kernels[0](flat, np.int64(self.size), self._key, a, b)
            return a.reshape(t.shape), b.reshape(t.shape)
        return self._params_numpy(idx)

    def _params_numpy(self, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        t = np.asarray(idx, dtype=np.int64) % self.size
        base = (t.astype(np.uint64) << np.uint64(1)) ^ self._key
        if self.kind == "mix":
            return (splitmix64(base),)
        a = (splitmix64(base) % np.uint64(PRIME - 1)).astype(np.int64) + 1
        b = (splitmix64(base ^ np.uint64(1)) % np.uint64(PRIME)).astype(np.int64)
        return a, b

    def apply(self, params: tuple[np.ndarray, ...], x: np.ndarray) -> np.ndarray:
        """Evaluate functions given by ``params`` (broadcast against ``x``)."""
        if self.kind == "mix":
            x = np.asarray(x, dtype=np.int64)
            if x.size and x.min() < 0:
                raise ValueError("x: hash inputs must be non-negative")
            z = splitmix64(params[0] ^ splitmix64(x.astype(np.uint64)))
            return (z % np.uint64(self.g)).astype(np.int64)
        return apply(params[0], params[1], x, self.g)

    def sample_indices(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(0, self.size, size=int(n), dtype=np.int64)

    def hash(self, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``h_idx(x)`` elementwise (broadcasting ``idx`` against ``x``); compiled in one pass when
        numba is there (the same integers as ``apply(params(idx), x)``)."""
        kernels = _compiled_params()
        if kernels is None or self.size >= 1 << 63:
            return self.apply(self.params(idx), x)
        t = np.asarray(idx, dtype=np.int64)
        xs = np.asarray(x, dtype=np.int64)
        if xs.size and xs.min() < 0:
            raise ValueError("x: hash inputs must be non-negative")
        if self.kind == "linear" and xs.size and xs.max() >= PRIME:
            raise ValueError("x: hash inputs must lie in [0, 2**31 - 1)")
        tb, xb = np.broadcast_arrays(t, xs)
        out = np.empty(tb.shape, dtype=np.int64)
        flat_t, flat_x = np.ascontiguousarray(tb).reshape(-1), np.ascontiguousarray(xb).reshape(-1)
        if self.kind == "linear" and self.g < PRIME:   # z mod g of z < P as a multiply-shift
            mult, shift = mod_magic(self.g)
            kernels[2](flat_t, flat_x, np.int64(self.size), self._key, np.uint64(self.g), mult, shift, out.reshape(-1))
        elif self.kind == "linear":
            return self.apply(self.params(idx), x)
        else:
            kernels[3](flat_t, flat_x, np.int64(self.size), self._key, np.int64(self.g), out.reshape(-1))
        return out[()] if out.ndim == 0 else out


    def hash_rows(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``out[i, j] = h_{t[i] + j}(x[i, j])`` for an ``(n, m)`` table ``x`` (MHM's users: attribute ``j``
        hashed with the user's function ``t + j``): :meth:`hash` of ``t[:, None] + arange(m)``, the same
        integers, compiled in one pass without that array of indices (linear family)."""
        t = np.asarray(t, dtype=np.int64)
        xs = np.asarray(x, dtype=np.int64)
        kernels = _compiled_params()
        if (kernels is None or self.size >= 1 << 63 or self.kind != "linear" or self.g >= PRIME or xs.ndim != 2
                or t.shape != xs.shape[:1]):
            return self.hash(t[:, None] + np.arange(xs.shape[-1], dtype=np.int64)[None, :], xs)
        if xs.size and (xs.min() < 0 or xs.max() >= PRIME):
            raise ValueError("x: hash inputs must lie in [0, 2**31 - 1)")
        out = np.empty(xs.shape, dtype=np.int64)
        mult, shift = mod_magic(self.g)
        kernels[4](np.ascontiguousarray(t), np.ascontiguousarray(xs), np.int64(self.size), self._key,
                   np.uint64(self.g), mult, shift, out)
        return out


def mod_magic(g: int) -> tuple[np.uint64, np.uint64]:
    """``(M, s)`` with ``(z * M) >> s == z // g`` for every integer ``0 <= z < 2**31`` (Granlund and
    Montgomery's division by an invariant integer, Thm 4.2, with a 32-bit multiplier: ``l = ceil(log2 g)``,
    ``M = floor(2**(31+l) / g) + 1 < 2**33``, so ``z * M < 2**64``)."""
    lg = (int(g) - 1).bit_length()
    return np.uint64((1 << (31 + lg)) // int(g) + 1), np.uint64(31 + lg)


@functools.lru_cache(maxsize=1)
def _compiled_params():
    """``(linear_params, mix_params, linear_hash, mix_hash, linear_hash_rows)`` of
    :mod:`shuffledp.mechanisms._hashing_numba`, or None without numba or with ``SHUFFLEDP_NUMBA=0`` (then
    numpy runs: the same integers)."""
    return compiled_kernels("shuffledp.mechanisms._hashing_numba", "linear_params", "mix_params", "linear_hash",
                            "mix_hash", "linear_hash_rows")


def apply(a: np.ndarray, b: np.ndarray, x: np.ndarray, g: int) -> np.ndarray:
    """``((a*x + b) mod P) mod g`` with broadcasting; ``a``, ``b``, ``x`` int64 in [0, P)."""
    x = np.asarray(x, dtype=np.int64)
    if x.size and (x.min() < 0 or x.max() >= PRIME):
        raise ValueError("x: hash inputs must lie in [0, 2**31 - 1)")
    return ((a * x + b) % PRIME) % g
