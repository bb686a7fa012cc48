"""NumPy's own linalg test cases (numpy/linalg/tests/test_linalg.py, the installed package's file) run case by
case against linv.linalg: numpy.linalg's functions that linv.linalg provides are replaced by linv's while the
cases run, and each case's outcome is kept, so that one failing case does not hide the others (NumPy's tests
stop at the first). `python3 tests/python/numpy_cases.py` prints the table (-v: the complex failures too); test_drop_in.py
holds linv to it."""
import contextlib
import sys
import traceback
from collections import Counter, defaultdict

import numpy
import linv.linalg

# numpy.linalg's test class of each function linv.linalg provides
CLASSES = {"solve": "TestSolve", "inv": "TestInv", "pinv": "TestPinv", "pinv (hermitian)": "TestPinvHermitian",
           "det and slogdet": "TestDet", "lstsq": "TestLstsq"}


@contextlib.contextmanager
def linv_in_numpy():
    """numpy.linalg's functions replaced by linv.linalg's, restored on leaving."""
    names = [name for name in linv.linalg.__all__ if callable(getattr(numpy.linalg, name, None))
             and name not in ("LinAlgError", "SlogdetResult")]
    saved = {name: getattr(numpy.linalg, name) for name in names}
    try:
        for name in names:
            setattr(numpy.linalg, name, getattr(linv.linalg, name))
        yield
    finally:
        for name, function in saved.items():
            setattr(numpy.linalg, name, function)


def complex_case(case):
    arrays = [case.a] + ([case.b] if case.b is not None else [])
    return any(numpy.iscomplexobj(x) for x in arrays)


def cases_of(suite, test):
    """The cases NumPy's test class runs: those its generic methods (of LinalgSquareTestCase and the like) pick
    by tags through check_cases, recorded instead of run."""
    filters = []
    test.check_cases = lambda require=set(), exclude=set(): filters.append((set(require), set(exclude)))
    for base in type(test).__mro__:
        if base.__name__.startswith(("Linalg", "Hermitian")):
            for name, method in vars(base).items():
                if name.startswith("test_"):
                    method(test)
    return [case for case in suite.CASES
            if any(case.tags & require == require and not case.tags & exclude for require, exclude in filters)]


def run():
    """{function: [(case name, complex?, None or the failure's last line)]}"""
    from numpy.linalg.tests import test_linalg as suite
    outcomes = defaultdict(list)
    with linv_in_numpy():
        for function, name in CLASSES.items():
            test = getattr(suite, name)()
            for case in cases_of(suite, test):
                try:
                    case.check(test.do)
                    outcomes[function].append((case.name, complex_case(case), None))
                except Exception as error:  # noqa: BLE001 (every failure is counted and named)
                    line = traceback.format_exception_only(type(error), error)[-1].strip().splitlines()[0][:110]
                    outcomes[function].append((case.name, complex_case(case), line))
    return outcomes


def table(outcomes):
    lines = ["| function | real cases passed | complex cases passed |", "|---|---|---|"]
    for function, results in outcomes.items():
        counts = {kind: Counter(error is None for _, c, error in results if c == kind) for kind in (False, True)}
        cell = lambda c: f"{c[True]} of {c[True] + c[False]}"  # noqa: E731
        lines.append(f"| {function} | {cell(counts[False])} | {cell(counts[True])} |")
    return "\n".join(lines)


if __name__ == "__main__":
    outcomes = run()
    print(table(outcomes))
    verbose = "-v" in sys.argv
    for function, results in outcomes.items():
        failures = Counter(error for _, c, error in results if error is not None and (verbose or not c))
        for error, count in failures.most_common():
            print(f"{function}: {count} x {error}")
