# SPDX-License-Identifier: MIT
"""Executor overhead: fxlens' LibTorch executor vs Python's GraphModule.__call__ on the same graph,
weights and device. Tiny batch, so per-node overhead dominates.

    .venv/bin/python bench/exec_vs_python.py [--n 200] [--batch 1] [--device cpu] [--repeat 20]

Captures Tangle(N) with Dynamo (Torch IR) and exports it with torch.export (ATen IR), then for each:
times gm(*inputs) in Python (median of --repeat after 2 warm-ups, torch.no_grad, CUDA synchronized)
and bench_exec on the same file; prints both and the ratio fxlens / Python."""
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--bench", default=os.path.join("build", "bench", "bench_exec"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, inputs = Tangle(a.n).eval(), tangle_inputs(a.n, batch=a.batch)
        files = {"torch": os.path.join(tmp, "t_torch.json"), "aten": os.path.join(tmp, "t_aten.json")}
        _dynamo(model, inputs, files["torch"], "tangle")
        fxlens.export_program(torch.export.export(model, inputs), files["aten"], name="tangle")
        print(f"torch {torch.__version__}, device {a.device}, tangle N={a.n}, batch {a.batch}")
        print(f"{'IR':>6} {'nodes':>6} {'python ms':>10} {'fxlens ms':>10} {'us/node py':>11} {'us/node fx':>11} {'ratio':>6}")
        for ir, path in files.items():
            py_ms, nodes = py_time(path, a.device, a.repeat)
            out = subprocess.run([a.bench, path, str(a.repeat), a.device], capture_output=True, text=True, check=True).stdout
            fx_ms = float(re.search(r"median_ms=([\d.]+)", out).group(1))
            print(f"{ir:>6} {nodes:>6} {py_ms:>10.2f} {fx_ms:>10.2f} {1000 * py_ms / nodes:>11.2f} "
                  f"{1000 * fx_ms / nodes:>11.2f} {fx_ms / py_ms:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
