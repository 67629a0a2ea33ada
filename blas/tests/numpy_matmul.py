"""NumPy's A @ B, A @ A.T and np.linalg.solve under the drop-in library (docs/dropin.md):
run with LD_PRELOAD=libabft_blas.so. Checks the products against sums computed without BLAS
and the solutions by their residuals, and exits 1 when one is off; exits 77 (skipped) when
NumPy is missing. A @ B calls cblas_?gemm, A @ A.T cblas_?syrk, solve ?gesv_. With ABFT_BLAS_INJECT the
first protected call gets a flipped bit, which the library corrects."""
import sys

try:
    import numpy as np
except ImportError:
    print("SKIPPED: numpy is not installed for", sys.executable)
    sys.exit(77)

rng = np.random.default_rng(7)
ok = True
for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-4)):
    for (m, k, n) in ((64, 80, 48), (100, 100, 100)):
        A = rng.integers(-4, 5, size=(m, k)).astype(dtype)
        B = rng.integers(-4, 5, size=(k, n)).astype(dtype)
        C = A @ B
        # the same product by broadcasting and summing (no BLAS involved)
        R = (A.astype(np.float64)[:, :, None] * B.astype(np.float64)[None, :, :]).sum(axis=1)
        err = float(np.max(np.abs(C - R)))
        print(f"{np.dtype(dtype).name} {m}x{k} @ {k}x{n}: max error {err:g}")
        ok = ok and err <= tol
    # A @ A.T: NumPy's cblas_?syrk on the upper triangle, then its own copy to the lower
    A = rng.integers(-4, 5, size=(90, 70)).astype(dtype)
    G = A @ A.T
    R = (A.astype(np.float64)[:, None, :] * A.astype(np.float64)[None, :, :]).sum(axis=2)
    err = float(np.max(np.abs(G - R)))
    print(f"{np.dtype(dtype).name} A @ A.T, A 90x70: max error {err:g}")
    ok = ok and err <= tol
    # solve: dgesv_ (NumPy solves float32 systems in float64)
    M = rng.standard_normal((120, 120)).astype(dtype) + 8 * np.eye(120, dtype=dtype)
    b = rng.standard_normal((120, 2)).astype(dtype)
    x = np.linalg.solve(M, b)
    res = float(np.max(np.abs(M.astype(np.float64) @ x.astype(np.float64) - b)))
    print(f"{np.dtype(dtype).name} solve 120x120, 2 right-hand sides: residual {res:g}")
    ok = ok and res <= 1e3 * tol
print("numpy", np.__version__, "passed" if ok else "FAILED")
sys.exit(0 if ok else 1)
