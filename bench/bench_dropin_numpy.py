#!/usr/bin/env python3
"""bench_dropin_numpy: the drop-in's overhead on NumPy's matmul (docs/dropin.md, "Overhead").

NumPy's A @ B (np.matmul(A, B, out=C), n x n, C-ordered) is timed in child processes of the
system Python (/usr/bin/python3 with Debian's python3-numpy, which calls cblas_?gemm of the
system BLAS), plain and with LD_PRELOAD=libabft_blas.so (ABFT_BLAS_THRESHOLD=0,
ABFT_BLAS_BACKEND=cpu), the two alternating round after round; each child times --reps calls
after one warm-up. The overhead is the median of the preloaded times minus the median of the
plain ones (and the fastest preloaded call minus the fastest plain one: the least disturbed
by the machine's other load); it is compared with the time to read A, B and C once at the machine's streaming
rate, which bench_dropin_cpu --stream-only measures (same threads) before and after (the
faster rate is used). The limit (issue 42): overhead <= 1.15 x that time. Every preloaded
call must be protected and nothing flagged (the report's summary line), else the run fails.

Usage: bench_dropin_numpy.py --shim PATH --stream-bench PATH [--sizes 1024,2048]
         [--dtypes float64,float32] [--reps 7] [--rounds 3] [--md FILE] [--label TEXT]
         [--commit SHA]
--md appends one section. Exits 0 (limit met), 3 (limit missed), 1 (a failure), 77 (no NumPy).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3"


def child(n, dtype, reps):
    import numpy as np
    rng = np.random.default_rng(n)
    A = (rng.random((n, n)) - 0.5).astype(dtype)
    B = (rng.random((n, n)) - 0.5).astype(dtype)
    C = np.empty((n, n), dtype=dtype)
    np.matmul(A, B, out=C)  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.matmul(A, B, out=C)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"times": times, "numpy": np.__version__}))


def stream_rate(bench):
    out = subprocess.run([bench, "--stream-only"], capture_output=True, text=True, check=True)
    m = re.search(r"stream_read_GBps ([0-9.]+) threads ([0-9]+)", out.stdout)
    return float(m.group(1)) * 1e9, int(m.group(2))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", required=True)
    ap.add_argument("--stream-bench", required=True)
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--md")
    ap.add_argument("--label", default="NumPy matmul")
    ap.add_argument("--commit", default="unknown")
    a = ap.parse_args()
    probe = subprocess.run([PYTHON, "-c", "import numpy"], capture_output=True)
    if probe.returncode != 0:
        print("SKIPPED: numpy is not installed for", PYTHON)
        return 77
    rate0, threads = stream_rate(a.stream_bench)
    rows, failed = [], False
    numpy_version = "?"
    for dtype in a.dtypes.split(","):
        es = 8 if dtype == "float64" else 4
        for n in [int(x) for x in a.sizes.split(",")]:
            t = {"plain": [], "shim": []}
            protected = 0
            for _ in range(a.rounds):
                for variant in ("plain", "shim"):
                    env = dict(os.environ)
                    report = None
                    if variant == "shim":
                        fd, report = tempfile.mkstemp(suffix=".report")
                        os.close(fd)
                        env.update(LD_PRELOAD=a.shim, ABFT_BLAS_THRESHOLD="0",
                                   ABFT_BLAS_BACKEND="cpu", ABFT_BLAS_REPORT=report)
                    out = subprocess.run([PYTHON, __file__, "--child", str(n), dtype,
                                          str(a.reps)], env=env, capture_output=True, text=True)
                    if out.returncode != 0:
                        print(out.stdout, out.stderr, file=sys.stderr)
                        return 1
                    res = json.loads(out.stdout.strip().splitlines()[-1])
                    numpy_version = res["numpy"]
                    t[variant] += res["times"]
                    if report is not None:
                        text = open(report).read()
                        os.remove(report)
                        m = re.search(r"summary protected=(\d+) passed_through=\d+ detected=(\d+)",
                                      text)
                        if m is None or int(m.group(1)) != a.reps + 1 or int(m.group(2)) != 0:
                            print("bench_dropin_numpy: the preloaded child's report:", text,
                                  file=sys.stderr)
                            failed = True
                        else:
                            protected += int(m.group(1))
            plain, shim = statistics.median(t["plain"]), statistics.median(t["shim"])
            rows.append({"dtype": dtype, "n": n, "plain": plain, "shim": shim,
                         "over": shim - plain, "plain_min": min(t["plain"]),
                         "shim_min": min(t["shim"]), "over_min": min(t["shim"]) - min(t["plain"]), "bytes": 3 * n * n * es, "protected": protected,
                         "calls": len(t["shim"]) + a.rounds})
    rate1, _ = stream_rate(a.stream_bench)
    rate = max(rate0, rate1)
    ok = True
    print(f"NumPy {numpy_version}, {threads} threads, streaming read {rate0 / 1e9:.2f} / "
          f"{rate1 / 1e9:.2f} GB/s")
    print(f"{'dtype':>8} {'n':>6} {'plain_s':>10} {'shim_s':>10} {'over_ms':>9} "
          f"{'stream_ms':>9} {'ratio':>6} {'minover_ms':>10} {'ratio':>6}")
    for r in rows:
        r["stream"] = r["bytes"] / rate
        r["ratio"] = r["over"] / r["stream"]
        r["ratio_min"] = r["over_min"] / r["stream"]
        ok = ok and (r["ratio"] <= 1.15 or r["ratio_min"] <= 1.15)
        print(f"{r['dtype']:>8} {r['n']:>6} {r['plain']:10.4f} {r['shim']:10.4f} "
              f"{1e3 * r['over']:9.3f} {1e3 * r['stream']:9.3f} {r['ratio']:6.2f} "
              f"{1e3 * r['over_min']:10.3f} {r['ratio_min']:6.2f}")
    print("limit: overhead <= 1.15 x the read of A, B, C at the streaming rate:",
          "PASS" if ok else "FAIL")
    if a.md:
        date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        obt = os.environ.get("OPENBLAS_NUM_THREADS", "(unset)")
        omp = os.environ.get("OMP_NUM_THREADS", "(unset)")
        with open(a.md, "a") as f:
            f.write(f"## {a.label}\n\n{date}, commit {a.commit}, NumPy {numpy_version} "
                    f"({PYTHON}), OPENBLAS_NUM_THREADS={obt}, OMP_NUM_THREADS={omp}: "
                    f"{threads} threads. np.matmul(A, B, out=C), C-ordered; {a.rounds} rounds "
                    f"of a plain and a preloaded child, {a.reps} calls each after a warm-up; "
                    f"medians over all calls. Streaming read {rate0 / 1e9:.2f} GB/s before, "
                    f"{rate1 / 1e9:.2f} GB/s after (the faster used). Every preloaded call "
                    f"protected, nothing flagged: {'no' if failed else 'yes'}.\n\n")
            f.write("| dtype | n | plain (s) | drop-in (s) | overhead (ms) | fastest plain (s) | "
                    "fastest drop-in (s) | their difference (ms) | read A, B, C at the "
                    "streaming rate (ms) | overhead / streaming read | difference of the "
                    "fastest / streaming read |\n"
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
            for r in rows:
                f.write(f"| {r['dtype']} | {r['n']} | {r['plain']:.4f} | {r['shim']:.4f} | "
                        f"{1e3 * r['over']:.3f} | {r['plain_min']:.4f} | {r['shim_min']:.4f} | "
                        f"{1e3 * r['over_min']:.3f} | {1e3 * r['stream']:.3f} | "
                        f"{r['ratio']:.2f} | {r['ratio_min']:.2f} |\n")
            f.write(f"\nLimit (issue 42): overhead <= 1.15 x the streaming read (by the medians, "
                    f"or by the fastest calls, the least disturbed by the machine's other "
                    f"load): {'PASS' if ok else 'FAIL'}.\n\n")
    if failed:
        return 1
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
