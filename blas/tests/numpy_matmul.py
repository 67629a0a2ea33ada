"""NumPy's A @ B under the drop-in library (docs/dropin.md): run with
LD_PRELOAD=libabft_blas.so. Checks the products against sums computed without BLAS and
exits 1 when they differ; exits 77 (skipped) when NumPy is missing. With ABFT_BLAS_INJECT the
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
print("numpy", np.__version__, "passed" if ok else "FAILED")
sys.exit(0 if ok else 1)
