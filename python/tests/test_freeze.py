# SPDX-License-Identifier: MIT
"""Frozen graphs: `fxlens-cli optimize --freeze`, fxlens.freeze / reparameterize and freeze= in the
exporters; a frozen graph computes what the original model computes, loads an original checkpoint
through its fold graph, and the re-parameterized module's gradients are the original model's."""
import os
import subprocess

import pytest
import torch
import torch.fx as fx

import fxlens
from clitools import CLI, has_executor
from fxlens.examples import _dynamo
from fxlens.models import Tangle, tangle_inputs

torch.set_num_threads(1)
needs_cli = pytest.mark.skipif(not has_executor(), reason="fxlens-cli with LibTorch not built")


def _first(o):
    return o[0] if isinstance(o, (tuple, list)) else o


def _cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tangle(tmp_path_factory):
    """A Dynamo graph of Tangle(8) with weights, and the same graph optimized by fxlens-cli."""
    d = tmp_path_factory.mktemp("freeze")
    torch.manual_seed(0)
    model = Tangle(8).eval()
    x, = tangle_inputs(8)
    src = str(d / "t8.json")
    _dynamo(model, (x,), src, "t8", weights=True)
    opt = str(d / "t8opt.json")
    if has_executor():
        r = _cli("optimize", src, "-o", opt)
        assert r.returncode == 0, r.stderr
    return d, model, x, src, opt


@needs_cli
def test_cli_freeze_writes_frozen_graph_weights_and_fold(tangle):
    d, model, x, src, _ = tangle
    out = str(d / "frozen.json")
    r = _cli("optimize", src, "-o", out, "--freeze")
    assert r.returncode == 0, r.stderr
    assert "freeze: 4 value(s) folded" in r.stdout
    for f in ("frozen.frozen.safetensors", "frozen.fold.json"):
        assert os.path.exists(d / f), f
    gm = fxlens.load_graph(out)
    attrs = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert attrs and all(a.startswith("_frozen_") for a in attrs), attrs
    assert not any(n.target is torch.stack for n in gm.graph.nodes if n.op == "call_function")
    torch.testing.assert_close(_first(gm(x)), model(x), rtol=1e-5, atol=1e-5)
    # The executor runs the frozen file on its own weights and agrees with PyTorch.
    r = _cli("run", out, "--repeat", "3")
    assert r.returncode == 0 and "all outputs equal" in r.stdout, r.stdout + r.stderr
    # The generated Python module loads the frozen weights file.
    py = str(d / "frozen_model.py")
    r = _cli("convert", out, "--to", "python", "-o", py)
    assert r.returncode == 0, r.stderr
    ns = {}
    exec(compile(open(py).read(), py, "exec"), ns)
    pm = ns["Model"]()
    pm.load_weights(str(d / "frozen.frozen.safetensors"))
    torch.testing.assert_close(_first(pm(x)), model(x), rtol=1e-5, atol=1e-5)
    # An original checkpoint (another model's state_dict) loads through the fold graph.
    other = Tangle(8).eval()
    gm2 = fxlens.load_graph(out, state_dict=other.state_dict())
    torch.testing.assert_close(_first(gm2(x)), other(x), rtol=1e-5, atol=1e-5)


@needs_cli
def test_cli_freeze_needs_output_and_cuda_graph_needs_cuda(tangle):
    d, _, _, src, opt = tangle
    r = _cli("optimize", src, "--freeze")
    assert r.returncode == 2 and "--freeze needs -o" in r.stderr
    r = _cli("run", opt, "--cuda-graph", "--device", "cpu")
    assert r.returncode == 1 and "--cuda-graph needs a CUDA device" in r.stderr
    r = _cli("run", opt, "--freeze", "--repeat", "3")
    assert r.returncode == 0 and "weight-only node(s) folded" in r.stdout and "all outputs equal" in r.stdout


@needs_cli
def test_python_freeze_and_exporter_option(tangle):
    d, model, x, _, opt = tangle
    gm = fxlens.load_graph(opt)
    frozen, fold = fxlens.freeze(gm)
    assert len(frozen.graph.nodes) < len(gm.graph.nodes)
    torch.testing.assert_close(_first(frozen(x)), model(x), rtol=1e-5, atol=1e-5)
    for v, w in zip(fold(), [b for n, b in frozen.named_buffers() if n.startswith("_frozen_")]):
        torch.testing.assert_close(v, w)
    path = str(d / "pyfrozen.json")
    fxlens.export_graph_module(gm, path, weights=True, freeze=True)
    assert os.path.exists(d / "pyfrozen.fold.json")
    torch.testing.assert_close(_first(fxlens.load_graph(path)(x)), model(x), rtol=1e-5, atol=1e-5)
    other = Tangle(8).eval()
    torch.testing.assert_close(_first(fxlens.load_graph(path, state_dict=other.state_dict())(x)), other(x),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(fxlens.FormatError, match="needs weights=True"):
        fxlens.export_graph_module(gm, str(d / "noweights.json"), freeze=True)


@needs_cli
def test_reparameterized_gradients_are_the_original_models(tangle):
    _, model, x, src, opt = tangle
    base = fxlens.load_graph(src)
    rep = fxlens.reparameterize(fxlens.load_graph(opt))
    assert len(rep.targets) == 4
    trained = [n for n, p in rep.named_parameters() if "_frozen" in n]
    assert len(trained) == 4
    _first(base(x)).square().mean().backward()
    _first(rep(x)).square().mean().backward()
    want = {n: p.grad for n, p in base.named_parameters() if p.grad is not None}
    got = rep.original_grads()
    assert set(want) == set(got)
    scale = max(g.abs().max() for g in want.values())
    for n, g in want.items():
        assert (got[n] - g).abs().max() <= 1e-4 * scale, n
    # The weights map back, and an original checkpoint loads.
    sd = rep.original_state_dict()
    for n, v in base.state_dict().items():
        torch.testing.assert_close(sd[n], v)
    other = Tangle(8).eval()
    other_sd = {k: v for k, v in fxlens.load_graph(src, state_dict=None).state_dict().items()}
    for k, v in other.state_dict().items():  # Dynamo names the weights after the module attributes
        key = next((n for n in other_sd if n.replace("_", ".").endswith(k.replace("_", "."))), None)
        if key:
            other_sd[key] = v
    rep.load_original_state_dict(other_sd)
    torch.testing.assert_close(_first(rep(x)), other(x), rtol=1e-5, atol=1e-5)
    # state_dict() / load_state_dict() speak the original names (checkpoint compatibility).
    saved = rep.state_dict()
    assert set(saved) == set(base.state_dict())
    for n, v in other_sd.items():
        torch.testing.assert_close(saved[n], v)
    rep2 = fxlens.reparameterize(fxlens.load_graph(opt))
    rep2.load_state_dict(saved)
    torch.testing.assert_close(_first(rep2(x)), other(x), rtol=1e-5, atol=1e-5)


def test_reparameterize_keeps_a_fold_that_is_not_a_permutation():
    """A weight read both stacked and directly (two copies when trained) and a broadcast weight
    (elements repeated) stay computed; a plain stack of weights becomes a parameter."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(3, 3))
            self.b = torch.nn.Parameter(torch.randn(3, 3))
            self.c = torch.nn.Parameter(torch.randn(3, 3))
            self.d = torch.nn.Parameter(torch.randn(3))

        def forward(self, x):
            w = torch.stack([self.a, self.b])              # permutation: folded
            v = torch.stack([self.c, self.c])              # c twice: not a permutation
            e = self.d.expand(3, 3)                        # broadcast: not a permutation
            return torch.matmul(x, w).sum(0) + torch.matmul(x, v).sum(0) + e

    m = M()
    gm = fx.symbolic_trace(m)
    rep = fxlens.reparameterize(gm)
    assert len(rep.targets) == 1 and rep.origins[rep.targets[0]] == ["a", "b"]
    x = torch.randn(3, 3)
    torch.testing.assert_close(rep(x), m(x))
    m(x).sum().backward()
    rep(x).sum().backward()
    g = rep.original_grads()
    for n, p in m.named_parameters():
        torch.testing.assert_close(g[n], p.grad)


def test_compile_backend_freeze(tmp_path):
    """The Dynamo exporter's freeze=: a model whose forward stacks its weights is written frozen."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(4, 4)) for _ in range(3))

        def forward(self, x):
            return torch.bmm(x, torch.stack(list(self.ws)).transpose(1, 2))

    m, x = M(), torch.randn(3, 2, 4)
    torch._dynamo.reset()
    be = fxlens.compile_backend(str(tmp_path), name="m", weights=True, freeze=True)
    with torch.no_grad():
        torch.compile(m, backend=be, fullgraph=True)(x)
    gm = fxlens.load_graph(be.files[0])
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["_frozen_transpose"]
    torch.testing.assert_close(_first(gm(x)), m(x))
    other = M()
    # The fold graph reads the model's own state_dict names: its checkpoint loads as it is.
    torch.testing.assert_close(_first(fxlens.load_graph(be.files[0], state_dict=other.state_dict())(x)), other(x))


@needs_cli
def test_cli_freeze_edge_cases(tmp_path):
    """A weight-only value that is itself a graph output, a folded list read through getitem and by
    an unfolded call, a constant made in the graph, and a .json.gz output in another folder."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 3))
            self.v = torch.nn.Parameter(torch.randn(2, 3))

        def forward(self, x):
            wt = self.w.t()                                   # folded, also an output
            parts = torch.unbind(self.v)                      # folded list
            c = torch.tensor([1.0, 2.0, 3.0])                 # a constant
            y = x @ wt + parts[0].sum() + c.sum()
            return y, wt, torch.stack([parts[0], parts[1], x[0, :3]])

    m = M()
    x = torch.randn(5, 3)
    src = str(tmp_path / "m.json")
    fxlens.export_module(m, (x,), src, weights=True)
    os.makedirs(tmp_path / "out")
    out = str(tmp_path / "out" / "m.json.gz")
    r = _cli("optimize", src, "--steps", "0", "-o", out, "--freeze")
    assert r.returncode == 0, r.stderr
    assert os.path.exists(tmp_path / "out" / "m.frozen.safetensors") and os.path.exists(tmp_path / "out" / "m.fold.json")
    gm = fxlens.load_graph(out)
    for a, b in zip(gm(x), m(x)):
        torch.testing.assert_close(a, b)
    r = _cli("run", out, "--repeat", "2")
    assert r.returncode == 0, r.stderr
    other = M()
    for a, b in zip(fxlens.load_graph(out, state_dict=other.state_dict())(x), other(x)):
        torch.testing.assert_close(a, b)
