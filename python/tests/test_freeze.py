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
    # The stack is folded; the transpose, a view of it, stays (a file would hold it materialized).
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["_frozen_stack"]
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == ["transpose"]
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


# ------------------------------------------------------------------ frozen graphs never break

def _flat(o):
    """A model's outputs as a list of tensors (HuggingFace output classes, tuples, one tensor)."""
    if hasattr(o, "to_tuple"):
        o = o.to_tuple()
    return list(o) if isinstance(o, (tuple, list)) else [o]


def _assert_outputs(gm, inputs, want):
    with torch.no_grad():
        got = _flat(gm(*inputs))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def _tiny_bert(seed):
    from transformers import BertConfig, BertModel
    torch.manual_seed(seed)
    cfg = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                     vocab_size=100, max_position_embeddings=32)
    ids = torch.randint(0, 100, (2, 8), generator=torch.Generator().manual_seed(1))
    return BertModel(cfg).eval(), (ids,)


def _model(kind, seed):
    """Small instances of the models users froze: (model, inputs); `seed` gives other weights."""
    from fxlens.models import CTRModel, ctr_inputs
    torch.manual_seed(seed)
    if kind == "tangle":
        return Tangle(8).eval(), tangle_inputs(8)
    if kind == "ctr":
        m = CTRModel(n_sparse=4, n_dense=5, vocab=20, dim=8).eval()
        return m, ctr_inputs(m)
    return _tiny_bert(seed)


def _dynamo_export(model, inputs, folder, name):
    """The Dynamo route with weights: fxlens.compile_backend(dir, weights=True)."""
    torch._dynamo.reset()
    be = fxlens.compile_backend(str(folder), name=name, weights=True)
    with torch.no_grad():
        torch.compile(model, backend=be, fullgraph=True)(*inputs)
    assert len(be.files) == 1, be.files
    return be.files[0]


@needs_cli
@pytest.mark.parametrize("kind", ["tangle", "ctr", "bert"])
def test_frozen_graph_round_trips(tmp_path, kind):
    """optimize --preset all --freeze on a Dynamo graph; the frozen graph computes the model's outputs
    loaded with module=, with state_dict= (also another model's: through the fold graph), on its own
    weights, as the generated Python module, and `fxlens-cli verify original frozen` agrees."""
    model, inputs = _model(kind, 0)
    src = _dynamo_export(model, inputs, tmp_path, kind)
    out = str(tmp_path / "frozen.json")
    r = _cli("optimize", src, "-o", out, "--preset", "all", "--freeze")
    assert r.returncode == 0, r.stderr
    fold = fxlens.graph_format.read_dict(str(tmp_path / "frozen.fold.json"))
    assert not [n["name"] for n in fold["nodes"] if n["op"] == "placeholder"]
    with torch.no_grad():
        want = _flat(model(*inputs))
    other, _ = _model(kind, 1)
    with torch.no_grad():
        want_other = _flat(other(*inputs))
    _assert_outputs(fxlens.load_graph(out, module=model), inputs, want)
    _assert_outputs(fxlens.load_graph(out, state_dict=model.state_dict()), inputs, want)
    _assert_outputs(fxlens.load_graph(out), inputs, want)
    _assert_outputs(fxlens.load_graph(out, module=other), inputs, want_other)
    _assert_outputs(fxlens.load_graph(out, state_dict=other.state_dict()), inputs, want_other)
    r = _cli("verify", src, out)
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
    py = str(tmp_path / "frozen_model.py")
    r = _cli("convert", out, "--to", "python", "-o", py)
    assert r.returncode == 0, r.stderr
    ns = {}
    exec(compile(open(py).read(), py, "exec"), ns)
    pm = ns["Model"]()
    pm.load_weights(str(tmp_path / "frozen.frozen.safetensors"))
    _assert_outputs(pm, inputs, want)


class _Checked(torch.nn.Module):
    """Asserts on its input (a call with side effects that reads the placeholder) and stacks weights."""

    def __init__(self):
        super().__init__()
        self.ws = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(4, 4)) for _ in range(3))

    def forward(self, x):
        torch._assert(x.size(0) > 0, "empty batch")
        return torch.bmm(x, torch.stack(list(self.ws)).transpose(1, 2))


@needs_cli
def test_fold_graph_reads_no_input(tmp_path):
    """The fold graph holds only what its values read: an assert on the input (kept by dead-code
    elimination for its effect) no longer keeps the input placeholder in it, which made load_graph(...,
    module=) fail with `forward() missing 1 required positional argument`. Fold graphs written so by
    older versions still load (their unused inputs are dropped), in Python and in verify."""
    torch.manual_seed(0)
    m, x = _Checked(), torch.randn(3, 2, 4)
    src = str(tmp_path / "m.json")
    fxlens.export_module(m, (x,), src, weights=True)
    out = str(tmp_path / "frozen.json")
    r = _cli("optimize", src, "-o", out, "--freeze")
    assert r.returncode == 0, r.stderr
    fold_path = str(tmp_path / "frozen.fold.json")
    fold = fxlens.graph_format.read_dict(fold_path)
    assert [n["op"] for n in fold["nodes"]].count("placeholder") == 0
    assert not [n for n in fold["nodes"] if "assert" in n["target"]]
    for kw in (dict(module=m), dict(state_dict=m.state_dict())):
        _assert_outputs(fxlens.load_graph(out, **kw), (x,), [m(x).detach()])
    # An old fold graph: the input and the assert on it kept before the weight nodes.
    original = fxlens.graph_format.read_dict(src)
    kept = len(fold["nodes"])
    fold["nodes"] = [n for n in original["nodes"] if n["name"] in ("x", "size", "gt", "_assert")] + fold["nodes"]
    assert len(fold["nodes"]) == kept + 4
    fxlens.graph_format.write_dict(fold, fold_path)
    for kw in (dict(module=m), dict(state_dict=m.state_dict())):
        _assert_outputs(fxlens.load_graph(out, **kw), (x,), [m(x).detach()])
    r = _cli("verify", src, out)
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr


def test_frozen_bert_loads_non_persistent_buffers(tmp_path):
    """BERT's position ids are a non-persistent buffer: not in its state_dict, read by the fold graph.
    module= takes them from the module (named_buffers); state_dict= from the weights file the fold
    graph names (buffers only)."""
    model, inputs = _tiny_bert(0)
    assert "embeddings.position_ids" not in model.state_dict()
    torch._dynamo.reset()
    be = fxlens.compile_backend(str(tmp_path), name="bert", weights=True, freeze=True)
    with torch.no_grad():
        want = _flat(torch.compile(model, backend=be, fullgraph=True)(*inputs))
    fold = fxlens.graph_format.read_dict(str(tmp_path / "bert_0.fold.json"))
    assert "embeddings.position_ids" in [n["target"] for n in fold["nodes"] if n["op"] == "get_attr"]
    _assert_outputs(fxlens.load_graph(be.files[0], module=model), inputs, want)
    _assert_outputs(fxlens.load_graph(be.files[0], state_dict=model.state_dict()), inputs, want)
    # A checkpoint without a parameter the fold reads is refused, naming the fold file and the weight.
    sd = {k: v for k, v in model.state_dict().items() if k != "embeddings.position_embeddings.weight"}
    with pytest.raises(fxlens.FormatError, match=r"bert_0\.fold\.json: the state_dict has no "
                                                 r"'embeddings\.position_embeddings\.weight'"):
        fxlens.load_graph(be.files[0], state_dict=sd)


class _Positions(torch.nn.Module):
    """Position ids and a mask made in the graph (device=ids.device: the capture device recorded)."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(10, 4)
        self.pos = torch.nn.Embedding(8, 4)
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, ids):
        p = torch.arange(ids.shape[1], device=ids.device)
        mask = torch.zeros(ids.shape[1], 4, device=ids.device)
        return self.lin(self.tok(ids) + self.pos(p) + mask)


@needs_cli
def test_factory_device_of_the_capture_follows_the_run(tmp_path):
    """A graph captured on CUDA records device='cuda:0' in its factory calls (arange, zeros); freezing,
    running and verifying on the CPU create those tensors on the CPU, where the weights are (the fold
    failed with `Expected all tensors to be on the same device`), and so does load_graph's fold."""
    torch.manual_seed(0)
    m, ids = _Positions().eval(), torch.randint(0, 10, (2, 8))
    src = _dynamo_export(m, (ids,), tmp_path, "pos")
    data = fxlens.graph_format.read_dict(src)
    factories = [n for n in data["nodes"] if n["target"] in ("torch.arange", "torch.zeros")]
    assert len(factories) == 2 and all(n["kwargs"]["device"] == {"device": "cpu"} for n in factories)
    for n in factories:
        n["kwargs"]["device"] = {"device": "cuda:0"}
    fxlens.graph_format.write_dict(data, src)
    with torch.no_grad():
        want = [m(ids)]
    r = _cli("run", src, "--freeze")
    assert r.returncode == 0, r.stderr
    out = str(tmp_path / "frozen.json")
    r = _cli("optimize", src, "-o", out, "--freeze")
    assert r.returncode == 0, r.stderr
    fold = fxlens.graph_format.read_dict(str(tmp_path / "frozen.fold.json"))
    assert {"device": "cuda:0"} in [n["kwargs"].get("device") for n in fold["nodes"]]
    r = _cli("verify", src, out)
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
    r = _cli("run", out)
    assert r.returncode == 0, r.stderr
    _assert_outputs(fxlens.load_graph(out), (ids,), want)
    _assert_outputs(fxlens.load_graph(out, state_dict=m.state_dict()), (ids,), want)
    _assert_outputs(fxlens.load_graph(out, module=m), (ids,), want)


@needs_cli
def test_verify_computes_frozen_weights_through_the_fold(tmp_path):
    """verify original frozen (either order) runs the fold graph on the original's weights instead of
    failing with `no value for parameter '_frozen_transpose'`; a fold graph that is gone is named."""
    torch.manual_seed(0)
    m, x = _Checked(), torch.randn(3, 2, 4)
    src = str(tmp_path / "m.json")
    fxlens.export_module(m, (x,), src, weights=True)
    out = str(tmp_path / "frozen.json")
    assert _cli("optimize", src, "-o", out, "--freeze").returncode == 0
    for a, b in ((src, out), (out, src)):
        r = _cli("verify", a, b)
        assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
    # Other original weights: the frozen file's own values no longer match, the fold's do.
    from safetensors.torch import load_file, save_file
    w = load_file(str(tmp_path / "m.safetensors"))
    save_file({k: v + 1 for k, v in w.items()}, str(tmp_path / "other.safetensors"))
    r = _cli("verify", src, out, "--weights", str(tmp_path / "other.safetensors"))
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
    os.remove(tmp_path / "frozen.fold.json")
    r = _cli("verify", src, out)
    assert r.returncode == 1 and "frozen.fold.json" in r.stderr, r.stderr


@needs_cli
def test_freeze_refuses_made_up_weights(tmp_path):
    """optimize --freeze on a graph saved without weights (or with some missing) is bad input naming
    the file and --random-weights, writes nothing, and --random-weights allows it (benchmarks)."""
    torch.manual_seed(0)
    m, x = _Checked(), torch.randn(3, 2, 4)
    src = str(tmp_path / "m.json")
    fxlens.export_module(m, (x,), src)
    out = str(tmp_path / "frozen.json")
    r = _cli("optimize", src, "-o", out, "--freeze")
    assert r.returncode == 3, r.stderr
    assert f"{src}: error: --freeze: the graph has no weights file" in r.stderr and "--random-weights" in r.stderr
    assert not os.path.exists(out) and not os.path.exists(tmp_path / "frozen.frozen.safetensors")
    r = _cli("optimize", src, "-o", out, "--freeze", "--random-weights")
    assert r.returncode == 0 and os.path.exists(out), r.stderr
    r = _cli("optimize", src, "-o", out, "--random-weights")
    assert r.returncode == 2 and "--random-weights goes with --freeze" in r.stderr
    # A weights file that lacks one of the graph's weights.
    from safetensors.torch import save_file
    save_file({"ws.0": torch.randn(4, 4), "ws.1": torch.randn(4, 4)}, str(tmp_path / "part.safetensors"))
    r = _cli("optimize", src, "-o", str(tmp_path / "f2.json"), "--freeze", "--weights",
             str(tmp_path / "part.safetensors"))
    assert r.returncode == 3 and "lacks 1 of its weights (first 'ws.2')" in r.stderr, r.stderr
    assert "--random-weights" in r.stderr and not os.path.exists(tmp_path / "f2.json")


# ------------------------------------------------------------------ what a frozen file holds

class _Head(torch.nn.Module):
    """ResNet-50's classifier in small: torch.export writes addmm(bias, x, permute(weight))."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(256, 32)

    def forward(self, x):
        return self.fc(x)


class _Broadcast(torch.nn.Module):
    """ViT's attention through torch.export in small: a transposed weight expanded over the batch."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(32, 16))

    def forward(self, x):
        return torch.bmm(x, self.w.t().expand(x.shape[0], -1, -1))


class _Scaled(torch.nn.Module):
    """A transposed weight scaled: mul keeps the transpose's strides (a value with its own layout)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(32, 256))

    def forward(self, x):
        return x @ (self.w.t() * 0.5)


class _Channels(torch.nn.Module):
    """A batch norm's scale as a post-grad graph has it: a weight computed, then viewed as [1, C, 1, 1]
    (a contiguous view: written as it is, one node less per run)."""

    def __init__(self):
        super().__init__()
        self.g = torch.nn.Parameter(torch.rand(8) + 0.5)

    def forward(self, x):
        return x * torch.rsqrt(self.g).view(1, -1, 1, 1)


def _layout_case(kind):
    """(model, input, how many values the frozen file holds)."""
    torch.manual_seed(0)
    if kind == "head":
        return _Head().eval(), torch.randn(2, 256) * 3, 0
    if kind == "broadcast":
        return _Broadcast().eval(), torch.randn(64, 8, 16), 0
    if kind == "scaled":
        return _Scaled().eval(), torch.randn(2, 256) * 3, 0
    return _Channels().eval(), torch.randn(2, 8, 4, 4), 1


def _numel(path):
    from safetensors import safe_open
    with safe_open(path, framework="pt") as f:
        return sum(torch.Size(f.get_slice(k).get_shape()).numel() for k in f.keys())


@needs_cli
@pytest.mark.parametrize("route", ["cli", "export"])
@pytest.mark.parametrize("kind", ["head", "broadcast", "scaled", "channels"])
def test_frozen_file_keeps_the_layout_the_graph_computed(tmp_path, kind, route):
    """A frozen file holds each value contiguous. A folded view was written materialized: ResNet-50's
    permuted fc weight became a contiguous transpose, so addmm took another path and rounded
    differently (own weights and the generated module off by 1.4e-4 in the zoo), and ViT's transposed
    in_proj weight expanded over 197 patches became 197 copies (optimize --freeze killed at 22 GB).
    Views at the edge of the fold now stay in the frozen graph, reading the value they view, and a
    value with strides of its own (mul of a transpose) stays computed: the frozen graph computes
    bit for bit what the original does, and its weights file is no larger. A contiguous view (a
    batch norm's scale viewed as [1, C, 1, 1]) is still written."""
    model, x, values = _layout_case(kind)
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
    src = str(tmp_path / "m.json")
    fxlens.export_program(ep, src, name=kind, weights=True)
    out = str(tmp_path / "frozen.json")
    if route == "cli":
        r = _cli("optimize", src, "-o", out, "--steps", "0", "--freeze")
        assert r.returncode == 0, r.stderr
        weights = str(tmp_path / "frozen.frozen.safetensors")
    else:
        fxlens.export_program(ep, out, name=kind, weights=True, freeze=True)
        weights = str(tmp_path / "frozen.safetensors")
    with torch.no_grad():
        want = _flat(fxlens.load_graph(src)(x))
        for gm in (fxlens.load_graph(out), fxlens.load_graph(out, state_dict=model.state_dict()),
                   fxlens.load_graph(out, module=model)):
            got = _flat(gm(x))
            assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert _numel(weights) <= _numel(str(tmp_path / "m.safetensors"))
    # The strided views read the weights, mul reads a view: nothing of theirs is written.
    data = fxlens.graph_format.read_dict(out)
    assert len([p for p in data["params"] if p["name"].startswith("_frozen_")]) == values, data["params"]
    r = _cli("verify", src, out)
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
