# SPDX-License-Identifier: MIT
"""Optimized graphs at the GPU's floor: frozen weights, CUDA graphs, PyTorch eager / torch.compile and
training on the re-parameterized module. One run writes one table (markdown) per case:

    PYTHONPATH=python python bench/frozen_runtime.py --cli build/app/fxlens-cli --device cuda \
        --cases tangle200,tangle800,bert_base [--out /tmp/frozen] [--iters 200]

For each case the model is exported through Dynamo (weights saved), optimized by fxlens-cli
(`optimize -o opt.json`) and frozen (`optimize --freeze -o frozen.json`). Rows:

* fxlens-cli profile (kernels, GPU busy, wall per iteration by CUDA events) and `run --repeat`
  (median wall per call, synchronized) for the optimized graph, the frozen one, and the frozen one
  with `--cuda-graph`;
* PyTorch eager: the original model, `fxlens.load_graph` of the optimized and the frozen graph, and
  the frozen graph under torch.compile (median of CUDA-event timed calls);
* training (forward + backward): the original graph module against the optimized module re-
  parameterized by `fxlens.reparameterize` (kernels per step counted by torch.profiler, latency,
  largest gradient difference relative to the largest gradient, under the original names).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Callable, Dict, List, Tuple

import torch

import fxlens


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _time_pipelined(fn: Callable[[], object], device: str, iters: int, warmup: int = 10) -> float:
    """Wall time per call of `iters` calls back to back, one synchronization at the end (a model
    called in a loop: host work overlaps the device's), in microseconds; best of 5 batches."""
    for _ in range(warmup):
        fn()
    _sync(device)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        _sync(device)
        best = min(best, (time.perf_counter() - t0) * 1e6 / iters)
    return best


def _time(fn: Callable[[], object], device: str, iters: int, warmup: int = 10) -> float:
    """Median wall time of one synchronized call, in microseconds."""
    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        _sync(device)
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def _kernels(fn: Callable[[], object], device: str) -> int:
    """Device kernels (CUDA) or ATen ops (CPU) launched by one call."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    _sync(device)
    acts = [ProfilerActivity.CUDA] if device == "cuda" else [ProfilerActivity.CPU]
    with profile(activities=acts) as prof:
        fn()
        _sync(device)
    if device == "cuda":
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                   and not e.name.startswith(("Memcpy", "Memset")))
    return sum(1 for e in prof.events() if e.name.startswith("aten::") and e.cpu_parent is None)


def _cli(cli: str, *args: str) -> str:
    r = subprocess.run([cli, *args], capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        raise RuntimeError(f"fxlens-cli {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return r.stdout


def _us(text: str, label: str) -> float:
    m = re.search(re.escape(label) + r"[^\n]*?\s([\d.]+) (us|ms|s)\n", text)
    if not m:
        raise RuntimeError(f"no '{label}' in:\n{text[:800]}")
    return float(m.group(1)) * {"us": 1, "ms": 1e3, "s": 1e6}[m.group(2)]


def _profile(cli: str, path: str, device: str, *extra: str) -> Dict[str, float]:
    out = _cli(cli, "profile", path, "--device", device, "--iters", "50", "--warmup", "10", *extra)
    cpu = device != "cuda"
    k = re.search(r"(kernels|ATen ops) per iteration\s+([\d.]+)", out)
    return {"kernels": float(k.group(2)) if k else float("nan"),
            "busy": _us(out, "op time per iteration" if cpu else "GPU busy per iteration"),
            "wall": _us(out, "wall per iteration")}


def _run_median(cli: str, path: str, device: str, repeat: int, *extra: str) -> float:
    out = _cli(cli, "run", path, "--device", device, "--repeat", str(repeat), *extra)
    m = re.search(r"later runs median ([\d.]+) ms", out)
    return float(m.group(1)) * 1e3


# ----------------------------------------------------------------------------------------- cases

def _tangle(n: int):
    from fxlens.models import Tangle, tangle_inputs
    torch.manual_seed(0)
    return Tangle(n).eval(), tangle_inputs(n)


def _bert():
    from transformers import BertConfig, BertModel

    class LastHidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.model = m

        def forward(self, input_ids):
            return self.model(input_ids=input_ids, return_dict=False)[0]

    torch.manual_seed(0)
    cfg = BertConfig(attn_implementation="eager", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    m = LastHidden(BertModel(cfg, add_pooling_layer=False)).eval()
    ids = torch.randint(0, cfg.vocab_size, (8, 128), generator=torch.Generator().manual_seed(0))
    return m, (ids,)


CASES = {"tangle200": lambda: _tangle(200), "tangle800": lambda: _tangle(800), "bert_base": _bert}


def _export(name: str, model, inputs, out: str) -> str:
    from fxlens.examples import _dynamo
    path = os.path.join(out, f"{name}.json")
    _dynamo(model, inputs, path, name, weights=True)
    return path


def _first(o):
    return o[0] if isinstance(o, (tuple, list)) else o


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30))


class _Rows(list):
    """Rows printed as they come (a case that fails half-way still shows what it measured)."""

    def append(self, row: Tuple[str, str]) -> None:
        super().append(row)
        print(f"| {row[0]} | {row[1]} |", flush=True)


def run_case(name: str, cli: str, device: str, out: str, iters: int) -> List[Tuple[str, str]]:
    rows: List[Tuple[str, str]] = _Rows()
    model, inputs = CASES[name]()
    # Exported on the device it runs on: factories in the graph (masks, position ids) name it.
    model = model.to(device)
    inputs = tuple(x.to(device) for x in inputs)
    src = _export(name, model, inputs, out)
    opt, frz = os.path.join(out, f"{name}.opt.json"), os.path.join(out, f"{name}.frozen.json")
    o = _cli(cli, "optimize", src, "-o", opt)
    nodes = re.search(r"nodes: (\d+) -> (\d+)", o)
    f = _cli(cli, "optimize", src, "-o", frz, "--freeze")
    fl = re.search(r"freeze: .*", f)
    rows.append(("graph", f"{nodes.group(1)} → {nodes.group(2)} nodes; {fl.group(0) if fl else ''}"))

    # fxlens-cli: profile (one process per row) and run --repeat.
    for label, path, extra in (("optimized", opt, ()), ("optimized, --freeze", opt, ("--freeze",)),
                               ("frozen file", frz, ()), ("frozen file, --cuda-graph", frz, ("--cuda-graph",))):
        if "--cuda-graph" in extra and device != "cuda":
            continue
        try:
            p = _profile(cli, path, device, *extra)
            run = _run_median(cli, path, device, iters, *extra)
        except RuntimeError as e:
            rows.append((f"fxlens-cli {label}", f"FAILED: {str(e)[:300]}"))
            continue
        rows.append((f"fxlens-cli {label}",
                     f"{p['kernels']:.0f} kernels, GPU busy {p['busy']:.1f} µs, profile wall {p['wall']:.1f} µs "
                     f"(wall/busy {p['wall'] / p['busy']:.2f}); run median {run:.1f} µs "
                     f"(run/busy {run / p['busy']:.2f})"))

    # PyTorch eager and torch.compile.
    dev_inputs = [x.to(device) for x in inputs]
    model = model.to(device)
    ref = _first(model(*dev_inputs)).detach()
    with torch.no_grad():
        t_model = _time(lambda: model(*dev_inputs), device, iters)
        gm_opt = fxlens.load_graph(opt).to(device)
        gm_frz = fxlens.load_graph(frz).to(device)
        err = max(_rel(_first(gm_opt(*dev_inputs)), ref), _rel(_first(gm_frz(*dev_inputs)), ref))
        t_opt = _time(lambda: gm_opt(*dev_inputs), device, iters)
        t_frz = _time(lambda: gm_frz(*dev_inputs), device, iters)
        p_model = _time_pipelined(lambda: model(*dev_inputs), device, 20)
        p_opt = _time_pipelined(lambda: gm_opt(*dev_inputs), device, iters)
        p_frz = _time_pipelined(lambda: gm_frz(*dev_inputs), device, iters)
        k_frz = _kernels(lambda: gm_frz(*dev_inputs), device)
        rows.append(("eager: original model", f"{t_model:.1f} µs synchronized, {p_model:.1f} µs in a loop"))
        rows.append(("eager: optimized graph (load_graph)", f"{t_opt:.1f} µs synchronized, {p_opt:.1f} µs in a loop"))
        rows.append(("eager: frozen graph (load_graph)", f"{t_frz:.1f} µs synchronized, {p_frz:.1f} µs in a loop, "
                     f"{k_frz} kernels; max rel err {err:.1e}"))
        torch._dynamo.reset()
        t0 = time.perf_counter()
        comp = torch.compile(gm_frz)
        comp(*dev_inputs)
        _sync(device)
        compile_s = time.perf_counter() - t0
        cerr = _rel(_first(comp(*dev_inputs)), ref)
        t_comp = _time(lambda: comp(*dev_inputs), device, iters)
        p_comp = _time_pipelined(lambda: comp(*dev_inputs), device, iters)
        rows.append(("torch.compile: frozen graph", f"{t_comp:.1f} µs synchronized, {p_comp:.1f} µs in a loop "
                     f"(compile {compile_s:.1f} s; {'no slower than' if t_comp <= t_frz * 1.05 else 'SLOWER than'} "
                     f"eager); max rel err {cerr:.1e}"))

    # Training: forward + backward, original graph module against the re-parameterized optimized one.
    base = fxlens.load_graph(src).to(device)
    for p in base.parameters():
        p.requires_grad_(p.is_floating_point())
    train_opt = fxlens.load_graph(opt).to(device)
    for p in train_opt.parameters():
        p.requires_grad_(p.is_floating_point())
    rep = fxlens.reparameterize(train_opt)
    x = dev_inputs

    def step(m):
        def go():
            for p in m.parameters():
                p.grad = None
            _first(m(*x)).float().square().mean().backward()
        return go

    step(base)()
    step(rep)()
    grads_base = {n: p.grad for n, p in base.named_parameters() if p.grad is not None}
    grads_rep = rep.original_grads()
    missing = sorted(set(grads_base) - set(grads_rep))
    gmax = max(g.abs().max() for g in grads_base.values())
    gerr = max(float((grads_rep[n] - g).abs().max() / gmax) for n, g in grads_base.items() if n in grads_rep)
    k_base, k_rep = _kernels(step(base), device), _kernels(step(rep), device)
    t_base, t_rep = _time(step(base), device, max(20, iters // 4)), _time(step(rep), device, max(20, iters // 4))
    rows.append(("training step, original graph", f"{k_base} kernels, {t_base:.1f} µs"))
    rows.append(("training step, optimized + reparameterize",
                 f"{k_rep} kernels, {t_rep:.1f} µs ({t_base / t_rep:.2f}× faster); {len(rep.targets)} folded "
                 f"parameters; gradients: max diff {gerr:.1e} of the largest gradient over {len(grads_base)} "
                 f"weights{'; MISSING ' + ', '.join(missing[:3]) if missing else ''}"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/app/fxlens-cli")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--cases", default="tangle200,tangle800,bert_base")
    ap.add_argument("--out", default="/tmp/fxlens-frozen")
    ap.add_argument("--iters", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    os.makedirs(args.out, exist_ok=True)
    dev = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"# frozen runtime: {dev}, torch {torch.__version__}\n")
    failed = 0
    for name in args.cases.split(","):
        print(f"## {name}\n\n| what | figures |\n|---|---|", flush=True)
        try:
            run_case(name, args.cli, args.device, args.out, args.iters)
        except Exception as e:  # one case failing still prints the others
            failed += 1
            print(f"| FAILED | {type(e).__name__}: {str(e)[:300]} |", flush=True)
        print()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
