"""Loads the package's copy of libabft and declares its C API for ctypes.

The library is abft/libabft.so beside this file (built by python/CMakeLists.txt). A build
with the CUDA backend needs the CUDA runtime, cuBLAS, cuSOLVER and cuRAND of the toolkit it
was built with (the same major version): the library's run path names the package folder
and the toolkit's library directory of the build machine; where the loader finds them
neither there nor in its own directories, they are looked for in ABFT_CUDA_LIBRARY_PATH,
CUDA_HOME, CUDA_PATH, /usr/local/cuda and the nvidia-* wheels on sys.path, and preloaded.

Structures are declared here by hand and checked against the sizes and offsets that the
build wrote into _layout.py from the headers it compiled; a structure the library has grown
(new trailing fields) is padded to the library's size, so the library never writes past a
buffer of this package.
"""

import ctypes
import glob
import os
import re
import sys

from . import _build, _layout

_HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY_PATH = os.path.join(_HERE, "libabft.so")

c_int64 = ctypes.c_int64
c_int32 = ctypes.c_int32
c_int = ctypes.c_int
c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_double = ctypes.c_double
c_float = ctypes.c_float
c_char = ctypes.c_char
c_void_p = ctypes.c_void_p
c_char_p = ctypes.c_char_p


# ---- loading ---------------------------------------------------------------------------

def _cuda_search_dirs():
    dirs = []
    for var in ("ABFT_CUDA_LIBRARY_PATH",):
        dirs += [d for d in os.environ.get(var, "").split(os.pathsep) if d]
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        root = os.environ.get(var)
        if root:
            dirs += [os.path.join(root, "lib64"), os.path.join(root, "lib"),
                     os.path.join(root, "targets", "x86_64-linux", "lib")]
    if _build.CUDA_LIBRARY_DIR:
        dirs.append(_build.CUDA_LIBRARY_DIR)
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
    dirs += sorted(glob.glob("/usr/local/cuda-*/lib64"), reverse=True)
    # The CUDA libraries that PyTorch, CuPy and JAX wheels bring (nvidia-cublas, ...).
    for p in sys.path:
        nv = os.path.join(p or ".", "nvidia")
        if os.path.isdir(nv):
            dirs += sorted(glob.glob(os.path.join(nv, "*", "lib")))
            dirs += sorted(glob.glob(os.path.join(nv, "*", "lib64")))
    seen, out = set(), []
    for d in dirs:
        if d not in seen and os.path.isdir(d):
            seen.add(d)
            out.append(d)
    return out


_MISSING = re.compile(r"(lib[\w.+-]+?\.so(?:\.[0-9]+)*): cannot open shared object file")


def _load():
    preloaded = []
    while True:
        try:
            return ctypes.CDLL(LIBRARY_PATH, mode=ctypes.RTLD_LOCAL)
        except OSError as e:
            m = _MISSING.search(str(e))
            if m is None or m.group(1) in preloaded or len(preloaded) > 16:
                raise ImportError(
                    "abft: cannot load %s: %s (docs/python.md, 'Install': the CPU build "
                    "needs the system's BLAS, LAPACK and OpenMP runtime, a CUDA build also "
                    "the CUDA %s runtime, cuBLAS, cuSOLVER and cuRAND; set "
                    "ABFT_CUDA_LIBRARY_PATH to their folder)"
                    % (LIBRARY_PATH, e, _build.CUDA_VERSION or "")) from e
            name = m.group(1)
            for d in _cuda_search_dirs():
                cand = os.path.join(d, name)
                if os.path.exists(cand):
                    # Loaded globally under its soname, it satisfies libabft's dependency.
                    ctypes.CDLL(cand, mode=ctypes.RTLD_GLOBAL)
                    break
            else:
                raise ImportError(
                    "abft: cannot load %s: %s is missing and was not found in %s; set "
                    "ABFT_CUDA_LIBRARY_PATH to the folder that holds it (docs/python.md)"
                    % (LIBRARY_PATH, name, ", ".join(_cuda_search_dirs()) or "no folder"))
            preloaded.append(name)


lib = _load()


# ---- structures ------------------------------------------------------------------------

def _struct(cname, fields, pyname):
    """A ctypes Structure with the given fields, checked against the build's layout and
    padded to the library's size."""
    base = type(pyname + "_known", (ctypes.Structure,), {"_fields_": fields})
    size = _layout.SIZES[cname]
    offsets = _layout.OFFSETS[cname]
    for name, _ in fields:
        if name.startswith("_"):
            continue
        if name not in offsets or getattr(base, name).offset != offsets[name]:
            raise ImportError("abft: the package's declaration of %s.%s does not match the "
                              "library's headers (offset %s, library %s): rebuild the package"
                              % (cname, name, getattr(base, name).offset, offsets.get(name)))
    pad = size - ctypes.sizeof(base)
    if pad < 0:
        raise ImportError("abft: the package's %s is larger than the library's (%d > %d)"
                          % (cname, ctypes.sizeof(base), size))
    if pad:
        fields = list(fields) + [("_tail", ctypes.c_ubyte * pad)]
    return type(pyname, (ctypes.Structure,), {"_fields_": fields})


Fault = _struct("abft_fault_t", [
    ("row", c_int64), ("col", c_int64), ("delta", c_double), ("ratio", c_double),
    ("action", c_int32), ("factor", c_int32), ("side", c_int32), ("_reserved", c_int32),
], "Fault")

REPORT_MAX_FAULTS = _layout.REPORT_MAX_FAULTS

Report = _struct("abft_report_t", [
    ("checked", c_int64), ("detected", c_int64), ("corrected", c_int64),
    ("uncorrectable", c_int64), ("recomputed", c_int64), ("checksum_faults", c_int64),
    ("nonfinite_input", c_int32), ("spread", c_int32),
    ("max_ratio", c_double), ("unit_roundoff", c_double),
    ("nfaults", c_int64), ("faults", Fault * REPORT_MAX_FAULTS),
    ("worst_case_rows", c_int64),
], "Report")

FaultSpec = _struct("abft_fault_spec_t", [
    ("bit_class", c_int32), ("bit", c_int32), ("width", c_int32), ("nelems", c_int32),
    ("row", c_int64), ("col", c_int64),
], "FaultSpec")

Flip = _struct("abft_flip_t", [
    ("site", c_int32), ("which", c_int32), ("firing", c_int32), ("precision", c_char),
    ("_pad", c_char * 3), ("row", c_int64), ("col", c_int64), ("bit", c_int32),
    ("width", c_int32), ("old_value", c_double), ("new_value", c_double),
    ("old_bits", c_uint64), ("new_bits", c_uint64),
], "Flip")


LuOptions = _struct("abft_lu_options_t", [
    ("nb", c_int64), ("check_every", c_int64), ("panel_nb", c_int64), ("lookahead", c_int64),
], "LuOptions")

# ---- campaigns (abft_inject.h) -----------------------------------------------------------

SITE_COUNT = _layout.SITE_COUNT
OUTCOME_COUNT = _layout.OUTCOME_COUNT
FAULT_MODEL_COUNT = _layout.FAULT_MODEL_COUNT
INJECT_MAX_ELEMS = _layout.INJECT_MAX_ELEMS

# volatile sig_atomic_t, the campaign's stop flag
if _layout.SIZES["sig_atomic_t"] != ctypes.sizeof(c_int):
    raise ImportError("abft: sig_atomic_t is %d bytes here, the package assumes an int"
                      % _layout.SIZES["sig_atomic_t"])
sig_atomic_t = c_int

TrialConfig = _struct("abft_trial_config_t", [
    ("m", c_int64), ("n", c_int64), ("k", c_int64),
    ("lda", c_int64), ("ldb", c_int64), ("ldc", c_int64),
    ("alpha", c_double), ("beta", c_double), ("c_scale", c_double),
    ("transa", c_int32), ("transb", c_int32), ("checksum_kind", c_int32),
    ("bound_mode", c_int32), ("bound_factor", c_double), ("math_mode", c_int32),
    ("recompute", c_int32), ("lu_recovery", c_int32), ("random_checksum", c_int32),
    ("nb", c_int64), ("check_every", c_int64), ("panel_nb", c_int64), ("lookahead", c_int64),
    ("model", c_int32), ("width", c_int32), ("call", c_int32), ("calls", c_int32),
], "TrialConfig")

Trial = _struct("abft_trial_t", [
    ("index", c_int64), ("control", c_int32), ("outcome", c_int32), ("seed", c_uint64),
    ("set", c_int64), ("site", c_int32), ("which", c_int32), ("status", c_int32),
    ("_pad", c_int32), ("rho", c_double), ("rho_check", c_double), ("seconds", c_double),
    ("nflips", c_int64), ("flips", ctypes.POINTER(Flip)), ("report", Report),
    ("config", TrialConfig), ("rel_change", c_double),
], "Trial")

PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int64, c_int64)
ON_TRIAL_FN = ctypes.CFUNCTYPE(None, c_void_p, ctypes.POINTER(Trial))

CampaignConfig = _struct("abft_campaign_config_t", [
    ("op", c_int32), ("precision", c_char), ("_pad", c_char * 3),
    ("m", c_int64), ("n", c_int64), ("k", c_int64), ("trials", c_int64),
    ("controls", c_int64), ("refresh", c_int64), ("sites", c_uint32), ("backend", c_int32),
    ("spec", FaultSpec), ("checksum_kind", c_int32), ("bound_mode", c_int32),
    ("bound_factor", c_double), ("guarantee", c_double), ("seed", c_uint64),
    ("only_trial", c_int64), ("lu_recovery", c_int32), ("space", c_int32),
    ("progress", PROGRESS_FN), ("on_trial", ON_TRIAL_FN), ("user", c_void_p),
    ("jobs", c_int32), ("random_checksum", c_int32),
    ("stop", ctypes.POINTER(sig_atomic_t)),
], "CampaignConfig")

CampaignSummary = _struct("abft_campaign_summary_t", [
    ("total", c_int64), ("count", c_int64 * OUTCOME_COUNT),
    ("by_site", (c_int64 * OUTCOME_COUNT) * SITE_COUNT),
    ("by_bit", (c_int64 * OUTCOME_COUNT) * 64),
    ("max_control_ratio", c_double), ("max_corrected_rho", c_double),
    ("max_undetected_rho", c_double), ("seconds", c_double), ("backend", c_int32),
    ("partial", c_int32), ("unit_roundoff", c_double), ("golden_runs", c_int64),
    ("golden_detections", c_int64), ("control_errors", c_int64),
    ("by_model", (c_int64 * OUTCOME_COUNT) * FAULT_MODEL_COUNT),
    ("spread_undetected", c_int64), ("max_undetected_rel", c_double),
], "CampaignSummary")


HOOK_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_int, c_char, c_void_p, c_int64,
                           c_int64, c_int64)

P = ctypes.POINTER
_h = c_void_p  # abft_handle_t, plans, injectors: opaque pointers

# ---- functions: name -> (restype, [(C parameter name, ctypes type), ...]) -----------------
# The parameter names are those of include/abft/*.h (python/tests/test_api.py checks them):
# abft_last_invalid_argument() numbers the rejected argument in this list, from 1.

_S = c_int  # abft_status_t

_gemm = lambda t: [("handle", _h), ("transa", c_int), ("transb", c_int), ("m", c_int64),
                   ("n", c_int64), ("k", c_int64), ("alpha", t), ("A", c_void_p),
                   ("lda", c_int64), ("B", c_void_p), ("ldb", c_int64), ("beta", t),
                   ("C", c_void_p), ("ldc", c_int64), ("report", P(Report))]
_enc = lambda: [("handle", _h), ("plan", _h), ("A", c_void_p), ("lda", c_int64),
                ("B", c_void_p), ("ldb", c_int64), ("C", c_void_p), ("ldc", c_int64)]
_ver = lambda: _enc() + [("report", P(Report))]
_rows = lambda o: [("handle", _h), ("m", c_int64), ("n", c_int64), ("A", c_void_p),
                   ("lda", c_int64), (o, c_void_p), ("ld" + o.lower(), c_int64),
                   (o + "abs", c_void_p), ("ld" + o.lower() + "abs", c_int64)]
_tsmm = [("handle", _h), ("trans", c_int), ("m", c_int64), ("n", c_int64), ("c", c_int64),
         ("A", c_void_p), ("lda", c_int64), ("X", c_void_p), ("ldx", c_int64),
         ("Y", c_void_p), ("ldy", c_int64), ("Xabs", c_void_p), ("ldxabs", c_int64),
         ("Yabs", c_void_p), ("ldyabs", c_int64)]
_dual = [("handle", _h), ("m", c_int64), ("n", c_int64), ("M", c_void_p), ("ldm", c_int64),
         ("c1", c_int64), ("X", c_void_p), ("ldx", c_int64), ("P", c_void_p),
         ("ldp", c_int64), ("c2", c_int64), ("Z", c_void_p), ("ldz", c_int64),
         ("Q", c_void_p), ("ldq", c_int64)]
_getrf = [("handle", _h), ("m", c_int64), ("n", c_int64), ("A", c_void_p), ("lda", c_int64),
          ("ipiv", c_void_p), ("info", P(c_int64)), ("report", P(Report))]
_getrf_online = [("handle", _h), ("m", c_int64), ("n", c_int64), ("A", c_void_p),
                 ("lda", c_int64), ("ipiv", c_void_p), ("options", P(LuOptions)),
                 ("info", P(c_int64)), ("report", P(Report))]
_getrs = [("handle", _h), ("trans", c_int), ("n", c_int64), ("nrhs", c_int64),
          ("A", c_void_p), ("lda", c_int64), ("ipiv", c_void_p), ("B", c_void_p),
          ("ldb", c_int64), ("report", P(Report))]
_inject = [("handle", _h), ("spec", P(FaultSpec)), ("seed", c_uint64), ("m", c_int64),
           ("n", c_int64), ("A", c_void_p), ("lda", c_int64), ("flips", P(Flip)),
           ("nflips", P(c_int64))]

FUNCTIONS = {
    "abft_version_number": (ctypes.c_uint, []),
    "abft_version_string": (c_char_p, []),
    "abft_status_name": (c_char_p, [("status", c_int)]),
    "abft_status_string": (c_char_p, [("status", c_int)]),
    "abft_last_invalid_argument": (c_int, []),
    "abft_cuda_built": (c_int, []),
    "abft_backend_name": (c_char_p, [("backend", c_int)]),
    "abft_operation_name": (c_char_p, [("op", c_int)]),
    "abft_checksum_kind_name": (c_char_p, [("kind", c_int)]),
    "abft_bound_mode_name": (c_char_p, [("mode", c_int)]),
    "abft_action_name": (c_char_p, [("action", c_int)]),
    "abft_factor_name": (c_char_p, [("factor", c_int)]),
    "abft_hook_site_name": (c_char_p, [("site", c_int)]),
    "abft_math_name": (c_char_p, [("math", c_int)]),
    "abft_create": (_S, [("handle", P(_h)), ("backend", c_int)]),
    "abft_destroy": (_S, [("handle", _h)]),
    "abft_get_backend": (_S, [("handle", _h), ("backend", P(c_int))]),
    "abft_set_stream": (_S, [("handle", _h), ("stream", c_void_p)]),
    "abft_get_stream": (_S, [("handle", _h), ("stream", P(c_void_p))]),
    "abft_set_cublas_handle": (_S, [("handle", _h), ("cublas_handle", c_void_p)]),
    "abft_set_cusolver_handle": (_S, [("handle", _h), ("cusolver_handle", c_void_p)]),
    "abft_set_checksum_kind": (_S, [("handle", _h), ("kind", c_int)]),
    "abft_get_checksum_kind": (_S, [("handle", _h), ("kind", P(c_int))]),
    "abft_set_bound_mode": (_S, [("handle", _h), ("mode", c_int), ("factor", c_double)]),
    "abft_get_bound_mode": (_S, [("handle", _h), ("mode", P(c_int)),
                                 ("factor", P(c_double))]),
    "abft_set_recompute": (_S, [("handle", _h), ("enable", c_int)]),
    "abft_set_random_checksum": (_S, [("handle", _h), ("enable", c_int), ("seed", c_uint64)]),
    "abft_get_random_checksum": (_S, [("handle", _h), ("enable", P(c_int)),
                                      ("seed", P(c_uint64))]),
    "abft_set_hook": (_S, [("handle", _h), ("fn", HOOK_FN), ("user", c_void_p)]),
    "abft_set_lu_recovery": (_S, [("handle", _h), ("enable", c_int)]),
    "abft_dchecksum_rows": (_S, _rows("R")),
    "abft_schecksum_rows": (_S, _rows("R")),
    "abft_dchecksum_cols": (_S, _rows("K")),
    "abft_schecksum_cols": (_S, _rows("K")),
    "abft_dtsmm": (_S, _tsmm),
    "abft_ststmm": (_S, _tsmm),
    "abft_ddual": (_S, _dual),
    "abft_sdual": (_S, _dual),
    "abft_dgemm": (_S, _gemm(c_double)),
    "abft_sgemm": (_S, _gemm(c_float)),
    "abft_gemm_plan_create": (_S, [("handle", _h), ("precision", c_char), ("transa", c_int),
                                   ("transb", c_int), ("m", c_int64), ("n", c_int64),
                                   ("k", c_int64), ("alpha", c_double), ("beta", c_double),
                                   ("plan", P(_h))]),
    "abft_gemm_plan_destroy": (_S, [("plan", _h)]),
    "abft_gemm_plan_set_math": (_S, [("plan", _h), ("math", c_int)]),
    "abft_gemm_plan_set_cublas_math": (_S, [("plan", _h), ("cublas_handle", c_void_p)]),
    "abft_dgemm_encode": (_S, _enc()),
    "abft_sgemm_encode": (_S, _enc()),
    "abft_dgemm_verify": (_S, _ver()),
    "abft_sgemm_verify": (_S, _ver()),
    "abft_dgetrf": (_S, _getrf),
    "abft_sgetrf": (_S, _getrf),
    "abft_dgetrf_online": (_S, _getrf_online),
    "abft_sgetrf_online": (_S, _getrf_online),
    "abft_lu_plan_create": (_S, [("handle", _h), ("precision", c_char), ("m", c_int64),
                                 ("n", c_int64), ("plan", P(_h))]),
    "abft_lu_plan_destroy": (_S, [("plan", _h)]),
    "abft_dgetrf_encode": (_S, [("handle", _h), ("plan", _h), ("A", c_void_p),
                                ("lda", c_int64)]),
    "abft_sgetrf_encode": (_S, [("handle", _h), ("plan", _h), ("A", c_void_p),
                                ("lda", c_int64)]),
    "abft_dgetrf_verify": (_S, [("handle", _h), ("plan", _h), ("A", c_void_p),
                                ("lda", c_int64), ("ipiv", c_void_p), ("ipiv_bits", c_int),
                                ("report", P(Report))]),
    "abft_sgetrf_verify": (_S, [("handle", _h), ("plan", _h), ("A", c_void_p),
                                ("lda", c_int64), ("ipiv", c_void_p), ("ipiv_bits", c_int),
                                ("report", P(Report))]),
    "abft_dgetrs": (_S, _getrs),
    "abft_sgetrs": (_S, _getrs),
    # fault injection (abft_inject.h)
    "abft_fault_spec_default": (FaultSpec, []),
    "abft_dinject": (_S, _inject),
    "abft_sinject": (_S, _inject),
    "abft_flip_bits_d": (c_double, [("v", c_double), ("bit", c_int), ("width", c_int)]),
    "abft_flip_bits_s": (c_float, [("v", c_float), ("bit", c_int), ("width", c_int)]),
    "abft_injector_create": (_S, [("handle", _h), ("injector", P(_h))]),
    "abft_injector_destroy": (_S, [("injector", _h)]),
    "abft_injector_set_spec": (_S, [("injector", _h), ("spec", P(FaultSpec))]),
    "abft_injector_set_targets": (_S, [("injector", _h), ("site_mask", c_uint32),
                                       ("which", c_int), ("max_firings", c_int)]),
    "abft_injector_arm": (_S, [("injector", _h), ("seed", c_uint64)]),
    "abft_injector_attach": (_S, [("injector", _h)]),
    "abft_injector_detach": (_S, [("injector", _h)]),
    "abft_injector_flips": (_S, [("injector", _h), ("flips", P(P(Flip))),
                                 ("nflips", P(c_int64))]),
    # campaigns
    "abft_outcome_name": (c_char_p, [("outcome", c_int)]),
    "abft_fault_model_name": (c_char_p, [("model", c_int)]),
    "abft_campaign_config_default": (CampaignConfig, []),
    "abft_campaign_memory": (_S, [("cfg", P(CampaignConfig)), ("host_bytes", P(c_int64)),
                                  ("backend_bytes", P(c_int64))]),
    "abft_campaign_run": (_S, [("cfg", P(CampaignConfig)),
                               ("summary", P(CampaignSummary))]),
    "abft_wilson_interval": (None, [("k", c_int64), ("n", c_int64), ("z", c_double),
                                    ("lo", P(c_double)), ("hi", P(c_double))]),
}

PARAMS = {}
for _name, (_res, _params) in FUNCTIONS.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = [t for _, t in _params]
    PARAMS[_name] = tuple(n for n, _ in _params)
    globals()[_name] = _fn

CUDA_BUILT = bool(lib.abft_cuda_built())


def _cudart():
    """The CUDA runtime libabft loaded (for cudaGetDevice), or None."""
    if not CUDA_BUILT:
        return None
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "/libcudart.so" in path:
                    rt = ctypes.CDLL(path)
                    rt.cudaGetDevice.argtypes = [P(c_int)]
                    rt.cudaGetDevice.restype = c_int
                    return rt
    except OSError:
        pass
    return None


cudart = _cudart()
