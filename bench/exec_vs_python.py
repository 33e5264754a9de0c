# SPDX-License-Identifier: MIT
"""Executor overhead: fxlens' LibTorch executor vs Python's GraphModule.__call__ on the same graph,
weights and device. Tiny batch, so per-node overhead dominates.

    .venv/bin/python bench/exec_vs_python.py [--n 200] [--batch 1] [--device cpu] [--repeat 20]

Captures Tangle(N) with Dynamo (Torch IR) and exports it with torch.export (ATen IR), then for each:
times gm(*inputs) in Python (median of --repeat after 2 warm-ups, torch.no_grad, CUDA synchronized)
and bench_exec on the same file; prints both and the ratio fxlens / Python.

With --overhead, both sides run under the PyTorch profiler (Kineto, host ATen ops recorded) and the
time inside the outermost ATen ops is subtracted from each iteration: what remains is the
interpreter's own cost per node (Python: torch.profiler around gm(*inputs); fxlens: `fxlens-cli
profile --host-ops --raw-events`, whose per-node ranges count against fxlens)."""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import torch

import fxlens
from fxlens.examples import _dynamo
from fxlens.models import Tangle, tangle_inputs


def py_time(path, device, repeat):
    gm = fxlens.load_graph(path, random_weights=True).to(device)
    data = fxlens.graph_format.read_dict(path)
    shapes = [n["meta"]["val"]["tensor"]["shape"] for n in data["nodes"] if n["op"] == "placeholder"]
    inputs = [torch.randn(*s, device=device) for s in shapes]
    times = []
    with torch.no_grad():
        for i in range(repeat + 2):
            t = time.perf_counter()
            gm(*inputs)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            if i >= 2:
                times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), len(data["nodes"])


def _outermost_ops_us(ops):
    """Sum of the durations (ns -> us) of the ops not nested in another op, ops = [(start, end)]."""
    total, open_end = 0, -1
    for s, e in sorted(ops, key=lambda x: (x[0], -x[1])):
        if s < open_end:
            continue
        total += e - s
        open_end = e
    return total / 1000


def py_overhead(path, device, repeat):
    from torch.profiler import ProfilerActivity, profile, record_function
    gm = fxlens.load_graph(path, random_weights=True).to(device)
    data = fxlens.graph_format.read_dict(path)
    shapes = [n["meta"]["val"]["tensor"]["shape"] for n in data["nodes"] if n["op"] == "placeholder"]
    inputs = [torch.randn(*s, device=device) for s in shapes]
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    with torch.no_grad():
        for _ in range(2):
            gm(*inputs)
        with profile(activities=acts) as prof:
            for i in range(repeat):
                with record_function(f"fxlens_bench_iter_{i}"):
                    gm(*inputs)
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
    per_iter = []
    for e in prof.events():
        if e.name.startswith("fxlens_bench_iter_"):
            wall = e.time_range.elapsed_us()
            ops = sum(c.time_range.elapsed_us() for c in e.cpu_children)
            per_iter.append((wall, ops))
    wall = statistics.median(w for w, _ in per_iter)
    over = statistics.median(w - o for w, o in per_iter)
    return wall / 1000, over / 1000, len(data["nodes"])


def fx_overhead(cli, path, device, repeat, tmp):
    import json
    raw = os.path.join(tmp, "raw.json")
    subprocess.run([cli, "profile", path, "--device", device, "--iters", str(repeat), "--warmup", "2", "--host-ops",
                    "--raw-events", raw], capture_output=True, text=True, check=True)
    ev = json.load(open(raw))["events"]
    iters = sorted((e[2], e[3]) for e in ev if e[0] == "iter_range")
    ops = [(e[2], e[3]) for e in ev if e[0] == "cpu_op"]
    walls, overs = [], []
    for s, t in iters:
        inside = [(a, b) for a, b in ops if a >= s and b <= t]
        walls.append((t - s) / 1000)
        overs.append((t - s) / 1000 - _outermost_ops_us(inside))
    return statistics.median(walls) / 1000, statistics.median(overs) / 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--bench", default=os.path.join("build", "bench", "bench_exec"))
    ap.add_argument("--overhead", action="store_true", help="subtract the time inside ATen ops (both under the profiler)")
    ap.add_argument("--cli", default=os.path.join("build", "app", "fxlens-cli"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, inputs = Tangle(a.n).eval(), tangle_inputs(a.n, batch=a.batch)
        files = {"torch": os.path.join(tmp, "t_torch.json"), "aten": os.path.join(tmp, "t_aten.json")}
        _dynamo(model, inputs, files["torch"], "tangle")
        fxlens.export_program(torch.export.export(model, inputs), files["aten"], name="tangle")
        print(f"torch {torch.__version__}, device {a.device}, tangle N={a.n}, batch {a.batch}")
        if a.overhead:
            print(f"{'IR':>6} {'nodes':>6} {'py wall ms':>10} {'py over ms':>10} {'fx wall ms':>10} {'fx over ms':>10} "
                  f"{'us/node py':>10} {'us/node fx':>10} {'ratio':>6}")
            for ir, path in files.items():
                pw, po, nodes = py_overhead(path, a.device, a.repeat)
                fw, fo = fx_overhead(a.cli, path, a.device, a.repeat, tmp)
                print(f"{ir:>6} {nodes:>6} {pw:>10.2f} {po:>10.2f} {fw:>10.2f} {fo:>10.2f} {1000 * po / nodes:>10.2f} "
                      f"{1000 * fo / nodes:>10.2f} {fo / po:>6.2f}", flush=True)
            return
        print(f"{'IR':>6} {'nodes':>6} {'python ms':>10} {'fxlens ms':>10} {'us/node py':>11} {'us/node fx':>11} {'ratio':>6}")
        for ir, path in files.items():
            py_ms, nodes = py_time(path, a.device, a.repeat)
            out = subprocess.run([a.bench, path, str(a.repeat), a.device], capture_output=True, text=True, check=True).stdout
            fx_ms = float(re.search(r"median_ms=([\d.]+)", out).group(1))
            print(f"{ir:>6} {nodes:>6} {py_ms:>10.2f} {fx_ms:>10.2f} {1000 * py_ms / nodes:>11.2f} "
                  f"{1000 * fx_ms / nodes:>11.2f} {fx_ms / py_ms:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
