"""The random inputs of a pytest run, as the C++ tests have them: one seed per run, LINV_TEST_SEED if set
(to replay a failure) or fresh from the OS, and from it one generator per test, named by its node id, so that
a test replays alone (pytest -k) as it ran among the others."""
import os
import secrets
import zlib

import numpy as np

SEED = int(os.environ.get("LINV_TEST_SEED") or secrets.randbits(63))


def rng(name: str) -> np.random.Generator:
    """The generator of the test (or helper) called `name` under this run's seed."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])
