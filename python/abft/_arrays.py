"""Arrays as the library sees them: a pointer, a column-major matrix and its leading
dimension, with no copy.

A 2-D array whose elements are laid out with unit stride down its columns (Fortran order,
or a column slice of one) is the column-major matrix itself; one with unit stride along its
rows (C order, or a row slice of one) is, read column-major, its transpose, and is passed
as that transposed view (`t` = True). Anything else (no unit stride, negative strides, a
leading dimension that is not a multiple of the element size) is refused, naming the
argument.

Host arrays: NumPy arrays and CPU PyTorch tensors. Device arrays: PyTorch CUDA tensors, CuPy
arrays, and anything with __cuda_array_interface__ or a DLPack CUDA device.
"""

import ctypes
import sys

import numpy as np

from ._errors import argument_error

_DT = {np.dtype(np.float64): "d", np.dtype(np.float32): "s"}
_ITEM = {"d": 8, "s": 4, "q": 8, "i": 4}
_NP_OF = {"d": np.float64, "s": np.float32, "q": np.int64, "i": np.int32}
_NAMES = {"d": "float64", "s": "float32", "q": "int64", "i": "int32"}

# DLPack (dlpack.h)
_kDLCPU, _kDLCUDA, _kDLCUDAHost, _kDLCUDAManaged = 1, 2, 3, 13


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _numpy_data_reader():
    """A fast reader of a NumPy array's data pointer: the `data` field that follows the
    object header in NumPy's array struct (PyArrayObject_fields, the same in NumPy 1 and 2),
    read in 0.2 us where x.ctypes.data takes about 2 us (three arrays a gemm call). Used only
    when it reads what x.ctypes.data says for a few test arrays (CPython with the usual
    object header), else x.ctypes.data itself."""
    off = object.__basicsize__
    read = ctypes.c_size_t.from_address
    try:
        base = np.zeros((6, 5))
        tests = (base, base[2:, 1:], np.zeros(3, dtype=np.float32)[1:], base.T,
                 np.asfortranarray(base)[1:4])
        if sys.implementation.name == "cpython" and all(
                read(id(t) + off).value == t.ctypes.data for t in tests):
            return lambda x: read(id(x) + off).value
    except Exception:  # noqa: BLE001 - the safe way below
        pass
    return lambda x: x.ctypes.data


_np_data = _numpy_data_reader()


class Arr:
    """One array argument: kind ('numpy', 'torch', 'cupy', 'cai', 'dlpack'), device
    ('cpu' or 'cuda'), device_id, ptr, shape (rows, cols) of the Python array, prec ('d',
    's', 'q' int64, 'i' int32), t (stored transposed: the column-major matrix is its
    transpose), ld, stream (the producer's current stream for device arrays, or None),
    obj (the array, kept alive)."""

    __slots__ = ("kind", "device", "device_id", "ptr", "shape", "prec", "t", "ld", "stream",
                 "obj", "keep", "ndim")

    @property
    def rows(self):
        return self.shape[0]

    @property
    def cols(self):
        return self.shape[1]

    @property
    def mrows(self):  # rows of the column-major matrix the library sees
        return self.shape[1] if self.t else self.shape[0]

    @property
    def mcols(self):
        return self.shape[0] if self.t else self.shape[1]


def _is_torch(x):
    m = type(x).__module__
    return m.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "stride")


def _is_cupy(x):
    return type(x).__module__.startswith("cupy") and hasattr(x, "data") and hasattr(x, "device")


def _layout(a, name, shape, strides_elems, allow_1d):
    """Sets a.shape, a.t, a.ld from the shape and strides (in elements)."""
    if len(shape) == 1 and allow_1d:
        n = shape[0]
        s = strides_elems[0] if strides_elems is not None else 1
        if n > 1 and s != 1:
            raise argument_error(name, "a 1-D array needs unit stride (stride %d)" % s)
        a.shape, a.t, a.ld, a.ndim = (n, 1), False, max(1, n), 1
        return
    if len(shape) != 2:
        raise argument_error(name, "expected a 2-D array%s, got %d dimensions" % (
            " (or 1-D)" if allow_1d else "", len(shape)))
    r, c = int(shape[0]), int(shape[1])
    if strides_elems is None:  # C-contiguous by convention (CAI, DLPack)
        strides_elems = (c, 1)
    s0, s1 = int(strides_elems[0]), int(strides_elems[1])
    a.shape, a.ndim = (r, c), 2
    if r == 0 or c == 0:  # nothing is read or written: any strides will do
        a.t, a.ld = False, max(1, r)
        return
    # column-major: unit stride down a column, columns at least r apart
    if (r <= 1 or s0 == 1) and (c <= 1 or s1 >= max(1, r)):
        a.t, a.ld = False, (s1 if c > 1 else max(1, r))
        return
    if (c <= 1 or s1 == 1) and (r <= 1 or s0 >= max(1, c)):
        a.t, a.ld = True, (s0 if r > 1 else max(1, c))
        return
    raise argument_error(name, "unsupported memory layout (strides %s elements, shape %s): "
                         "the library needs unit stride along the rows (C order) or the "
                         "columns (Fortran order); pass a contiguous array"
                         % ((s0, s1), (r, c)))


def as_arr(x, name, write=False, allow_1d=False, ints=False, stream=True):
    """An Arr for array argument `x` named `name`; InvalidValueError naming it otherwise.
    stream: look up the current stream of a device array (the first array of a call)."""
    a = Arr()
    a.obj, a.keep, a.stream = x, None, None
    if isinstance(x, np.ndarray):
        a.kind, a.device, a.device_id = "numpy", "cpu", None
        dt = x.dtype
        ch = dt.char
        if ints:
            prec = "q" if ch in "lq" and dt.itemsize == 8 else "i" if ch in "il" and \
                dt.itemsize == 4 else None
        else:
            prec = "d" if ch == "d" else "s" if ch == "f" else None
        if prec is None or not dt.isnative:
            raise argument_error(name, "dtype %s is not supported (%s)" % (
                dt, "int64 or int32 pivots" if ints else "float64 or float32, native byte order"))
        fl = x.flags
        if write and not fl.writeable:
            raise argument_error(name, "the array is read-only and would be written")
        if not fl.aligned:
            raise argument_error(name, "the array is not aligned")
        a.prec, a.ptr = prec, _np_data(x)
        item = dt.itemsize
        st = x.strides
        if x.ndim == 2:
            s0, s1 = st
            r, c = x.shape
            # the common cases first: contiguous in either order
            if s0 == item and (c <= 1 or s1 == item * r) and r > 0:
                a.shape, a.ndim, a.t, a.ld = (r, c), 2, False, r
                return a
            if s1 == item and (r <= 1 or s0 == item * c) and c > 0 and r > 1:
                a.shape, a.ndim, a.t, a.ld = (r, c), 2, True, c
                return a
        if any(v % item for v in st):
            raise argument_error(name, "strides %s are not multiples of the element size"
                                 % (st,))
        _layout(a, name, x.shape, tuple(v // item for v in st), allow_1d)
        return a
    if _is_torch(x):
        return _torch_arr(a, x, name, write, allow_1d, ints, stream)
    if _is_cupy(x) or hasattr(x, "__cuda_array_interface__"):
        return _cai_arr(a, x, name, allow_1d, ints, stream)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _dlpack_arr(a, x, name, allow_1d, ints)
    if isinstance(x, (list, tuple)) or np.isscalar(x):
        raise argument_error(name, "expected an array (NumPy, PyTorch, CuPy, or one with "
                             "__cuda_array_interface__ or __dlpack__), got %s: convert it "
                             "with numpy.asarray(..., dtype=numpy.float64, order='F')"
                             % type(x).__name__)
    raise argument_error(name, "expected an array, got %s" % type(x).__name__)


_TORCH = None  # (float dtypes, int dtypes, strided, the current raw stream of a device)


def _torch_tables():
    global _TORCH
    import torch
    # torch._C._cuda_getCurrentRawStream(index) is what torch.cuda.current_stream(index)
    # .cuda_stream reads, without making a Stream object (TorchInductor calls it per
    # kernel launch); where it is missing, the public call
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        def raw(index):
            return torch.cuda.current_stream(index).cuda_stream
    _TORCH = ({torch.float64: "d", torch.float32: "s"},
              {torch.int64: "q", torch.int32: "i"}, torch.strided, raw)
    return _TORCH


def _torch_arr(a, x, name, write, allow_1d, ints, stream):
    import torch
    floats, intd, strided, raw_stream = _TORCH or _torch_tables()
    a.kind = "torch"
    prec = (intd if ints else floats).get(x.dtype)
    if prec is None:
        raise argument_error(name, "dtype %s is not supported (%s)" % (
            x.dtype, "torch.int64 pivots" if ints else "torch.float64 or torch.float32"))
    dev = x.device
    if dev.type == "cuda":
        a.device, a.device_id = "cuda", dev.index if dev.index is not None else \
            torch.cuda.current_device()
        if stream:
            a.stream = raw_stream(a.device_id)
    elif dev.type == "cpu":
        a.device, a.device_id = "cpu", None
    else:
        raise argument_error(name, "tensors on device %s are not supported (cpu or cuda)" % dev)
    if x.layout != strided:
        raise argument_error(name, "only strided (dense) tensors are supported")
    if write and x.requires_grad and x.is_leaf:
        raise argument_error(name, "a leaf tensor that requires grad cannot be written in place")
    st = x.stride()
    if any(s < 0 for s in st):
        raise argument_error(name, "negative strides are not supported")
    a.prec, a.ptr = prec, x.data_ptr()
    _layout(a, name, tuple(x.shape), tuple(st), allow_1d)
    return a


def _typestr_prec(ts, name, ints):
    ts = ts.replace("=", "<") if sys.byteorder == "little" else ts.replace("=", ">")
    table = {"<i8": "q", "<i4": "i"} if ints else {"<f8": "d", "<f4": "s"}
    if sys.byteorder != "little":
        table = {k.replace("<", ">"): v for k, v in table.items()}
    prec = table.get(ts)
    if prec is None:
        raise argument_error(name, "typestr %r is not supported (%s)" % (
            ts, "int64 pivots" if ints else "float64 or float32"))
    return prec


def _cai_arr(a, x, name, allow_1d, ints, stream):
    cai = x.__cuda_array_interface__
    a.kind = "cupy" if _is_cupy(x) else "cai"
    a.device = "cuda"
    a.prec = _typestr_prec(cai["typestr"], name, ints)
    ptr, _readonly = cai["data"]
    a.ptr = ptr or 0
    if a.kind == "cupy":
        import cupy
        a.device_id = x.device.id
        if stream:
            a.stream = cupy.cuda.get_current_stream().ptr
    else:
        a.device_id = None
        # Version 3: the stream the producer's data are ordered on (None: no ordering
        # needed; 1: the legacy default stream; 2: the per-thread default stream).
        s = cai.get("stream")
        a.stream = 0 if s == 1 else s  # the legacy default stream is the NULL stream
    item = _ITEM[a.prec]
    st = cai.get("strides")
    if st is not None:
        if any(v % item or v < 0 for v in st):
            raise argument_error(name, "strides %s are not non-negative multiples of the "
                                 "element size" % (tuple(st),))
        st = tuple(v // item for v in st)
    _layout(a, name, tuple(cai["shape"]), st, allow_1d)
    return a


def _dlpack_arr(a, x, name, allow_1d, ints):
    dev_type, dev_id = x.__dlpack_device__()
    dev_type = int(dev_type)
    if dev_type in (_kDLCPU, _kDLCUDAHost):
        # A host array: NumPy reads it without a copy.
        try:
            arr = np.from_dlpack(x)
        except Exception as e:  # noqa: BLE001 - the producer's own error, reported as ours
            raise argument_error(name, "cannot read the host array through DLPack: %s" % e)
        b = as_arr(arr, name, write=True, allow_1d=allow_1d, ints=ints)
        b.keep = arr
        b.obj = x
        return b
    if dev_type not in (_kDLCUDA, _kDLCUDAManaged):
        raise argument_error(name, "DLPack device type %d is not supported (CPU or CUDA)"
                             % dev_type)
    try:
        cap = x.__dlpack__(stream=None)
    except TypeError:
        cap = x.__dlpack__()
    ptr = _PyCapsule_GetPointer(cap, b"dltensor")
    t = _DLTensor.from_address(ptr)  # DLManagedTensor begins with its DLTensor
    a.kind, a.device, a.device_id, a.keep = "dlpack", "cuda", int(dev_id), cap
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if lanes != 1:
        raise argument_error(name, "vector dtypes are not supported")
    if ints:
        prec = {(0, 64): "q", (0, 32): "i"}.get((code, bits))
    else:
        prec = {(2, 64): "d", (2, 32): "s"}.get((code, bits))
    if prec is None:
        raise argument_error(name, "DLPack dtype (code %d, %d bits) is not supported" % (code, bits))
    a.prec = prec
    a.ptr = (t.data or 0) + t.byte_offset
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] for i in range(t.ndim))
    if strides is not None and any(s < 0 for s in strides):
        raise argument_error(name, "negative strides are not supported")
    a.stream = None
    _layout(a, name, shape, strides, allow_1d)
    return a


# ---- new arrays like an argument -------------------------------------------------------

def empty_like(a, shape, prec, order, name):
    """A new array of `shape` (Python orientation), dtype `prec` and memory order 'F' or 'C',
    on the device and in the framework of Arr `a`."""
    if a.kind == "numpy":
        return np.empty(shape, dtype=_NP_OF[prec], order=order)
    if a.kind == "torch":
        import torch
        dt = {"d": torch.float64, "s": torch.float32, "q": torch.int64, "i": torch.int32}[prec]
        dev = a.obj.device
        if len(shape) == 1:
            return torch.empty(shape, dtype=dt, device=dev)
        r, c = shape
        if order == "C":
            return torch.empty((r, c), dtype=dt, device=dev)
        return torch.empty_strided((r, c), (1, max(1, r)), dtype=dt, device=dev)
    if a.kind == "cupy":
        import cupy
        with cupy.cuda.Device(a.device_id):
            return cupy.empty(shape, dtype=_NP_OF[prec], order=order)
    raise argument_error(name, "cannot allocate a result like a %s array: pass the output "
                         "array (NumPy, PyTorch or CuPy arrays are allocated for you)" % a.kind)


def copy_fortran(a, name):
    """A Fortran-ordered copy of Arr a's array (same framework and device)."""
    x = a.obj
    if a.kind == "numpy":
        return np.array(x, order="F", copy=True)
    if a.kind == "torch":
        out = empty_like(a, tuple(x.shape), a.prec, "F", name)
        with _torch_no_grad():
            out.copy_(x)
        return out
    if a.kind == "cupy":
        import cupy
        with cupy.cuda.Device(a.device_id):
            return cupy.array(x, order="F", copy=True)
    raise argument_error(name, "cannot copy a %s array: pass a Fortran-ordered array and "
                         "overwrite=True, or a NumPy, PyTorch or CuPy array" % a.kind)


def _torch_no_grad():
    import torch
    return torch.no_grad()
