"""Before each test, every test module's RNG (the test's own and those whose helpers it imports) is reseeded
from the run's seed, the test's id and the module's name (seeding.py); the seed is printed in the header and
beside each failure."""
import os
import sys

import pytest

import seeding


def pytest_report_header(config):
    return f"linv tests: random seed {seeding.SEED} (replay with LINV_TEST_SEED={seeding.SEED})"


@pytest.fixture(autouse=True)
def _seeded_rng(request):
    here = os.path.dirname(os.path.abspath(__file__))
    for name, module in list(sys.modules.items()):
        if hasattr(module, "RNG") and os.path.dirname(os.path.abspath(getattr(module, "__file__", None) or "/")) == here:
            module.RNG = seeding.rng(f"{request.node.nodeid} {name}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.failed:
        report.sections.append(("random seed", f"replay with LINV_TEST_SEED={seeding.SEED}"))
