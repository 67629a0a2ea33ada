"""Protected GEMM on NumPy arrays (CPU backend): results, layouts, faults, errors."""

import itertools

import numpy as np
import pytest

import abft

TOL = {np.float64: 1e-12, np.float32: 2e-5}


def _rand(rng, shape, dtype, order):
    return np.asarray(rng.standard_normal(shape), dtype=dtype, order=order)


def _close(C, ref, dtype):
    scale = max(1.0, float(np.abs(ref).max()))
    return float(np.abs(C - ref).max()) <= TOL[dtype] * scale * 10


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("orders", list(itertools.product("CF", repeat=3)))
@pytest.mark.parametrize("trans", list(itertools.product([False, True], repeat=2)))
def test_clean_gemm_matches_numpy(h, rng, dtype, orders, trans):
    m, n, k = 37, 23, 41
    ta, tb = trans
    A = _rand(rng, (k, m) if ta else (m, k), dtype, orders[0])
    B = _rand(rng, (n, k) if tb else (k, n), dtype, orders[1])
    C0 = _rand(rng, (m, n), dtype, orders[2])
    alpha, beta = 1.5, -0.5
    ref = alpha * ((A.T if ta else A) @ (B.T if tb else B)) + beta * C0
    C = C0.copy(order=orders[2])
    out, rep = h.gemm(A, B, C, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
    assert out is C
    assert isinstance(rep, abft.Report)
    assert rep.detected == 0 and rep.corrected == 0 and rep.uncorrectable == 0
    assert rep.ok and rep.faults == ()
    assert 0 <= rep.max_ratio < 1
    assert rep.checked == (n if orders[2] == "C" else m)  # the library's rows
    assert _close(C, ref, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_new_output_layout_and_values(h, rng, dtype):
    A = _rand(rng, (30, 20), dtype, "C")
    B = _rand(rng, (20, 10), dtype, "C")
    C, rep = h.gemm(A, B)
    assert C.flags.c_contiguous and C.dtype == dtype and rep.detected == 0
    assert _close(C, A @ B, dtype)
    C2, _ = h.gemm(np.asfortranarray(A), B)
    assert C2.flags.f_contiguous
    assert _close(C2, A @ B, dtype)
    assert unit_roundoff_ok(rep, dtype)


def unit_roundoff_ok(rep, dtype):
    return rep.unit_roundoff == (2.0 ** -53 if dtype == np.float64 else 2.0 ** -24)


def test_c_and_f_orders_agree(h, rng):
    A = rng.standard_normal((64, 48))
    B = rng.standard_normal((48, 32))
    Cc, rc = h.gemm(A, B)
    Cf, rf = h.gemm(np.asfortranarray(A), np.asfortranarray(B))
    assert Cc.flags.c_contiguous and Cf.flags.f_contiguous
    np.testing.assert_allclose(Cc, Cf, rtol=1e-13, atol=1e-13)
    assert rc.detected == rf.detected == 0


def test_full_checksums_per_call(h, rng):
    A = np.asfortranarray(rng.standard_normal((40, 30)))
    B = np.asfortranarray(rng.standard_normal((30, 20)))
    _, rep = h.gemm(A, B, checksums="full")
    assert rep.checked == 40 + 20
    assert h.checksum_kind == abft.ChecksumKind.ROW  # restored after the call
    _, rep = h.gemm(A, B)
    assert rep.checked == 40


def test_slices_with_leading_dimension(h, rng):
    big = np.asfortranarray(rng.standard_normal((50, 40)))
    A = big[5:35, 3:23]          # Fortran slice: lda = 50
    B = np.ascontiguousarray(rng.standard_normal((60, 30)))[10:30, 2:17]  # C slice
    C, rep = h.gemm(A, B)
    np.testing.assert_allclose(C, A @ B, rtol=1e-12, atol=1e-12)
    assert rep.detected == 0


@pytest.mark.parametrize("order", "CF")
def test_injected_fault_is_corrected(h, rng, order):
    m, n, k = 64, 48, 40
    A = np.asarray(rng.standard_normal((m, k)), order=order)
    B = np.asarray(rng.standard_normal((k, n)), order=order)
    clean, _ = h.gemm(A, B)
    # the injector flips an exponent bit of one element of C after the GEMM; the element is
    # given in the library's orientation (column-major: for C-ordered arrays, C^T)
    i, j = int(rng.integers(m)), int(rng.integers(n))
    li, lj = (j, i) if order == "C" else (i, j)
    with h.injector(sites="after_gemm", bit_class="exact", bit=61, row=li, col=lj) as inj:
        inj.arm(int(rng.integers(1 << 62)))
        C, rep = h.gemm(A, B)
        flips = inj.flips
    assert len(flips) == 1 and flips[0].site == abft.Site.AFTER_GEMM
    assert (flips[0].row, flips[0].col) == (li, lj)
    assert flips[0].old_value != flips[0].new_value
    assert rep.detected >= 1 and rep.corrected == 1 and rep.uncorrectable == 0
    f = rep.faults[0]
    assert (f.row, f.col) == (i, j)  # reported in the Python array's orientation
    assert f.action == abft.Action.CORRECTED and str(f.action) == "corrected"
    assert f.factor == abft.Factor.NONE
    assert C[i, j] == pytest.approx(clean[i, j], rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(C, clean, rtol=1e-12, atol=1e-12)


def test_split_form_corrupted_between_encode_and_verify(h, rng):
    m, n, k = 50, 40, 30
    A = np.asfortranarray(rng.standard_normal((m, k)))
    B = np.asfortranarray(rng.standard_normal((k, n)))
    C = np.zeros((m, n), order="F")
    with h.gemm_plan(A, B, C) as plan:
        plan.encode(A, B)
        C[...] = A @ B                       # the caller's own GEMM
        i, j = int(rng.integers(m)), int(rng.integers(n))
        good = C[i, j]
        C[i, j] = good + 1000.0               # a fault between the GEMM and the verify
        rep = plan.verify(A, B, C)
    assert rep.detected == 1 and rep.corrected == 1
    assert rep.faults[0].row == i and rep.faults[0].col == j
    assert rep.faults[0].delta == pytest.approx(1000.0, rel=1e-9)
    assert C[i, j] == pytest.approx(good, rel=1e-12, abs=1e-12)


def test_split_form_c_ordered(h, rng):
    A = rng.standard_normal((30, 20))
    B = rng.standard_normal((20, 25))
    C = np.zeros((30, 25))
    plan = h.gemm_plan(A, B, C)
    plan.encode(A, B)
    np.matmul(A, B, out=C)
    good = C[7, 11]
    C[7, 11] = -good * 3 + 1
    rep = plan.verify(A, B, C)
    assert rep.corrected == 1 and (rep.faults[0].row, rep.faults[0].col) == (7, 11)
    assert C[7, 11] == pytest.approx(good, rel=1e-12, abs=1e-12)
    with pytest.raises(abft.InvalidValueError, match="'C'"):
        plan.verify(A, B, np.asfortranarray(C))  # not the layout the plan was made for
    plan.close()


def test_hook_sees_c_and_its_corruption_is_corrected(h, rng):
    A = np.asfortranarray(rng.standard_normal((20, 15)))
    B = np.asfortranarray(rng.standard_normal((15, 10)))
    clean, _ = h.gemm(A, B)
    seen = []

    def hook(site, which, arr):
        seen.append((site, arr.shape))
        if site == abft.Site.AFTER_GEMM:
            arr[3, 4] += 7.0

    h.set_hook(hook)
    C, rep = h.gemm(A, B)
    h.set_hook(None)
    assert (abft.Site.AFTER_GEMM, (20, 10)) in seen
    assert rep.corrected == 1 and rep.faults[0].row == 3 and rep.faults[0].col == 4
    assert rep.faults[0].delta == pytest.approx(7.0, rel=1e-9)
    np.testing.assert_allclose(C, clean, rtol=1e-12, atol=1e-12)


def test_hook_exception_is_raised(h):
    def hook(site, which, arr):
        raise KeyError("from the hook")

    h.set_hook(hook)
    with pytest.raises(KeyError, match="from the hook"):
        h.gemm(np.ones((4, 4)), np.ones((4, 4)))
    h.set_hook(None)
    C, rep = h.gemm(np.ones((4, 4)), np.ones((4, 4)))
    assert rep.detected == 0 and C[0, 0] == 4.0


def test_direct_inject(h, rng):
    A = rng.standard_normal((10, 8))
    before = A.copy()
    flips = h.inject(A, 99, bit_class="sign", row=2, col=5)
    assert len(flips) == 1 and flips[0].site is None
    assert (flips[0].row, flips[0].col, flips[0].bit) == (2, 5, 63)
    assert A[2, 5] == -before[2, 5]
    A[2, 5] = before[2, 5]
    np.testing.assert_array_equal(A, before)


# ---- errors ---------------------------------------------------------------------------

def test_wrong_dtype(h):
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(np.ones((3, 3), dtype=np.int64), np.ones((3, 3)))
    assert ei.value.argument == "A" and "int64" in str(ei.value)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(np.ones((3, 3)), np.ones((3, 3), dtype=np.float32))
    assert ei.value.argument == "B" and "float32" in str(ei.value)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(np.ones((3, 3)), np.ones((3, 3)), C=np.ones((3, 3), dtype=np.float32), beta=1)
    assert ei.value.argument == "C"


def test_wrong_shapes(h):
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(np.ones((3, 4)), np.ones((5, 2)))
    assert ei.value.argument == "B" and "inner dimensions" in str(ei.value)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(np.ones((3, 4)), np.ones((4, 2)), C=np.ones((3, 3)))
    assert ei.value.argument == "C"
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(np.ones(4), np.ones((4, 2)))
    assert ei.value.argument == "A" and "2-D" in str(ei.value)
    with pytest.raises(abft.InvalidValueError, match="'C'"):
        h.gemm(np.ones((3, 4)), np.ones((4, 2)), beta=1.0)  # beta needs a C


def test_unsupported_layouts(h):
    A = np.ones((6, 6))
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(A[::2, ::2], A[:3, :3])
    assert ei.value.argument == "A" and "layout" in str(ei.value)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(A[:3, :3], A[::-1, :][:3, :3])
    assert ei.value.argument == "B"
    ro = np.ones((6, 6))
    ro.flags.writeable = False
    with pytest.raises(abft.InvalidValueError, match="read-only") as ei:
        h.gemm(A, A, C=ro)
    assert ei.value.argument == "C"
    with pytest.raises(abft.InvalidValueError, match="expected an array"):
        h.gemm([[1.0]], A[:1, :1])


def test_library_rejection_names_argument_and_leaves_c(h, rng):
    A = np.asfortranarray(rng.standard_normal((8, 8)))
    B = np.asfortranarray(rng.standard_normal((8, 8)))
    # C overlapping A: the library refuses it (position 13, C), nothing written
    before = A.copy()
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(A, B, C=A, beta=1.0)
    e = ei.value
    assert e.function == "abft_dgemm" and e.position == 13
    assert e.c_argument == "C" and e.argument == "C"
    np.testing.assert_array_equal(A, before)
    # the same through the transposed views: the library's A is the Python B
    Ac, Bc = np.ascontiguousarray(A), np.ascontiguousarray(B)
    with pytest.raises(abft.InvalidValueError) as ei:
        h.gemm(Ac, Bc, C=Bc, beta=1.0)
    assert ei.value.argument == "C"


def test_non_finite_input_leaves_c_untouched(h, rng):
    A = rng.standard_normal((6, 6))
    A[2, 3] = np.nan
    B = rng.standard_normal((6, 6))
    C = rng.standard_normal((6, 6))
    before = C.copy()
    with pytest.raises(abft.NonFiniteInputError) as ei:
        h.gemm(A, B, C, beta=1.0)
    assert ei.value.report is not None and ei.value.report.nonfinite_input
    assert isinstance(ei.value, ValueError)
    np.testing.assert_array_equal(C, before)


def test_zero_sizes(h):
    C, rep = h.gemm(np.ones((0, 3)), np.ones((3, 4)))
    assert C.shape == (0, 4)
    C, rep = h.gemm(np.ones((2, 0)), np.ones((0, 3)))
    np.testing.assert_array_equal(C, np.zeros((2, 3)))


def test_worst_case_rows(h, rng):
    """report.worst_case_rows: 0 in the worst-case mode and for a clean product the tight
    mode bounds; every checked entry of an LU in the tight mode (docs/api.md)."""
    A = _rand(rng, (64, 96), np.float64, "F")
    B = _rand(rng, (96, 48), np.float64, "F")
    _, rep = h.gemm(A, B)
    assert rep.worst_case_rows == 0
    h.set_bound_mode("tight")
    try:
        _, rep = h.gemm(A, B)
        assert rep.detected == 0 and rep.worst_case_rows == 0
        M = _rand(rng, (40, 40), np.float64, "F")
        _, _, rep = h.getrf(M)
        assert rep.checked > 0 and rep.worst_case_rows == rep.checked
    finally:
        h.set_bound_mode("worst_case")
