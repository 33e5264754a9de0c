# SPDX-License-Identifier: MIT
"""profile --compiled on the CPU (Inductor's C++ backend): every kernel of the compiled run is attributed
to nodes of the graph file, or listed with the reason, and the attributed times add up to the busy time."""
import json
import os
import subprocess
import sys

import pytest

from clitools import CLI, ROOT

# symbolic_trace's graph: call_module nodes (torch.nn.Linear, LayerNorm) with the model's weights.
GRAPH = os.path.join(ROOT, "resources", "examples", "transformer_fx.json")


def _cli_env():
    env = dict(os.environ, FXLENS_PYTHON=sys.executable, OMP_NUM_THREADS="1")
    # The companion of this tree, also when the installed one is another checkout's.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(ROOT, "python"), env.get("PYTHONPATH")]))
    return env


@pytest.mark.slow
def test_profile_compiled_attributes_every_kernel(tmp_path):
    if not os.path.exists(CLI):
        pytest.skip("fxlens-cli is not built")
    out = tmp_path / "compiled.fxprof.json"
    # (the file is told apart from a graph by its first bytes: --compare reopens it)
    r = subprocess.run([CLI, "profile", GRAPH, "--compiled", "--device", "cpu", "--iters", "3", "--warmup", "1", "-o", str(out)],
                       capture_output=True, text=True, env=_cli_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert "compiled (inductor, cpu)" in r.stdout
    p = json.loads(out.read_text())
    assert p["provenance"]["backend"] == "inductor"
    kernels, prov = p["kernels"], p["provenance"]["kernels"]
    assert len(kernels) == len(prov) > 0
    cols = p["kernel_columns"]
    name, dur = cols.index("name"), cols.index("dur_us")
    graph_nodes = {n["name"] for n in json.load(open(GRAPH))["nodes"]}
    node_names = [n[0] for n in p["nodes"]]
    assert set(node_names) == graph_nodes
    names = {k[name] for k in kernels}
    # Inductor's own C++ kernels and the extern GEMMs it calls are both there.
    assert any(n.startswith("cpp_fused_") for n in names), names
    assert "aten::addmm" in names, names
    attributed = busy = 0.0
    fused_groups = 0
    for k, pv in zip(kernels, prov):
        busy += k[dur]
        if pv["nodes"]:
            assert all(0 <= i < len(node_names) for i in pv["nodes"])
            assert pv["post_grad"], k[name]
            attributed += k[dur]
            fused_groups += len(pv["nodes"]) > 1
        else:
            assert pv.get("reason"), f"kernel {k[name]} has neither FX nodes nor a reason"
    assert busy > 0 and abs(busy - attributed) <= 0.01 * busy
    assert fused_groups > 0  # a kernel covering several FX nodes: what Inductor fused
    # The layer norm after the residual add is one C++ kernel over both nodes.
    by_nodes = [{node_names[i] for i in pv["nodes"]} for pv in prov]
    assert any({"add", "norm1"} <= s for s in by_nodes), by_nodes


def test_compiled_without_python_says_what_is_missing(tmp_path):
    if not os.path.exists(CLI):
        pytest.skip("fxlens-cli is not built")
    env = dict(os.environ, FXLENS_PYTHON=str(tmp_path / "no-such-python"))
    r = subprocess.run([CLI, "profile", GRAPH, "--compiled"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0 and "set FXLENS_PYTHON" in r.stderr, r.stderr


@pytest.mark.slow
def test_profile_compiled_writes_the_post_grad_graph(tmp_path):
    """The post-grad graph Inductor lowered is saved beside the profile as an fxlens graph file, and
    the profile maps its nodes onto the graph file's nodes (what the app's linked view follows)."""
    if not os.path.exists(CLI):
        pytest.skip("fxlens-cli is not built")
    graph = os.path.join(ROOT, "resources", "examples", "tangle4_fx.json")
    out = tmp_path / "sub" / "t.fxprof.json"
    out.parent.mkdir()
    r = subprocess.run([CLI, "profile", graph, "--compiled", "--device", "cpu", "--iters", "1", "--warmup", "0", "-o", str(out)],
                       capture_output=True, text=True, env=_cli_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    post_file = tmp_path / "sub" / "t.fxprof.post_grad.json"
    assert post_file.exists() and "post-grad graph:" in r.stdout
    lint = subprocess.run([CLI, "lint", str(post_file)], capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    post = json.loads(post_file.read_text())
    assert post["ir"] == "aten" and post["source"] == "inductor_post_grad"
    post_names = {n["name"] for n in post["nodes"]}
    p = json.loads(out.read_text())
    prov = p["provenance"]
    assert prov["post_grad_graph"] == post_file.name  # relative to the profile
    fx_names = [n[0] for n in p["nodes"]]
    assert set(fx_names) == {n["name"] for n in json.load(open(graph))["nodes"]}
    mapping = prov["post_grad_nodes"]
    assert len(mapping) > 10
    for name, fx in mapping.items():
        assert name in post_names, name
        assert fx and all(0 <= i < len(fx_names) for i in fx), (name, fx)
    # Every post-grad node a kernel computes is a node of the saved graph, and the kernels' FX
    # nodes are those their post-grad nodes map to.
    for k in prov["kernels"]:
        assert set(k["post_grad"]) <= post_names, k["post_grad"]
        mapped = {i for pg in k["post_grad"] for i in mapping.get(pg, [])}
        assert set(k["nodes"]) == mapped, (k["post_grad"], k["nodes"])
