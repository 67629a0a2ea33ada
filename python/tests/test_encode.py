"""The encoding functions against NumPy, both layouts."""

import numpy as np
import pytest

import abft


def _V(n):
    return np.c_[np.ones(n), np.arange(1, n + 1)]


@pytest.mark.parametrize("order", "CF")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_checksums(h, rng, order, dtype):
    A = np.asarray(rng.standard_normal((33, 21)), dtype=dtype, order=order)
    A64 = A.astype(np.float64)
    R = h.checksum_rows(A)
    assert R.shape == (33, 2) and R.dtype == np.float64
    np.testing.assert_allclose(R, A64 @ _V(21), rtol=1e-12, atol=1e-12)
    R, Rabs = h.checksum_rows(A, with_abs=True)
    np.testing.assert_allclose(Rabs, np.abs(A64) @ _V(21), rtol=1e-12, atol=1e-12)
    K, Kabs = h.checksum_cols(A, with_abs=True)
    assert K.shape == (21, 2)
    np.testing.assert_allclose(K, A64.T @ _V(33), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Kabs, np.abs(A64).T @ _V(33), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", "CF")
@pytest.mark.parametrize("trans", [False, True])
def test_tsmm(h, rng, order, trans):
    A = np.asarray(rng.standard_normal((40, 25)), order=order)
    opA = A.T if trans else A
    X = rng.standard_normal((opA.shape[1], 3))
    Y = h.tsmm(A, X, trans=trans)
    np.testing.assert_allclose(Y, opA @ X, rtol=1e-12, atol=1e-12)
    Y, Yabs = h.tsmm(A, X, trans=trans, with_abs=True)
    np.testing.assert_allclose(Yabs, np.abs(opA) @ np.abs(X), rtol=1e-12, atol=1e-12)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.tsmm(A, np.ones((opA.shape[1] + 1, 2)), trans=trans)
    assert ei.value.argument == "X"
    with pytest.raises(abft.InvalidValueError) as ei:  # at most 16 columns
        h.tsmm(A, np.ones((opA.shape[1], 17)), trans=trans)
    assert ei.value.argument == "X"


@pytest.mark.parametrize("order", "CF")
def test_dual(h, rng, order):
    M = np.asarray(rng.standard_normal((30, 20)), order=order)
    X = rng.standard_normal((20, 2))
    Z = rng.standard_normal((30, 3))
    P, Q = h.dual(M, X, Z)
    np.testing.assert_allclose(P, M @ X, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Q, M.T @ Z, rtol=1e-12, atol=1e-12)
