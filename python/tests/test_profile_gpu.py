# SPDX-License-Identifier: MIT
"""`fxlens-cli profile` on CUDA (ctest label gpu; skipped without a GPU): kernels captured through
Kineto/CUPTI, each attributed to the FX node that launched it, the optimized tangle launching a
constant number of kernels, and a Chrome trace that parses."""
import json
import os
import re
import subprocess

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))
EX = os.path.join(ROOT, "resources", "examples")

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]


def _profile(tmp_path, name, *extra):
    a, b, t = (str(tmp_path / f) for f in ("a.prof.json", "b.prof.json", "t.json"))
    r = subprocess.run([CLI, "profile", os.path.join(EX, name), "--optimize", "--iters", "3", "--warmup", "1",
                        "-o", a, "--compare-output", b, "--trace", t, *extra], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, json.load(open(a)), json.load(open(b)), json.load(open(t))


def _kernels(p):
    cols = p["kernel_columns"]
    return [dict(zip(cols, k)) for k in p["kernels"]]


@pytest.mark.parametrize("name", ["tangle50_torch.json", "tangle50_aten.json"])
def test_every_kernel_belongs_to_a_node(tmp_path, name):
    out, a, b, trace = _profile(tmp_path, name)
    assert "device cuda" in out and "unattributed" not in out
    for p in (a, b):
        ks = _kernels(p)
        assert ks, "no kernels captured"
        assert all(k["node"] >= 0 for k in ks)
        assert all(k["grid"][0] > 0 for k in ks if k["kind"] == "kernel")
        nodes = p["nodes"]
        cats = [k for k in ks if nodes[k["node"]][2] in ("torch.cat", "aten.cat.default")]
        assert all("Cat" in k["name"] or "copy" in k["name"].lower() for k in cats)
    assert a["summary"]["kernels_per_iteration"] >= 20 * b["summary"]["kernels_per_iteration"]
    events = trace["traceEvents"]
    assert any(e.get("cat") == "kernel" and "fx_node" in e["args"] for e in events)
    assert sum(1 for e in events if e["ph"] == "s") == sum(1 for e in events if e["ph"] == "f")


def test_optimized_kernel_count_does_not_grow_with_n(tmp_path):
    counts = []
    for n in (50, 200):
        out, a, b, _ = _profile(tmp_path, f"tangle{n}_torch.json" + (".gz" if n == 200 else ""), "--freeze")
        counts.append(b["summary"]["kernels_per_iteration"])
    assert counts[0] == counts[1], counts


def test_cuda_graph_replays_the_frozen_graph(tmp_path):
    """optimize --freeze, then run --cuda-graph: every replay gives the first run's outputs, which
    are the plain run's; profile --cuda-graph captures the same kernels per iteration."""
    frozen = str(tmp_path / "frozen.json")
    # The example has no weights file: its frozen values are seeded random ones (what is measured here).
    r = subprocess.run([CLI, "optimize", os.path.join(EX, "tangle50_torch.json"), "-o", frozen, "--freeze",
                        "--random-weights"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    plain, graph = str(tmp_path / "plain.safetensors"), str(tmp_path / "graph.safetensors")
    r = subprocess.run([CLI, "run", frozen, "--device", "cuda", "-o", plain], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([CLI, "run", frozen, "--device", "cuda", "--cuda-graph", "--repeat", "5", "-o", graph],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "cuda graph: captured" in r.stdout and "all outputs equal" in r.stdout, r.stdout + r.stderr
    from safetensors.torch import load_file
    torch.testing.assert_close(load_file(graph)["output:0"], load_file(plain)["output:0"])
    counts = []
    for extra in ((), ("--cuda-graph",)):
        p = str(tmp_path / f"p{len(extra)}.json")
        r = subprocess.run([CLI, "profile", frozen, "--iters", "3", "--warmup", "1", "-o", p, *extra],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        counts.append(json.load(open(p))["summary"]["kernels_per_iteration"])
    assert counts[0] == counts[1] and counts[0] > 0, counts
