# SPDX-License-Identifier: MIT
"""`fxlens-cli convert --to python`: every bundled example written as a standalone torch.nn.Module
runs in PyTorch and computes what the graph computes (the loaded GraphModule, same weights and
inputs); so does a graph straightened by `fxlens-cli optimize`."""
import os
import subprocess

import pytest
import torch

import fxlens

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(ROOT, "resources", "examples")
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))

EXAMPLES = ["tangle4_fx.json", "tangle50_torch.json", "tangle50_aten.json", "transformer_fx.json",
            "transformer_dynamo.json", "transformer_aten.json", "resnet50_fx.json.gz", "resnet50_aten.json.gz"]


def _load_python(path, tmp_path):
    r = subprocess.run([CLI, "convert", path, "--to", "python"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    ns = {}
    exec(compile(r.stdout, os.path.basename(path) + ".py", "exec"), ns)
    return ns["Model"]()


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out] if isinstance(out, torch.Tensor) else []


def _reference(path):
    """The graph as fxlens' Python companion loads it, with seeded weights (or the module's own
    for symbolic_trace graphs, whose call_module nodes need the module objects)."""
    data = fxlens.graph_format.read_dict(path)
    if any(n["op"] == "call_module" for n in data["nodes"]):
        from test_executor import _module_for
        module = _module_for(os.path.basename(path), path)
        return fxlens.load_graph(path, module=module), module.state_dict(), data
    gm = fxlens.load_graph(path, random_weights=True, seed=3)
    return gm, gm.state_dict(), data


def _inputs(data):
    g = torch.Generator().manual_seed(1)
    return [torch.randn(*n["meta"]["val"]["tensor"]["shape"], generator=g) for n in data["nodes"] if n["op"] == "placeholder"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_python_export_runs_and_matches(tmp_path, name):
    path = os.path.join(EX, name)
    gm, state, data = _reference(path)
    model = _load_python(path, tmp_path)
    missing, _ = model.load_state_dict(state, strict=False)
    assert not missing, missing
    inputs = _inputs(data)
    with torch.no_grad():
        expected = _flat(gm(*inputs))
        got = _flat(model(*inputs))
    assert len(got) == len(expected) and got
    for e, o in zip(expected, got):
        torch.testing.assert_close(o, e, rtol=1e-5, atol=1e-5)


def test_optimized_graph_as_python(tmp_path):
    src = os.path.join(EX, "tangle50_torch.json")
    opt = str(tmp_path / "opt.json")
    r = subprocess.run([CLI, "optimize", src, "--preset", "all", "-o", opt], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    gm, state, data = _reference(src)
    model = _load_python(opt, tmp_path)
    model.load_state_dict(state, strict=False)
    inputs = _inputs(data)
    with torch.no_grad():
        torch.testing.assert_close(_flat(model(*inputs)), _flat(gm(*inputs)), rtol=1e-4, atol=1e-4)
    # Straightened: far fewer statements than the original's.
    code = subprocess.run([CLI, "convert", opt, "--to", "python"], capture_output=True, text=True).stdout
    original = subprocess.run([CLI, "convert", src, "--to", "python"], capture_output=True, text=True).stdout
    assert code.count("\n        ") * 3 < original.count("\n        ")


def test_weights_file(tmp_path):
    """load_weights reads the exporter's safetensors side file."""
    path = os.path.join(EX, "tangle4_fx.json")
    model = _load_python(path, tmp_path)
    data = fxlens.graph_format.read_dict(path)
    model.load_weights(os.path.join(EX, data["weights"]))
    gm, _, _ = _reference(path)
    inputs = _inputs(data)
    with torch.no_grad():
        torch.testing.assert_close(_flat(model(*inputs)), _flat(gm(*inputs)))
