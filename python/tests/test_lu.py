"""Protected LU and solve on NumPy arrays (CPU backend)."""

import numpy as np
import pytest

import abft


def _system(rng, n, dtype=np.float64):
    A = rng.standard_normal((n, n)) + n * 0.1 * np.eye(n)
    return np.asarray(A, dtype=dtype)


def _perm(ipiv, n):
    """The permutation P of P·A = L·U from LAPACK-style 1-based pivots."""
    p = np.arange(n)
    for i, r in enumerate(ipiv):
        r = int(r) - 1
        p[i], p[r] = p[r], p[i]
    return p


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", "CF")
@pytest.mark.parametrize("online", [False, True])
def test_getrf_getrs_solve(h, rng, dtype, order, online):
    n = 60
    A = np.asarray(_system(rng, n, dtype), order=order)
    A0 = A.copy()
    x_true = rng.standard_normal((n, 3)).astype(dtype)
    b = A @ x_true
    LU, ipiv, rep = h.getrf(A, online=online)
    np.testing.assert_array_equal(A, A0)  # A is not overwritten
    assert LU.flags.f_contiguous and LU.dtype == dtype
    assert ipiv.dtype == np.int64 and ipiv.shape == (n,) and ipiv.min() >= 1
    assert rep.detected == 0 and rep.uncorrectable == 0 and not rep.spread
    L = np.tril(LU, -1) + np.eye(n, dtype=dtype)
    U = np.triu(LU)
    tol = 1e-10 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(L @ U, A[_perm(ipiv, n)], rtol=tol, atol=tol * n)
    X, rep = h.getrs(LU, ipiv, b)
    assert rep.uncorrectable == 0 and rep.detected == 0
    np.testing.assert_allclose(X, x_true, rtol=tol * 100, atol=tol * 100)
    # the transposed system
    Xt, _ = h.getrs(LU, ipiv, A.T @ x_true, trans=True)
    np.testing.assert_allclose(Xt, x_true, rtol=tol * 100, atol=tol * 100)
    # a vector right-hand side
    x1, _ = h.getrs(LU, ipiv, b[:, 0].copy())
    assert x1.shape == (n,)
    np.testing.assert_allclose(x1, x_true[:, 0], rtol=tol * 100, atol=tol * 100)


def test_getrf_in_place(h, rng):
    A = np.asfortranarray(_system(rng, 30))
    LU, ipiv, rep = h.getrf(A, overwrite_a=True)
    assert LU is A
    with pytest.raises(abft.InvalidValueError) as ei:
        h.getrf(np.ascontiguousarray(_system(rng, 30)), overwrite_a=True)
    assert ei.value.argument == "A"


def test_getrs_overwrite_b(h, rng):
    A = _system(rng, 20)
    LU, ipiv, _ = h.getrf(A)
    b = np.asfortranarray(rng.standard_normal((20, 2)))
    X, _ = h.getrs(LU, ipiv, b, overwrite_b=True)
    assert X is b
    np.testing.assert_allclose(A @ X, A @ np.linalg.solve(A, A @ X), rtol=1e-9, atol=1e-9)


def test_fault_in_u_is_corrected(h, rng):
    n = 50
    A = np.asfortranarray(_system(rng, n))
    clean, ipiv0, _ = h.getrf(A)
    i, j = 10, 30  # an element of U (i <= j)
    # Without the recovery copy the fault is detected and reported uncorrectable (no error)
    with h.injector(sites="after_lu", bit_class="exact", bit=58, row=i, col=j) as inj:
        inj.arm(7)
        _, _, rep = h.getrf(A)
    assert rep.detected > 0 and rep.uncorrectable > 0 and not rep.ok
    # The recovery copy lets the check confirm the located element before it corrects it
    # (docs/lu.md).
    h.lu_recovery = True
    with h.injector(sites="after_lu", bit_class="exact", bit=58, row=i, col=j) as inj:
        inj.arm(7)
        LU, ipiv, rep = h.getrf(A)
        flips = inj.flips
    assert len(flips) == 1 and flips[0].site == abft.Site.AFTER_LU
    assert rep.corrected == 1 and rep.uncorrectable == 0
    located = [f for f in rep.faults if f.action == abft.Action.CORRECTED]
    assert located and (located[0].row, located[0].col) == (i, j)
    assert located[0].factor == abft.Factor.U and str(located[0].factor) == "U"
    assert LU[i, j] == pytest.approx(clean[i, j], rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(ipiv, ipiv0)


def test_lu_split_form(h, rng):
    n = 40
    A = np.asfortranarray(_system(rng, n))
    h.lu_recovery = True
    with h.lu_plan(A) as plan:
        plan.encode(A)
        LU, ipiv, _ = h.getrf(A)          # stands for the caller's own getrf
        good = LU[25, 5]                   # an element of L (i > j)
        LU[25, 5] = good + 0.5
        rep = plan.verify(LU, ipiv)
        assert rep.corrected == 1
        f = [f for f in rep.faults if f.action == abft.Action.CORRECTED][0]
        assert (f.row, f.col, f.factor) == (25, 5, abft.Factor.L)
        assert LU[25, 5] == pytest.approx(good, rel=1e-12, abs=1e-12)
        # 32-bit pivots, as LP64 LAPACK writes them
        rep = plan.verify(LU, ipiv.astype(np.int32))
        assert rep.detected == 0


def test_singular_raises_with_factors(h):
    A = np.ones((4, 4))
    with pytest.raises(abft.SingularError) as ei:
        h.getrf(A)
    e = ei.value
    assert e.status == abft.Status.SINGULAR and e.status_name == "ABFT_STATUS_SINGULAR"
    assert e.info == 2 and e.lu.shape == (4, 4) and e.ipiv.shape == (4,)
    assert e.report is not None and e.report.uncorrectable == 0


def test_getrs_errors(h, rng):
    A = _system(rng, 10)
    LU, ipiv, _ = h.getrf(A)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.getrs(LU, ipiv, np.ones((9, 1)))
    assert ei.value.argument == "B"
    with pytest.raises(abft.InvalidValueError) as ei:
        h.getrs(LU, ipiv.astype(np.int32), np.ones(10))
    assert ei.value.argument == "ipiv"
    with pytest.raises(abft.InvalidValueError) as ei:
        h.getrs(np.ascontiguousarray(LU), ipiv, np.ones(10))
    assert ei.value.argument == "LU"
    with pytest.raises(abft.InvalidValueError) as ei:
        h.getrs(LU, ipiv, np.ones(10, dtype=np.float32))
    assert ei.value.argument == "B"
    bad = ipiv.copy()
    bad[3] = 11  # a pivot getrf never writes: the library refuses it, position 7
    with pytest.raises(abft.InvalidValueError) as ei:
        h.getrs(LU, bad, np.ones(10))
    assert (ei.value.position, ei.value.c_argument, ei.value.argument) == (7, "ipiv", "ipiv")
    b = np.ones(10)
    b[4] = np.inf
    with pytest.raises(abft.NonFiniteInputError) as ei:
        h.getrs(LU, ipiv, b, overwrite_b=True)
    assert b[4] == np.inf and b[0] == 1.0  # untouched
    assert ei.value.report.nonfinite_input


def test_getrf_non_finite(h):
    A = np.eye(5)
    A[1, 1] = np.nan
    with pytest.raises(abft.NonFiniteInputError):
        h.getrf(A)
