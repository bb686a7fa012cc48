"""SciPy's own tests of the functions linv.scipy provides (the installed package's test files: test_basic.py's
TestSolve, TestInv, TestDet and TestSolveTriangular, test_decomp_lu.py's TestLUFactor and TestLUSolve,
test_decomp_cholesky.py's TestChoFactor) run against linv.scipy: a pytest plugin (this module, -p
scipy_cases) puts linv's functions in place of the names each test module imported from scipy.linalg. `python3
tests/python/scipy_cases.py` prints each class's count and the failures' reasons; test_drop_in.py holds linv
to it."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import Counter

# SciPy's test module and the classes of it that test linv.scipy's functions
MODULES = {"test_basic": ("TestSolve", "TestInv", "TestDet", "TestSolveTriangular"),
           "test_decomp_lu": ("TestLUFactor", "TestLUSolve"), "test_decomp_cholesky": ("TestChoFactor",)}
CLASSES = tuple(name for classes in MODULES.values() for name in classes)


def pytest_configure(config):
    import importlib

    import linv.scipy
    for module in MODULES:
        tests = importlib.import_module(f"scipy.linalg.tests.{module}")
        for name in linv.scipy.__all__:
            if hasattr(tests, name):
                setattr(tests, name, getattr(linv.scipy, name))


def run():
    """{class: [(test id, None or the failure's first line)]}, from a pytest run in a child process."""
    with tempfile.TemporaryDirectory() as directory:
        report = os.path.join(directory, "report.xml")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.abspath(__file__)),
                                                           os.environ.get("PYTHONPATH", "")]))
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "scipy_cases", "-p", "no:cacheprovider",
                        "-p", "no:randomly", "--pyargs", *(f"scipy.linalg.tests.{m}" for m in MODULES),
                        "-k", " or ".join(CLASSES),
                        f"--junitxml={report}"], env=env, cwd=directory, stdout=subprocess.DEVNULL, check=False)
        outcomes = {name: [] for name in CLASSES}
        for case in ElementTree.parse(report).iter("testcase"):
            owner = case.get("classname", "").rsplit(".", 1)[-1]
            if owner not in outcomes or case.find("skipped") is not None:
                continue
            failure = case.find("failure")
            failure = failure if failure is not None else case.find("error")
            reason = None if failure is None else (failure.get("message") or "").splitlines()[0][:110]
            outcomes[owner].append((case.get("name"), reason))
    return outcomes


if __name__ == "__main__":
    outcomes = run()
    for owner, results in outcomes.items():
        passed = sum(reason is None for _, reason in results)
        print(f"{owner}: {passed} of {len(results)} passed")
        for reason, count in Counter(r for _, r in results if r is not None).most_common(12):
            print(f"    {count} x {reason}")
