"""The library's enums as Python IntEnums (same values as the C headers).

str() of a member is the library's own name for the value, from its name function
(abft_action_name, abft_hook_site_name, ...): "corrected", "after_gemm", "L", ...
Arguments that take an enum accept the member, its int value or that name (any case).
"""

import enum

from . import _lib


class _CEnum(enum.IntEnum):
    @property
    def c_name(self):
        return _C_NAMES[type(self)][int(self)]

    def __str__(self):
        return self.c_name

    def __format__(self, spec):
        return format(str(self), spec)

    @classmethod
    def parse(cls, value, argument):
        """The member for an enum, int or name; InvalidValueError naming `argument`."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower()
            for m in cls:
                if m.c_name.lower() == key or m.name.lower() == key:
                    return m
        elif isinstance(value, bool):
            pass
        elif isinstance(value, int):
            try:
                return cls(value)
            except ValueError:
                pass
        from ._errors import argument_error
        raise argument_error(argument, "%r is not a %s (one of %s)" % (
            value, cls.__name__, ", ".join(repr(m.c_name) for m in cls)))


class Status(_CEnum):
    SUCCESS = 0
    NOT_INITIALIZED = 1
    INVALID_VALUE = 2
    ALLOC_FAILED = 3
    NOT_SUPPORTED = 4
    NON_FINITE_INPUT = 5
    CUDA_ERROR = 6
    CUBLAS_ERROR = 7
    CUSOLVER_ERROR = 8
    CURAND_ERROR = 9
    EXECUTION_FAILED = 10
    SINGULAR = 11
    INTERNAL_ERROR = 12

    @property
    def description(self):
        return _lib.abft_status_string(int(self)).decode()


class Backend(_CEnum):
    AUTO = 0
    CPU = 1
    CUDA = 2


class Operation(_CEnum):
    N = 0
    T = 1


class ChecksumKind(_CEnum):
    ROW = 0
    FULL = 1


class BoundMode(_CEnum):
    WORST_CASE = 0
    PROBABILISTIC = 1
    TIGHT = 2


class Math(_CEnum):
    HANDLE = 0
    IEEE = 1
    TF32 = 2
    BF16X9 = 3


class Action(_CEnum):
    NONE = 0
    CORRECTED = 1
    UNCORRECTABLE = 2
    RECOMPUTED = 3
    CHECKSUM_FAULT = 4


class Factor(_CEnum):
    NONE = 0
    L = 1
    U = 2


class Site(_CEnum):
    AFTER_ENCODE = 0
    MID_GEMM = 1
    AFTER_GEMM = 2
    CHECKSUM = 3
    LU_PANEL = 4
    AFTER_LU = 5


class Side(_CEnum):
    """faults[].side: the checksum that found the fault (no C name function: 0 row, 1 column)."""
    ROW = 0
    COLUMN = 1


class BitClass(_CEnum):
    """abft_bit_class_t (no C name function: the enumerators' suffixes)."""
    ANY = 0
    SIGN = 1
    EXPONENT = 2
    MANTISSA_HIGH = 3
    MANTISSA_LOW = 4
    EXACT = 5


class Outcome(_CEnum):
    MASKED = 0
    CORRECTED = 1
    UNCORRECTABLE = 2
    GRAY = 3
    SDC = 4
    MISCORRECTED = 5
    FALSE_POSITIVE = 6
    CLEAN = 7
    NOT_FIRED = 8
    ERROR = 9
    UNDETECTED = 10


class FaultModel(_CEnum):
    """abft_fault_model_t: how a full-space trial chose the elements of its fault."""
    SPEC = -1
    ONE = 0
    ROW2 = 1
    COL2 = 2
    SAME_BIT = 3
    BURST = 4


class CampaignOp(_CEnum):
    """abft_campaign_op_t (no C name function: the tool's names, "getrf_online" for
    "getrf-online")."""
    GEMM = 0
    GETRF = 1
    GETRF_ONLINE = 2


class Space(_CEnum):
    """abft_campaign_space_t (no C name function)."""
    FIXED = 0
    FULL = 1


# The C function that names each enum's values; the names are read from the library.
NAME_FUNCTIONS = {
    Status: "abft_status_name",
    Backend: "abft_backend_name",
    Operation: "abft_operation_name",
    ChecksumKind: "abft_checksum_kind_name",
    BoundMode: "abft_bound_mode_name",
    Math: "abft_math_name",
    Action: "abft_action_name",
    Factor: "abft_factor_name",
    Site: "abft_hook_site_name",
    Outcome: "abft_outcome_name",
    FaultModel: "abft_fault_model_name",
}

_C_NAMES = {}
for _cls in (Status, Backend, Operation, ChecksumKind, BoundMode, Math, Action, Factor, Site,
             Side, BitClass, Outcome, FaultModel, CampaignOp, Space):
    _fn = NAME_FUNCTIONS.get(_cls)
    if _fn is None:
        _C_NAMES[_cls] = {int(m): m.name.lower() for m in _cls}
    else:
        _f = getattr(_lib, _fn)
        _C_NAMES[_cls] = {int(m): _f(int(m)).decode() for m in _cls}
