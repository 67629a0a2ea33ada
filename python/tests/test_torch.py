"""abft::mm and abft.torch.protect. Skipped without PyTorch; the CUDA cases also without a
GPU and the CUDA backend."""

import pytest

torch = pytest.importorskip("torch")

import abft  # noqa: E402
import abft.torch as at  # noqa: E402

DEVICES = ["cpu"]
if torch.cuda.is_available() and abft.cuda_available():
    DEVICES.append("cuda")


@pytest.fixture(autouse=True)
def _seeded(seed):
    torch.manual_seed(seed)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_mm_matches(device, dtype):
    a = torch.randn(33, 20, dtype=dtype, device=device)
    b = torch.randn(20, 17, dtype=dtype, device=device)
    before = at.stats()["calls"]
    c = torch.ops.abft.mm(a, b)
    assert c.shape == (33, 17) and c.dtype == dtype and c.is_contiguous()
    tol = 1e-12 if dtype == torch.float64 else 1e-4
    torch.testing.assert_close(c, a @ b, rtol=tol, atol=tol)
    torch.testing.assert_close(torch.ops.abft.mm(a, b.t().contiguous().t()), a @ b,
                               rtol=tol, atol=tol)
    assert at.stats()["calls"] == before + 2


def test_mm_fake_and_meta():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.empty(7, 5)
        b = torch.empty(5, 3)
        c = torch.ops.abft.mm(a, b)
        assert c.shape == (7, 3)
    c = torch.ops.abft.mm(torch.empty(4, 6, device="meta"), torch.empty(6, 2, device="meta"))
    assert c.shape == (4, 2) and c.device.type == "meta"


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    a = torch.randn(6, 4, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, device=device, requires_grad=True)
    torch.library.opcheck(torch.ops.abft.mm.default, (a, b, 0))


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    a = torch.randn(5, 4, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.randn(4, 3, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, y: torch.ops.abft.mm(x, y), (a, b))


def test_unsupported_dtype():
    with pytest.raises(abft.NotSupportedError):
        torch.ops.abft.mm(torch.ones(2, 2, dtype=torch.float16), torch.ones(2, 2,
                                                                          dtype=torch.float16))


def _model(device):
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 16)).to(device=device, dtype=torch.float64)


@pytest.mark.parametrize("device", DEVICES)
def test_protect_forward_backward_corrects_injected_faults(device):
    model = _model(device)
    x = torch.randn(8, 32, dtype=torch.float64, device=device)
    ref = model(x)
    ref.sum().backward()
    ref_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()

    seen = []
    prot = at.protect(model, callback=lambda name, rep: seen.append((name, rep)))
    assert prot.names == ["0", "2"]
    h = at.handle(x.device)
    # the first product of the forward pass (layer "0": 8 x 64, the library sees its
    # transpose, 64 x 8): one exponent bit flipped after the GEMM
    with h.injector(sites="after_gemm", bit_class="exact", bit=61, row=3, col=2,
                    max_firings=1) as inj:
        inj.arm(5)
        out = model(x)
        assert len(inj.flips) == 1
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    assert prot.stats["calls"] == 2
    assert prot.stats["corrected"] == 1 and prot.stats["uncorrectable"] == 0
    assert seen and seen[0][0] == "0" and seen[0][1].corrected == 1
    # the first product of the backward pass
    with h.injector(sites="after_gemm", bit_class="exact", bit=61, row=1, col=1,
                    max_firings=1) as inj:
        inj.arm(6)
        out.sum().backward()
        assert len(inj.flips) == 1
    for p, g in zip(model.parameters(), ref_grads):
        torch.testing.assert_close(p.grad, g, rtol=1e-12, atol=1e-12)
    assert prot.stats["corrected"] == 2 and prot.stats["uncorrectable"] == 0
    assert prot.stats["calls"] == 2 + 3  # layer 2: two products, layer 0: the weight's
    prot.remove()
    assert "forward" not in model[0].__dict__
    calls = at.stats()["calls"]
    model(x)
    assert at.stats()["calls"] == calls


@pytest.mark.parametrize("device", DEVICES)
def test_protect_3d_input_and_bias(device):
    lin = torch.nn.Linear(10, 6).to(device=device, dtype=torch.float32)
    x = torch.randn(2, 5, 10, device=device)
    ref = lin(x)
    prot = at.protect(lin)
    assert prot.names == ["<module>"]
    torch.testing.assert_close(lin(x), ref, rtol=1e-5, atol=1e-5)
    prot.remove()


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile(device):
    model = _model(device)
    x = torch.randn(4, 32, dtype=torch.float64, device=device)
    ref = model(x)
    prot = at.protect(model)
    compiled = torch.compile(model)
    out = compiled(x)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    assert prot.stats["calls"] == 2
    prot.remove()
