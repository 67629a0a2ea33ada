"""What the Python layer adds to a protected GEMM over calling the C API directly.

    python3 python/bench_overhead.py [--n 2048] [--device cpu|cuda|all] [--json FILE]

For each case (NumPy on the CPU backend; CuPy and PyTorch on the CUDA backend when the
package has it, a GPU answers and the framework is installed) the script makes A, B, C
(n x n) and times, on the same handle and arrays:

- h.gemm(A, B, C): the package's call (array checks, the views, the call, the report made
  into a Python object);
- the direct call: the same abft_dgemm (or abft_sgemm) through ctypes with the arguments
  the package would pass (pointers, leading dimensions, transposes, a report buffer)
  computed once before the loop: what a caller of the C API pays, ctypes' own argument
  conversion included.

Two measurements:

1. the real GEMM: the two calls alternated, --iters pairs after a warm-up (which call goes
   first alternates too), medians of each and the median of the paired differences with its
   interquartile range. On a GPU the GEMM takes a few hundred microseconds and the
   difference is the layer's cost; on a CPU a 2048 GEMM takes about a second and its noise
   (milliseconds) hides a cost of microseconds;
2. the layer alone: the C function replaced, in both calls, by a C function of the library
   that does no work (abft_set_recompute, given the GEMM's argument types: it reads the
   handle and the first int and returns success; the handle's recompute flag is restored
   afterwards), timed in batches of --batch calls, the median of --layer-batches batches per
   call. The difference is the Python layer's cost per call, free of the GEMM's noise.

The second number is what docs/python.md reports; the first confirms it where the GEMM is
quiet enough (the GPU).
"""

import argparse
import ctypes
import json
import os
import platform
import statistics
import sys
import time

# python/ holds the package's sources (python/abft, without the built library): import the
# installed package, not them
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import numpy as np  # noqa: E402

import abft  # noqa: E402
from abft import _handle, _lib  # noqa: E402


def _quartiles(xs):
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return q[0], q[1], q[2]


class Case:
    def __init__(self, name, handle, A, B, C, sync=None):
        self.name, self.h, self.A, self.B, self.C = name, handle, A, B, C
        self.sync = sync or (lambda: None)
        h = handle
        a = h._arr(A, "A")
        b = h._arr(B, "B", stream=False)
        c = h._arr(C, "C", write=True, stream=False)
        self.prec = a.prec
        m, k = a.shape
        n = b.shape[1]
        ta, tb = a.t, b.t  # trans_a = trans_b = False
        rep = _lib.Report()
        self.report = rep
        if not c.t:
            self.args = (h._ptr, ta, tb, m, n, k, 1.0, a.ptr, a.ld, b.ptr, b.ld, 0.0, c.ptr,
                         c.ld, ctypes.byref(rep))
        else:  # C^T = op(B)^T·op(A)^T on the column-major views, as Handle.gemm does
            self.args = (h._ptr, not tb, not ta, n, m, k, 1.0, b.ptr, b.ld, a.ptr, a.ld, 0.0,
                         c.ptr, c.ld, ctypes.byref(rep))
        self.layout = "C-ordered" if c.t else "Fortran-ordered"

    def package(self):
        self.h.gemm(self.A, self.B, self.C)

    def direct(self, fn):
        st = fn(*self.args)
        if st != 0:
            raise RuntimeError("direct call returned %d" % st)

    def real(self, iters, warmup=2):
        fn = _handle._GEMM[self.prec]
        for _ in range(warmup):
            self.package()
            self.direct(fn)
        self.sync()
        tp, td = [], []
        clock = time.perf_counter
        for i in range(iters):
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                t0 = clock()
                if which == 0:
                    self.package()
                else:
                    self.direct(fn)
                t1 = clock()
                (tp if which == 0 else td).append(t1 - t0)
        diff = [p - d for p, d in zip(tp, td)]
        q1, med, q3 = _quartiles(diff)
        return {"iters": iters, "package_s": statistics.median(tp),
                "direct_s": statistics.median(td), "diff_median_s": med,
                "diff_q1_s": q1, "diff_q3_s": q3}

    def layer(self, batches, batch):
        stub = _lib.lib["abft_set_recompute"]  # a new function object, not the package's
        stub.restype = ctypes.c_int
        stub.argtypes = _handle._GEMM[self.prec].argtypes
        saved = _handle._GEMM[self.prec]
        _handle._GEMM[self.prec] = stub
        clock = time.perf_counter
        try:
            for _ in range(batch):  # warm-up
                self.package()
                self.direct(stub)
            tp, td = [], []
            for i in range(batches):
                for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                    t0 = clock()
                    if which == 0:
                        for _ in range(batch):
                            self.package()
                    else:
                        for _ in range(batch):
                            self.direct(stub)
                    t1 = clock()
                    (tp if which == 0 else td).append((t1 - t0) / batch)
        finally:
            _handle._GEMM[self.prec] = saved
            self.h.recompute = True
        return {"batches": batches, "batch": batch, "package_s": statistics.median(tp),
                "direct_s": statistics.median(td),
                "overhead_s": statistics.median(tp) - statistics.median(td)}


def cases(device, n, dtype, frameworks):
    rng = np.random.default_rng(1)
    host = [rng.standard_normal((n, n)).astype(dtype) for _ in range(2)]
    if device in ("cpu", "all") and "numpy" in frameworks:
        h = abft.Handle("cpu")
        for order in ("F", "C"):
            A, B = (np.asarray(x, order=order) for x in host)
            C = np.zeros((n, n), dtype=dtype, order=order)
            yield Case("numpy %s-ordered, CPU backend" % order, h, A, B, C)
    if device in ("cuda", "all"):
        if not abft.cuda_available():
            print("# CUDA: no CUDA backend in this build or no GPU: the GPU cases are skipped",
                  file=sys.stderr)
            return
        if "cupy" in frameworks:
            try:
                import cupy
            except ImportError:
                cupy = None
                print("# CuPy is not installed: its case is skipped", file=sys.stderr)
            if cupy is not None:
                h = abft.Handle("cuda")
                A, B = (cupy.asarray(x, order="F") for x in host)
                C = cupy.zeros((n, n), dtype=dtype, order="F")
                yield Case("cupy F-ordered, CUDA backend", h, A, B, C,
                           sync=cupy.cuda.get_current_stream().synchronize)
        if "torch" in frameworks:
            try:
                import torch
            except ImportError:
                torch = None
                print("# PyTorch is not installed: its case is skipped", file=sys.stderr)
            if torch is not None and torch.cuda.is_available():
                h = abft.Handle("cuda")
                A, B = (torch.as_tensor(x, device="cuda") for x in host)
                C = torch.zeros((n, n), dtype=A.dtype, device="cuda")
                yield Case("torch (row-major), CUDA backend", h, A, B, C,
                           sync=torch.cuda.synchronize)


def machine():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"python": platform.python_version(), "numpy": np.__version__,
            "abft": abft.__version__, "cuda_built": abft.cuda_built(), "cpu": cpu,
            "cores": os.cpu_count(),
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    if abft.cuda_built():
        try:
            import torch
            if torch.cuda.is_available():
                info["gpu"] = torch.cuda.get_device_name()
                info["torch"] = torch.__version__
        except ImportError:
            pass
        try:
            import cupy
            info["cupy"] = cupy.__version__
            info.setdefault("gpu", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
        except ImportError:
            pass
    return info


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--device", default="all", choices=["cpu", "cuda", "all"])
    p.add_argument("--frameworks", default="numpy,cupy,torch")
    p.add_argument("--iters", type=int, default=None,
                   help="real-GEMM pairs (default: 200 on the GPU, 10 on the CPU)")
    p.add_argument("--layer-batches", type=int, default=200)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--skip-real", action="store_true", help="only the layer-alone timing")
    p.add_argument("--json", metavar="FILE")
    a = p.parse_args(argv)
    frameworks = set(a.frameworks.split(","))
    info = machine()
    print("# %s" % json.dumps(info))
    print("# n = %d, %s; times per call" % (a.n, a.dtype))
    out = {"machine": info, "n": a.n, "dtype": a.dtype, "cases": []}
    for case in cases(a.device, a.n, np.dtype(a.dtype), frameworks):
        gpu = "CUDA" in case.name
        row = {"case": case.name}
        lay = case.layer(a.layer_batches, a.batch)
        row["layer"] = lay
        print("%-34s layer alone: h.gemm %6.2f us, direct ctypes call %5.2f us, "
              "Python layer %6.2f us per call"
              % (case.name, 1e6 * lay["package_s"], 1e6 * lay["direct_s"],
                 1e6 * lay["overhead_s"]))
        if not a.skip_real:
            iters = a.iters or (200 if gpu else 10)
            r = case.real(iters)
            row["real"] = r
            print("%-34s %d GEMM: h.gemm %9.3f ms, direct %9.3f ms, paired difference "
                  "median %+8.1f us (IQR %+.1f .. %+.1f us, %d pairs)"
                  % ("", a.n, 1e3 * r["package_s"], 1e3 * r["direct_s"],
                     1e6 * r["diff_median_s"], 1e6 * r["diff_q1_s"], 1e6 * r["diff_q3_s"],
                     iters))
        out["cases"].append(row)
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
