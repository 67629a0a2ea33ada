"""PyTorch: the protected matrix product as a custom operator, and nn.Linear layers routed
through it.

    import abft.torch                     # registers torch.ops.abft.mm
    y = torch.ops.abft.mm(a, b)           # a @ b, protected (float32 / float64, CPU or CUDA)
    prot = abft.torch.protect(model, callback=lambda name, report: print(name, report))
    model(x).sum().backward()             # every nn.Linear's product is protected
    prot.stats                            # {"calls": ..., "detected": ..., "corrected": ...}
    prot.remove()                         # the layers' own forward again

abft::mm(Tensor a, Tensor b, int tag=0) -> Tensor is registered with torch.library.custom_op
with a fake (meta) implementation, so torch.compile takes it as one opaque node, and an
autograd formula whose two products (grad·b^T, a^T·grad) are protected too. It runs on a
handle of this package made once per device (handle(device)), on the tensors' current
CUDA stream; the result is a new row-major tensor. The call synchronizes with its
stream (the report is read on the host), so it cannot be captured into a CUDA graph.
"""

import threading
import weakref

import torch

from ._errors import NotSupportedError, argument_error
from ._handle import Handle

__all__ = ["mm", "protect", "Protection", "handle", "stats", "reset_stats"]

_handles = {}  # (device type, index) -> (Handle, Lock)
_handles_lock = threading.Lock()

# tag -> (Protection weak reference, layer name); tag 0: the module-level counters
_sinks = {}
_sinks_lock = threading.Lock()
_next_tag = [1]

_COUNTERS = ("calls", "detected", "corrected", "uncorrectable", "recomputed",
             "checksum_faults")
_global = {k: 0 for k in _COUNTERS}


def _device_key(device):
    dev = torch.device(device) if device is not None else torch.device("cpu")
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    return dev, (dev.type, dev.index)


def _entry(device):
    dev, key = _device_key(device)
    e = _handles.get(key)
    if e is None:
        with _handles_lock:
            e = _handles.get(key)
            if e is None:
                if dev.type == "cpu":
                    h = Handle("cpu")
                elif dev.type == "cuda":
                    with torch.cuda.device(dev):
                        h = Handle("cuda")
                else:
                    raise NotSupportedError("abft.torch: device %s is not supported (cpu or "
                                            "cuda)" % dev)
                e = _handles[key] = (h, threading.Lock())
    return e


def handle(device=None):
    """The abft.Handle the abft::mm calls on `device` (a torch.device, its string, or None
    for the CPU) run on, made on first use: for fault injection (its injector(), set_hook)
    and options (set_bound_mode, checksum_kind, set_random_checksum). One handle per device
    for the process: the backward pass runs on autograd's own threads (one per GPU), and
    they must see the same options and injectors; calls on one device are serialized."""
    return _entry(device)[0]


def _matrix(t, name):
    """t itself when the library can read it (unit stride in one dimension), else a
    contiguous copy (an expanded or otherwise strided tensor)."""
    if t.dim() != 2:
        raise argument_error(name, "abft::mm takes 2-D tensors, got %d dimensions" % t.dim())
    r, c = t.shape
    s0, s1 = t.stride()
    if r == 0 or c == 0:
        return t
    if (r <= 1 or s0 == 1) and (c <= 1 or s1 >= max(1, r)):
        return t
    if (c <= 1 or s1 == 1) and (r <= 1 or s0 >= max(1, c)):
        return t
    return t.contiguous()


def _record(tag, rep):
    with _sinks_lock:
        sink = _sinks.get(tag)
    counters = [_global]
    prot = name = None
    if sink is not None:
        prot = sink[0]()
        name = sink[1]
        if prot is not None:
            counters.append(prot.stats)
            prot.reports_seen += 1
    for c in counters:
        c["calls"] += 1
        c["detected"] += rep.detected
        c["corrected"] += rep.corrected
        c["uncorrectable"] += rep.uncorrectable
        c["recomputed"] += rep.recomputed
        c["checksum_faults"] += rep.checksum_faults
    if prot is not None and prot.callback is not None and (rep.detected or rep.uncorrectable):
        prot.callback(name, rep)


@torch.library.custom_op("abft::mm", mutates_args=())
def mm(a: torch.Tensor, b: torch.Tensor, tag: int = 0) -> torch.Tensor:
    """a @ b through the protected GEMM (float32 or float64, CPU or CUDA, same device)."""
    if a.dtype != b.dtype or a.dtype not in (torch.float32, torch.float64):
        raise NotSupportedError("abft::mm: float32 or float64 tensors of one dtype, got %s and "
                                "%s" % (a.dtype, b.dtype))
    if a.device != b.device:
        raise argument_error("b", "on %s, a on %s" % (b.device, a.device))
    a2, b2 = _matrix(a, "a"), _matrix(b, "b")
    if a2.shape[1] != b2.shape[0]:
        raise argument_error("b", "shapes %s and %s cannot be multiplied"
                             % (tuple(a.shape), tuple(b.shape)))
    out = torch.empty((a2.shape[0], b2.shape[1]), dtype=a.dtype, device=a.device)
    h, lock = _entry(a.device)
    with lock:
        if a.device.type == "cuda" and torch.cuda.current_device() != a.device.index:
            with torch.cuda.device(a.device):
                _, rep = h.gemm(a2, b2, out)
        else:
            _, rep = h.gemm(a2, b2, out)
    _record(tag, rep)
    return out


@mm.register_fake
def _mm_fake(a, b, tag=0):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "abft::mm takes 2-D tensors")
    torch._check(a.shape[1] == b.shape[0], lambda: "abft::mm: inner dimensions differ")
    torch._check(a.dtype == b.dtype, lambda: "abft::mm: dtypes differ")
    return a.new_empty((a.shape[0], b.shape[1]))


def _mm_setup(ctx, inputs, output):
    a, b, tag = inputs
    ctx.save_for_backward(a, b)
    ctx.tag = tag


def _mm_backward(ctx, grad):
    a, b = ctx.saved_tensors
    ga = gb = None
    if ctx.needs_input_grad[0]:
        ga = torch.ops.abft.mm(grad, b.t(), ctx.tag)
    if ctx.needs_input_grad[1]:
        gb = torch.ops.abft.mm(a.t(), grad, ctx.tag)
    return ga, gb, None


mm.register_autograd(_mm_backward, setup_context=_mm_setup)


def stats():
    """The counters of every abft::mm call of this process (calls, detected, corrected,
    uncorrectable, recomputed, checksum_faults)."""
    return dict(_global)


def reset_stats():
    for k in _global:
        _global[k] = 0


class Protection:
    """What protect() did: the layers it routed (names), their counters (stats: calls,
    detected, corrected, uncorrectable, recomputed, checksum_faults, summed over the
    forward and backward products), the callback, and remove() to restore the layers."""

    def __init__(self, callback):
        self.callback = callback
        self.stats = {k: 0 for k in _COUNTERS}
        self.reports_seen = 0
        self.layers = {}  # name -> (module, tag)

    def reset(self):
        for k in self.stats:
            self.stats[k] = 0
        self.reports_seen = 0

    @property
    def names(self):
        return list(self.layers)

    def remove(self):
        """Give every routed layer its own forward back."""
        for name, (mod, tag) in list(self.layers.items()):
            if "forward" in mod.__dict__:
                del mod.forward
            with _sinks_lock:
                _sinks.pop(tag, None)
        self.layers.clear()

    def __repr__(self):
        return "<abft.torch.Protection of %d layers: %s>" % (len(self.layers), self.stats)


def _linear_forward(mod, tag):
    def forward(x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        y = torch.ops.abft.mm(x2, mod.weight.t(), tag)
        if mod.bias is not None:
            y = y + mod.bias
        return y.reshape(*shape[:-1], y.shape[-1])
    return forward


def protect(module, callback=None):
    """Route the matrix product of every torch.nn.Linear in `module` (itself included)
    through abft::mm, forward and backward. callback(name, report) is called for each
    product whose report detected something (name: the layer's name in module). Returns the
    Protection (counters; remove() undoes it). Layers of other dtypes than float32/float64
    raise NotSupportedError at their first call."""
    prot = Protection(callback)
    ref = weakref.ref(prot)
    for name, mod in module.named_modules():
        if isinstance(mod, torch.nn.Linear):
            with _sinks_lock:
                tag = _next_tag[0]
                _next_tag[0] += 1
                _sinks[tag] = (ref, name or "<module>")
            mod.forward = _linear_forward(mod, tag)
            prot.layers[name or "<module>"] = (mod, tag)
    return prot

