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


def test_compiled_names_missing_example_inputs(tmp_path):
    """A graph naming example inputs that are not beside it is refused with the file named, before
    any compile (not with the path of a temporary copy)."""
    if not os.path.exists(CLI):
        pytest.skip("fxlens-cli is not built")
    data = json.load(open(os.path.join(ROOT, "resources", "examples", "ctr_dynamo.json")))
    data["inputs"] = "gone.inputs.safetensors"
    graph = tmp_path / "ctr.json"
    graph.write_text(json.dumps(data))
    r = subprocess.run([CLI, "profile", str(graph), "--compiled"], capture_output=True, text=True, env=_cli_env(), timeout=60)
    assert r.returncode != 0 and str(graph) in r.stderr and "'gone.inputs.safetensors'" in r.stderr, r.stderr


def test_place_moves_constants_and_created_tensors():
    """A graph captured on the CPU runs on another device: parameters, plain tensor constants and the
    tensors its factory calls create (device='cpu' or none) all go there."""
    import torch
    from fxlens import compiled as c

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))
            self.const = torch.full((3,), 2.0)  # neither parameter nor buffer

        def forward(self, x):
            return x * self.w + self.const + torch.ones(3, device="cpu") + torch.arange(3)

    gm = c.place(torch.fx.symbolic_trace(M()), "meta")
    assert gm(torch.ones(3, device="meta")).device.type == "meta"


class _Ev:
    """A profiler event as _kernels_of_iteration reads it (id, name, children, time range)."""

    def __init__(self, id, name, children=(), start=0.0, end=0.0):
        from types import SimpleNamespace
        self.id, self.name, self.cpu_children = id, name, list(children)
        self.time_range = SimpleNamespace(start=start, end=end, elapsed_us=lambda: end - start)


def _iteration(first_id, start):
    """One timed iteration of a compiled graph: aten::mm (an op under it launches the GEMM) and a
    Triton kernel, whose record carries no correlation id (0)."""
    mm = _Ev(first_id, "aten::mm", [_Ev(first_id + 1, "aten::empty")], start + 5, start + 40)
    # its runtime launch carries a CUPTI correlation id, which may equal an op's id elsewhere
    triton = _Ev(0, "triton_poi_fused_add_0", [_Ev(21 if first_id == 10 else 11, "cuLaunchKernel")], start + 42, start + 44)
    graph = _Ev(first_id + 2, "## Call CompiledFxGraph fabc ##", [mm, triton], start + 1, start + 45)
    return _Ev(first_id + 3, "fxlens_iteration", [graph], start, start + 100)


def test_gpu_activities_go_once_to_the_call_that_launched_them():
    """On CUDA every GPU activity of the timed iterations lands once: on the top-level call whose op
    kineto links it to, else on the call whose host time holds its launch, else as launched by no
    call in the iteration whose window holds it. The rows' times sum to the GPU busy time."""
    from fxlens import compiled as c
    prov = c.Provenance()
    prov.kernel_post = {"triton_poi_fused_add_0:1": ["add"], "extern_kernels.mm:2": ["mm"]}
    prov.post_to_pre = {"add": ["x_add"], "mm": ["lin"]}
    matcher = c._Matcher(prov, {"x_add", "lin"})
    its = [_iteration(10, 100.0), _iteration(20, 200.0)]
    tops = [c._top_calls(it) for it in its]
    acts = []
    for k, base in ((11, 100.0), (21, 200.0)):
        acts += [c.DeviceActivity("sm90_gemm", k, base + 10, 30.0),  # no launch seen: the op under aten::mm
                 c.DeviceActivity("triton_poi_fused_add_0", 0, base + 50, 5.0, base + 43),  # by its launch time
                 c.DeviceActivity("Memset (Device)", 0, base + 60, 2.0, base + 90)]  # launched by no call
    acts.append(c.DeviceActivity("warmup_leftover", 0, 50.0, 9.0, 40.0))  # before the timed iterations
    per_call, other = c.assign_activities([((it.time_range.start, it.time_range.end), t) for it, t in zip(its, tops)], acts)
    rows = []
    for i in range(2):
        rows += c._kernels_of_iteration(tops[i], matcher, i, 100.0, (per_call[i], other[i]))
    assert len(rows) == 6 and sum(r["dur_us"] for r in rows) == 2 * 37.0
    for i in range(2):
        by = {r["name"]: r for r in rows if r["iteration"] == i}
        assert set(by) == {"sm90_gemm", "triton_poi_fused_add_0", "Memset (Device)"}
        assert by["sm90_gemm"]["nodes"] == ["lin"] and by["sm90_gemm"]["call"] == "aten::mm"
        assert by["sm90_gemm"]["start_us"] == 10.0 + 100 * i
        assert by["triton_poi_fused_add_0"]["nodes"] == ["x_add"]
        assert by["Memset (Device)"]["nodes"] == [] and "outside" in by["Memset (Device)"]["reason"]


def test_rows_the_profiler_lost_the_launch_of_take_their_place():
    """Where the host side of some launches is missing in one iteration, its GPU activities take the
    attribution of the same place in a complete iteration, when both launched the same sequence;
    an iteration that launched something else keeps its rows unattributed."""
    from fxlens import compiled as c

    def row(name, start, nodes):
        return {"name": name, "kind": "kernel", "start_us": start, "dur_us": 1.0, "post_grad": ["p"] if nodes else [],
                "nodes": nodes, "reason": "" if nodes else c._OUTSIDE}

    good = [row("gemm", 0, ["lin"]), row("triton_a", 2, ["add"]), row("gemm", 4, ["lin2"])]
    lost = [row("gemm", 10, ["lin"]), row("triton_a", 12, []), row("gemm", 14, [])]
    other = [row("gemm", 20, ["lin"]), row("memset", 22, [])]
    assert c.fill_by_position([good, lost, other]) == 2
    assert [r["nodes"] for r in lost] == [["lin"], ["add"], ["lin2"]]
    assert other[1]["nodes"] == [] and other[1]["reason"] == c._OUTSIDE


@pytest.mark.slow
def test_profile_compiled_runs_post_grad_patterns(tmp_path):
    """`profile --compiled --post-grad DIR`: the user's ATen pattern runs inside Inductor's compile on
    its post-grad graph, the companion says what it rewrote, and the kernels are still attributed."""
    if not os.path.exists(CLI):
        pytest.skip("fxlens-cli is not built")
    import torch
    import fxlens

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.sin(torch.neg(torch.neg(x)) * 2)

    graph = tmp_path / "negneg.json"
    fxlens.export_module(M(), [torch.randn(16, 16)], str(graph), weights=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "double_neg_aten.fxpat").write_text(
        'name = "double_neg_aten"\nlevel = "aten"\n\ndef pattern(x: Tensor):\n'
        "    return aten.neg.default(aten.neg.default(x))\n\ndef replacement(x):\n    return x\n")
    out = tmp_path / "p.fxprof.json"
    r = subprocess.run([CLI, "profile", str(graph), "--compiled", "--post-grad", str(mine), "--iters", "2", "--warmup", "1",
                        "-o", str(out)], capture_output=True, text=True, env=_cli_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert "double_neg_aten ×1" in r.stdout, r.stdout
    assert "(100.0%)" in r.stdout, r.stdout


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
