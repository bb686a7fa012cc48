"""Hypothesis strategies for tests/python/test_properties.py: the matrices that break linear solvers
(extreme scales, grading, exact singularity, NaN/Inf, pivoting traps, growth, chosen conditioning), the
option values users mistype, and the output paths that collide, each drawn as a small reproducible recipe
(kind, shape, dtype, exponents, seed) so that a falsifying example can be rebuilt from its printout."""
import re
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

DTYPES = (np.float64, np.float32)
MAX_ORDER = 24

# Exponents k of 2^k that keep a matrix of entries around 1 (a few units up, ~1e-3 down) representable:
# float64's normal range is 2^-1022..2^1024, float32's 2^-126..2^128.
SCALE_EXPONENT = {np.float64: 1000, np.float32: 120}
# Rows and columns of graded matrices are scaled by 2^k_i with k_i within +-GRADING: float64 as asked of
# linv (+-300, so a row-and-column graded matrix spans 2^1200); float32's range only allows +-40.
GRADING = {np.float64: 300, np.float32: 40}

SQUARE_KINDS = ("normal", "graded", "dependent_row", "zero_column", "rank1", "permutation", "hollow",
                "wilkinson", "spd", "illcond")
# Kinds that are exactly singular by construction: small integers (exact in float32 too), so that the
# dependency survives rounding and every power-of-two scaling.
EXACTLY_SINGULAR = ("dependent_row", "zero_column", "rank1")
RECTANGULAR_KINDS = ("normal", "graded", "low_rank", "zero_column", "illcond")
NON_FINITE = (float("nan"), float("inf"), float("-inf"))


@dataclass(frozen=True)
class Matrix:
    """A drawn matrix and the recipe that made it (printed by hypothesis, enough to rebuild it)."""
    kind: str
    dtype: type
    shape: tuple
    seed: int
    scale: int = 0              # the whole matrix times 2^scale
    params: tuple = ()          # kind-specific: grading exponents, log10 of the condition number, noise
    salt: tuple | None = None   # (row, column, value): the one non-finite entry
    a: np.ndarray = field(default=None, repr=False, compare=False)

    @property
    def exactly_singular(self):
        """Singular in exact arithmetic whatever the scale (and not made so only by rounding)."""
        rows, cols = self.shape
        if rows != cols or rows == 0:
            return False
        return self.kind in ("zero_column", "dependent_row") or (self.kind == "rank1" and rows >= 2)


def _orthogonal(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def _square(kind, rng, n, params):
    if kind == "normal":
        return rng.standard_normal((n, n))
    if kind == "graded":
        rows, cols = params
        return np.ldexp(rng.standard_normal((n, n)), np.add.outer(np.asarray(rows), np.asarray(cols)))
    if kind == "dependent_row":
        a = rng.integers(-8, 9, (n, n)).astype(np.float64)
        if n == 1:
            return np.zeros((1, 1))
        i, j, r = rng.permutation(n)[:3] if n >= 3 else (0, 0, 1)
        a[r] = a[i] + a[j] if n >= 3 else 2 * a[0]
        return a
    if kind == "zero_column":
        a = rng.standard_normal((n, n))
        a[:, rng.integers(n)] = 0.0
        return a
    if kind == "rank1":
        u, v = rng.integers(-8, 9, n), rng.integers(-8, 9, n)
        return np.outer(u, v).astype(np.float64)
    if kind in ("permutation", "hollow"):
        (noise,) = params
        perm = _derangement(rng, n) if kind == "hollow" and n > 1 else rng.permutation(n)
        a = np.zeros((n, n))
        a[np.arange(n), perm] = rng.standard_normal(n) + np.sign(rng.standard_normal(n))
        if noise:
            e = np.ldexp(rng.standard_normal((n, n)), -noise)
            if kind == "hollow":
                np.fill_diagonal(e, 0.0)
            a += e
        return a
    if kind == "wilkinson":
        a = np.eye(n) - np.tril(np.ones((n, n)), -1)
        a[:, -1] = 1.0
        return a
    if kind == "spd":
        (log_cond,) = params
        q = _orthogonal(rng, n)
        a = (q * np.logspace(0, -log_cond, n)) @ q.T
        return (a + a.T) / 2
    if kind == "illcond":
        (log_cond,) = params
        return (_orthogonal(rng, n) * np.logspace(0, -log_cond, n)) @ _orthogonal(rng, n).T
    raise ValueError(kind)


def _derangement(rng, n):
    """A permutation with no fixed point (n >= 2): a zero diagonal whatever the diagonal scaling."""
    while True:
        p = rng.permutation(n)
        if np.all(p != np.arange(n)):
            return p


def _rectangular(kind, rng, m, n, params):
    if kind == "normal":
        return rng.standard_normal((m, n))
    if kind == "graded":
        rows, cols = params
        return np.ldexp(rng.standard_normal((m, n)), np.add.outer(np.asarray(rows), np.asarray(cols)))
    if kind == "low_rank":
        (rank,) = params
        return (rng.integers(-8, 9, (m, rank)) @ rng.integers(-8, 9, (rank, n))).astype(np.float64)
    if kind == "zero_column":
        a = rng.standard_normal((m, n))
        a[:, rng.integers(n)] = 0.0
        return a
    if kind == "illcond":
        (log_cond,) = params
        k = min(m, n)
        u = _orthogonal(rng, m)[:, :k]
        v = _orthogonal(rng, n)[:, :k]
        return (u * np.logspace(0, -log_cond, k)) @ v.T
    raise ValueError(kind)


def build(kind, dtype, shape, seed, scale=0, params=(), salt=None):
    """The matrix of a recipe: what a falsifying example's printout rebuilds."""
    rng = np.random.default_rng(seed)
    m, n = shape
    if m == 0 or n == 0:
        a = np.zeros(shape)
    elif kind in SQUARE_KINDS and m == n:
        a = _square(kind, rng, n, params)
    else:
        a = _rectangular(kind, rng, m, n, params)
    a = np.ldexp(a, scale).astype(dtype)
    if salt is not None:
        a[salt[0], salt[1]] = salt[2]
    return a


def _matrix(kind, dtype, shape, seed, scale, params, salt):
    return Matrix(kind, dtype, shape, seed, scale, params, salt, build(kind, dtype, shape, seed, scale, params, salt))


@st.composite
def kind_params(draw, kind, dtype, shape, well_conditioned=False):
    """The kind's parameters, and the largest |exponent| a further power-of-two scaling may take.
    well_conditioned: condition numbers of chosen kinds within the square root of 1/eps."""
    m, n = shape
    limit = SCALE_EXPONENT[dtype]
    if kind == "graded":
        g = GRADING[dtype]
        which = draw(st.sampled_from(("rows", "columns", "both")))
        spread = st.integers(-g, g)
        rows = draw(st.lists(spread, min_size=m, max_size=m)) if which != "columns" else [0] * m
        cols = draw(st.lists(spread, min_size=n, max_size=n)) if which != "rows" else [0] * n
        return (tuple(rows), tuple(cols)), limit - max(map(abs, rows), default=0) - max(map(abs, cols), default=0)
    if kind in ("permutation", "hollow"):
        # noise 2^-j relative to the permuted diagonal, or none
        return (draw(st.sampled_from((0, 10, 30, 50))),), limit
    if kind in ("spd", "illcond"):
        # log10 of the condition number: 1e2..1e20 for illcond, 1..1e12 for spd
        lo, hi = (2, 20) if kind == "illcond" else (0, 12)
        if well_conditioned:
            lo, hi = 0, int(-np.log10(np.finfo(dtype).eps) / 2)
        return (draw(st.integers(lo, hi)),), limit
    if kind == "low_rank":
        # a sum of `rank` products of integers within +-8 reaches 64 rank (2^12 at rank 23): the scaling keeps
        # every entry finite (a float32 scaled by 2^120 once overflowed to Inf, which linv rightly refused as
        # input the test took for finite)
        rank = draw(st.integers(0, max(0, min(m, n) - 1)))
        return (rank,), limit - int(np.ceil(np.log2(64 * max(rank, 1))))
    # integer kinds reach |entries| 128 (2^7); the others stay within a few units
    return (), limit - (7 if kind in EXACTLY_SINGULAR else 0)


@st.composite
def matrices(draw, kinds=SQUARE_KINDS, dtypes=DTYPES, rows=st.integers(1, MAX_ORDER), square=True,
             columns=None, scaled=True, salted=True, well_conditioned=False):
    """A Matrix of one of `kinds`: square (order from `rows`) unless square=False (then `columns` too),
    optionally times 2^k over the dtype's range and optionally with one NaN/Inf entry."""
    dtype = draw(st.sampled_from(dtypes))
    kind = draw(st.sampled_from(kinds))
    m = draw(rows)
    n = m if square else draw(columns if columns is not None else st.integers(1, MAX_ORDER))
    params, limit = draw(kind_params(kind, dtype, (m, n), well_conditioned))
    scale = draw(st.one_of(st.just(0), st.integers(-limit, limit))) if scaled else 0
    salt = None
    if salted and m * n > 0 and draw(st.integers(0, 9)) == 0:
        salt = (draw(st.integers(0, m - 1)), draw(st.integers(0, n - 1)), draw(st.sampled_from(NON_FINITE)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return _matrix(kind, dtype, (m, n), seed, scale, params, salt)


@st.composite
def right_hand_sides(draw, rows, dtype, vector=None, salted=True):
    """B (rows x k, or a vector) of normal entries times 2^k over the dtype's whole range."""
    is_vector = draw(st.booleans()) if vector is None else vector
    k = 1 if is_vector else draw(st.integers(1, 3))
    limit = SCALE_EXPONENT[dtype]
    scale = draw(st.one_of(st.just(0), st.integers(-limit, limit)))
    salt = None
    if salted and rows > 0 and draw(st.integers(0, 9)) == 0:
        salt = (draw(st.integers(0, rows - 1)), draw(st.integers(0, k - 1)), draw(st.sampled_from(NON_FINITE)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    b = build("normal", dtype, (rows, k), seed, scale, (), salt)
    return Matrix("normal", dtype, (rows,) if is_vector else (rows, k), seed, scale, (), salt,
                  b.reshape(-1) if is_vector else b)


@st.composite
def weights(draw, n, dtype):
    """wls's d (the diagonal of D^2): positive over a wide range, some exactly zero, or one negative."""
    seed = draw(st.integers(0, 2 ** 32 - 1))
    spread = draw(st.sampled_from((0, 10, 100, 300 if dtype == np.float64 else 40)))
    zeros = draw(st.integers(0, n))
    negative = draw(st.integers(0, 19)) == 0
    rng = np.random.default_rng(seed)
    d = np.ldexp(rng.uniform(0.5, 1.0, n), rng.integers(-spread, spread + 1, n))
    d[rng.permutation(n)[:zeros]] = 0.0
    if negative:
        d[rng.integers(n)] = -1.0
    return {"seed": seed, "spread": spread, "zeros": zeros, "negative": negative, "d": d.astype(dtype)}


# Option values: (text, what it is). The property decides per option which of these are valid.
OPTION_VALUES = st.sampled_from((
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400",       # not finite (1e400 overflows to inf)
    "-1", "-5", "-0.5", "-1e-300",                                    # negative
    "0", "0.0", "-0",                                                 # zero
    "99999999999999999999", "1e308",                                  # huge (the first overflows int64)
    "abc", "", "1e", "5abc", "0x10", "--", "1,5",                     # not a number
    "1e3", "1e-300", "3", "0.5", "1e-8", "7", "2",                    # numbers, some of them valid
))


def parse_float(text):
    """The value a strict float parser gives, or None for text that is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def parse_int(text):
    """The value of a plain decimal integer, or None (exponents, fractions and words are not integers)."""
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


# Output clashes: two outputs (or an output and an input) naming one file.
CLASH_STYLES = ("direct", "dotdot", "symlink", "absolute")
