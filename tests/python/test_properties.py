"""Property-based differential tests of linv, the command-line tool and the Python package, against NumPy.

Hypothesis draws the matrices that break solvers (any power-of-two scale the type can hold, graded rows
and columns, exact singularity, one NaN or Inf, permutations and zero diagonals, Wilkinson's growth
matrix, chosen condition numbers), mistyped option values and colliding output paths, and each property
states what linv promises (README.md, docs/cli.md, docs/python.md): a success is finite and within a
bound scaled by n * eps (* cond where the answer is compared with NumPy's), and a failure is one of the
documented ones, and only where the input justifies it.

Profiles: "ci" (the default: a fixed seed, a few minutes on two cores) and "long" (LINV_PROPERTY_PROFILE
=long; LINV_PROPERTY_EXAMPLES examples in all, default 100000, shared in proportion to the ci budgets). The examples run
per property are printed when the module finishes and written as JSON to LINV_PROPERTY_COUNTS if set.
The command-line properties run LINV_CLI (default build/bin/linv), one process per example.
"""
import functools
import json
import math
import os
import re
import stat
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import linv
import property_strategies as ps

REPO = Path(__file__).resolve().parents[2]
LINV = os.environ.get("LINV_CLI", str(REPO / "build" / "bin" / "linv"))
THRESHOLD = 30.0       # LAPACK's test ratio: the bound linv promises for its scaled residuals
HANG_S = 60            # a command still running after this long is a hang, not a slow success
LONG_TOTAL = 100_000   # the long profile's default: at least this many examples over all properties

PROFILE = os.environ.get("LINV_PROPERTY_PROFILE", "ci")
_common = dict(deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])
settings.register_profile("ci", derandomize=True, **_common)
settings.register_profile("long", **_common)
settings.load_profile(PROFILE)

EXAMPLES = Counter()   # examples run per property
_CI_BUDGET = {}        # property name -> examples under the ci profile


def prop(ci):
    """Registers a property: counts its examples, and gives it `ci` examples under the ci profile (the
    settings are applied at the end of the module, once the number of properties is known)."""
    def register(fn):
        @functools.wraps(fn)
        def counted(*args, **kwargs):
            EXAMPLES[fn.__name__] += 1
            return fn(*args, **kwargs)
        _CI_BUDGET[fn.__name__] = ci
        return counted
    return register


needs_cli = pytest.mark.skipif(not os.access(LINV, os.X_OK), reason=f"no linv command at {LINV} (build it first)")


@pytest.fixture(scope="module", autouse=True)
def examples_report(request):
    """Prints (and writes to LINV_PROPERTY_COUNTS) the examples each property ran, once the module is done."""
    yield
    counts = {name: EXAMPLES[name] for name in _CI_BUDGET}
    writer = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if writer is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # printed whether or not the last property failed
            writer.write_line(f"\nlinv properties ({PROFILE} profile): {sum(counts.values())} examples")
            for name, count in counts.items():
                writer.write_line(f"  {count:8d}  {name}")
    if os.environ.get("LINV_PROPERTY_COUNTS"):
        with open(os.environ["LINV_PROPERTY_COUNTS"], "w") as f:
            json.dump({"profile": PROFILE, "total": sum(counts.values()), "examples": counts}, f, indent=2)


# ---------------------------------------------------------------------------------------------------------
# Numerics: everything evaluated on power-of-two scaled copies, so that no reference computation over- or
# underflows at any scale the inputs can take (scaling by 2^k is exact).

def eps(dtype):
    return float(np.finfo(dtype).eps)


def split(m):
    """(s, e) with m = s * 2^e exactly and max|s| in [0.5, 1) (s = m, e = 0 for a zero m), in float64."""
    m = np.asarray(m, np.float64)
    top = np.abs(m).max(initial=0.0)
    e = int(np.frexp(top)[1]) if top > 0 else 0
    return np.ldexp(m, -e), e


def columns(m):
    m = np.asarray(m, np.float64)
    return m.reshape(m.shape[0], -1)


def norm1(m):
    return np.abs(m).sum(axis=0).max(initial=0.0)


def scaled_residual(a, x, b, inverse=False):
    """||A X - B||_1 / (n eps (||A||_1 ||X||_1 + ||B||_1)), for an inverse (B = I) without the ||B||
    term, as linv's reports define them; eps is that of a's dtype."""
    n = a.shape[0]
    (a_s, ea), (x_s, ex), (b_s, eb) = split(a), split(columns(x)), split(columns(b))
    top = max(ea + ex, eb)
    with np.errstate(under="ignore"):
        r = np.ldexp(a_s @ x_s, ea + ex - top) - np.ldexp(b_s, eb - top)
        size = np.ldexp(norm1(a_s) * norm1(x_s), ea + ex - top)
        if not inverse:
            size += np.ldexp(norm1(b_s), eb - top)
    return norm1(r) / (n * eps(a.dtype) * size) if size > 0 else norm1(r)


def cond1(a):
    """NumPy's 1-norm condition number of a (inf when singular), computed on a power-of-two scaled copy."""
    a_s, _ = split(a)
    with np.errstate(all="ignore"):
        c = np.linalg.cond(a_s, 1)
    return float(c) if np.isfinite(c) else math.inf


def singular_to_working_precision(cond, dtype):
    """Where linv may refuse a matrix as singular: its condition number within 100x of 1/eps (linv
    refuses below rcond = eps; its estimate of rcond may be off by a modest factor)."""
    return cond > 1 / (100 * eps(dtype))


def fits(scaled, e, dtype, size):
    """Whether a result (scaled * 2^e) fits the dtype: its largest entries normal to full precision
    (above tiny / eps) and room below the largest float for the norms linv takes of it (size * max)."""
    top = np.abs(scaled).max(initial=0.0)
    if top == 0:
        return True
    fi = np.finfo(dtype)
    magnitude = math.log2(top) + e
    return math.log2(fi.tiny / fi.eps) <= magnitude <= math.log2(fi.max) - math.log2(4 * max(size, 1))


def underflows(scaled, e, dtype):
    top = np.abs(scaled).max(initial=0.0)
    fi = np.finfo(dtype)
    return top > 0 and math.log2(top) + e < math.log2(fi.tiny / fi.eps)


def svd_rank(a_s, dtype):
    """(singular values, numerical rank, whether the rank is clear) for linv's default tolerance
    max(m, n) * eps: clear when the kept values are 10x above it and the dropped ones 10x below."""
    m, n = a_s.shape
    s = np.linalg.svd(a_s, compute_uv=False) if min(m, n) else np.zeros(0)
    tol = max(m, n) * eps(dtype) * (s[0] if len(s) else 0.0)
    rank = int(np.sum(s > tol))
    clear = (rank == len(s) or s[rank] <= tol / 10) and (rank == 0 or s[rank - 1] >= 10 * tol)
    return s, rank, clear


def truncated_pinv(a_s, rank):
    u, s, vt = np.linalg.svd(a_s, full_matrices=False)
    return (vt[:rank].T / s[:rank]) @ u[:, :rank].T


def show(case):
    """A note with the matrix itself, so that a falsifying example can be replayed without rebuilding it."""
    if case.a is not None and case.a.size <= 64:
        note(f"{case!r} =\n{np.array2string(case.a, precision=17, max_line_width=200)}")


def names_entry(message, salt):
    row, col, value = salt
    kind = "nan" if math.isnan(value) else "inf"
    return f"row {row + 1}, column {col + 1}" in message and kind in message.lower()


# ---------------------------------------------------------------------------------------------------------
# Running linv.

def linv_cli(*args, cwd):
    """Runs linv; a run past HANG_S seconds fails the property as a hang."""
    args = [str(a) for a in args]
    try:
        p = subprocess.run([LINV, *args], cwd=cwd, capture_output=True, text=True, timeout=HANG_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"linv {' '.join(args)}: still running after {HANG_S} s (a hang)") from None
    note(f"$ linv {' '.join(args)}\nexit {p.returncode}\nstderr: {p.stderr.strip()}")
    assert p.returncode >= 0, f"linv {' '.join(args)} died by signal {-p.returncode}: {p.stderr}"
    return p


EXIT_NAMES = {0: "success", 1: "internal error", 2: "usage", 3: "input", 4: "numerical", 5: "device"}


def outcome_of_exit(p):
    return EXIT_NAMES.get(p.returncode, f"exit {p.returncode}")


def outcome_of_call(call):
    """linv's Python result as (outcome, value or exception), with the outcome named as the exit codes."""
    try:
        return "success", call()
    except linv.InputError as e:
        return "input", e
    except np.linalg.LinAlgError as e:  # SingularMatrixError, NotPositiveDefiniteError, NumericalError
        return "numerical", e
    except ValueError as e:  # a bad argument, as the command line's usage errors (LinAlgError is one too)
        return "usage", e


class Expectation:
    """What linv may do with one problem: the outcomes allowed, and the salt a refusal must name. A usage
    error (a meaningless argument) and a non-finite entry may come together: either may be reported."""

    def __init__(self, salts=(), must_refuse=False, may_refuse=False, usage=False):
        self.salts = [s for s in salts if s is not None]
        if usage:
            self.allowed = {"usage", "input"} if self.salts else {"usage"}
        elif self.salts:
            self.allowed = {"input"}
        elif must_refuse:
            self.allowed = {"numerical"}
        else:
            self.allowed = {"success", "numerical"} if may_refuse else {"success"}

    def check(self, outcome, message):
        assert outcome in self.allowed, f"linv's outcome {outcome!r} ({message.strip()}); expected one of " \
                                        f"{sorted(self.allowed)}"
        if outcome == "input":
            assert any(names_entry(message, s) for s in self.salts), f"the message does not name the " \
                                                                      f"non-finite entry {self.salts}: {message}"
        if outcome == "usage":
            assert message.strip(), "a usage error without a message"


def square_expectation(case, b=None, x_ref=None):
    """For inv (b None) or solve: NaN/Inf is an input error; an exactly singular matrix a numerical one;
    otherwise success, or a refusal where the matrix is singular to working precision or the answer does
    not fit the type."""
    a = case.a
    cond = cond1(a)
    may = singular_to_working_precision(cond, a.dtype) or (x_ref is not None and not fits(*x_ref, a.dtype, a.shape[0]))
    note(f"cond1 = {cond:.3g}")
    return Expectation([case.salt, b.salt if b is not None else None], case.exactly_singular, may)


def reference_solution(a, b):
    """(X_s, e): A^-1 B = X_s 2^e from the scaled copies (None where A is singular to float64)."""
    (a_s, ea), (b_s, eb) = split(a), split(columns(b))
    try:
        return np.linalg.solve(a_s, b_s), eb - ea
    except np.linalg.LinAlgError:
        return None


def finite_matrices(case, *others):
    return all(c.salt is None for c in (case, *others))


# ---------------------------------------------------------------------------------------------------------
# inv and solve.

def check_inverse(case, x):
    a = case.a
    n = a.shape[0]
    assert x.shape == a.shape and x.dtype == a.dtype, f"result {x.shape} {x.dtype} for {a.shape} {a.dtype}"
    assert np.all(np.isfinite(x)), "a success with NaN or Inf in the result"
    ref = reference_solution(a, np.eye(n)) if finite_matrices(case) else None
    if ref is None or not underflows(*ref, a.dtype):
        r = scaled_residual(a, x, np.eye(n), inverse=True)
        assert r <= THRESHOLD, f"scaled residual ||AX - I|| / (n eps ||A|| ||X||) = {r:.3g} > {THRESHOLD}"


def check_solution(case, b, x):
    a = case.a
    assert x.shape == b.a.shape and x.dtype == a.dtype, f"x {x.shape} {x.dtype} for b {b.a.shape} {a.dtype}"
    assert np.all(np.isfinite(x)), "a success with NaN or Inf in the result"
    ref = reference_solution(a, b.a)
    if ref is None or not underflows(*ref, a.dtype):
        r = scaled_residual(a, x, b.a)
        assert r <= THRESHOLD, f"scaled residual ||AX - B|| / (n eps (||A|| ||X|| + ||B||)) = {r:.3g} > {THRESHOLD}"


def inverse_expectation(case):
    ref = reference_solution(case.a, np.eye(case.shape[0])) if finite_matrices(case) else None
    return square_expectation(case, x_ref=ref)


def solve_case(data, case):
    b = data.draw(ps.right_hand_sides(case.shape[0], case.dtype, salted=case.salt is None), label="b")
    ref = reference_solution(case.a, b.a) if finite_matrices(case, b) else None
    return b, square_expectation(case, b, ref)


@needs_cli
@given(case=ps.matrices())
@prop(ci=120)
def test_cli_inv_is_accurate_or_refuses_as_documented(case):
    show(case)
    expect = inverse_expectation(case)
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/a.npy", case.a)
        p = linv_cli("inv", "a.npy", "-o", "x.npy", "--device", "cpu", cwd=d)
        expect.check(outcome_of_exit(p), p.stderr)
        if p.returncode == 0:
            check_inverse(case, np.load(f"{d}/x.npy"))


@needs_cli
@given(case=ps.matrices(), data=st.data())
@prop(ci=120)
def test_cli_solve_is_accurate_or_refuses_as_documented(case, data):
    show(case)
    b, expect = solve_case(data, case)
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/a.npy", case.a)
        np.save(f"{d}/b.npy", b.a)
        p = linv_cli("solve", "a.npy", "b.npy", "-o", "x.npy", "--device", "cpu", cwd=d)
        expect.check(outcome_of_exit(p), p.stderr)
        if p.returncode == 0:
            check_solution(case, b, np.load(f"{d}/x.npy"))


@given(case=ps.matrices())
@prop(ci=300)
def test_python_inv_is_accurate_or_raises_as_documented(case):
    show(case)
    expect = inverse_expectation(case)
    outcome, value = outcome_of_call(lambda: linv.inv(case.a))
    expect.check(outcome, str(value) if outcome != "success" else "")
    if outcome == "success":
        check_inverse(case, value)


@given(case=ps.matrices(), data=st.data())
@prop(ci=300)
def test_python_solve_is_accurate_or_raises_as_documented(case, data):
    show(case)
    b, expect = solve_case(data, case)
    outcome, value = outcome_of_call(lambda: linv.solve(case.a, b.a))
    expect.check(outcome, str(value) if outcome != "success" else "")
    if outcome == "success":
        check_solution(case, b, value)


WELL_CONDITIONED = ps.matrices(kinds=("normal", "permutation", "hollow", "wilkinson", "spd", "illcond"),
                               scaled=False, salted=False, well_conditioned=True)


def scale_pair(case, k):
    """2^k A in A's dtype, provided A, 2^k A and both inverses fit the type and A is well conditioned
    (60 n eps cond < 1: the two inverses' bound below says something)."""
    a = case.a
    n = a.shape[0]
    cond = cond1(a)
    assume(2 * THRESHOLD * n * eps(a.dtype) * cond < 1)
    a_s, ea = split(a)
    inv_s = np.linalg.inv(a_s)
    assume(fits(a_s, ea + k, a.dtype, n) and fits(inv_s, -ea, a.dtype, n) and fits(inv_s, -ea - k, a.dtype, n))
    return np.ldexp(a, k).astype(a.dtype), cond


def check_scaled_inverses(a, x, xk, k, cond):
    """x (of A) and xk (of 2^k A): 2^k xk within 2 * 30 n eps cond of x, relative (both backward stable)."""
    n = a.shape[0]
    diff = np.abs(np.ldexp(columns(xk), k) - columns(x))
    bound = 2 * THRESHOLD * n * eps(a.dtype) * cond * norm1(columns(x))
    assert norm1(diff) <= bound, f"||2^k inv(2^k A) - inv(A)||_1 = {norm1(diff):.3g} > {bound:.3g} (k = {k})"


@given(case=WELL_CONDITIONED, k=st.integers(-1000, 1000))
@prop(ci=200)
def test_python_inverse_is_scale_invariant(case, k):
    show(case)
    ak, cond = scale_pair(case, k)
    outcome, x = outcome_of_call(lambda: linv.inv(case.a))
    outcome_k, xk = outcome_of_call(lambda: linv.inv(ak))
    assert outcome == outcome_k == "success", f"inv(A): {outcome} ({x}); inv(2^{k} A): {outcome_k} ({xk})"
    check_scaled_inverses(case.a, x, xk, k, cond)


@needs_cli
@given(case=WELL_CONDITIONED, k=st.integers(-1000, 1000))
@prop(ci=60)
def test_cli_batched_inverse_is_scale_invariant(case, k):
    show(case)
    ak, cond = scale_pair(case, k)
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/stack.npy", np.stack([case.a, ak]))
        p = linv_cli("inv", "--batch", "stack.npy", "-o", "x.npy", "--device", "cpu", cwd=d)
        assert p.returncode == 0, f"exit {p.returncode} for the stack [A, 2^{k} A] of a well-conditioned A"
        x = np.load(f"{d}/x.npy")
    check_scaled_inverses(case.a, x[0], x[1], k, cond)


# ---------------------------------------------------------------------------------------------------------
# Batches: one matrix of a stack NaN-salted, or scaled to the ends of the range.

@st.composite
def stacks(draw):
    """(members, extreme): a stack of B matrices of one order and dtype, one of them possibly times a
    subnormal factor (1e-310, float32 1e-40) or 2^+-max, and at most one with a NaN or Inf entry."""
    dtype = draw(st.sampled_from(ps.DTYPES))
    n = draw(st.integers(1, 12))
    count = draw(st.integers(1, 5))
    members = [draw(ps.matrices(dtypes=(dtype,), rows=st.just(n), salted=False)) for _ in range(count)]
    extreme = None
    if draw(st.booleans()):
        i = draw(st.integers(0, count - 1))
        limit = ps.SCALE_EXPONENT[dtype]
        factor = draw(st.sampled_from((1e-310 if dtype == np.float64 else 1e-40, 2.0 ** limit, 2.0 ** -limit)))
        base = draw(ps.matrices(kinds=tuple(k for k in ps.SQUARE_KINDS if k != "graded"), dtypes=(dtype,),
                                rows=st.just(n), scaled=False, salted=False))
        # a subnormal factor rounds the entries, so the kind no longer promises exact singularity
        kind = base.kind if math.frexp(factor)[0] == 0.5 else f"{base.kind} times {factor:g}"
        members[i] = ps.Matrix(kind, dtype, base.shape, base.seed, base.scale, base.params, None,
                               (base.a.astype(np.float64) * factor).astype(dtype))
        extreme = (i, factor)
    if draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, count - 1))
        salt = (draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)), draw(st.sampled_from(ps.NON_FINITE)))
        m = members[i]
        a = m.a.copy()
        a[salt[0], salt[1]] = salt[2]
        members[i] = ps.Matrix(m.kind, dtype, m.shape, m.seed, m.scale, m.params, salt, a)
    return members, extreme


def member_verdicts(members):
    """Per matrix: 'must' (exactly singular: refused), 'may' (singular to working precision or an inverse
    that does not fit: refused or inverted) or 'never' (inverted)."""
    verdicts = []
    for m in members:
        ref = reference_solution(m.a, np.eye(m.shape[0]))
        if m.exactly_singular:
            verdicts.append("must")
        elif singular_to_working_precision(cond1(m.a), m.dtype) or ref is None or not fits(*ref, m.dtype, m.shape[0]):
            verdicts.append("may")
        else:
            verdicts.append("never")
    return verdicts


def names_matrix(message, index):
    """linv names a stack's matrix by its 0-based index: 'matrix 3' on the command line, 'matrix (3,)' in
    Python."""
    return re.search(rf"matri(x|ces) \(?{index}\b", message) is not None


def check_refusals(members, verdicts, refused, message):
    for i, (m, v) in enumerate(zip(members, verdicts)):
        if v == "must":
            assert i in refused, f"matrix {i} is exactly singular but was not refused"
        if v == "never":
            assert i not in refused, f"matrix {i} (cond1 {cond1(m.a):.3g}) refused as singular: {message}"
    for value in re.findall(r"rcond ([-+]?(?:nan|inf|[0-9.]+(?:e[-+]?[0-9]+)?))", message, re.IGNORECASE):
        assert math.isfinite(float(value)), f"a refusal with rcond {value}: {message}"


def check_stack_results(members, refused, x):
    assert x.shape == (len(members),) + members[0].shape and x.dtype == members[0].dtype
    for i, m in enumerate(members):
        if i in refused:
            assert np.all(np.isnan(x[i])), f"refused matrix {i}: its block is not NaN"
        else:
            check_inverse(m, x[i])


@needs_cli
@given(stack=stacks())
@prop(ci=100)
def test_cli_batched_inverse_names_bad_matrices_and_inverts_the_others(stack):
    members, extreme = stack
    for m in members:
        show(m)
    salted = [(i, m.salt) for i, m in enumerate(members) if m.salt is not None]
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/stack.npy", np.stack([m.a for m in members]))
        p = linv_cli("inv", "--batch", "stack.npy", "-o", "x.npy", "--report", "r.json", "--device", "cpu", cwd=d)
        if salted:
            (i, salt), = salted
            assert p.returncode == 3, f"exit {p.returncode} for a stack with {salt[2]} in matrix {i}"
            assert names_matrix(p.stderr, i) and names_entry(p.stderr, salt), \
                f"the message does not name matrix {i} and its entry {salt}: {p.stderr}"
            return
        verdicts = member_verdicts(members)
        note(f"verdicts {verdicts}, extreme member {extreme}")
        assert p.returncode in (0, 4), f"exit {p.returncode}: {p.stderr}"
        report = json.loads(Path(f"{d}/r.json").read_text())
        x = np.load(f"{d}/x.npy")
    # README: the report lists each singular matrix as [matrix, pivot, rcond], and exit 4 says there is one
    rows = report["singular_matrices"]
    assert (p.returncode == 4) == bool(rows), f"exit {p.returncode} with singular matrices {rows}"
    for row in rows:
        assert row[2] is not None and math.isfinite(row[2]), f"matrix {row[0]} refused with rcond {row[2]}"
    refused = {row[0] for row in rows}
    check_refusals(members, verdicts, refused, p.stderr)
    check_stack_results(members, refused, x)


@given(stack=stacks())
@prop(ci=200)
def test_python_batched_inverse_names_bad_matrices_and_inverts_the_others(stack):
    members, extreme = stack
    for m in members:
        show(m)
    a = np.stack([m.a for m in members])
    outcome, value = outcome_of_call(lambda: linv.inv(a))
    salted = [(i, m.salt) for i, m in enumerate(members) if m.salt is not None]
    if salted:
        (i, salt), = salted
        assert outcome == "input", f"{outcome} ({value}) for a stack with {salt[2]} in matrix {i}"
        assert names_matrix(str(value), i) and names_entry(str(value), salt), \
            f"the message does not name matrix {i} and its entry {salt}: {value}"
        return
    verdicts = member_verdicts(members)
    note(f"verdicts {verdicts}, extreme member {extreme}")
    refused = set()
    if outcome == "numerical":
        assert isinstance(value, linv.SingularMatrixError), f"{type(value).__name__}: {value}"
        refused = {int(np.ravel(i)[0]) for i in value.indices}
        check_refusals(members, verdicts, refused, str(value))
        x = linv.inv(a, singular="nan")
    else:
        check_refusals(members, verdicts, refused, "")
        x = value
    check_stack_results(members, refused, x)


# ---------------------------------------------------------------------------------------------------------
# lstsq and pinv: NumPy's SVD as the reference, compared where the numerical rank is clear.

RECTANGULAR = ps.matrices(kinds=ps.RECTANGULAR_KINDS, square=False)


def lstsq_reference(a, b):
    """(x_s, e, bound_s, fits) with NumPy's minimum-norm x = x_s 2^e, the per-column error bound on x_s
    30 p eps (kappa (||x|| + ||b|| / ||A||) + kappa^2 ||r|| / ||A||) of a backward-stable least-squares
    solver, and whether x fits the type; None where the rank is not clear."""
    (a_s, ea), (b_s, eb) = split(a), split(columns(b))
    s, rank, clear = svd_rank(a_s, a.dtype)
    note(f"singular values {s}, rank {rank}, clear {clear}")
    if not clear:
        return None
    x_s = truncated_pinv(a_s, rank) @ b_s
    if rank == 0:
        return x_s, eb - ea, np.zeros(x_s.shape[1]), True
    kappa = s[0] / s[rank - 1]
    r_s = b_s - a_s @ x_s
    p = max(a.shape)
    bound = THRESHOLD * p * eps(a.dtype) * (kappa * (np.linalg.norm(x_s, axis=0) + np.linalg.norm(b_s, axis=0) / s[0])
                                            + kappa ** 2 * np.linalg.norm(r_s, axis=0) / s[0])
    return x_s, eb - ea, bound, fits(x_s, eb - ea, a.dtype, p)


def lstsq_expectation(case, b):
    ref = lstsq_reference(case.a, b.a) if finite_matrices(case, b) else None
    # lstsq refuses nothing for its rank; a numerical failure is allowed only where x may not fit
    return ref, Expectation([case.salt, b.salt], may_refuse=ref is None or not ref[3])


def check_lstsq(case, b, x, ref):
    assert x.shape == (case.shape[1],) + b.a.shape[1:] and x.dtype == case.dtype, f"x {x.shape} {x.dtype}"
    assert np.all(np.isfinite(x)), "a success with NaN or Inf in the result"
    if ref is None:
        return
    x_s, e, bound, fit = ref
    if fit:
        err = np.linalg.norm(np.ldexp(columns(x), -e) - x_s, axis=0)
        assert np.all(err <= bound), f"||x - x_numpy|| = {err} > {bound} (times 2^{e})"


def rectangular_rhs(data, case):
    return data.draw(ps.right_hand_sides(case.shape[0], case.dtype, salted=case.salt is None), label="b")


@needs_cli
@given(case=RECTANGULAR, data=st.data())
@prop(ci=100)
def test_cli_lstsq_matches_numpy(case, data):
    show(case)
    b = rectangular_rhs(data, case)
    ref, expect = lstsq_expectation(case, b)
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/a.npy", case.a)
        np.save(f"{d}/b.npy", b.a)
        p = linv_cli("lstsq", "a.npy", "b.npy", "-o", "x.npy", cwd=d)
        expect.check(outcome_of_exit(p), p.stderr)
        if p.returncode == 0:
            check_lstsq(case, b, np.load(f"{d}/x.npy"), ref)


@given(case=RECTANGULAR, data=st.data())
@prop(ci=300)
def test_python_lstsq_matches_numpy(case, data):
    show(case)
    b = rectangular_rhs(data, case)
    ref, expect = lstsq_expectation(case, b)
    outcome, value = outcome_of_call(lambda: linv.lstsq(case.a, b.a))
    expect.check(outcome, str(value) if outcome != "success" else "")
    if outcome == "success":
        check_lstsq(case, b, value, ref)


def pinv_reference(a):
    """(P_s, e, bound, fits): NumPy's pseudoinverse P = P_s 2^e (truncated at max(m, n) eps), the bound
    30 p eps kappa ||P_s||_2 on ||P - P_numpy||_2 / 2^e (Wedin), and whether P fits; None where the rank
    is not clear."""
    a_s, ea = split(a)
    s, rank, clear = svd_rank(a_s, a.dtype)
    note(f"singular values {s}, rank {rank}, clear {clear}")
    if not clear:
        return None
    p_s = truncated_pinv(a_s, rank)
    if rank == 0:
        return p_s, -ea, 0.0, True
    bound = THRESHOLD * max(a.shape) * eps(a.dtype) * (s[0] / s[rank - 1]) / s[rank - 1]
    return p_s, -ea, bound, fits(p_s, -ea, a.dtype, max(a.shape))


def check_pinv(case, p, ref):
    m, n = case.shape
    assert p.shape == (n, m) and p.dtype == case.dtype, f"pinv {p.shape} {p.dtype} for {case.shape} {case.dtype}"
    assert np.all(np.isfinite(p)), "a success with NaN or Inf in the result"
    if ref is None:
        return
    p_s, e, bound, fit = ref
    if fit:
        err = np.linalg.norm(np.ldexp(p.astype(np.float64), -e) - p_s, 2)
        assert err <= bound, f"||P - P_numpy||_2 = {err:.3g} > {bound:.3g} (times 2^{e})"


def pinv_expectation(case):
    ref = pinv_reference(case.a) if case.salt is None else None
    return ref, Expectation([case.salt], may_refuse=ref is None or not ref[3])


@needs_cli
@given(case=RECTANGULAR)
@prop(ci=100)
def test_cli_pinv_matches_numpy(case):
    show(case)
    ref, expect = pinv_expectation(case)
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/a.npy", case.a)
        p = linv_cli("pinv", "a.npy", "-o", "p.npy", cwd=d)
        expect.check(outcome_of_exit(p), p.stderr)
        if p.returncode == 0:
            check_pinv(case, np.load(f"{d}/p.npy"), ref)


@given(case=RECTANGULAR)
@prop(ci=300)
def test_python_pinv_matches_numpy(case):
    show(case)
    ref, expect = pinv_expectation(case)
    outcome, value = outcome_of_call(lambda: linv.pinv(case.a))
    expect.check(outcome, str(value) if outcome != "success" else "")
    if outcome == "success":
        check_pinv(case, value, ref)


# ---------------------------------------------------------------------------------------------------------
# Weighted least squares: x = argmin ||D (b - A^T x)||, A m x n (m <= n), d the diagonal of D^2.

@st.composite
def wls_problems(draw):
    dtype = draw(st.sampled_from(ps.DTYPES))
    m = draw(st.integers(1, 8))
    n = draw(st.integers(m, ps.MAX_ORDER))
    a = draw(ps.matrices(kinds=ps.RECTANGULAR_KINDS, dtypes=(dtype,), rows=st.just(m), square=False,
                         columns=st.just(n)))
    d = draw(ps.weights(n, dtype))
    b = draw(ps.right_hand_sides(n, dtype, salted=a.salt is None))
    return a, d, b


class WlsReference(NamedTuple):
    """NumPy's x = x_s 2^e for the rows scaled by sqrt(d), with what the error bound needs."""
    x_s: np.ndarray
    e: int
    kappa: float        # the condition number of A D^2 A^T (the square of D A^T's)
    norm_m: float       # ||D A^T||_2, scaled as x_s
    norm_c: np.ndarray  # ||D b||_2 per column, scaled as x_s
    fits: bool


def wls_reference(a, d, b):
    (a_s, ea), (b_s, eb) = split(a), split(columns(b))
    d_s, ed = split(d)
    ed_even = ed + (ed % 2)                    # sqrt(d) = sqrt(d_s') 2^(ed'/2) exactly
    root = np.sqrt(np.ldexp(d_s, ed - ed_even))
    m_s = root[:, None] * a_s.T                # D A^T and D b, both over 2^(ea + ed'/2) and 2^(eb + ed'/2)
    c_s = root[:, None] * b_s
    x_s = np.linalg.lstsq(m_s, c_s, rcond=None)[0]
    s = np.linalg.svd(m_s, compute_uv=False)
    with np.errstate(over="ignore", divide="ignore"):
        kappa = float(np.square(s[0] / s[-1])) if s[-1] > 0 else math.inf
    return WlsReference(x_s, eb - ea, kappa, s[0], np.linalg.norm(c_s, axis=0),
                        fits(x_s, eb - ea, a.dtype, a.shape[1]))


def wls_exactly_rank_deficient(a, d):
    """A D^2 A^T is exactly singular: A (integer, low rank) is, or fewer than m weights are nonzero."""
    return a.kind == "low_rank" or np.count_nonzero(d["d"]) < a.shape[0]


def wls_expectation(a, d, b):
    """A negative weight is a usage error (linv: 'd holds the diagonal of D^2'); NaN/Inf an input error;
    an exactly singular A D^2 A^T a numerical one (README: NotPositiveDefinite, naming the minor)."""
    ref = wls_reference(a.a, d["d"], b.a) if finite_matrices(a, b) and not d["negative"] else None
    note(f"kappa(A D^2 A^T) = {ref.kappa:.3g}" if ref else "no reference")
    may = ref is not None and (singular_to_working_precision(ref.kappa, a.dtype) or not ref.fits)
    return ref, Expectation([a.salt, b.salt], must_refuse=wls_exactly_rank_deficient(a, d), may_refuse=may,
                            usage=d["negative"])


def check_wls(a, b, x, ref):
    """x from the normal equations, formed and factored backward stably, (C + dC) x = A D^2 b + dg with
    ||dC|| <= c n eps ||D A^T||^2 and ||dg|| <= c n eps ||D A^T|| ||D b||, is within ||C^-1|| ||dg - dC x|| =
    30 n eps kappa(C) (||x|| + ||D b|| / ||D A^T||) of NumPy's (no first-order approximation: this holds at any
    condition number); the weighted residual's excess over NumPy's, ||D A^T (x - x_numpy)||, with it."""
    assert x.shape == (a.shape[0],) + b.a.shape[1:] and x.dtype == a.dtype, f"x {x.shape} {x.dtype}"
    assert np.all(np.isfinite(x)), "a success with NaN or Inf in the result"
    if ref.fits:
        with np.errstate(over="ignore"):
            x_hat = np.ldexp(columns(x), -ref.e)
            err = np.linalg.norm(x_hat - ref.x_s, axis=0)
            ratio = ref.norm_c / ref.norm_m if ref.norm_m > 0 else math.inf
            bound = THRESHOLD * a.shape[1] * eps(a.dtype) * ref.kappa * (np.linalg.norm(x_hat, axis=0) + ratio)
        assert np.all(err <= bound), f"||x - x_numpy|| = {err} > {bound} (times 2^{ref.e})"


@needs_cli
@given(problem=wls_problems())
@prop(ci=100)
def test_cli_wls_matches_numpy(problem):
    a, d, b = problem
    show(a)
    note(f"d = {d['d']!r}")
    ref, expect = wls_expectation(a, d, b)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(f"{tmp}/A.npy", a.a)
        np.save(f"{tmp}/d.npy", d["d"])
        np.save(f"{tmp}/b.npy", b.a)
        p = linv_cli("wls", "A.npy", "d.npy", "b.npy", "-o", "x.npy", "--device", "cpu", cwd=tmp)
        expect.check(outcome_of_exit(p), p.stderr)
        if p.returncode == 0:
            check_wls(a, b, np.load(f"{tmp}/x.npy"), ref)


@given(problem=wls_problems())
@prop(ci=300)
def test_python_wls_matches_numpy(problem):
    a, d, b = problem
    show(a)
    note(f"d = {d['d']!r}")
    ref, expect = wls_expectation(a, d, b)
    outcome, value = outcome_of_call(lambda: linv.wls(a.a, d["d"], b.a))
    expect.check(outcome, str(value) if outcome != "success" else "")
    if outcome == "success":
        check_wls(a, b, value, ref)


# ---------------------------------------------------------------------------------------------------------
# slogdet and cholesky (Python).

@given(case=ps.matrices())
@prop(ci=300)
def test_python_slogdet_matches_numpy(case):
    show(case)
    if case.salt is not None:
        with pytest.raises(linv.InputError) as e:
            linv.slogdet(case.a)
        assert names_entry(str(e.value), case.salt), str(e.value)
        return
    sign, logdet = linv.slogdet(case.a)
    a_s, ea = split(case.a)
    with np.errstate(divide="ignore"):  # log 0 for a singular matrix
        ref_sign, ref_log = np.linalg.slogdet(a_s)
    n = case.shape[0]
    cond = cond1(case.a)
    if case.exactly_singular or not math.isfinite(ref_log) or singular_to_working_precision(cond, case.dtype):
        # the determinant of a (nearly) singular matrix has no correct digits; only its form is promised
        assert sign in (-1, 0, 1) and (sign != 0 or logdet == -math.inf), f"sign {sign}, log {logdet}"
        return
    ref_log += n * ea * math.log(2)
    # first order: the determinant's relative error n eps cond, plus the rounding of the logarithms summed
    bound = THRESHOLD * n * eps(case.dtype) * (cond + abs(ref_log))
    assert sign == ref_sign and abs(logdet - ref_log) <= bound, \
        f"slogdet ({sign}, {logdet!r}), NumPy ({ref_sign}, {ref_log!r}): |difference| > {bound:.3g}"


@given(case=ps.matrices(kinds=("spd", "normal", "hollow")))
@prop(ci=300)
def test_python_cholesky_factors_spd_matrices_or_names_the_problem(case):
    show(case)
    a = case.a
    if case.salt is not None:
        with pytest.raises(linv.InputError) as e:
            linv.cholesky(a)
        assert names_entry(str(e.value), case.salt), str(e.value)
        return
    symmetric = np.array_equal(a, a.T)
    positive = symmetric and bool(np.all(np.linalg.eigvalsh(split(a)[0]) > 0))
    cond = cond1(a)
    unclear = singular_to_working_precision(cond, a.dtype)  # definiteness decided by rounding
    note(f"symmetric {symmetric}, positive definite {positive}, cond1 {cond:.3g}")
    try:
        low = linv.cholesky(a)
    except linv.NotPositiveDefiniteError as e:
        assert symmetric and (not positive or unclear), f"refused as not positive definite: {e}"
        return
    except linv.NumericalError as e:
        assert not symmetric, f"a symmetric matrix refused: {e}"
        return
    assert positive or unclear, "a matrix that is not symmetric positive definite was factored"
    assert low.dtype == a.dtype and np.all(np.triu(low, 1) == 0) and np.all(np.isfinite(low))
    (l_s, el), (a_s, ea) = split(low), split(a)
    r = np.ldexp(l_s @ l_s.T, 2 * el - ea) - a_s
    bound = THRESHOLD * a.shape[0] * eps(a.dtype) * np.abs(a_s).max()
    assert np.abs(r).max() <= bound, f"max|L L^T - A| = {np.abs(r).max():.3g} > {bound:.3g} (times 2^{ea})"


# ---------------------------------------------------------------------------------------------------------
# Empty matrices: accepted by the command line and by NumPy, with NumPy's shapes.

@st.composite
def empty_shapes(draw):
    m, n = draw(st.sampled_from(((0, 0), (0, 3), (3, 0), (0, 1))))
    return m, n, draw(st.sampled_from(ps.DTYPES)), draw(st.sampled_from(("inv", "solve", "lstsq", "pinv")))


def numpy_empty_result(m, n, op):
    a, b = np.zeros((m, n)), np.zeros(m)
    if op == "inv":
        return np.linalg.inv(a).shape
    if op == "solve":
        return np.linalg.solve(a, b).shape
    if op == "lstsq":
        return np.linalg.lstsq(a, b, rcond=None)[0].shape
    return np.linalg.pinv(a).shape


@needs_cli
@given(shape=empty_shapes())
@prop(ci=16)
def test_cli_takes_empty_matrices(shape):
    m, n, dtype, op = shape
    assume(op in ("lstsq", "pinv") or m == n)
    with tempfile.TemporaryDirectory() as d:
        np.save(f"{d}/a.npy", np.zeros((m, n), dtype))
        np.save(f"{d}/b.npy", np.zeros(m, dtype))
        operands = ["a.npy", "b.npy"] if op in ("solve", "lstsq") else ["a.npy"]
        p = linv_cli(op, *operands, "-o", "x.npy", cwd=d)
        assert p.returncode == 0, f"exit {p.returncode} for a {m}x{n} {op}: {p.stderr}"
        x = np.load(f"{d}/x.npy")
    assert x.shape == numpy_empty_result(m, n, op) and x.dtype == dtype and np.all(x == 0)


@given(shape=empty_shapes())
@prop(ci=16)
def test_python_takes_empty_matrices(shape):
    m, n, dtype, op = shape
    assume(op in ("lstsq", "pinv") or m == n)
    a, b = np.zeros((m, n), dtype), np.zeros(m, dtype)
    x = {"inv": lambda: linv.inv(a), "solve": lambda: linv.solve(a, b), "lstsq": lambda: linv.lstsq(a, b),
         "pinv": lambda: linv.pinv(a)}[op]()
    assert x.shape == numpy_empty_result(m, n, op) and x.dtype == dtype and np.all(x == 0)


# ---------------------------------------------------------------------------------------------------------
# Option values: anything that is not a meaningful number is a usage error (exit 2) with a message, never
# a success, an internal error or a hang.

def hex_is_unclear(domain):
    """'0x10' is 16 to C's and CLI11's number parsers: a number, if an odd way to write one; not asserted."""
    def wrapped(text):
        return "unclear" if text.lower().startswith("0x") else domain(text)
    return wrapped


def listed(domain):
    """A comma-separated list (bench --sizes, --cases): invalid if any item is, valid if all are."""
    def wrapped(text):
        verdicts = {domain(item) for item in text.split(",")}
        return next(v for v in ("invalid", "unclear", "exponent", "valid") if v in verdicts)
    return wrapped


@hex_is_unclear
def positive_int(text):
    v = ps.parse_int(text)
    if v is not None:
        return "valid" if 1 <= v < 2 ** 31 else "invalid"
    f = ps.parse_float(text)
    # '1e3' is a number but not an integer: refused, or taken as exactly its value (checked where visible)
    return "exponent" if f is not None and math.isfinite(f) and f == int(f) and f >= 1 else "invalid"


def nonnegative_int(text):
    return "valid" if ps.parse_int(text) == 0 else positive_int(text)


def float_at_least(low, inclusive=True, unclear_from=math.inf):
    @hex_is_unclear
    def domain(text):
        v = ps.parse_float(text)
        if v is None or not math.isfinite(v) or v < low or (v == low and not inclusive):
            return "invalid"
        return "unclear" if v >= unclear_from else "valid"
    return domain


def zero_is_unclear(domain):
    """Zero where the help does not say whether it is meant (a zero tolerance): not asserted."""
    def wrapped(text):
        v = ps.parse_float(text)
        return "unclear" if v == 0 and text.strip() else domain(text)
    return wrapped


def lambda_domain(text):
    return "valid" if text in ("auto", "gcv", "discrepancy") else float_at_least(0.0)(text)


def device_domain(text):
    if text in ("cpu", "auto", "cuda"):
        return "valid"
    index = text[len("cuda:"):] if text.startswith("cuda:") else None
    v = ps.parse_int(index) if index is not None else None
    return "valid" if v is not None and 0 <= v < 2 ** 31 else "invalid"


class Fixtures:
    """Input files the option properties share, made once."""

    def __init__(self, d):
        rng = np.random.default_rng(1)
        self.dir = d
        g = rng.standard_normal((5, 5))
        np.save(f"{d}/spd.npy", g @ g.T + 5 * np.eye(5))
        np.save(f"{d}/b5.npy", rng.standard_normal(5))
        np.save(f"{d}/r.npy", rng.standard_normal((6, 4)))
        np.save(f"{d}/b6.npy", rng.standard_normal(6))
        np.save(f"{d}/J.npy", rng.standard_normal((12, 4)))
        np.save(f"{d}/d12.npy", rng.standard_normal(12))
        np.save(f"{d}/wA.npy", rng.standard_normal((2, 6)))
        np.save(f"{d}/w6.npy", rng.uniform(0.5, 1.0, 6))
        np.save(f"{d}/X.npy", rng.standard_normal((8, 12)))
        for args in (["gen", "jacobian", "--rows", "12", "--cols", "4", "-o", "Jb.npy"],
                     ["degrade", "phantom:32", "-o", "g.npy", "--noise", "gaussian:var=0.0001", "-q"]):
            subprocess.run([LINV, *args], cwd=d, check=True, capture_output=True, timeout=HANG_S)


class Option(NamedTuple):
    """An option under test: its command line (from the value, the fixtures' directory and an output
    directory), the word a usage message names it by, and which values are meaningful (its domain)."""
    name: str
    flag: str
    domain: Callable
    command: Callable

    def __repr__(self):
        return f"Option({self.name!r})"


OPTIONS = tuple(Option(*spec) for spec in (
    ("bench inverse --sizes", "sizes", listed(positive_int),
     lambda v, f, o: ["bench", "inverse", "--device", "cpu", "--sizes", v, "--repeats", "1", "--dtypes", "f64",
                      "--kinds", "general", "--methods", "lu", "--json", f"{o}/bench.json"]),
    ("bench batched --cases 8:X", "cases", listed(positive_int),
     lambda v, f, o: ["bench", "batched", "--device", "cpu", "--cases", f"8:{v}", "--repeats", "1",
                      "--dtypes", "f64", "--json", f"{o}/bench.json"]),
    ("bench batched --cases X:8", "cases", listed(lambda t: "invalid" if positive_int(t) == "valid" and int(t) > 64
                                                  else positive_int(t)),
     lambda v, f, o: ["bench", "batched", "--device", "cpu", "--cases", f"{v}:8", "--repeats", "1",
                      "--dtypes", "f64", "--json", f"{o}/bench.json"]),
    ("pinv --rcond", "rcond", float_at_least(0.0),
     lambda v, f, o: ["pinv", f"{f}/r.npy", "-o", f"{o}/p.npy", "--rcond", v]),
    ("lstsq --rcond", "rcond", float_at_least(0.0),
     lambda v, f, o: ["lstsq", f"{f}/r.npy", f"{f}/b6.npy", "-o", f"{o}/x.npy", "--rcond", v]),
    ("solve --method gauss-seidel --tol", "tol", zero_is_unclear(float_at_least(0.0, False, unclear_from=1.0)),
     lambda v, f, o: ["solve", f"{f}/spd.npy", f"{f}/b5.npy", "-o", f"{o}/x.npy", "--method", "gauss-seidel",
                      "--tol", v]),
    ("solve --method gauss-seidel --max-iter", "max-iter", positive_int,
     lambda v, f, o: ["solve", f"{f}/spd.npy", f"{f}/b5.npy", "-o", f"{o}/x.npy", "--method", "gauss-seidel",
                      "--max-iter", v]),
    ("pinv --structure sparse --damping", "damping", float_at_least(0.0),
     lambda v, f, o: ["pinv", f"{f}/J.npy", "--structure", "sparse", "--apply", f"{f}/d12.npy", "-o",
                      f"{o}/s.npy", "--damping", v]),
    ("pinv --structure bordered --damping", "damping", float_at_least(0.0),
     lambda v, f, o: ["pinv", f"{f}/Jb.npy", "--structure", "bordered", "--apply", f"{f}/d12.npy", "-o",
                      f"{o}/s.npy", "--damping", v]),
    ("pinv --structure sparse --tol", "tol", zero_is_unclear(float_at_least(0.0, False, unclear_from=1.0)),
     lambda v, f, o: ["pinv", f"{f}/J.npy", "--structure", "sparse", "--apply", f"{f}/d12.npy", "-o",
                      f"{o}/s.npy", "--tol", v]),
    ("pinv --structure sparse --max-iter", "max-iter", positive_int,
     lambda v, f, o: ["pinv", f"{f}/J.npy", "--structure", "sparse", "--apply", f"{f}/d12.npy", "-o",
                      f"{o}/s.npy", "--max-iter", v]),
    ("deblur --lambda", "lambda", lambda_domain,
     lambda v, f, o: ["deblur", f"{f}/g.npy", "-o", f"{o}/r.npy", "--lambda", v]),
    ("deblur --path matrix-free --tol", "tol", zero_is_unclear(float_at_least(0.0, False, unclear_from=1.0)),
     lambda v, f, o: ["deblur", f"{f}/g.npy", "-o", f"{o}/r.npy", "--path", "matrix-free", "--tol", v]),
    ("deblur --path matrix-free --max-iter", "max-iter", positive_int,
     lambda v, f, o: ["deblur", f"{f}/g.npy", "-o", f"{o}/r.npy", "--path", "matrix-free", "--max-iter", v]),
    ("gen --kind illcond --cond", "cond", float_at_least(1.0),
     lambda v, f, o: ["gen", "--kind", "illcond", "--cond", v, "-n", "5", "-o", f"{o}/c.npy"]),
    ("gen -n", "-n", nonnegative_int,
     lambda v, f, o: ["gen", "--kind", "random", "-n", v, "-o", f"{o}/c.npy"]),
    ("wls --precision mixed --tol", "tol", zero_is_unclear(float_at_least(0.0, False, unclear_from=1.0)),
     lambda v, f, o: ["wls", f"{f}/wA.npy", f"{f}/w6.npy", f"{f}/b6.npy", "-o", f"{o}/x.npy", "--precision",
                      "mixed", "--tol", v]),
    ("ksvd --sparsity", "sparsity", positive_int,
     lambda v, f, o: ["ksvd", f"{f}/X.npy", "-k", "3", "--sparsity", v, "--iters", "1", "--dictionary",
                      f"{o}/D.npy", "--codes", f"{o}/G.npy"]),
    ("--threads", "threads", positive_int,
     lambda v, f, o: ["--threads", v, "inv", f"{f}/spd.npy", "-o", f"{o}/x.npy"]),
    ("inv --device cuda:X", "device", device_domain,
     lambda v, f, o: ["inv", f"{f}/spd.npy", "-o", f"{o}/x.npy", "--device", f"cuda:{v}"]),
))


@pytest.fixture(scope="module")
def fixtures():
    if not os.access(LINV, os.X_OK):
        pytest.skip(f"no linv command at {LINV}")
    with tempfile.TemporaryDirectory() as d:
        yield Fixtures(d)


def names_option_or_value(message, flag, text):
    """The message names the option, or quotes the value (or, for a list, the item it refuses)."""
    def quoted(t):
        return bool(t.strip()) and re.search(rf"(^|[\s'\"=:]){re.escape(t)}($|[\s'\",;:)])", message)
    items = text.split(",") if "," in text else []
    return flag in message or quoted(text) or any(quoted(item) for item in items)


def check_visible_value(name, value, out):
    """Where linv took '1e3' for an integer option, the benchmark's rows must show that value, not its
    leading digit."""
    if not name.startswith("bench") or not os.path.exists(f"{out}/bench.json"):
        return
    rows = json.load(open(f"{out}/bench.json"))["rows"]
    field = "batch" if name == "bench batched --cases 8:X" else "n"
    assert rows and all(r[field] == int(float(value)) for r in rows), \
        f"{name} {value!r} ran with {field} = {[r[field] for r in rows]}"


@needs_cli
@given(option=st.sampled_from(OPTIONS), value=ps.OPTION_VALUES)
@prop(ci=250)
def test_cli_refuses_meaningless_option_values(fixtures, option, value):
    name, flag, domain, command = option
    text = f"cuda:{value}" if flag == "device" else value
    verdict = domain(text)
    note(f"{name} {text!r}: {verdict}")
    with tempfile.TemporaryDirectory() as out:
        p = linv_cli(*command(value, fixtures.dir, out), cwd=out)
        assert p.returncode != 1, f"internal error for {name} {text!r}: {p.stderr}"
        if verdict == "invalid":
            assert p.returncode == 2, f"exit {p.returncode} for {name} {text!r} (expected 2, usage): {p.stderr}"
            assert names_option_or_value(p.stderr, flag, text), \
                f"the usage message names neither the option nor the value: {p.stderr!r}"
        if verdict == "exponent" and p.returncode == 0:
            check_visible_value(name, value, out)
        if p.returncode == 0 and name.startswith("solve"):
            a, b = np.load(f"{fixtures.dir}/spd.npy"), np.load(f"{fixtures.dir}/b5.npy")
            x = np.load(f"{out}/x.npy")
            if flag == "tol":
                # Gauss-Seidel is held to the backward error the caller asked for (README.md), which must
                # lie in [0, 1): a backward error of 1 leaves no digit; below n eps it stops where rounding does
                berr = np.abs(b - a @ x).max() / (np.abs(a).sum(axis=1).max() * np.abs(x).max() + np.abs(b).max())
                floor = a.shape[0] * np.finfo(float).eps
                assert 0 <= float(value) < 1 and berr <= max(float(value), floor) * (1 + 1e-6), \
                    f"gauss-seidel at --tol {text!r} returned backward error {berr:.3g}"
            else:
                r = scaled_residual(a, x, b)
                assert r <= THRESHOLD, f"solve succeeded with scaled residual {r:.3g} > {THRESHOLD} ({name} {text!r})"


PYTHON_OPTION_VALUES = st.sampled_from((math.nan, math.inf, -math.inf, -1.0, -1e-300, 0.0, 1e-8, 0.5))


@given(value=PYTHON_OPTION_VALUES, function=st.sampled_from(("pinv", "lstsq", "wls")))
@prop(ci=40)
def test_python_refuses_meaningless_option_values(value, function):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal(6)
    call = {"pinv": lambda: linv.pinv(a, rcond=value),
            "lstsq": lambda: linv.lstsq(a, b, rcond=value),
            "wls": lambda: linv.wls(a.T, np.ones(6), b, precision="mixed", tolerance=value)}[function]
    # rcond >= 0 and a tolerance >= 0 (0: the default level) are meaningful, and so is a negative rcond,
    # which the library documents as "the default" (LstsqOptions); NaN, Inf and a negative tolerance are not
    if math.isfinite(value) and (value >= 0 or function != "wls"):
        assert np.all(np.isfinite(call()))
    else:
        with pytest.raises(ValueError):
            call()


# ---------------------------------------------------------------------------------------------------------
# Outputs: colliding names are refused before any work, leaving every file as it was; links stay links.

def snapshot(d):
    """Every entry under d: links by target, files by bytes and mode, directories by mode."""
    state = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            path = os.path.join(root, name)
            st_ = os.lstat(path)
            rel = os.path.relpath(path, d)
            if stat.S_ISLNK(st_.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st_.st_mode):
                state[rel] = ("dir", stat.S_IMODE(st_.st_mode))
            else:
                state[rel] = ("file", Path(path).read_bytes(), stat.S_IMODE(st_.st_mode))
    return state


def spell(d, name, style):
    """Another spelling of d/name relative to d: itself, through 'sub/..', through a symlink, absolute."""
    if style == "direct":
        return name
    if style == "dotdot":
        return f"sub/../{name}"
    if style == "absolute":
        return os.path.join(d, name)
    link = f"link-to-{name}"
    os.symlink(name, os.path.join(d, link))
    return link


# command: (its arguments, with O1 and O2 for its two outputs; the input files it reads)
CLASH_COMMANDS = {
    "inv": (["inv", "a.npy", "-o", "O1", "--report", "O2"], ("a.npy",)),
    "solve": (["solve", "a.npy", "b.npy", "-o", "O1", "--report", "O2"], ("a.npy", "b.npy")),
    "lstsq": (["lstsq", "a.npy", "b.npy", "-o", "O1", "--report", "O2"], ("a.npy", "b.npy")),
    "ksvd": (["ksvd", "X.npy", "-k", "3", "--sparsity", "1", "--iters", "1", "--dictionary", "O1", "--codes", "O2"],
             ("X.npy",)),
    "degrade": (["degrade", "phantom:16", "-o", "O1", "--truth", "O2"], ()),
}


def clash_inputs(d):
    """a.npy (well conditioned), b.npy, X.npy (signals) and an empty sub/; returns a."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    np.save(f"{d}/a.npy", a)
    np.save(f"{d}/b.npy", rng.standard_normal(4))
    np.save(f"{d}/X.npy", rng.standard_normal((8, 12)))
    os.mkdir(f"{d}/sub")
    return a


@needs_cli
@given(command=st.sampled_from(sorted(CLASH_COMMANDS)), style=st.sampled_from(ps.CLASH_STYLES),
       clash=st.sampled_from(("outputs", "input-by-first", "input-by-second")), exists=st.booleans())
@prop(ci=120)
def test_cli_refuses_colliding_outputs_before_any_work(command, style, clash, exists):
    """Two outputs naming one file, or an output naming an input, spelled alike or not (exists: whether the
    output file is there already; an input always is): exit 2 before any work, every file as it was."""
    args, inputs = CLASH_COMMANDS[command]
    assume(clash == "outputs" or inputs)
    with tempfile.TemporaryDirectory() as d:
        clash_inputs(d)
        if clash == "outputs":
            if exists:
                Path(f"{d}/out.npy").write_bytes(b"an earlier result that must survive")
            o1, o2 = "out.npy", spell(d, "out.npy", style)
        else:
            spelled = spell(d, inputs[-1], style)
            o1, o2 = (spelled, "second.npy") if clash == "input-by-first" else ("first.npy", spelled)
        before = snapshot(d)
        p = linv_cli(*[o1 if a == "O1" else o2 if a == "O2" else a for a in args], cwd=d)
        after = snapshot(d)
        assert p.returncode == 2, f"exit {p.returncode} for outputs {o1!r} and {o2!r} ({clash}): {p.stderr}"
        assert p.stderr.strip(), "a usage error without a message"
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        assert not changed, f"a refused command changed {changed}"


@needs_cli
@given(output=st.sampled_from(("-o", "--report")), place=st.sampled_from(("file", "link", "dangling link")),
       mode=st.sampled_from((0o600, 0o640, 0o644)), exists=st.booleans())
@prop(ci=36)
def test_cli_writes_through_links_and_keeps_modes(output, place, mode, exists):
    ext = ".npy" if output == "-o" else ".json"
    with tempfile.TemporaryDirectory() as d:
        a = clash_inputs(d)
        target = ("sub/target" if place != "file" else "out") + ext
        exists = exists and place != "dangling link"
        if exists:
            Path(f"{d}/{target}").write_bytes(b"an earlier result")
            os.chmod(f"{d}/{target}", mode)
        name = target if place == "file" else "link" + ext
        if place != "file":
            os.symlink(target, f"{d}/{name}")
        other = ("--report", "r.json") if output == "-o" else ("-o", "x.npy")
        p = linv_cli("inv", "a.npy", output, name, *other, cwd=d)
        assert p.returncode == 0, f"exit {p.returncode}: {p.stderr}"
        if place != "file":
            assert os.path.islink(f"{d}/{name}") and os.readlink(f"{d}/{name}") == target, \
                "writing through a symlink replaced the link instead of writing its target"
        assert os.path.isfile(f"{d}/{target}"), "the link's target was not written"
        if output == "-o":
            assert scaled_residual(a, np.load(f"{d}/{target}"), np.eye(4), inverse=True) <= THRESHOLD
        else:
            assert json.loads(Path(f"{d}/{target}").read_text())["command"] == "inv"
        if exists:
            got = stat.S_IMODE(os.stat(f"{d}/{target}").st_mode)
            assert got == mode, f"an existing output of mode {mode:o} is now {got:o}"


# ---------------------------------------------------------------------------------------------------------
# The profiles' example counts, now that every property is registered.

# The long profile scales every property's ci budget alike (the budgets already weigh each property's cost:
# an equal share would spend hours on the few that run a GPU-sized command per example).
_LONG_SCALE = int(os.environ.get("LINV_PROPERTY_EXAMPLES", LONG_TOTAL)) / sum(_CI_BUDGET.values())
for _name, _ci in _CI_BUDGET.items():
    globals()[_name] = settings(max_examples=_ci if PROFILE == "ci" else math.ceil(_ci * _LONG_SCALE))(globals()[_name])
