# SPDX-License-Identifier: MIT
"""Export -> load back -> same outputs as the original module, for every source fxlens supports."""
import json
import os
import subprocess

import pytest
import torch

import fxlens
from fxlens.graph_format import FormatError, normalize_module_path, read_dict, resolve_target, target_name
from fxlens.models import Tangle, TransformerLayer, tangle_inputs, transformer_inputs

torch.manual_seed(0)


def _models():
    yield "tangle", Tangle(5).eval(), tangle_inputs(5, batch=8)
    yield "transformer", TransformerLayer().eval(), transformer_inputs()


def _resnet():
    torchvision = pytest.importorskip("torchvision")
    return torchvision.models.resnet50(weights=None).eval(), (torch.randn(2, 3, 64, 64),)


def _close(a, b):
    return torch.allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,model,inputs", list(_models()))
def test_symbolic_trace_roundtrip(tmp_path, name, model, inputs):
    path = str(tmp_path / f"{name}.json")
    gm = fxlens.export_module(model, inputs, path, weights=True)
    loaded = fxlens.load_graph(path, module=gm)
    with torch.no_grad():
        assert _close(loaded(*inputs), model(*inputs))
    data = read_dict(path)
    assert data["source"] == "symbolic_trace"
    assert any(m["type"].endswith(type(model).__name__) for m in data["modules"])


def test_resnet_symbolic_trace_and_export(tmp_path):
    model, inputs = _resnet()
    gm = fxlens.export_module(model, inputs, str(tmp_path / "r.json"))
    with torch.no_grad():
        assert _close(fxlens.load_graph(str(tmp_path / "r.json"), module=gm)(*inputs), model(*inputs))
        ep = torch.export.export(model, inputs)
        fxlens.export_program(ep, str(tmp_path / "r_aten.json.gz"), weights=True)
        loaded = fxlens.load_graph(str(tmp_path / "r_aten.json.gz"))
        out = loaded(*inputs)
        out = out[0] if isinstance(out, (tuple, list)) else out
        assert _close(out, model(*inputs))
    data = read_dict(str(tmp_path / "r_aten.json.gz"))
    assert data["ir"] == "aten"
    assert any(n["target"] == "aten.convolution.default" for n in data["nodes"])
    assert {p["name"] for p in data["params"]} >= {"conv1.weight", "bn1.running_mean"}


@pytest.mark.parametrize("name,model,inputs", list(_models()))
def test_torch_export_roundtrip(tmp_path, name, model, inputs):
    path = str(tmp_path / f"{name}_aten.json")
    ep = torch.export.export(model, inputs)
    fxlens.export_program(ep, path, weights=True)
    loaded = fxlens.load_graph(path)
    with torch.no_grad():
        out = loaded(*inputs)
        assert _close(out[0], model(*inputs))
    data = read_dict(path)
    assert all(n["target"].startswith(("aten.", "operator.")) for n in data["nodes"] if n["op"] == "call_function")
    # Parameters are get_attr nodes named by their qualified name.
    attrs = {n["target"] for n in data["nodes"] if n["op"] == "get_attr"}
    assert attrs == {p["name"] for p in data["params"]}


@pytest.mark.parametrize("name,model,inputs", list(_models()))
def test_dynamo_backend_roundtrip(tmp_path, name, model, inputs):
    torch._dynamo.reset()
    backend = fxlens.compile_backend(str(tmp_path), name=name, weights=True)
    with torch.no_grad():
        expected = model(*inputs)
        got = torch.compile(model, backend=backend)(*inputs)
    assert _close(got, expected)
    assert len(backend.files) == 1
    loaded = fxlens.load_graph(backend.files[0])
    with torch.no_grad():
        out = loaded(*backend.inputs[0])
    assert _close(out[0], expected)
    data = read_dict(backend.files[0])
    assert data["source"] == "dynamo"
    paths = {f["path"] for n in data["nodes"] for f in n["meta"].get("nn_module_stack", [])}
    assert all("[" not in p and "L[" not in p for p in paths)
    placeholders = [n for n in data["nodes"] if n["op"] == "placeholder"]
    assert len(placeholders) == len(inputs)  # parameters are get_attr, not inputs


@pytest.mark.slow
def test_post_grad_capture(tmp_path):
    torch._dynamo.reset()

    class Small(torch.nn.Module):
        def forward(self, x):
            a, b = torch.split(x, 4, dim=1)
            return torch.cat([torch.tanh(a), b], dim=1)

    x = torch.randn(4, 8)
    with fxlens.capture_post_grad(str(tmp_path), name="small") as cap:
        torch.compile(Small())(x)
    assert cap.files, "no post-grad graph captured"
    data = read_dict(cap.files[0])
    assert data["ir"] == "aten" and data["source"] == "inductor_post_grad"
    assert any(n["target"].startswith("aten.tanh") for n in data["nodes"])


def test_targets_resolve_both_ways():
    for fn in (torch.cat, torch.split, torch.nn.functional.linear, torch.relu, torch.ops.aten.cat.default):
        assert resolve_target(target_name(fn)) is fn
    assert target_name(torch.split) == "torch.split"
    assert target_name(torch.nn.functional.layer_norm) == "torch.nn.functional.layer_norm"


def test_dynamo_module_paths():
    assert normalize_module_path("L['self']._modules['blocks']._modules['0']._modules['linear']") == "blocks.0.linear"
    assert normalize_module_path("L['self'].blocks[3].norm") == "blocks.3.norm"
    assert normalize_module_path("blocks.0") == "blocks.0"


def test_bad_files_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fxlens-graph",\n "version": 1,\n "nodes": [,]}')
    with pytest.raises(FormatError, match=r"bad.json:3:\d+: malformed JSON"):
        fxlens.load_graph(str(bad))
    other = tmp_path / "v2.json"
    other.write_text(json.dumps({"format": "fxlens-graph", "version": 2, "nodes": []}))
    with pytest.raises(FormatError, match="unsupported schema version 2"):
        fxlens.load_graph(str(other))


def test_call_module_graph_needs_module(tmp_path):
    path = str(tmp_path / "t.json")
    fxlens.export_module(Tangle(2).eval(), tangle_inputs(2), path)
    with pytest.raises(FormatError, match="pass the original module"):
        fxlens.load_graph(path)


def test_missing_weights_and_random_weights(tmp_path):
    path = str(tmp_path / "t_aten.json")
    fxlens.export_program(torch.export.export(Tangle(2).eval(), tangle_inputs(2)), path)
    with pytest.raises(FormatError, match="no value for"):
        fxlens.load_graph(path)
    gm = fxlens.load_graph(path, random_weights=True, seed=3)
    assert gm(*tangle_inputs(2))[0].shape == (64, 64)


@pytest.mark.skipif(not os.environ.get("FXLENS_CLI"), reason="fxlens-cli not built")
def test_cli_reads_python_exports(tmp_path):
    path = str(tmp_path / "t.json.gz")
    fxlens.export_program(torch.export.export(TransformerLayer().eval(), transformer_inputs()), path)
    r = subprocess.run([os.environ["FXLENS_CLI"], "lint", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # Text form printed by fxlens names the same nodes torch.fx has.
    r = subprocess.run([os.environ["FXLENS_CLI"], "convert", path, "--to", "text"], capture_output=True, text=True)
    names = {n["name"] for n in read_dict(path)["nodes"] if n["op"] != "output"}
    assert all(f"%{n} :" in r.stdout for n in names)


@pytest.mark.skipif(not os.environ.get("FXLENS_CLI"), reason="fxlens-cli not built")
@pytest.mark.parametrize("source", ["fx", "dynamo", "aten"])
def test_optimized_graph_computes_the_same(tmp_path, source):
    """fxlens-cli optimize (vertical preset, checked mode) must preserve the model's outputs."""
    torch._dynamo.reset()
    model, inputs = Tangle(3).eval(), tangle_inputs(3, batch=4)
    path = str(tmp_path / f"t_{source}.json")
    module = None
    if source == "fx":
        module = fxlens.export_module(model, inputs, path)
        run_inputs = inputs
    elif source == "aten":
        fxlens.export_program(torch.export.export(model, inputs), path, weights=True)
        run_inputs = inputs
    else:
        be = fxlens.compile_backend(str(tmp_path), name="t_dynamo", weights=True)
        with torch.no_grad():
            torch.compile(model, backend=be)(*inputs)
        path, run_inputs = be.files[0], be.inputs[0]
    out = str(tmp_path / "opt.json")
    r = subprocess.run([os.environ["FXLENS_CLI"], "optimize", path, "--preset", "vertical", "--checked", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "stop reason: fixpoint" in r.stdout
    before = read_dict(path)["nodes"]
    after = read_dict(out)
    assert len(after["nodes"]) < len(before)
    # The optimized file names the same weights file as the input (same directory for dynamo/aten).
    if after.get("weights"):
        after_w = os.path.join(os.path.dirname(out), after["weights"])
        assert os.path.exists(after_w) or os.path.exists(os.path.join(os.path.dirname(path), after["weights"]))
    weights = fxlens.weights_path_for(path) if source != "fx" else None
    original = fxlens.load_graph(path, module=module)
    optimized = fxlens.load_graph(out, module=module, weights=weights)
    with torch.no_grad():
        a, b = original(*run_inputs), optimized(*run_inputs)
    a = a[0] if isinstance(a, (tuple, list)) else a
    b = b[0] if isinstance(b, (tuple, list)) else b
    assert torch.allclose(a, b, rtol=1e-6, atol=1e-6)
    assert torch.allclose(a, model(*inputs), rtol=1e-5, atol=1e-6)
