"""A protected GEMM and LU from Python, with a bit flipped on purpose.

    python3 examples/python/protected_gemm.py [n]

Runs on the GPU with CuPy when the CUDA backend is built, a GPU answers and CuPy is
installed, else on the CPU with NumPy. A bit of C is flipped after the GEMM (the library's
injector, fired from its hook): the report shows it detected, located and corrected, and
the result equals the clean one. Then an LU and a solve, checked the same way.
"""

import sys

import numpy as np

import abft


def main(n=512):
    xp, backend = np, "cpu"
    if abft.cuda_available():
        try:
            import cupy
            xp, backend = cupy, "cuda"
        except ImportError:
            pass
    h = abft.Handle(backend)
    print("abft %s, backend %s (%s arrays), n = %d" % (abft.__version__, h.backend,
                                                         xp.__name__, n))
    rng = np.random.default_rng(2026)
    # Fortran order, so that the injector's positions (the library's column-major view of C)
    # and the report's (the Python array's) coincide; C-ordered arrays work the same way,
    # passed as transposed views, with the injector seeing C's transpose.
    A = xp.asarray(rng.standard_normal((n, n)), order="F")
    B = xp.asarray(rng.standard_normal((n, n)), order="F")

    clean, report = h.gemm(A, B)
    print("clean gemm:   ", report)

    # flip bit 61 (an exponent bit) of one element of C after the GEMM
    with h.injector(sites="after_gemm", bit_class="exact", bit=61, row=n // 3,
                    col=n // 5) as inj:
        inj.arm(7)
        C, report = h.gemm(A, B)
        for f in inj.flips:
            print("injected:     ", f)
    print("faulty gemm:  ", report)
    for f in report.faults:
        print("  fault at (%s, %s): %s, delta %.3g" % (f.row, f.col, f.action, f.delta))
    same = bool(xp.allclose(C, clean, rtol=1e-12, atol=1e-12))
    print("result equals the clean product:", same)

    M = xp.asarray(rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n))
    LU, ipiv, report = h.getrf(M)
    print("getrf:        ", report)
    x, report = h.getrs(LU, ipiv, xp.ones(n))
    print("getrs:        ", report)
    res = float(xp.abs(M @ x - 1).max())
    print("max |M·x - 1| = %.3g" % res)
    return 0 if same and report.ok and res < 1e-8 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 512))
