"""Shared fixtures of the Python tests.

Random tests draw from `rng`, seeded from the session seed (ABFT_PY_SEED, else drawn) and
the test's name; the seed is printed in the header and in every failing test's output, and
ABFT_PY_SEED=<seed> replays a run."""

import os
import random
import zlib

import numpy as np
import pytest

SEED = int(os.environ.get("ABFT_PY_SEED") or random.SystemRandom().randrange(1, 2**31))


def pytest_report_header(config):
    return "abft python tests: seed %d (ABFT_PY_SEED=%d replays this run)" % (SEED, SEED)


@pytest.fixture
def seed(request):
    s = (SEED * 1000003 + zlib.crc32(request.node.nodeid.encode())) % 2**32
    print("seed: session %d, test %d (ABFT_PY_SEED=%d replays)" % (SEED, s, SEED))
    return s


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)


@pytest.fixture
def h():
    import abft
    with abft.Handle("cpu") as handle:
        yield handle
