"""abft.Handle: the library's handle, its options, and the protected calls on arrays."""

import ctypes
import weakref
from dataclasses import dataclass

import numpy as np

from . import _lib
from ._arrays import as_arr, copy_fortran, empty_like
from ._enums import Backend, BitClass, BoundMode, ChecksumKind, Math, Operation, Site, Status
from ._errors import argument_error, error_for
from ._report import Flip, Report

_byref = ctypes.byref
_SUCCESS = 0
_NAMES_GEMM = {"handle": "self", "transa": "trans_a", "transb": "trans_b", "m": "A", "n": "B",
               "k": "A", "alpha": "alpha", "A": "A", "lda": "A", "B": "B", "ldb": "B",
               "beta": "beta", "C": "C", "ldc": "C", "report": "report", "plan": "plan"}
# The same call made on the transposed views (C = A·B computed as C^T = B^T·A^T).
_NAMES_GEMM_T = dict(_NAMES_GEMM, transa="trans_b", transb="trans_a", m="B", n="A", k="B",
                     A="B", lda="B", B="A", ldb="A")
_GEMM = {"d": _lib.abft_dgemm, "s": _lib.abft_sgemm}
_GEMM_NAME = {"d": "abft_dgemm", "s": "abft_sgemm"}
_DTYPE_NAME = {"d": "float64", "s": "float32", "q": "int64", "i": "int32"}


@dataclass
class FaultSpec:
    """What one firing of an injector flips (abft_fault_spec_t; docs/campaign.md):
    `nelems` distinct elements, in row `row` (or any row when -1) and column `col` (any when
    -1), in each `width` adjacent bits starting at a bit drawn from `bit_class` (BitClass or
    its name; "exact" takes `bit`). Rows and columns are those of the Python array."""
    bit_class: object = BitClass.ANY
    bit: int = 0
    width: int = 1
    nelems: int = 1
    row: int = -1
    col: int = -1

    def _to_c(self, transposed=False, argument="spec"):
        s = _lib.FaultSpec()
        s.bit_class = BitClass.parse(self.bit_class, argument + ".bit_class")
        s.bit, s.width, s.nelems = int(self.bit), int(self.width), int(self.nelems)
        s.row, s.col = (int(self.col), int(self.row)) if transposed else (int(self.row),
                                                                          int(self.col))
        return s


def _spec(spec, kw, argument="spec"):
    if spec is None:
        spec = FaultSpec(**kw)
    elif kw:
        raise TypeError("give either spec or its fields, not both")
    if not isinstance(spec, FaultSpec):
        raise argument_error(argument, "expected an abft.FaultSpec")
    return spec


class DeviceView:
    """A device array handed to a hook on the CUDA backend: rows x cols, column-major with
    leading dimension ld. It has __cuda_array_interface__, so cupy.asarray(view) or
    torch.as_tensor(view, device="cuda") wrap it without a copy."""

    __slots__ = ("ptr", "rows", "cols", "ld", "dtype", "stream")

    def __init__(self, ptr, rows, cols, ld, dtype, stream):
        self.ptr, self.rows, self.cols, self.ld = ptr, rows, cols, ld
        self.dtype, self.stream = np.dtype(dtype), stream

    @property
    def shape(self):
        return (self.rows, self.cols)

    @property
    def __cuda_array_interface__(self):
        item = self.dtype.itemsize
        d = {"shape": (self.rows, self.cols), "typestr": self.dtype.str,
             "data": (self.ptr, False), "strides": (item, self.ld * item), "version": 3}
        d["stream"] = self.stream if self.stream else 1
        return d


def _host_view(ptr, rows, cols, ld, dtype):
    dt = np.dtype(dtype)
    if rows == 0 or cols == 0 or not ptr:
        return np.empty((rows, cols), dtype=dt, order="F")
    nbytes = (ld * (cols - 1) + rows) * dt.itemsize
    buf = (ctypes.c_char * nbytes).from_address(ptr)
    return np.ndarray((rows, cols), dtype=dt, buffer=buf, strides=(dt.itemsize,
                                                                   ld * dt.itemsize))


class Handle:
    """A library handle (abft_create) on backend "auto" (the GPU when this build has the
    CUDA backend and a GPU is present, else the CPU), "cpu" or "cuda". One handle per
    thread. The CPU backend takes host arrays (NumPy, CPU PyTorch tensors); the CUDA
    backend device arrays (PyTorch, CuPy, __cuda_array_interface__, DLPack) on the device
    that was current when the handle was made, each call on its arrays' current stream."""

    def __init__(self, backend="auto"):
        b = Backend.parse(backend, "backend")
        h = ctypes.c_void_p()
        st = _lib.abft_create(_byref(h), int(b))
        if st != _SUCCESS:
            raise error_for(st, "abft_create", {"backend": "backend"})
        self._h = h.value
        out = ctypes.c_int()
        self._check(_lib.abft_get_backend(self._h, _byref(out)), "abft_get_backend")
        self._backend = Backend(out.value)
        self._cuda = self._backend == Backend.CUDA
        self._stream = 0
        self._device = None
        if self._backend == Backend.CUDA and _lib.cudart is not None:
            dev = ctypes.c_int()
            if _lib.cudart.cudaGetDevice(_byref(dev)) == 0:
                self._device = dev.value
        self._kind = ChecksumKind.ROW
        self._recompute = True
        self._lu_recovery = False
        self._hook_fn = None
        self._hook_c = None
        self._hook_exc = None
        self._children = weakref.WeakSet()  # plans and injectors, destroyed before the handle

    # ---- lifetime -------------------------------------------------------------------------
    def close(self):
        """Destroys the handle (its plans and injectors first). Idempotent."""
        h = getattr(self, "_h", None)
        if not h:
            return
        for child in list(self._children):
            child.close()
        self._h = None
        _lib.abft_destroy(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __repr__(self):
        if not getattr(self, "_h", None):
            return "<abft.Handle closed>"
        dev = "" if self._device is None else ":%d" % self._device
        return "<abft.Handle %s%s>" % (self._backend, dev)

    @property
    def _ptr(self):
        if not self._h:
            raise error_for(Status.NOT_INITIALIZED, "abft.Handle (closed)")
        return self._h

    def _check(self, st, fname, names=None, report=None):
        if st == _SUCCESS:
            return
        exc = self._hook_exc
        if exc is not None:
            self._hook_exc = None
            raise exc
        raise error_for(st, fname, names, report)

    # ---- options --------------------------------------------------------------------------
    @property
    def backend(self):
        """The backend the handle runs on (Backend.CPU or Backend.CUDA, never AUTO)."""
        return self._backend

    @property
    def device(self):
        """The CUDA device index of a CUDA handle, else None."""
        return self._device

    @property
    def checksum_kind(self):
        """ChecksumKind.ROW (default) or FULL: the kind gemm uses when not told per call."""
        out = ctypes.c_int()
        self._check(_lib.abft_get_checksum_kind(self._ptr, _byref(out)),
                    "abft_get_checksum_kind")
        return ChecksumKind(out.value)

    @checksum_kind.setter
    def checksum_kind(self, kind):
        k = ChecksumKind.parse(kind, "checksum_kind")
        self._check(_lib.abft_set_checksum_kind(self._ptr, int(k)), "abft_set_checksum_kind",
                    {"kind": "checksum_kind"})
        self._kind = k

    def set_bound_mode(self, mode, factor=None):
        """abft_set_bound_mode: mode "worst_case" (default), "probabilistic" or "tight";
        factor > 0 scales the bound (None: 4 for probabilistic, else 1; docs/bound.md)."""
        m = BoundMode.parse(mode, "mode")
        if factor is None:
            factor = 4.0 if m == BoundMode.PROBABILISTIC else 1.0
        self._check(_lib.abft_set_bound_mode(self._ptr, int(m), float(factor)),
                    "abft_set_bound_mode", {"mode": "mode", "factor": "factor"})

    def _get_bound(self):
        m, f = ctypes.c_int(), ctypes.c_double()
        self._check(_lib.abft_get_bound_mode(self._ptr, _byref(m), _byref(f)),
                    "abft_get_bound_mode")
        return BoundMode(m.value), f.value

    @property
    def bound_mode(self):
        return self._get_bound()[0]

    @bound_mode.setter
    def bound_mode(self, mode):
        self.set_bound_mode(mode)

    @property
    def bound_factor(self):
        return self._get_bound()[1]

    @property
    def recompute(self):
        """Whether protected calls may recompute uncorrectable rows (beta = 0); default True."""
        return self._recompute

    @recompute.setter
    def recompute(self, enable):
        self._check(_lib.abft_set_recompute(self._ptr, int(bool(enable))),
                    "abft_set_recompute", {"enable": "recompute"})
        self._recompute = bool(enable)

    def set_random_checksum(self, enable=True, seed=0):
        """abft_set_random_checksum: a third, pseudo-random row checksum (detection only)."""
        self._check(_lib.abft_set_random_checksum(self._ptr, int(bool(enable)),
                                                  int(seed) & 0xFFFFFFFFFFFFFFFF),
                    "abft_set_random_checksum", {"enable": "enable", "seed": "seed"})

    @property
    def random_checksum(self):
        """(enabled, seed) of the random checksum."""
        e, s = ctypes.c_int(), ctypes.c_uint64()
        self._check(_lib.abft_get_random_checksum(self._ptr, _byref(e), _byref(s)),
                    "abft_get_random_checksum")
        return bool(e.value), s.value

    @property
    def lu_recovery(self):
        """The LU recovery copy (abft_set_lu_recovery); default False."""
        return self._lu_recovery

    @lu_recovery.setter
    def lu_recovery(self, enable):
        self._check(_lib.abft_set_lu_recovery(self._ptr, int(bool(enable))),
                    "abft_set_lu_recovery", {"enable": "lu_recovery"})
        self._lu_recovery = bool(enable)

    @property
    def stream(self):
        """The handle's CUDA stream (an int, cudaStream_t; 0 the default stream). Calls on
        device arrays set it to the arrays' current stream first."""
        s = ctypes.c_void_p()
        self._check(_lib.abft_get_stream(self._ptr, _byref(s)), "abft_get_stream")
        return s.value or 0

    @stream.setter
    def stream(self, stream):
        self._set_stream(int(stream or 0))

    def _set_stream(self, s):
        self._check(_lib.abft_set_stream(self._ptr, s or None), "abft_set_stream",
                    {"stream": "stream"})
        self._stream = s

    def set_cublas_handle(self, cublas_handle):
        """Borrow a cublasHandle_t (an int; None returns to the handle's own)."""
        self._check(_lib.abft_set_cublas_handle(self._ptr, cublas_handle or None),
                    "abft_set_cublas_handle", {"cublas_handle": "cublas_handle"})

    def set_cusolver_handle(self, cusolver_handle):
        """Borrow a cusolverDnHandle_t (an int; None returns to the handle's own)."""
        self._check(_lib.abft_set_cusolver_handle(self._ptr, cusolver_handle or None),
                    "abft_set_cusolver_handle", {"cusolver_handle": "cusolver_handle"})

    def set_hook(self, fn):
        """A fault-injection hook (abft_set_hook): fn(site, which, array) is called at the
        sites of abft_hook_site_t with the data in flight, a writable NumPy view on the CPU
        backend, a DeviceView (__cuda_array_interface__) on the CUDA backend, column-major
        as the library holds it. It returns None (or a Status to abort the call with it); an
        exception it raises aborts the call and is raised again. None removes the hook."""
        if fn is None:
            self._check(_lib.abft_set_hook(self._ptr, _lib.HOOK_FN(), None), "abft_set_hook")
            self._hook_fn = self._hook_c = None
            return
        if not callable(fn):
            raise argument_error("fn", "the hook must be callable")
        cuda = self._backend == Backend.CUDA

        def trampoline(user, site, which, precision, ptr, rows, cols, ld):
            try:
                dt = np.float64 if precision == b"d" else np.float32
                if cuda:
                    view = DeviceView(ptr or 0, rows, cols, ld, dt, self._stream)
                else:
                    view = _host_view(ptr or 0, rows, cols, ld, dt)
                try:
                    s = Site(site)
                except ValueError:
                    s = site
                r = fn(s, which, view)
                return int(r) if r is not None else _SUCCESS
            except BaseException as e:  # noqa: BLE001 - raised again after the call
                self._hook_exc = e
                return int(Status.EXECUTION_FAILED)

        c = _lib.HOOK_FN(trampoline)
        self._check(_lib.abft_set_hook(self._ptr, c, None), "abft_set_hook")
        self._hook_fn, self._hook_c = fn, c

    # ---- arrays ---------------------------------------------------------------------------
    def _arr(self, x, name, write=False, allow_1d=False, ints=False, stream=True):
        a = as_arr(x, name, write, allow_1d, ints, stream)
        if self._cuda:
            if a.device != "cuda":
                raise argument_error(name, "a host array was given to a CUDA handle (use "
                                     "abft.Handle('cpu') for host arrays, or move the array "
                                     "to the GPU)")
            if (a.device_id is not None and self._device is not None
                    and a.device_id != self._device):
                raise argument_error(name, "the array is on cuda:%d, the handle on cuda:%d "
                                     "(make the handle with that device current)"
                                     % (a.device_id, self._device))
            if a.stream is not None and a.stream != self._stream:
                self._set_stream(a.stream)
        elif a.device != "cpu":
            raise argument_error(name, "a device array was given to a CPU handle (use "
                                 "abft.Handle('cuda') or 'auto' for device arrays)")
        return a

    @staticmethod
    def _same_prec(a, b, name, first):
        if a.prec != b.prec:
            raise argument_error(name, "dtype %s does not match %s's %s" % (
                _DTYPE_NAME[b.prec], first, _DTYPE_NAME[a.prec]))

    # ---- protected GEMM -------------------------------------------------------------------
    def gemm(self, A, B, C=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False,
             checksums=None):
        """C = alpha·op(A)·op(B) + beta·C, protected (abft_dgemm / abft_sgemm).

        op(X) is X, or X.T when trans_x. A, B, C: float64 or float32, all alike; Fortran-
        or C-ordered (or slices with unit stride in one dimension), passed without a copy.
        C None: a new array (C-ordered when A and B both are, else Fortran-ordered); else C
        is written in place. checksums: "row" or "full" for this call (None: the handle's
        checksum_kind). Returns (C, report). Errors raise abft.Error subclasses; C is then
        untouched when the library found the error before computing (docs/api.md)."""
        h = self._ptr
        a = self._arr(A, "A")
        b = self._arr(B, "B", stream=False)  # one stream lookup a call: the first array's
        self._same_prec(a, b, "B", "A")
        m, ka = (a.cols, a.rows) if trans_a else (a.rows, a.cols)
        kb, n = (b.cols, b.rows) if trans_b else (b.rows, b.cols)
        if ka != kb:
            raise argument_error("B", "op(A) is %dx%d, op(B) %dx%d: inner dimensions differ"
                                 % (m, ka, kb, n))
        if C is None:
            if beta != 0:
                raise argument_error("C", "beta = %r needs the C to scale" % (beta,))
            C = empty_like(a, (m, n), a.prec, "C" if (a.t and b.t) else "F", "C")
        c = self._arr(C, "C", write=True, stream=False)
        self._same_prec(a, c, "C", "A")
        if c.shape != (m, n):
            raise argument_error("C", "shape %s, expected %s (op(A) %dx%d times op(B) %dx%d)"
                                 % (c.shape, (m, n), m, ka, kb, n))
        ta = bool(trans_a) != a.t
        tb = bool(trans_b) != b.t
        rep = _lib.Report()
        restore = None
        if checksums is not None:
            kind = ChecksumKind.parse(checksums, "checksums")
            if kind != self._kind:
                restore = self._kind
                self.checksum_kind = kind
        try:
            if not c.t:
                st = _GEMM[a.prec](h, ta, tb, m, n, ka, float(alpha), a.ptr, a.ld, b.ptr,
                                   b.ld, float(beta), c.ptr, c.ld, _byref(rep))
                names = _NAMES_GEMM
            else:  # C^T = op(B)^T·op(A)^T on the column-major views
                st = _GEMM[a.prec](h, not tb, not ta, n, m, ka, float(alpha), b.ptr, b.ld,
                                   a.ptr, a.ld, float(beta), c.ptr, c.ld, _byref(rep))
                names = _NAMES_GEMM_T
        finally:
            if restore is not None:
                self.checksum_kind = restore
        if st != _SUCCESS:
            self._check(st, _GEMM_NAME[a.prec], names,
                        Report._from_c(rep, c.t) if st == Status.NON_FINITE_INPUT else None)
        return C, Report._from_c(rep, c.t)

    def gemm_plan(self, A, B, C=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False,
                  math=None):
        """The split form (abft_gemm_plan_create) for a GEMM the caller runs itself:
        plan.encode(A, B, C) before it, plan.verify(A, B, C) -> report after it. The arrays
        fix the shapes, dtype and layouts the plan takes (C None: as gemm would allocate)."""
        return GemmPlan(self, A, B, C, alpha, beta, trans_a, trans_b, math)

    # ---- LU -------------------------------------------------------------------------------
    def getrf(self, A, online=False, nb=0, check_every=0, panel_nb=0, lookahead=0,
              overwrite_a=False):
        """Protected LU, P·A = L·U (abft_?getrf, or abft_?getrf_online when online or any
        LU option is given). Returns (LU, ipiv, report): LU Fortran-ordered (L unit lower,
        U upper, LAPACK layout), ipiv int64, 1-based, LAPACK style, in the backend's memory.
        A is copied into LU unless overwrite_a (then A itself, which must be Fortran-
        ordered, is factored in place). An exactly singular matrix raises SingularError,
        which carries lu, ipiv, info and report."""
        h = self._ptr
        a = self._arr(A, "A", write=overwrite_a)
        m, n = a.shape
        if overwrite_a:
            if a.t and m * n > 0 and min(m, n) > 1:
                raise argument_error("A", "overwrite_a=True needs a Fortran-ordered A (the "
                                     "factors are written in place, column-major)")
            LU, lu = A, a
        else:
            LU = copy_fortran(a, "A")
            lu = self._arr(LU, "A", write=True)
        ipiv = empty_like(a, (min(m, n),), "q", "F", "ipiv")
        pv = self._arr(ipiv, "ipiv", write=True, allow_1d=True, ints=True)
        info = ctypes.c_int64(0)
        rep = _lib.Report()
        names = {"m": "A", "n": "A", "A": "A", "lda": "A", "ipiv": "ipiv", "info": "info",
                 "options": "options", "report": "report"}
        ld = lu.ld if not lu.t else max(1, m)
        if online or nb or check_every or panel_nb or lookahead:
            opt = _lib.LuOptions(int(nb), int(check_every), int(panel_nb), int(lookahead))
            fname = "abft_%sgetrf_online" % a.prec
            st = getattr(_lib, fname)(h, m, n, lu.ptr, ld, pv.ptr, _byref(opt), _byref(info),
                                      _byref(rep))
        else:
            fname = "abft_%sgetrf" % a.prec
            st = getattr(_lib, fname)(h, m, n, lu.ptr, ld, pv.ptr, _byref(info), _byref(rep))
        if st == Status.SINGULAR:
            e = error_for(st, fname, names, Report._from_c(rep))
            e.lu, e.ipiv, e.info = LU, ipiv, info.value
            raise e
        if st != _SUCCESS:
            self._check(st, fname, names,
                        Report._from_c(rep) if st == Status.NON_FINITE_INPUT else None)
        return LU, ipiv, Report._from_c(rep)

    def getrs(self, LU, ipiv, B, trans=False, overwrite_b=False):
        """Protected solve op(A)·X = B with the factors of getrf (abft_?getrs). B: n or
        n x nrhs, copied into X (Fortran-ordered) unless overwrite_b (then B, Fortran-
        ordered or 1-D, is overwritten). Returns (X, report); a flagged right-hand side is
        reported (report.uncorrectable, faults[].col its index)."""
        h = self._ptr
        lu = self._arr(LU, "LU")
        n = lu.rows
        if lu.rows != lu.cols:
            raise argument_error("LU", "the factors must be square, got %s" % (lu.shape,))
        if lu.t and n > 1:
            raise argument_error("LU", "the factors must be Fortran-ordered, as getrf returns "
                                 "them (a C-ordered array holds their transpose)")
        pv = self._arr(ipiv, "ipiv", allow_1d=True, ints=True)
        if pv.prec != "q" or pv.ndim != 1 or pv.rows != n:
            raise argument_error("ipiv", "expected %d int64 pivots as getrf returns them, got "
                                 "%s of shape %s" % (n, _DTYPE_NAME[pv.prec], pv.shape))
        b = self._arr(B, "B", write=overwrite_b, allow_1d=True)
        self._same_prec(lu, b, "B", "LU")
        if b.rows != n:
            raise argument_error("B", "has %d rows, the factors are %dx%d" % (b.rows, n, n))
        if overwrite_b:
            if b.t and b.rows > 1 and b.cols > 1:
                raise argument_error("B", "overwrite_b=True needs a Fortran-ordered B")
            X, x = B, b
        else:
            X = copy_fortran(b, "B")
            x = self._arr(X, "B", write=True, allow_1d=True)
        if isinstance(trans, bool):
            op = Operation.T if trans else Operation.N
        else:
            op = Operation.parse(trans, "trans")
        rep = _lib.Report()
        fname = "abft_%sgetrs" % lu.prec
        ldb = x.ld if not x.t else max(1, n)
        st = getattr(_lib, fname)(h, int(op), n, x.cols, lu.ptr, lu.ld if not lu.t else max(1, n),
                                  pv.ptr, x.ptr, ldb, _byref(rep))
        if st != _SUCCESS:
            self._check(st, fname, {"trans": "trans", "n": "LU", "nrhs": "B", "A": "LU",
                                    "lda": "LU", "ipiv": "ipiv", "B": "B", "ldb": "B",
                                    "report": "report"},
                        Report._from_c(rep) if st == Status.NON_FINITE_INPUT else None)
        return X, Report._from_c(rep)

    def lu_plan(self, A):
        """The LU split form (abft_lu_plan_create) for a factorization the caller runs
        itself: plan.encode(A) before it, plan.verify(LU, ipiv) -> report after it."""
        return LuPlan(self, A)

    # ---- encoders -------------------------------------------------------------------------
    def checksum_rows(self, A, with_abs=False):
        """Row checksums R = A·V (m x 2, float64, V = [1, j+1]); with_abs: also |A|·V.
        Returns R, or (R, Rabs)."""
        return self._checksums(A, with_abs, rows=True)

    def checksum_cols(self, A, with_abs=False):
        """Column checksums returned transposed, K = A^T·V (n x 2, float64); with_abs: also
        |A|^T·V. Returns K, or (K, Kabs)."""
        return self._checksums(A, with_abs, rows=False)

    def _checksums(self, A, with_abs, rows):
        h = self._ptr
        a = self._arr(A, "A")
        r = a.rows if rows else a.cols
        R = empty_like(a, (r, 2), "d", "F", "A")
        Rabs = empty_like(a, (r, 2), "d", "F", "A") if with_abs else None
        out = self._arr(R, "R", write=True)
        outa = self._arr(Rabs, "Rabs", write=True) if with_abs else None
        # A C-ordered A is A^T column-major: its rows are the columns the library sees.
        use_rows = rows != a.t
        fname = "abft_%schecksum_%s" % (a.prec, "rows" if use_rows else "cols")
        o = "R" if use_rows else "K"
        st = getattr(_lib, fname)(h, a.mrows, a.mcols, a.ptr, a.ld, out.ptr, max(1, r),
                                  outa.ptr if with_abs else None, max(1, r))
        if st != _SUCCESS:
            self._check(st, fname, {"m": "A", "n": "A", "A": "A", "lda": "A", o: "(result)",
                                    "ld" + o.lower(): "(result)", o + "abs": "(result)",
                                    "ld" + o.lower() + "abs": "(result)"})
        return (R, Rabs) if with_abs else R

    def _small(self, X, name, rows, like):
        """A small float64 operand (<= 16 columns), column-major: NumPy arrays are converted
        (X is n x c, a copy of at most 16 columns); device arrays must be so already."""
        if isinstance(X, np.ndarray) and (X.dtype != np.float64 or not X.flags.f_contiguous):
            X = np.asfortranarray(X, dtype=np.float64)
        x = self._arr(X, name, allow_1d=True)
        if x.prec != "d":
            raise argument_error(name, "must be float64 (the checksum operands always are)")
        if x.t and x.rows > 1 and x.cols > 1:
            raise argument_error(name, "must be Fortran-ordered (column-major)")
        if x.rows != rows:
            raise argument_error(name, "has %d rows, expected %d" % (x.rows, rows))
        return X, x

    def tsmm(self, A, X, trans=False, Xabs=None, with_abs=False):
        """Tall-and-skinny product Y = op(A)·X (X float64 with 1 to 16 columns); with_abs:
        also Yabs = |op(A)|·Xabs (Xabs defaults to |X|). Returns Y, or (Y, Yabs)."""
        h = self._ptr
        a = self._arr(A, "A")
        tr = bool(trans)
        p, q = (a.cols, a.rows) if tr else (a.rows, a.cols)
        X, x = self._small(X, "X", q, a)
        c = x.cols
        xa = None
        if Xabs is not None:
            Xabs, xa = self._small(Xabs, "Xabs", q, a)
            if xa.cols != c:
                raise argument_error("Xabs", "has %d columns, X %d" % (xa.cols, c))
            with_abs = True
        Y = empty_like(a, (p, c), "d", "F", "A")
        y = self._arr(Y, "Y", write=True)
        Yabs = empty_like(a, (p, c), "d", "F", "A") if with_abs else None
        ya = self._arr(Yabs, "Yabs", write=True) if with_abs else None
        op = tr != a.t
        fname = "abft_%stsmm" % ("d" if a.prec == "d" else "st")
        st = getattr(_lib, fname)(h, int(op), a.mrows, a.mcols, c, a.ptr, a.ld, x.ptr, x.ld,
                                  y.ptr, max(1, p), xa.ptr if xa else None,
                                  xa.ld if xa else 1, ya.ptr if ya else None, max(1, p))
        if st != _SUCCESS:
            self._check(st, fname, {"trans": "trans", "m": "A", "n": "A", "c": "X", "A": "A",
                                    "lda": "A", "X": "X", "ldx": "X", "Xabs": "Xabs",
                                    "ldxabs": "Xabs", "Y": "(result)", "ldy": "(result)",
                                    "Yabs": "(result)", "ldyabs": "(result)"})
        return (Y, Yabs) if with_abs else Y

    def dual(self, M, X, Z):
        """Fused dual pass over one read of M (m x n): P = M·X and Q = M^T·Z (X n x c1,
        Z m x c2, float64, 1 to 16 columns). Returns (P, Q)."""
        h = self._ptr
        mm = self._arr(M, "M")
        X, x = self._small(X, "X", mm.cols, mm)
        Z, z = self._small(Z, "Z", mm.rows, mm)
        P = empty_like(mm, (mm.rows, x.cols), "d", "F", "M")
        Q = empty_like(mm, (mm.cols, z.cols), "d", "F", "M")
        p = self._arr(P, "P", write=True)
        q = self._arr(Q, "Q", write=True)
        fname = "abft_%sdual" % mm.prec
        f = getattr(_lib, fname)
        if not mm.t:
            st = f(h, mm.rows, mm.cols, mm.ptr, mm.ld, x.cols, x.ptr, x.ld, p.ptr, p.ld,
                   z.cols, z.ptr, z.ld, q.ptr, q.ld)
            names = {"m": "M", "n": "M", "M": "M", "ldm": "M", "c1": "X", "X": "X", "ldx": "X",
                     "c2": "Z", "Z": "Z", "ldz": "Z", "P": "(result)", "Q": "(result)"}
        else:  # M = Mm^T: P = Mm^T·X is the library's Q, Q = Mm·Z its P
            st = f(h, mm.mrows, mm.mcols, mm.ptr, mm.ld, z.cols, z.ptr, z.ld, q.ptr, q.ld,
                   x.cols, x.ptr, x.ld, p.ptr, p.ld)
            names = {"m": "M", "n": "M", "M": "M", "ldm": "M", "c1": "Z", "X": "Z", "ldx": "Z",
                     "c2": "X", "Z": "X", "ldz": "X", "P": "(result)", "Q": "(result)"}
        if st != _SUCCESS:
            self._check(st, fname, names)
        return P, Q

    # ---- fault injection ------------------------------------------------------------------
    def inject(self, A, seed, spec=None, **spec_fields):
        """Flips bits of array A in place (abft_?inject), drawn from `seed`; spec (or its
        fields as keywords) says what (FaultSpec). Returns the list of Flip records (row and
        col in A's Python orientation)."""
        h = self._ptr
        sp = _spec(spec, spec_fields)
        a = self._arr(A, "A", write=True)
        cs = sp._to_c(transposed=a.t)
        flips = (_lib.Flip * max(1, int(sp.nelems)))()
        nflips = ctypes.c_int64(0)
        fname = "abft_%sinject" % a.prec
        st = getattr(_lib, fname)(h, _byref(cs), int(seed) & 0xFFFFFFFFFFFFFFFF, a.mrows,
                                  a.mcols, a.ptr, a.ld, flips, _byref(nflips))
        self._check(st, fname, {"spec": "spec", "seed": "seed", "m": "A", "n": "A", "A": "A",
                                "lda": "A"})
        out = [Flip._from_c(flips[i]) for i in range(nflips.value)]
        if a.t:
            for f in out:
                f.row, f.col = f.col, f.row
        return out

    def injector(self, sites=None, which=-1, max_firings=1, spec=None, **spec_fields):
        """A fault injector on this handle's hook (abft_injector_*): fires at `sites` (Site
        names or members, a list of them, or None for every site), calls whose `which`
        matches (-1: any), at most max_firings times per arming (0: unlimited), flipping
        what `spec` says. Use it as a context manager (attached inside), arm(seed) before
        each call, and read .flips after it. Rows and columns are those of the array the
        hook sees: column-major, as the library holds it."""
        return Injector(self, sites, which, max_firings, _spec(spec, spec_fields))


# ---- split forms ---------------------------------------------------------------------------

class _Child:
    def __init__(self, handle):
        self._handle = handle
        handle._children.add(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class GemmPlan(_Child):
    """The GEMM split form (abft_gemm_plan_create / encode / verify); see Handle.gemm_plan."""

    def __init__(self, handle, A, B, C, alpha, beta, trans_a, trans_b, math):
        h = handle._ptr
        a = handle._arr(A, "A")
        b = handle._arr(B, "B")
        handle._same_prec(a, b, "B", "A")
        m, ka = (a.cols, a.rows) if trans_a else (a.rows, a.cols)
        kb, n = (b.cols, b.rows) if trans_b else (b.rows, b.cols)
        if ka != kb:
            raise argument_error("B", "op(A) is %dx%d, op(B) %dx%d: inner dimensions differ"
                                 % (m, ka, kb, n))
        if C is not None:
            c = handle._arr(C, "C")
            handle._same_prec(a, c, "C", "A")
            if c.shape != (m, n):
                raise argument_error("C", "shape %s, expected %s" % (c.shape, (m, n)))
            ct = c.t
        else:
            ct = a.t and b.t
        self._prec, self._m, self._n, self._k = a.prec, m, n, ka
        self._at, self._bt, self._ct = a.t, b.t, ct
        self._ashape, self._bshape = a.shape, b.shape
        ta, tb = bool(trans_a) != a.t, bool(trans_b) != b.t
        p = ctypes.c_void_p()
        if not ct:
            st = _lib.abft_gemm_plan_create(h, a.prec.encode(), ta, tb, m, n, ka,
                                            float(alpha), float(beta), _byref(p))
            self._names = _NAMES_GEMM
        else:
            st = _lib.abft_gemm_plan_create(h, a.prec.encode(), not tb, not ta, n, m, ka,
                                            float(alpha), float(beta), _byref(p))
            self._names = _NAMES_GEMM_T
        handle._check(st, "abft_gemm_plan_create", self._names)
        self._p = p.value
        super().__init__(handle)
        if math is not None:
            self.set_math(math)

    def close(self):
        p = getattr(self, "_p", None)
        if p:
            self._p = None
            _lib.abft_gemm_plan_destroy(p)

    @property
    def _ptr(self):
        if not getattr(self, "_p", None):
            raise error_for(Status.NOT_INITIALIZED, "abft.GemmPlan (closed)")
        return self._p

    def set_math(self, math):
        """The arithmetic of the caller's GEMM (Math: "handle", "ieee", "tf32", "bf16x9")."""
        mm = Math.parse(math, "math")
        self._handle._check(_lib.abft_gemm_plan_set_math(self._ptr, int(mm)),
                            "abft_gemm_plan_set_math", {"math": "math"})

    def set_cublas_math(self, cublas_handle):
        """Read the arithmetic from the math mode of the caller's cuBLAS handle (an int)."""
        self._handle._check(_lib.abft_gemm_plan_set_cublas_math(self._ptr, cublas_handle or None),
                            "abft_gemm_plan_set_cublas_math", {"cublas_handle": "cublas_handle"})

    def _operand(self, X, name, shape, t, write=False):
        if X is None:
            return None
        x = self._handle._arr(X, name, write=write)
        if x.prec != self._prec:
            raise argument_error(name, "dtype %s, the plan's is %s" % (
                _DTYPE_NAME[x.prec], _DTYPE_NAME[self._prec]))
        if x.shape != shape:
            raise argument_error(name, "shape %s, the plan's is %s" % (x.shape, shape))
        if x.t != t and min(shape) > 1:
            raise argument_error(name, "%s-ordered, the plan was made for a %s-ordered array"
                                 % ("C" if x.t else "Fortran", "C" if t else "Fortran"))
        return x

    def _args(self, A, B, C, write_c):
        a = self._operand(A, "A", self._ashape, self._at)
        b = self._operand(B, "B", self._bshape, self._bt)
        c = self._operand(C, "C", (self._m, self._n), self._ct, write=write_c)
        pa = (a.ptr, a.ld) if a else (None, max(1, self._ashape[1 if self._at else 0]))
        pb = (b.ptr, b.ld) if b else (None, max(1, self._bshape[1 if self._bt else 0]))
        pc = (c.ptr, c.ld) if c else (None, max(1, self._n if self._ct else self._m))
        if self._ct:
            pa, pb = pb, pa
        return pa, pb, pc

    def encode(self, A, B, C=None):
        """abft_?gemm_encode: the checksums of A and B (and of C when beta != 0)."""
        (pa, la), (pb, lb), (pc, lc) = self._args(A, B, C, False)
        fname = "abft_%sgemm_encode" % self._prec
        st = getattr(_lib, fname)(self._handle._ptr, self._ptr, pa, la, pb, lb, pc, lc)
        self._handle._check(st, fname, self._names)

    def verify(self, A, B, C):
        """abft_?gemm_verify: checks C (corrects it in place where it may) and returns the
        report. A and B may be None (no recomputation then; docs/api.md)."""
        (pa, la), (pb, lb), (pc, lc) = self._args(A, B, C, True)
        rep = _lib.Report()
        fname = "abft_%sgemm_verify" % self._prec
        st = getattr(_lib, fname)(self._handle._ptr, self._ptr, pa, la, pb, lb, pc, lc,
                                  _byref(rep))
        if st != _SUCCESS:
            self._handle._check(st, fname, self._names, Report._from_c(rep, self._ct)
                                if st == Status.NON_FINITE_INPUT else None)
        return Report._from_c(rep, self._ct)


class LuPlan(_Child):
    """The LU split form (abft_lu_plan_create / encode / verify); see Handle.lu_plan."""

    def __init__(self, handle, A):
        h = handle._ptr
        a = handle._arr(A, "A")
        if a.t and min(a.shape) > 1:
            raise argument_error("A", "must be Fortran-ordered (the factorization is of the "
                                 "column-major matrix)")
        self._prec, self._shape = a.prec, a.shape
        p = ctypes.c_void_p()
        st = _lib.abft_lu_plan_create(h, a.prec.encode(), a.rows, a.cols, _byref(p))
        handle._check(st, "abft_lu_plan_create", {"precision": "A", "m": "A", "n": "A"})
        self._p = p.value
        super().__init__(handle)

    def close(self):
        p = getattr(self, "_p", None)
        if p:
            self._p = None
            _lib.abft_lu_plan_destroy(p)

    @property
    def _ptr(self):
        if not getattr(self, "_p", None):
            raise error_for(Status.NOT_INITIALIZED, "abft.LuPlan (closed)")
        return self._p

    def _a(self, A, name, write):
        a = self._handle._arr(A, name, write=write)
        if a.prec != self._prec or a.shape != self._shape:
            raise argument_error(name, "%s %s, the plan's is %s %s" % (
                _DTYPE_NAME[a.prec], a.shape, _DTYPE_NAME[self._prec], self._shape))
        if a.t and min(a.shape) > 1:
            raise argument_error(name, "must be Fortran-ordered")
        return a

    def encode(self, A):
        a = self._a(A, "A", False)
        fname = "abft_%sgetrf_encode" % self._prec
        self._handle._check(getattr(_lib, fname)(self._handle._ptr, self._ptr, a.ptr, a.ld),
                            fname, {"A": "A", "lda": "A"})

    def verify(self, LU, ipiv):
        """Checks the factors LU (corrected in place where possible) with pivots ipiv (int64
        or int32, 1-based, as LAPACK or cuSOLVER write them) and returns the report."""
        a = self._a(LU, "LU", True)
        pv = self._handle._arr(ipiv, "ipiv", allow_1d=True, ints=True)
        if pv.ndim != 1 or pv.rows != min(self._shape):
            raise argument_error("ipiv", "expected %d pivots, got shape %s"
                                 % (min(self._shape), pv.shape))
        bits = 64 if pv.prec == "q" else 32
        rep = _lib.Report()
        fname = "abft_%sgetrf_verify" % self._prec
        st = getattr(_lib, fname)(self._handle._ptr, self._ptr, a.ptr, a.ld, pv.ptr, bits,
                                  _byref(rep))
        if st == Status.SINGULAR:
            e = error_for(st, fname, {"A": "LU"}, Report._from_c(rep))
            e.lu, e.ipiv = LU, ipiv
            raise e
        if st != _SUCCESS:
            self._handle._check(st, fname, {"A": "LU", "lda": "LU", "ipiv": "ipiv",
                                            "ipiv_bits": "ipiv"})
        return Report._from_c(rep)


class Injector(_Child):
    """A fault injector attached to a handle's hook (abft_injector_*); see Handle.injector."""

    def __init__(self, handle, sites, which, max_firings, spec):
        h = handle._ptr
        p = ctypes.c_void_p()
        handle._check(_lib.abft_injector_create(h, _byref(p)), "abft_injector_create")
        self._p = p.value
        super().__init__(handle)
        if sites is None:
            mask = (1 << 6) - 1
        else:
            if isinstance(sites, (str, int, Site)):
                sites = [sites]
            mask = 0
            for s in sites:
                mask |= 1 << int(Site.parse(s, "sites"))
        cs = spec._to_c()
        handle._check(_lib.abft_injector_set_spec(self._p, _byref(cs)),
                      "abft_injector_set_spec")
        handle._check(_lib.abft_injector_set_targets(self._p, mask, int(which),
                                                     int(max_firings)),
                      "abft_injector_set_targets")
        self.spec = spec

    def close(self):
        p = getattr(self, "_p", None)
        if p:
            self._p = None
            _lib.abft_injector_destroy(p)

    @property
    def _ptr(self):
        if not getattr(self, "_p", None):
            raise error_for(Status.NOT_INITIALIZED, "abft.Injector (closed)")
        return self._p

    def attach(self):
        """Make the injector the handle's hook (replacing a hook set with set_hook)."""
        self._handle._check(_lib.abft_injector_attach(self._ptr), "abft_injector_attach")
        self._handle._hook_fn = self._handle._hook_c = None

    def detach(self):
        self._handle._check(_lib.abft_injector_detach(self._ptr), "abft_injector_detach")

    def arm(self, seed):
        """Reset the record and the firing count, take a new seed (before each call)."""
        self._handle._check(_lib.abft_injector_arm(self._ptr, int(seed) & 0xFFFFFFFFFFFFFFFF),
                            "abft_injector_arm")

    @property
    def flips(self):
        """The flips since the last arming (Flip records)."""
        fp = ctypes.POINTER(_lib.Flip)()
        n = ctypes.c_int64(0)
        self._handle._check(_lib.abft_injector_flips(self._ptr, _byref(fp), _byref(n)),
                            "abft_injector_flips")
        return [Flip._from_c(fp[i]) for i in range(n.value)]

    def __enter__(self):
        self.attach()
        return self

    def __exit__(self, *exc):
        try:
            self.detach()
        finally:
            self.close()
