# SPDX-License-Identifier: MIT
"""fxlens in-process: the extension against the CLI, fxlens.backend and fxlens.pre_grad_pass inside
torch.compile (inference with folding, training with gradients, dynamic shapes, traces, bad input)."""
import copy
import glob
import json
import os
import subprocess
import warnings

import pytest
import torch

import fxlens
from fxlens import models
from fxlens.engine import optimize_file_text

from clitools import CLI, ROOT, flat_tensors

torch.set_num_threads(1)
RTOL, ATOL = 1e-4, 1e-5


def _close(a, b):
    fa, fb = flat_tensors(a), flat_tensors(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        torch.testing.assert_close(x, y, rtol=RTOL, atol=ATOL)


def tangle():
    torch.manual_seed(0)
    m = models.Tangle(6).eval()  # 6 blocks: horizontal batching needs 5 or more of a kind
    return m, models.tangle_inputs(6, batch=8)


def ctr():
    torch.manual_seed(0)
    m = models.CTRModel(n_sparse=6, n_dense=5).eval()
    return m, models.ctr_inputs(m, batch=8)


class _Bert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel
        cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                         vocab_size=100, max_position_embeddings=32, attn_implementation="eager")
        self.bert = BertModel(cfg, add_pooling_layer=False)

    def forward(self, ids):
        return self.bert(input_ids=ids, return_dict=False)[0]


def bert():
    pytest.importorskip("transformers")
    torch.manual_seed(0)
    return _Bert().eval(), (torch.randint(0, 100, (2, 8), generator=torch.Generator().manual_seed(0)),)


MODELS = {"tangle": tangle, "ctr": ctr, "bert": bert}


# ----------------------------------------------------------------------------- the extension vs the CLI

def _nodes(text):
    return [(n["name"], n["op"], n["target"], n.get("args"), n.get("kwargs")) for n in json.loads(text)["nodes"]]


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "resources", "examples", "*.json"))),
                         ids=os.path.basename)
def test_engine_equals_cli(path, tmp_path):
    """The same graph file through fxlens-cli optimize and through the extension: the same result."""
    if not os.path.exists(CLI):
        pytest.skip("fxlens-cli not built")
    out = tmp_path / "out.json"
    subprocess.run([CLI, "optimize", path, "-o", str(out), "--preset", "all"], check=True, capture_output=True)
    with open(path) as f:
        r = optimize_file_text(f.read(), name=os.path.basename(path), preset="all")
    assert _nodes(r["graph"]) == _nodes(out.read_text())
    assert r["nodes_after"] == len(_nodes(out.read_text()))


def test_patterns_listed():
    names = {p["name"] for p in fxlens.patterns()}
    cli = subprocess.run([CLI, "patterns"], capture_output=True, text=True).stdout if os.path.exists(CLI) else ""
    assert len(names) >= 70
    for name in names:
        assert not cli or name in cli


# ----------------------------------------------------------------------------- fxlens.backend

@pytest.mark.parametrize("name", sorted(MODELS))
def test_backend_inference_folds(name):
    model, inputs = MODELS[name]()
    be = fxlens.backend(then="eager", strict=True)
    with torch.no_grad():
        ref = model(*inputs)
        out = torch.compile(model, backend=be)(*inputs)
    _close(out, ref)
    assert be.stats and all(s["mode"] == "inference" for s in be.stats), be.stats
    assert sum(s["steps"] for s in be.stats) > 0
    assert sum(s["frozen"] for s in be.stats) > 0  # stacked / fused weights computed once
    if name in ("tangle", "ctr"):
        assert sum(s["nodes_after"] for s in be.stats) < sum(s["nodes_before"] for s in be.stats)


def test_backend_inductor_tangle():
    model, inputs = tangle()
    be = fxlens.backend(strict=True)
    with torch.no_grad():
        out = torch.compile(model, backend=be)(*inputs)
        _close(out, model(*inputs))
        # New inputs, same compiled code: the folded weights are constants, the inputs are live.
        x2 = (torch.randn_like(inputs[0]),)
        _close(torch.compile(model, backend=be)(*x2), model(*x2))
    assert be.stats[0]["then_seconds"] > 0 and be.stats[0]["frozen"] > 0


@pytest.mark.parametrize("name", ["tangle", "ctr"])
def test_backend_training_gradients(name):
    model, inputs = MODELS[name]()
    model.train()
    twin = copy.deepcopy(model)
    be = fxlens.backend(then="eager", strict=True)
    compiled = torch.compile(model, backend=be)
    for m, f in ((twin, twin), (model, compiled)):
        m.zero_grad()
        f(*inputs).square().sum().backward()
    assert be.stats[0]["mode"] == "training" and be.stats[0]["steps"] > 0 and be.stats[0]["frozen"] == 0
    for (n, p), (_, q) in zip(twin.named_parameters(), model.named_parameters()):
        assert p.grad is not None and q.grad is not None, n
        torch.testing.assert_close(q.grad, p.grad, rtol=RTOL, atol=ATOL, msg=n)


def test_backend_training_inductor_step():
    model, inputs = tangle()
    model.train()
    twin = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxlens.backend(strict=True))
    for m, f in ((twin, twin), (model, compiled)):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        opt.zero_grad()
        f(*inputs).square().mean().backward()
        opt.step()
    for (n, p), (_, q) in zip(twin.named_parameters(), model.named_parameters()):
        torch.testing.assert_close(q, p, rtol=RTOL, atol=ATOL, msg=n)


def test_backend_dynamic_passes_through():
    model, inputs = tangle()
    be = fxlens.backend(then="eager")
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.compile(model, backend=be, dynamic=True)(*inputs)
    _close(out, model(*inputs))
    assert be.stats[0]["mode"] == "passthrough" and be.stats[0]["reason"] == "symbolic sizes"
    assert any("symbolic sizes" in str(w.message) for w in caught)


def test_backend_trace_file(tmp_path):
    model, inputs = tangle()
    be = fxlens.backend(then="eager", trace=str(tmp_path))
    with torch.no_grad():
        torch.compile(model, backend=be)(*inputs)
    path = tmp_path / "graph_0.json"
    data = json.loads(path.read_text())
    session = data["session"]
    assert session["tool"] == "fxlens.backend" and len(session["steps"]) == be.stats[0]["steps"] > 0
    # The engine, replaying the recorded graph, reaches the same result.
    replay = optimize_file_text(path.read_text(), preset=session["preset"])
    assert [(s["pattern"], s["anchor"]) for s in replay["steps"]] == [(s["pattern"], s["anchor"]) for s in session["steps"]]
    if os.path.exists(CLI):
        info = subprocess.run([CLI, "info", str(path)], capture_output=True, text=True)
        assert info.returncode == 0, info.stderr


def test_backend_user_patterns_and_errors(tmp_path):
    bad = tmp_path / "bad.fxpat"
    bad.write_text("def pattern(x):\n    return torch.relu(x\n")
    with pytest.raises(ValueError, match=r"bad.fxpat:\d+:\d+: error"):
        fxlens.backend(patterns=[str(bad)])
    with pytest.raises(ValueError, match="unknown preset"):
        fxlens.backend(preset="nope")
    with pytest.raises(FileNotFoundError):
        fxlens.backend(patterns=[str(tmp_path / "missing")])
    good = tmp_path / "mine"
    good.mkdir()
    (good / "double_neg.fxpat").write_text(
        'name = "double_neg"\nlevel = "both"\n\ndef pattern(x: Tensor):\n    return torch.neg(torch.neg(x))\n\n'
        "def replacement(x):\n    return x\n")

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.neg(torch.neg(x)) + 1

    be = fxlens.backend(patterns=[str(good)], then="eager", strict=True)
    x = torch.randn(4)
    with torch.no_grad():
        _close(torch.compile(M(), backend=be)(x), x + 1)
    assert be.stats[0]["steps"] >= 1


# ----------------------------------------------------------------------------- fxlens.pre_grad_pass

@pytest.mark.parametrize("name", ["tangle", "ctr", "bert"])
def test_pre_grad_pass(name):
    from torch._inductor import config
    model, inputs = MODELS[name]()
    p = fxlens.pre_grad_pass(strict=True)
    torch._dynamo.reset()
    with torch.no_grad(), config.patch(pre_grad_custom_pass=p):
        out = torch.compile(model)(*inputs)
    torch._dynamo.reset()
    _close(out, model(*inputs))
    assert p.stats and sum(s["steps"] for s in p.stats) > 0, p.stats


def test_created_tensors_go_to_the_graphs_device():
    """A rewrite that creates a tensor (the CTR model's batched embedding adds row offsets from
    torch.arange) puts it on the device of the graph's own tensors: PyTorch would create it on the
    CPU beside CUDA inputs (the H200 run of every CTR model through the backend failed so). The
    accelerator is played by the meta device: the capture's example values are moved there."""
    from fxlens.engine import _factory, engine_for
    assert _factory(torch.arange) and _factory(torch.ops.aten.arange.start_step) and _factory(torch.zeros)
    assert not _factory(torch.add) and not _factory(torch.zeros_like) and not _factory(torch.ops.aten.add.Tensor)
    model, inputs = ctr()
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=capture)(*inputs)
    torch._dynamo.reset()
    gm = graphs[0]
    for want, keep in ((torch.device("meta"), True), (None, False)):
        g = copy.deepcopy(gm)
        for n in g.graph.nodes:
            v = n.meta.get("example_value")
            if keep and isinstance(v, torch.Tensor):
                n.meta["example_value"] = v.to("meta")
        r = engine_for(None).optimize_graph(g, name="ctr", source="dynamo")
        made = [n for n in r.graph.nodes if n.op == "call_function" and _factory(n.target)
                and n.name not in {m.name for m in gm.graph.nodes}]
        assert made, "the batched embedding creates its offsets with a factory call"
        assert all(n.kwargs.get("device") == want for n in made), [(n.name, n.kwargs) for n in made]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(MODELS))
def test_backend_cuda(name):
    """The same through Inductor on the GPU (ctest -L gpu; skipped without CUDA)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    model, inputs = MODELS[name]()
    model = model.cuda()
    inputs = tuple(x.cuda() for x in inputs)
    be = fxlens.backend(strict=True)
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(model, backend=be)(*inputs)
        ref = model(*inputs)
    torch._dynamo.reset()
    for x, y in zip(flat_tensors(out), flat_tensors(ref)):
        torch.testing.assert_close(x, y, rtol=1e-3, atol=1e-3)
    assert sum(s["frozen"] for s in be.stats) > 0


FIXTURE = os.path.join(ROOT, "tests", "data", "traces", "tangle6_backend.json")


def make_trace_fixture(out_dir):
    """The trace tst_RecordedSession opens: torch.compile(Tangle(6), backend=fxlens.backend(trace=...))."""
    model, inputs = tangle()
    torch._dynamo.reset()
    be = fxlens.backend(then="eager", trace=str(out_dir), name="tangle6")
    with torch.no_grad():
        torch.compile(model, backend=be)(*inputs)
    torch._dynamo.reset()
    return os.path.join(str(out_dir), "tangle6_0.json")


def test_trace_fixture_is_what_the_backend_writes(tmp_path):
    """tests/data/traces/tangle6_backend.json is current (FXLENS_UPDATE_FIXTURES=1 rewrites it)."""
    path = make_trace_fixture(tmp_path)
    if os.environ.get("FXLENS_UPDATE_FIXTURES"):
        import shutil
        shutil.copy(path, FIXTURE)
    with open(path) as f, open(FIXTURE) as g:
        now, kept = json.load(f), json.load(g)
    assert now["session"] == kept["session"]
    assert _nodes(json.dumps(now)) == _nodes(json.dumps(kept))


# ----------------------------------------------------------------------------- fxlens.post_grad_pass

@pytest.mark.slow
def test_post_grad_pass_runs_a_users_aten_pattern(tmp_path):
    """A pattern file written for ATen graphs runs inside Inductor, on its post-grad graph right before
    lowering: the compiled model computes the same, the pass says what it rewrote, and the nodes it
    created carry the fake values lowering reads."""
    from torch._inductor import config
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "double_neg_aten.fxpat").write_text(
        'name = "double_neg_aten"\nlevel = "aten"\n\ndef pattern(x: Tensor):\n'
        "    return aten.neg.default(aten.neg.default(x))\n\ndef replacement(x):\n    return x\n")

    class M(torch.nn.Module):
        def forward(self, x, y):
            return torch.sin(torch.neg(torch.neg(x @ y)) * 2)

    p = fxlens.post_grad_pass(patterns=[str(mine)], strict=True)
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    torch._dynamo.reset()
    with torch.no_grad(), config.patch(post_grad_custom_post_pass=p, fx_graph_cache=False):
        out = torch.compile(M())(x, y)
    torch._dynamo.reset()
    _close(out, M()(x, y))
    assert p.stats and p.stats[0]["mode"] == "post_grad", p.stats
    assert p.stats[0]["rewrites_by_pattern"].get("double_neg_aten") == 1, p.stats
    assert p.stats[0]["nodes_after"] < p.stats[0]["nodes_before"]
    assert p.uuid() != fxlens.post_grad_pass().uuid()  # Inductor's cache keys on the user's patterns


def test_post_grad_pass_gives_created_nodes_fake_values():
    """A node a rewrite creates in the post-grad graph gets its fake value from the placeholders'."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from fxlens.inductor_pass import propagate_fake_values
    g = torch.fx.Graph()
    a = g.placeholder("a")
    s = g.call_function(torch.ops.aten.sin.default, (a,))
    g.output(s)
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    with FakeTensorMode() as mode:
        a.meta["val"] = mode.from_tensor(torch.randn(3, 4))
    assert propagate_fake_values(gm.graph) == 1
    assert tuple(s.meta["val"].shape) == (3, 4)
