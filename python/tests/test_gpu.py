"""The CUDA backend on device arrays (CuPy, PyTorch, __cuda_array_interface__, DLPack).

Skipped without the CUDA backend and a GPU; each test also skips when the array library it
uses is not installed. On a GPU machine (docs/python.md, "Tests"):
    python3 -m pytest -v python/tests/test_gpu.py python/tests/test_torch.py
"""

import numpy as np
import pytest

import abft

pytestmark = pytest.mark.skipif(not abft.cuda_available(),
                                reason="no CUDA backend in this build, or no GPU")


@pytest.fixture
def hc():
    with abft.Handle("cuda") as handle:
        yield handle


def _cupy():
    return pytest.importorskip("cupy")


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


class _CAIOnly:
    """An array known only through __cuda_array_interface__."""

    def __init__(self, a):
        self._a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


class _DLPackOnly:
    """An array known only through DLPack."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("orders", ["CC", "FF", "CF", "FC"])
def test_cupy_gemm_matches(hc, rng, dtype, orders):
    cp = _cupy()
    A = cp.asarray(rng.standard_normal((70, 50)).astype(dtype), order=orders[0])
    B = cp.asarray(rng.standard_normal((50, 30)).astype(dtype), order=orders[1])
    C, rep = hc.gemm(A, B)
    assert isinstance(C, cp.ndarray) and C.dtype == dtype
    assert rep.detected == 0 and rep.uncorrectable == 0
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(cp.asnumpy(C), cp.asnumpy(A) @ cp.asnumpy(B), rtol=tol, atol=tol)


def test_cupy_output_written_in_place(hc, rng):
    cp = _cupy()
    A = cp.asarray(rng.standard_normal((40, 20)), order="F")
    B = cp.asarray(rng.standard_normal((20, 10)), order="F")
    C = cp.ones((40, 10), order="F")
    ptr = C.data.ptr
    out, rep = hc.gemm(A, B, C, alpha=2.0, beta=1.0)
    assert out is C and C.data.ptr == ptr
    np.testing.assert_allclose(cp.asnumpy(C), 2 * cp.asnumpy(A) @ cp.asnumpy(B) + 1,
                               rtol=1e-12, atol=1e-12)


def test_cupy_stream_followed(hc, rng):
    cp = _cupy()
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        A = cp.asarray(rng.standard_normal((64, 64)))
        C, rep = hc.gemm(A, A)
        assert hc.stream == s.ptr
    s.synchronize()
    np.testing.assert_allclose(cp.asnumpy(C), cp.asnumpy(A) @ cp.asnumpy(A), rtol=1e-12,
                               atol=1e-12)


def test_cai_and_dlpack_only_arrays(hc, rng):
    cp = _cupy()
    A = cp.asarray(rng.standard_normal((30, 20)), order="F")
    B = cp.asarray(rng.standard_normal((20, 10)), order="F")
    ref = cp.asnumpy(A) @ cp.asnumpy(B)
    for wrap in (_CAIOnly, _DLPackOnly):
        C = cp.zeros((30, 10), order="F")
        out, rep = hc.gemm(wrap(A), wrap(B), wrap(C))
        cp.cuda.get_current_stream().synchronize()
        np.testing.assert_allclose(cp.asnumpy(C), ref, rtol=1e-12, atol=1e-12)
        with pytest.raises(abft.InvalidValueError, match="'C'"):
            hc.gemm(wrap(A), wrap(B))  # no framework to allocate the result in


def test_gpu_fault_corrected(hc, rng):
    cp = _cupy()
    A = cp.asarray(rng.standard_normal((128, 96)), order="F")
    B = cp.asarray(rng.standard_normal((96, 64)), order="F")
    clean, _ = hc.gemm(A, B)
    with hc.injector(sites="after_gemm", bit_class="exact", bit=61, row=17, col=33) as inj:
        inj.arm(11)
        C, rep = hc.gemm(A, B)
        flips = inj.flips
    assert len(flips) == 1 and (flips[0].row, flips[0].col) == (17, 33)
    assert rep.corrected == 1 and rep.uncorrectable == 0
    assert (rep.faults[0].row, rep.faults[0].col) == (17, 33)
    assert float(C[17, 33]) == pytest.approx(float(clean[17, 33]), rel=1e-12, abs=1e-12)


def test_gpu_hook_device_view(hc, rng):
    cp = _cupy()
    A = cp.asarray(rng.standard_normal((50, 40)), order="F")
    B = cp.asarray(rng.standard_normal((40, 30)), order="F")
    clean, _ = hc.gemm(A, B)

    def hook(site, which, view):
        if site == abft.Site.AFTER_GEMM:
            assert isinstance(view, abft.DeviceView) and view.shape == (50, 30)
            arr = cp.asarray(view)
            arr[4, 5] += 3.0

    hc.set_hook(hook)
    C, rep = hc.gemm(A, B)
    hc.set_hook(None)
    assert rep.corrected == 1 and (rep.faults[0].row, rep.faults[0].col) == (4, 5)
    np.testing.assert_allclose(cp.asnumpy(C), cp.asnumpy(clean), rtol=1e-12, atol=1e-12)


def test_gpu_getrf_getrs(hc, rng):
    cp = _cupy()
    n = 200
    An = rng.standard_normal((n, n)) + 10 * np.eye(n)
    A = cp.asarray(An)
    LU, ipiv, rep = hc.getrf(A)
    assert isinstance(LU, cp.ndarray) and LU.flags.f_contiguous
    assert isinstance(ipiv, cp.ndarray) and ipiv.dtype == cp.int64
    assert rep.detected == 0
    x_true = rng.standard_normal(n)
    X, rep = hc.getrs(LU, ipiv, cp.asarray(An @ x_true))
    assert rep.uncorrectable == 0
    np.testing.assert_allclose(cp.asnumpy(X), x_true, rtol=1e-9, atol=1e-9)


def test_torch_cuda_gemm_and_stream(hc, rng):
    torch = _torch_cuda()
    A = torch.randn(64, 48, dtype=torch.float64, device="cuda")
    B = torch.randn(48, 32, dtype=torch.float64, device="cuda")
    C, rep = hc.gemm(A, B)
    assert isinstance(C, torch.Tensor) and C.is_cuda and C.is_contiguous()
    torch.testing.assert_close(C, A @ B, rtol=1e-12, atol=1e-12)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())  # A and B were made on the default stream
    with torch.cuda.stream(s):
        C2, rep = hc.gemm(A, B.t().contiguous().t())  # a column-major B
        assert hc.stream == s.cuda_stream
    s.synchronize()
    torch.testing.assert_close(C2, A @ B, rtol=1e-12, atol=1e-12)


def test_device_checks(hc, h):
    cp = _cupy()
    with pytest.raises(abft.InvalidValueError, match="host array") as ei:
        hc.gemm(np.ones((3, 3)), np.ones((3, 3)))
    assert ei.value.argument == "A"
    with pytest.raises(abft.InvalidValueError, match="device array") as ei:
        h.gemm(np.ones((3, 3)), cp.ones((3, 3)))
    assert ei.value.argument == "B"


def test_gpu_non_finite_leaves_c(hc):
    cp = _cupy()
    A = cp.ones((8, 8), order="F")
    A[1, 1] = cp.nan
    C = cp.full((8, 8), 5.0, order="F")
    with pytest.raises(abft.NonFiniteInputError):
        hc.gemm(A, A, C, beta=1.0)
    assert bool((C == 5.0).all())
