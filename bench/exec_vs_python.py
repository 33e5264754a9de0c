# SPDX-License-Identifier: MIT
"""Executor overhead: fxlens' LibTorch executor vs Python's GraphModule.__call__ on the same graph,
weights and device. Tiny batch, so per-node overhead dominates.

    .venv/bin/python bench/exec_vs_python.py [--n 200] [--batch 1] [--device cpu] [--repeat 200]

Captures Tangle(N) with Dynamo (Torch IR) and exports it with torch.export (ATen IR). For each file,
one process times, on alternating calls (so that both see the same machine state):
  - Python: gm(*inputs) under torch.no_grad (the generated forward of the loaded GraphModule), and
    the same under torch.inference_mode (Python's cheapest mode; fxlens runs in inference mode);
  - fxlens: the executor, loaded with ctypes from build/bench/libfxlens_bench_capi.so (its own
    seeded inputs and weights of the same shapes; the graph compiled into a plan by the warm-ups).
CUDA is synchronized after each call. Prints medians over --repeat rounds (after 3 warm-ups) and the
ratio fxlens / Python. With --separate, fxlens runs in its own process (build/bench/bench_exec), as
earlier versions of this benchmark did.

--chain K adds a graph of K chained torch.tanh calls on a [1, 32] tensor: there both sides issue the
same K ATen calls and almost nothing else, so its ratio is the floor that ATen's own per-call cost
(on CUDA: allocation and kernel launch) puts under any eager executor on this machine."""
import argparse
import ctypes
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


class Chain(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        for _ in range(self.k):
            x = torch.tanh(x)
        return x


def python_module(path, device):
    gm = fxlens.load_graph(path, random_weights=True).to(device)
    data = fxlens.graph_format.read_dict(path)
    shapes = [n["meta"]["val"]["tensor"]["shape"] for n in data["nodes"] if n["op"] == "placeholder"]
    inputs = [torch.randn(*s, device=device) for s in shapes]
    return gm, inputs, len(data["nodes"])


class Executor:
    def __init__(self, lib, path, device):
        self.lib = lib
        err = ctypes.create_string_buffer(4096)
        self.h = lib.fxlens_bench_open(path.encode(), device.encode(), err, len(err))
        if not self.h:
            raise RuntimeError(err.value.decode())

    def __call__(self):
        if self.lib.fxlens_bench_run(self.h) != 0:
            raise RuntimeError("fxlens run failed")

    def close(self):
        self.lib.fxlens_bench_close(self.h)


def load_capi(path):
    lib = ctypes.CDLL(path)
    lib.fxlens_bench_open.restype = ctypes.c_void_p
    lib.fxlens_bench_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.fxlens_bench_run.argtypes = [ctypes.c_void_p]
    lib.fxlens_bench_close.argtypes = [ctypes.c_void_p]
    return lib


def alternate(path, device, repeat, lib):
    """Median ms of (python no_grad, python inference_mode, fxlens), measured round-robin."""
    gm, inputs, nodes = python_module(path, device)
    fx = Executor(lib, path, device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def py_no_grad():
        with torch.no_grad():
            gm(*inputs)
        sync()

    def py_inference():
        with torch.inference_mode():
            gm(*inputs)
        sync()

    fns = [py_no_grad, py_inference, fx]
    times = [[] for _ in fns]
    for r in range(repeat + 3):
        order = list(range(len(fns)))
        order = order[r % len(fns):] + order[:r % len(fns)]  # rotate who goes first
        for i in order:
            t = time.perf_counter()
            fns[i]()
            if r >= 3:
                times[i].append((time.perf_counter() - t) * 1000)
    fx.close()
    return [statistics.median(t) for t in times], nodes


def separate(path, device, repeat, bench):
    gm, inputs, nodes = python_module(path, device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    times = []
    with torch.no_grad():
        for i in range(repeat + 3):
            t = time.perf_counter()
            gm(*inputs)
            sync()
            if i >= 3:
                times.append((time.perf_counter() - t) * 1000)
    out = subprocess.run([bench, path, str(repeat), device], capture_output=True, text=True, check=True).stdout
    return statistics.median(times), float(re.search(r"median_ms=([\d.]+)", out).group(1)), nodes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--capi", default=os.path.join("build", "bench", "libfxlens_bench_capi.so"))
    ap.add_argument("--chain", type=int, default=0, help="also time K chained tanh calls (the ATen floor)")
    ap.add_argument("--separate", action="store_true", help="fxlens in its own process (bench_exec)")
    ap.add_argument("--bench", default=os.path.join("build", "bench", "bench_exec"))
    a = ap.parse_args()
    lib = None if a.separate else load_capi(os.path.abspath(a.capi))
    with tempfile.TemporaryDirectory() as tmp:
        model, inputs = Tangle(a.n).eval(), tangle_inputs(a.n, batch=a.batch)
        files = {"torch": os.path.join(tmp, "t_torch.json"), "aten": os.path.join(tmp, "t_aten.json")}
        _dynamo(model, inputs, files["torch"], "tangle")
        fxlens.export_program(torch.export.export(model, inputs), files["aten"], name="tangle")
        if a.chain:
            files["chain"] = os.path.join(tmp, "chain.json")
            _dynamo(Chain(a.chain).eval(), (torch.randn(1, 32),), files["chain"], "chain")
        print(f"torch {torch.__version__}, device {a.device}, tangle N={a.n}, batch {a.batch}, "
              f"{'separate processes' if a.separate else 'one process, alternating calls'}, median of {a.repeat}")
        if a.separate:
            print(f"{'IR':>6} {'nodes':>6} {'python ms':>10} {'fxlens ms':>10} {'us/node py':>11} {'us/node fx':>11} {'ratio':>6}")
            for ir, path in files.items():
                py, fx, nodes = separate(path, a.device, a.repeat, a.bench)
                print(f"{ir:>6} {nodes:>6} {py:>10.2f} {fx:>10.2f} {1000 * py / nodes:>11.2f} {1000 * fx / nodes:>11.2f} "
                      f"{fx / py:>6.2f}", flush=True)
            return
        print(f"{'IR':>6} {'nodes':>6} {'py no_grad':>10} {'py infer':>10} {'fxlens':>10} {'us/node py':>10} "
              f"{'us/node fx':>10} {'ratio':>6} {'vs infer':>8}")
        for ir, path in files.items():
            (py, pyi, fx), nodes = alternate(path, a.device, a.repeat, lib)
            print(f"{ir:>6} {nodes:>6} {py:>10.2f} {pyi:>10.2f} {fx:>10.2f} {1000 * py / nodes:>10.2f} "
                  f"{1000 * fx / nodes:>10.2f} {fx / py:>6.2f} {fx / pyi:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
