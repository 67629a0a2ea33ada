"""The package against the library it carries: names, enums, parameter lists, layouts."""

import os
import re

import numpy as np
import pytest

import abft
from abft import _lib

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
HEADERS = [os.path.join(ROOT, "include", "abft", f)
           for f in ("abft.h", "abft_lu.h", "abft_inject.h", "abft_types.h", "abft_status.h")]


def _header_prototypes():
    """{function: [parameter names]} of every ABFT_API function in the headers."""
    text = ""
    for p in HEADERS:
        with open(p) as f:
            text += f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    protos = {}
    for m in re.finditer(r"ABFT_API\s+[^;(]*?\b(abft_\w+)\s*\(([^)]*)\)\s*;", text, re.S):
        name, params = m.group(1), m.group(2).strip()
        if params in ("", "void"):
            protos[name] = []
            continue
        names = []
        for p in params.split(","):
            p = p.strip()
            mm = re.search(r"(\w+)\s*(\[[^\]]*\])?$", p)
            names.append(mm.group(1))
        protos[name] = names
    return protos


@pytest.mark.skipif(not os.path.exists(HEADERS[0]), reason="the repository's headers are not here")
def test_parameter_names_match_headers():
    protos = _header_prototypes()
    assert len(protos) > 50
    for name, params in _lib.PARAMS.items():
        assert name in protos, "%s is not declared in include/abft" % name
        assert list(params) == protos[name], name


def test_version():
    assert re.match(r"^\d+\.\d+\.\d+$", abft.__version__)
    major, minor, patch = (int(x) for x in abft.__version__.split("."))
    assert abft.version_number == major * 10000 + minor * 100 + patch
    from abft import _build
    assert _build.VERSION == abft.__version__


@pytest.mark.parametrize("cls", list(abft._enums.NAME_FUNCTIONS))
def test_enum_names_come_from_the_library(cls):
    fn = getattr(_lib, abft._enums.NAME_FUNCTIONS[cls])
    for m in cls:
        assert str(m) == fn(int(m)).decode()
    # every value the library names has a member, and the next one is unknown
    top = max(int(m) for m in cls) + 1
    unknown = fn(top).decode()
    assert unknown in ("unknown", "ABFT_STATUS_<unknown>")


def test_enum_names_expected():
    assert str(abft.Action.CORRECTED) == "corrected"
    assert str(abft.Action.CHECKSUM_FAULT) == "checksum_fault"
    assert str(abft.Factor.L) == "L" and str(abft.Factor.U) == "U"
    assert str(abft.Site.AFTER_GEMM) == "after_gemm"
    assert str(abft.BoundMode.WORST_CASE) == "worst_case"
    assert abft.Status.SINGULAR.c_name == "ABFT_STATUS_SINGULAR"
    assert abft.Site.parse("After_Gemm", "x") is abft.Site.AFTER_GEMM
    assert abft.Factor.parse("l", "x") is abft.Factor.L
    with pytest.raises(abft.InvalidValueError, match="'site'"):
        abft.Site.parse("nowhere", "site")


def test_every_error_status_has_its_class():
    for st in abft.Status:
        if st == abft.Status.SUCCESS:
            continue
        e = abft._errors.error_for(int(st), "abft_dgemm")
        assert isinstance(e, abft.Error)
        assert type(e) is not abft.Error
        assert e.status == st
        assert e.status_name == st.c_name
        assert st.c_name in str(e)


STRUCTS = {"abft_fault_t": "Fault", "abft_report_t": "Report", "abft_fault_spec_t": "FaultSpec",
           "abft_flip_t": "Flip", "abft_lu_options_t": "LuOptions",
           "abft_trial_config_t": "TrialConfig", "abft_trial_t": "Trial",
           "abft_campaign_config_t": "CampaignConfig",
           "abft_campaign_summary_t": "CampaignSummary"}


@pytest.mark.parametrize("cname", sorted(STRUCTS))
def test_layout_matches_headers(cname):
    """Every field python/layout.c reports (compiled against include/abft) is declared at
    the library's offset, and the structure has the library's size."""
    import ctypes
    from abft import _layout
    cls = getattr(_lib, STRUCTS[cname])
    assert ctypes.sizeof(cls) == _layout.SIZES[cname]
    for field, offset in _layout.OFFSETS[cname].items():
        assert getattr(cls, field).offset == offset, (cname, field)


def test_layout_constants():
    import ctypes
    from abft import _layout
    assert _layout.SIZES["sig_atomic_t"] == ctypes.sizeof(_lib.sig_atomic_t)
    assert _layout.SITE_COUNT == len(abft.Site)
    assert _layout.OUTCOME_COUNT == len(abft.Outcome)
    assert _layout.FAULT_MODEL_COUNT == len(abft.FaultModel) - 1  # and SPEC = -1
    assert _layout.CAMPAIGN_OP_COUNT == len(abft.CampaignOp)
    s = _lib.CampaignSummary()
    assert len(s.count) == _layout.OUTCOME_COUNT
    assert len(s.by_site) == _layout.SITE_COUNT and len(s.by_model) == _layout.FAULT_MODEL_COUNT


def test_campaign_config_default_matches_library():
    """The defaults abft_campaign_config_default documents, read through the ctypes struct."""
    c = _lib.abft_campaign_config_default()
    assert (c.op, c.precision, c.m, c.n, c.k) == (0, b"d", 128, 128, 128)
    assert (c.trials, c.controls, c.refresh, c.sites, c.backend) == (200, 200, 50, 0, 0)
    assert (c.checksum_kind, c.bound_mode, c.bound_factor, c.guarantee) == (0, 0, 1.0, 2.0)
    assert (c.seed, c.only_trial, c.lu_recovery, c.space, c.jobs) == (1, -1, 0, 0, 1)
    assert c.random_checksum == 0
    assert not c.progress and not c.on_trial and not c.user and not c.stop
    d = _lib.abft_fault_spec_default()
    assert (c.spec.bit_class, c.spec.width, c.spec.nelems, c.spec.row, c.spec.col) == (
        d.bit_class, d.width, d.nelems, d.row, d.col)


def test_fault_spec_default_matches_library():
    d = _lib.abft_fault_spec_default()
    s = abft.FaultSpec()._to_c()
    for f in ("bit_class", "bit", "width", "nelems", "row", "col"):
        assert getattr(d, f) == getattr(s, f), f


def test_handle_options(h):
    assert h.backend == abft.Backend.CPU
    assert h.checksum_kind == abft.ChecksumKind.ROW
    h.checksum_kind = "full"
    assert h.checksum_kind == abft.ChecksumKind.FULL
    assert h.bound_mode == abft.BoundMode.WORST_CASE and h.bound_factor == 1.0
    h.set_bound_mode("probabilistic")
    assert (h.bound_mode, h.bound_factor) == (abft.BoundMode.PROBABILISTIC, 4.0)
    h.set_bound_mode(abft.BoundMode.TIGHT, 2.5)
    assert (h.bound_mode, h.bound_factor) == (abft.BoundMode.TIGHT, 2.5)
    h.bound_mode = "worst_case"
    assert h.bound_mode == abft.BoundMode.WORST_CASE
    assert h.random_checksum == (False, 0)
    h.set_random_checksum(True, 42)
    assert h.random_checksum == (True, 42)
    h.recompute = False
    assert h.recompute is False
    h.lu_recovery = True
    assert h.lu_recovery is True
    assert h.stream == 0
    h.stream = 0
    with pytest.raises(abft.InvalidValueError) as ei:
        h.stream = 1234  # a CPU handle takes only the NULL stream
    assert ei.value.argument == "stream"


def test_option_errors_name_the_argument(h):
    with pytest.raises(abft.InvalidValueError) as ei:
        h.set_bound_mode("tight", -1.0)
    e = ei.value
    assert (e.position, e.c_argument, e.argument) == (3, "factor", "factor")
    assert e.function == "abft_set_bound_mode"
    assert "ABFT_STATUS_INVALID_VALUE" in str(e) and "factor" in str(e)
    with pytest.raises(abft.InvalidValueError, match="'mode'"):
        h.set_bound_mode("loose")
    with pytest.raises(abft.InvalidValueError, match="'checksum_kind'"):
        h.checksum_kind = "diagonal"


def test_backend_names():
    with pytest.raises(abft.InvalidValueError, match="'backend'"):
        abft.Handle("tpu")
    if not abft.cuda_built():
        with pytest.raises(abft.NotSupportedError) as ei:
            abft.Handle("cuda")
        assert ei.value.status_name == "ABFT_STATUS_NOT_SUPPORTED"
        assert abft.Handle("auto").backend == abft.Backend.CPU
    assert not abft.cuda_available() or abft.cuda_built()


def test_closed_handle():
    h = abft.Handle("cpu")
    h.close()
    h.close()
    with pytest.raises(abft.NotInitializedError):
        h.gemm(np.ones((2, 2)), np.ones((2, 2)))


def test_flip_bits():
    assert abft.flip_bits(1.0, 63) == -1.0
    assert abft.flip_bits(1.0, 31, dtype="float32") == -1.0


def test_example_runs():
    import subprocess
    import sys
    ex = os.path.join(ROOT, "examples", "python", "protected_gemm.py")
    if not os.path.exists(ex):
        pytest.skip("the example is not here")
    out = subprocess.run([sys.executable, ex, "96"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "result equals the clean product: True" in out.stdout
    assert "corrected" in out.stdout


def test_numpy_data_pointer():
    """The fast reader of a NumPy array's data pointer agrees with ndarray.ctypes.data."""
    from abft import _arrays
    base = np.arange(60.0).reshape(6, 10)
    for x in (base, base.T, base[1:, 3:], np.asfortranarray(base)[2:5, 1:],
              base.astype(np.float32)[::2], np.zeros((0, 3)), np.empty((4, 4), order="F")):
        assert _arrays._np_data(x) == x.ctypes.data


def test_bench_overhead_runs(tmp_path):
    """python/bench_overhead.py (the Python layer's cost per gemm call; docs/python.md) runs:
    a tiny size and few iterations here, the numbers are not checked."""
    import json
    import subprocess
    import sys
    script = os.path.join(ROOT, "python", "bench_overhead.py")
    if not os.path.exists(script):
        pytest.skip("the script is not here")
    out = subprocess.run([sys.executable, script, "--n", "32", "--device", "cpu", "--iters",
                          "2", "--layer-batches", "3", "--batch", "5", "--json",
                          str(tmp_path / "b.json")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    with open(tmp_path / "b.json") as f:
        res = json.load(f)
    assert [c["case"] for c in res["cases"]] == ["numpy F-ordered, CPU backend",
                                                 "numpy C-ordered, CPU backend"]
    for c in res["cases"]:
        assert c["layer"]["package_s"] > 0 and c["layer"]["direct_s"] > 0
        assert c["real"]["iters"] == 2
    # the layer's timing put the handle's recompute flag back
    assert "Python layer" in out.stdout
