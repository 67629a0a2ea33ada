"""abft.Error and one subclass per error status of the library.

Every status other than ABFT_STATUS_SUCCESS that a call returns is raised as the subclass
for that status. The exception names the status (abft_status_name), the C function and,
for ABFT_STATUS_INVALID_VALUE, the argument the library rejected: its 1-based position in
the C function's parameter list (abft_last_invalid_argument), the C parameter's name, and
the Python argument it came from. Checks made in Python before any call (dtype, layout,
shape, device) raise InvalidValueError too, naming the Python argument.
"""

from . import _lib
from ._enums import Status


class Error(Exception):
    """A status other than success from libabft (or a check of this package)."""

    status = None  # the Status, set per subclass

    def __init__(self, message, *, function=None, position=None, c_argument=None,
                 argument=None, report=None, status=None):
        super().__init__(message)
        if status is not None:
            self.status = Status(status)
        self.function = function
        self.position = position
        self.c_argument = c_argument
        self.argument = argument
        self.report = report

    @property
    def status_name(self):
        return self.status.c_name if self.status is not None else None


class NotInitializedError(Error):
    status = Status.NOT_INITIALIZED


class InvalidValueError(Error, ValueError):
    status = Status.INVALID_VALUE


class AllocFailedError(Error, MemoryError):
    status = Status.ALLOC_FAILED


class NotSupportedError(Error):
    status = Status.NOT_SUPPORTED


class NonFiniteInputError(Error, ValueError):
    """An input held NaN or Inf: nothing was computed, the outputs are untouched;
    .report has nonfinite_input = True."""
    status = Status.NON_FINITE_INPUT


class CudaError(Error):
    status = Status.CUDA_ERROR


class CublasError(Error):
    status = Status.CUBLAS_ERROR


class CusolverError(Error):
    status = Status.CUSOLVER_ERROR


class CurandError(Error):
    status = Status.CURAND_ERROR


class ExecutionFailedError(Error):
    status = Status.EXECUTION_FAILED


class SingularError(Error):
    """U has an exactly zero diagonal entry (LAPACK's info > 0). The factors were computed
    and checked: .lu, .ipiv, .info (1-based index of the first zero pivot) and .report."""
    status = Status.SINGULAR

    lu = ipiv = info = None


class InternalError(Error):
    status = Status.INTERNAL_ERROR


ERRORS = {cls.status: cls for cls in (
    NotInitializedError, InvalidValueError, AllocFailedError, NotSupportedError,
    NonFiniteInputError, CudaError, CublasError, CusolverError, CurandError,
    ExecutionFailedError, SingularError, InternalError)}


def error_for(status, function, names=None, report=None):
    """The exception for `status` returned by C function `function`. `names` maps the C
    parameter names to the Python arguments they came from (a call that passes transposed
    views maps A to B and back)."""
    try:
        st = Status(status)
    except ValueError:
        st = None
    cname = _lib.abft_status_name(status).decode()
    text = _lib.abft_status_string(status).decode()
    msg = "%s returned %s (%s)" % (function, cname, text)
    position = c_argument = argument = None
    if st == Status.INVALID_VALUE:
        pos = _lib.abft_last_invalid_argument()
        params = _lib.PARAMS.get(function, ())
        if 0 < pos <= len(params):
            position, c_argument = pos, params[pos - 1]
            argument = (names or {}).get(c_argument)
            msg += ": argument %d (%s) of %s" % (pos, c_argument, function)
            if argument is not None:
                msg += ", Python argument %r" % argument
        elif pos == 0:
            msg += ": no single argument at fault"
    cls = ERRORS.get(st, Error)
    return cls(msg, function=function, position=position, c_argument=c_argument,
               argument=argument, report=report, status=status if st is not None else None)


def argument_error(argument, message, cls=None):
    """A check of this package failed for Python argument `argument`."""
    cls = cls or InvalidValueError
    return cls("argument %r: %s (%s)" % (argument, message, cls.status.c_name),
               argument=argument)
