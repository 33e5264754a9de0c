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


class _Ev:
    """A profiler event as _kernels_of_iteration reads it (id, name, children, time range)."""

    def __init__(self, id, name, children=(), start=0.0, end=0.0):
        from types import SimpleNamespace
        self.id, self.name, self.cpu_children = id, name, list(children)
        self.time_range = SimpleNamespace(start=start, end=end, elapsed_us=lambda: end - start)


def test_gpu_activities_go_to_the_call_that_launched_them():
    """On CUDA every GPU activity of an iteration lands on the top-level call that launched it (also
    through an op under it), and the ones no call launched are listed with a reason: the rows' times
    sum to the GPU busy time of the window."""
    from fxlens import compiled as c
    prov = c.Provenance()
    prov.kernel_post = {"triton_poi_fused_add_0:1": ["add"], "extern_kernels.mm:2": ["mm"]}
    prov.post_to_pre = {"add": ["x_add"], "mm": ["lin"]}
    matcher = c._Matcher(prov, {"x_add", "lin"})
    mm = _Ev(11, "aten::mm", [_Ev(12, "aten::empty")])
    triton = _Ev(13, "triton_poi_fused_add_0")
    graph = _Ev(10, "## Call CompiledFxGraph fabc ##", [mm, triton])
    it = _Ev(1, "fxlens_iteration_0", [graph], start=100.0, end=200.0)
    acts = [c.DeviceActivity("sm90_gemm", 12, 110.0, 30.0),        # launched by an op under aten::mm
            c.DeviceActivity("triton_poi_fused_add_0", 13, 145.0, 5.0),
            c.DeviceActivity("Memset (Device)", 99, 151.0, 2.0),    # in the window, launched by no call
            c.DeviceActivity("other_iteration", 98, 300.0, 9.0)]    # another window: not this iteration's
    rows = c._kernels_of_iteration(it, matcher, "cuda", 0, 100.0, acts)
    by = {r["name"]: r for r in rows}
    assert set(by) == {"sm90_gemm", "triton_poi_fused_add_0", "Memset (Device)"}
    assert by["sm90_gemm"]["nodes"] == ["lin"] and by["sm90_gemm"]["call"] == "aten::mm"
    assert by["sm90_gemm"]["start_us"] == 10.0 and by["sm90_gemm"]["dur_us"] == 30.0
    assert by["triton_poi_fused_add_0"]["nodes"] == ["x_add"]
    assert by["Memset (Device)"]["nodes"] == [] and "outside" in by["Memset (Device)"]["reason"]
    assert sum(r["dur_us"] for r in rows) == 37.0
