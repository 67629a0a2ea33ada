"""abft: algorithm-based fault tolerance for GEMM and LU, from Python.

    import numpy as np, abft
    h = abft.Handle("cpu")                     # "auto", "cpu" or "cuda"
    C, report = h.gemm(A, B)                   # protected C = A·B
    LU, ipiv, report = h.getrf(A)              # protected LU
    X, report = h.getrs(LU, ipiv, b)           # protected solve
    records, summary = abft.campaign(op="gemm", trials=500, controls=100)

The package calls libabft (carried inside it) through ctypes; docs/python.md has the whole
API, the array and stream rules, the errors, the campaigns, and the PyTorch operator
(abft.torch).
"""

from . import _lib
from ._enums import (Action, Backend, BitClass, BoundMode, CampaignOp, ChecksumKind, Factor,
                     FaultModel, Math, Operation, Outcome, Side, Site, Space, Status)
from ._errors import (AllocFailedError, CublasError, CudaError, CurandError, CusolverError,
                      Error, ExecutionFailedError, InternalError, InvalidValueError,
                      NonFiniteInputError, NotInitializedError, NotSupportedError,
                      SingularError)
from ._handle import DeviceView, FaultSpec, GemmPlan, Handle, Injector, LuPlan
from ._report import Fault, Flip, Report
from ._campaign import (CampaignInterrupted, CampaignResult, CampaignSummary, campaign,
                        plot_campaign)

__version__ = _lib.abft_version_string().decode()
version_number = _lib.abft_version_number()

__all__ = [
    "Handle", "GemmPlan", "LuPlan", "Injector", "FaultSpec", "DeviceView",
    "Report", "Fault", "Flip",
    "Status", "Backend", "Operation", "ChecksumKind", "BoundMode", "Math", "Action",
    "Factor", "Site", "Side", "BitClass", "Outcome", "FaultModel", "CampaignOp", "Space",
    "campaign", "plot_campaign", "CampaignResult", "CampaignSummary", "CampaignInterrupted",
    "Error", "NotInitializedError", "InvalidValueError", "AllocFailedError",
    "NotSupportedError", "NonFiniteInputError", "CudaError", "CublasError",
    "CusolverError", "CurandError", "ExecutionFailedError", "SingularError", "InternalError",
    "cuda_built", "cuda_available", "flip_bits", "__version__",
]


def cuda_built():
    """True when this build of libabft contains the CUDA backend."""
    return _lib.CUDA_BUILT


def cuda_available():
    """True when a CUDA handle can be made here (the backend is built and a GPU answers)."""
    if not _lib.CUDA_BUILT:
        return False
    try:
        Handle("cuda").close()
        return True
    except Error:
        return False


def flip_bits(value, bit, width=1, dtype="float64"):
    """Flip bits [bit, bit + width) of one value (abft_flip_bits_d / _s)."""
    if str(dtype) in ("float32", "s", "<class 'numpy.float32'>"):
        return _lib.abft_flip_bits_s(float(value), int(bit), int(width))
    return _lib.abft_flip_bits_d(float(value), int(bit), int(width))
