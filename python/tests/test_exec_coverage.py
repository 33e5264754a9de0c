# SPDX-License-Identifier: MIT
"""The executor on the classes of calls real models put in their graphs: each case is a small module
exercising one class, captured by the exporter that produces it (symbolic_trace, Dynamo, torch.export),
saved with its weights and example inputs; `fxlens-cli run` on the saved inputs must give PyTorch's
outputs, `optimize --preset all --verify` must verify, and the graph must load back with load_graph."""
import os
import subprocess

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

import fxlens

from clitools import CLI, has_executor

torch.set_num_threads(1)

pytestmark = pytest.mark.skipif(not has_executor(), reason="fxlens-cli built without LibTorch")


# ----------------------------------------------------------------------------------------- modules

class InplaceActs(nn.Module):
    """inplace=True activations (CNN blocks): functional, keyword and module forms."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.act = nn.Hardswish(inplace=True)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.relu(self.conv(x))
        y = F.silu(y, inplace=True)
        return self.act(y).mean((2, 3))


class ArangeIndex(nn.Module):
    """arange(0, N) is int64 and indexes an embedding (position ids of attention models)."""
    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(16, 8)

    def forward(self, x):
        ids = torch.arange(0, x.shape[1])
        return x + self.pos(ids)


class InplaceOps(nn.Module):
    """operator.iadd / imul, in-place methods and copy_."""
    def forward(self, x, y):
        z = x * 2
        z += y
        z *= 3
        w = torch.zeros_like(x)
        w.copy_(z)
        w.add_(1).mul_(0.5)
        return w


class ToAndAttrs(nn.Module):
    """x.to(device / dtype), getattr(x, 'ndim'), sizes as separate arguments, _assert."""
    def forward(self, x):
        torch._assert(x.ndim == 2, "rank 2")
        y = x.to("cpu").to(torch.float64)
        ones = torch.ones(2, 4, dtype=torch.float64)
        return (y + ones.sum()).to(x.dtype) * x.ndim


class ViewInts(nn.Module):
    """x.view(-1) / x.view(16): one int is a size, never a dtype (view.dtype); dtype comparisons."""
    def forward(self, x):
        y = x.view(-1) + x.view(16)
        torch._assert(x.dtype == torch.float32, "float input")
        return y * 2


class KeywordSplit(nn.Module):
    """torch.split given entirely by keyword."""
    def forward(self, x):
        a, b = torch.split(tensor=x, split_size_or_sections=2, dim=-1)
        return a * b


class Attention(nn.Module):
    """nn.MultiheadAttention as a leaf module (symbolic_trace keeps it)."""
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        out, w = self.mha(x, x, x)
        return out + w.sum()


class AttentionFunctional(nn.Module):
    """F.multi_head_attention_forward as Dynamo records it for nn.MultiheadAttention."""
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class Ellipsis_(nn.Module):
    """x[..., :2]: an Ellipsis index."""
    def forward(self, x):
        return x[..., :2] * 2


class Defaults(nn.Module):
    """An optional argument left at its default (a placeholder with a default value)."""
    def forward(self, x, scale=2.0, shift=None):
        return x * scale


class Embeddings(nn.Module):
    """Sparse ids carried in a float tensor, sliced and cast before lookups (recommendation models)."""
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList([nn.Embedding(10, 4), nn.Embedding(7, 4)])

    def forward(self, x):
        a = self.tables[0](x[:, 0].long())
        b = self.tables[1](x[:, 1].long())
        return torch.cat([a, b], 1)


def _dynamo(model, inputs, tmp_path, name):
    torch._dynamo.reset()
    backend = fxlens.compile_backend(str(tmp_path), name=name, weights=True)
    with torch.no_grad():
        torch.compile(model, backend=backend)(*inputs)
    assert backend.files, "Dynamo captured no graph"
    return backend.files[0]


def _export(model, inputs, tmp_path, name, decompose=True):
    path = str(tmp_path / f"{name}.json")
    fxlens.export_program(torch.export.export(model, tuple(inputs)), path, name=name, weights=True, decompose=decompose)
    return path


def _fx(model, inputs, tmp_path, name):
    path = str(tmp_path / f"{name}.json")
    fxlens.export_module(model, inputs, path, name=name, weights=True)
    return path


def _check(path, model, inputs, tmp_path, optimize=True):
    with torch.no_grad():
        expected = model(*inputs)
    if isinstance(expected, torch.Tensor):
        expected = [expected]
    ref = str(tmp_path / "expected.safetensors")
    save_file({f"output:{i}": t.contiguous() for i, t in enumerate(expected)}, ref)
    r = subprocess.run([CLI, "run", path, "--expect", ref], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    if optimize:
        out = str(tmp_path / "opt.json")
        r = subprocess.run([CLI, "optimize", path, "-o", out, "--preset", "all", "--verify"], capture_output=True, text=True)
        assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr


CASES = [
    ("inplace_dynamo", InplaceActs, lambda: [torch.randn(2, 3, 8, 8)], _dynamo),
    ("inplace_fx", InplaceActs, lambda: [torch.randn(2, 3, 8, 8)], _fx),
    ("arange_export", ArangeIndex, lambda: [torch.randn(2, 5, 8)], _export),
    ("arange_dynamo", ArangeIndex, lambda: [torch.randn(2, 5, 8)], _dynamo),
    ("inplace_ops_dynamo", InplaceOps, lambda: [torch.randn(3, 4), torch.randn(3, 4)], _dynamo),
    ("to_attrs_dynamo", ToAndAttrs, lambda: [torch.randn(2, 4)], _dynamo),
    ("to_attrs_fx", ToAndAttrs, lambda: [torch.randn(2, 4)], _fx),
    ("keyword_split_fx", KeywordSplit, lambda: [torch.randn(3, 4)], _fx),
    ("view_ints_fx", ViewInts, lambda: [torch.randn(4, 4)], _fx),
    ("view_ints_dynamo", ViewInts, lambda: [torch.randn(4, 4)], _dynamo),
    ("keyword_split_dynamo", KeywordSplit, lambda: [torch.randn(3, 4)], _dynamo),
    ("mha_fx", Attention, lambda: [torch.randn(2, 5, 16)], _fx),
    ("mha_dynamo", AttentionFunctional, lambda: [torch.randn(5, 2, 16)], _dynamo),
    ("ellipsis_fx", Ellipsis_, lambda: [torch.randn(2, 3, 4)], _fx),
    ("defaults_fx", Defaults, lambda: [torch.randn(2, 3)], _fx),
    ("embeddings_dynamo", Embeddings, lambda: [torch.tensor([[1.0, 6.0], [9.0, 0.0], [3.0, 2.0]])], _dynamo),
]


@pytest.mark.parametrize("name,cls,make,exporter", CASES, ids=[c[0] for c in CASES])
def test_class_runs_and_verifies(name, cls, make, exporter, tmp_path):
    torch.manual_seed(0)
    model = cls().eval()
    inputs = make()
    path = exporter(model, inputs, tmp_path, name)
    _check(path, model, inputs, tmp_path)


def test_random_ids_stay_in_range(tmp_path):
    """Without saved inputs, random inputs that feed embeddings are ids below the table sizes."""
    torch.manual_seed(0)
    model = Embeddings().eval()
    path = _dynamo(model, [torch.tensor([[1.0, 6.0], [9.0, 0.0]])], tmp_path, "ids")
    r = subprocess.run([CLI, "run", path, "--random-inputs"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_optimize_writes_unverified_result(tmp_path):
    """A rewrite result is written even when --verify cannot run the graph; the exit code says so."""
    class Opaque(nn.Module):
        def forward(self, x):
            s = torch.split(x, 2, 1)
            return torch.cat([s[1], s[0]], 1).tanh()
    path = _fx(Opaque().eval(), [torch.randn(2, 4)], tmp_path, "opaque")
    data = fxlens.graph_format.read_dict(path)
    for n in data["nodes"]:
        if n["target"] in ("torch.tanh", "tanh"):
            n["target"] = "no_such_method" if n["op"] == "call_method" else "torch.no_such_function"
    fxlens.graph_format.write_dict(data, path)
    out = str(tmp_path / "o.json")
    r = subprocess.run([CLI, "optimize", path, "-o", out, "--preset", "all", "--verify"], capture_output=True, text=True)
    assert r.returncode != 0
    assert os.path.exists(out)
    assert "unverified" in r.stderr


def test_mangled_api_usage_name_resolves():
    from fxlens.graph_format import resolve_target, target_name
    assert target_name(torch._C._log_api_usage_once) == "torch._C._log_api_usage_once"
    assert resolve_target("torch._C._log_api_usage_once") is torch._C._log_api_usage_once


def test_export_program_falls_back_without_decomposition(tmp_path, monkeypatch):
    ep = torch.export.export(KeywordSplit().eval(), (torch.randn(3, 4),))

    def broken(self, *a, **k):
        raise RuntimeError("decomposition failed")
    monkeypatch.setattr(type(ep), "run_decompositions", broken)
    with pytest.warns(UserWarning, match="undecomposed"):
        fxlens.export_program(ep, str(tmp_path / "k.json"), weights=True)
    assert os.path.exists(tmp_path / "k.json")


def test_symbolic_trace_failure_names_routes(tmp_path):
    class Branchy(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x
    with pytest.raises(fxlens.graph_format.FormatError, match="compile_backend"):
        fxlens.export_module(Branchy(), [torch.randn(2)], str(tmp_path / "b.json"))


def test_tied_weights_written_once(tmp_path):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 32)
            self.out = nn.Linear(32, 50, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, ids):
            return self.out(self.emb(ids))
    model = Tied().eval()
    ids = torch.tensor([[1, 2, 3]])
    path = _fx(model, [ids], tmp_path, "tied")
    wfile = fxlens.weights_path_for(path)
    assert os.path.getsize(wfile) < 50 * 32 * 4 * 1.5
    _check(path, model, [ids], tmp_path, optimize=False)
    gm = fxlens.load_graph(path, module=model)
    assert torch.equal(gm(ids), model(ids))
