# SPDX-License-Identifier: MIT
"""fxlens inside torch.compile against Inductor, with and without Optimus' batch fusions, on the GPU:

    .venv/bin/python bench/backend_vs_inductor.py                                # every model, CUDA
    .venv/bin/python bench/backend_vs_inductor.py --models deepfm,tangle200 --out build/backend.md
    .venv/bin/python bench/backend_vs_inductor.py --device cpu --models deepfm --rows eager,inductor --ctr-batch 64

Models: the four CTR kinds of fxlens.models (DeepFM, DCN-v2, xDeepFM, AutoInt; batch --ctr-batch, 2048),
the bundled CTRModel (`ctr`, same batch), the tangle (Tangle(200), batch 64) and the zoo of
bench/models.py (its MODELS, at the batch it builds them with; its `ctr` is the bundled CTRModel above).
A zoo model whose library (transformers, timm) is not installed is skipped with a note.

Rows, each in eval mode under torch.no_grad(), torch._dynamo.reset() between them:

  eager      the module itself (the reference)
  inductor   torch.compile(model)
  optimus    torch.compile(model) under pre_grad_fusion_options = Optimus' batch fusions
             (FUSIONS of bench/cases_vs_inductor.py)
  fxlens     torch.compile(model, backend=fxlens.backend(preset="all", freeze=True, then="inductor"))
             (needs fxlens' C++ extension, fxlens._core, built for this Python: else the row says so)
  optimus_freezing   (only with --rows) the optimus row with torch._inductor.config.freezing

Per row: the time per call (synchronized wall clock, a call's latency with its launches: the smallest
of --rounds medians of --iters calls, after --warmup calls and at least --warm-s seconds), GPU kernels
per call and their summed GPU time (torch.profiler over 3 calls, memcpy/memset
left out), the first call's time (compile time), the largest absolute and relative difference to
eager (must be within rtol/atol 1e-3 on CUDA, 1e-4 on CPU), and for fxlens its speedup against
Inductor and Inductor+Optimus and its own share of the compile (fxlens_seconds / then_seconds of the
backend's stats). TF32 is off (cuDNN included) unless --tf32, so that eager and compiled agree in
fp32. Every compiled row runs in a fresh, empty Inductor/Triton cache (torch._inductor.utils.fresh_cache)
unless --cache, so that its compile time is a cold one and owes nothing to the rows before it; a small
compile at the start pays the one-time costs (imports, compile workers) before the first row.

A failing row or model is recorded in its cell and the run goes on; --isolate runs each model in a
child process (a crash or --model-timeout seconds then cost only that model).

Time (an H200 host, 16 cores, PyTorch 2.11): the compiles dominate. A compiled row takes 4-13 s per
CTR model and 5-20 s per zoo model, but about 190 s for Tangle(200) (Inductor's scheduling and
codegen of its 5,200-node graph: 62 + 60 s), so the whole set does not fit one 10-minute command. Run
the tangle on its own and merge the two:

    python3 bench/backend_vs_inductor.py --models tangle200 --json tangle.json --quiet
    python3 bench/backend_vs_inductor.py --exclude tangle200 --merge tangle.json --json all.json --out all.md

(or --tangle 50 for a smaller tangle). Wall times of launch-bound models (a few hundred µs of GPU
work per call) vary by up to 2x from row to row on such a host even with the same kernels: read them
with the kernel counts and GPU µs.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import fxlens  # noqa: E402
from fxlens.models import CTR_KINDS, CTRModel, Tangle, ctr_kind_inputs, ctr_model, tangle_inputs  # noqa: E402

try:
    from cases_vs_inductor import FUSIONS  # noqa: E402  (one list for both benchmarks)
except Exception:  # noqa: BLE001 - the list as it stands there
    FUSIONS = ["batch_linear", "batch_linear_lhs", "batch_layernorm", "batch_tanh", "batch_relu", "batch_sigmoid",
               "batch_detach", "batch_nan_to_num", "batch_clamp", "batch_dropout"]

ROWS = ["eager", "inductor", "optimus", "fxlens"]
ALL_ROWS = ROWS + ["optimus_freezing"]
ROW_TITLES = {"eager": "eager", "inductor": "Inductor", "optimus": "Inductor + Optimus", "fxlens": "fxlens → Inductor",
              "optimus_freezing": "Inductor + Optimus + freezing"}


# ----------------------------------------------------------------------------------------- models

def _zoo():
    """bench/models.py as a module (its MODELS dict), or the reason it cannot be loaded."""
    try:
        spec = importlib.util.spec_from_file_location("bench_models", os.path.join(ROOT, "bench", "models.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["bench_models"] = mod
        spec.loader.exec_module(mod)
        return mod, ""
    except Exception as e:  # noqa: BLE001
        return None, f"bench/models.py: {type(e).__name__}: {e}"


def builders(ctr_batch: int, tangle: int = 200) -> Dict[str, Tuple[Callable[[], Tuple[torch.nn.Module, tuple]], str]]:
    """name -> (build() returning (model, inputs), batch as text)."""
    out: Dict[str, Tuple[Callable, str]] = {}
    for kind in CTR_KINDS:
        def make(kind=kind):
            m = ctr_model(kind)
            return m, ctr_kind_inputs(m, ctr_batch)
        out[kind] = (make, str(ctr_batch))

    def ctr():
        m = CTRModel()
        return m, ctr_kind_inputs(m, ctr_batch)
    out["ctr"] = (ctr, str(ctr_batch))
    out[f"tangle{tangle}"] = (lambda: (Tangle(tangle), tangle_inputs(tangle, batch=64)), "64")
    zoo, why = _zoo()
    if zoo is None:
        out["zoo"] = (lambda: (_ for _ in ()).throw(RuntimeError(why)), "")
        return out
    for name, make in zoo.ALL.items():
        if name != "ctr":  # the zoo's ctr is the bundled CTRModel at batch 8: `ctr` above
            out[name] = (make, "2")  # bench/models.py builds its images and token batches with batch 2
    out["_default_zoo"] = (None, ",".join(n for n in zoo.MODELS if n != "ctr"))
    return out


def default_models(table) -> List[str]:
    names = list(CTR_KINDS) + ["ctr"] + [n for n in table if n.startswith("tangle")]
    if "_default_zoo" in table:
        names += table["_default_zoo"][1].split(",")
    elif "zoo" in table:
        names.append("zoo")
    return names


# ----------------------------------------------------------------------------------------- measuring

@dataclass
class Row:
    model: str
    batch: str
    row: str
    ms: Optional[float] = None            # time per call (the smallest median of the rounds)
    kernels: Optional[float] = None       # GPU kernels per call
    gpu_us: Optional[float] = None        # their summed time per call (profiler), microseconds
    compile_s: Optional[float] = None     # first call (compile included)
    max_abs: Optional[float] = None
    max_rel: Optional[float] = None
    ok: Optional[bool] = None             # outputs within tolerance of eager
    error: str = ""
    note: str = ""
    fxlens: Dict[str, Any] = field(default_factory=dict)
    phases: Dict[str, float] = field(default_factory=dict)  # compile phases, seconds (Dynamo's metrics)


def _flat(out) -> List[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flat(o)]
    return []


def _error(e: BaseException) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {first}"[:200]


def compare(got, ref, rtol: float, atol: float) -> Tuple[float, float, bool, str]:
    """(max abs diff, max rel diff over elements with |ref| > atol, allclose, why not)."""
    a, b = _flat(got), _flat(ref)
    if len(a) != len(b):
        return float("nan"), float("nan"), False, f"{len(a)} outputs vs {len(b)}"
    max_abs = max_rel = 0.0
    ok, why = True, ""
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape:
            return float("nan"), float("nan"), False, f"output {i}: shape {tuple(x.shape)} vs {tuple(y.shape)}"
        if not x.is_floating_point():
            if not torch.equal(x, y):
                ok, why = False, f"output {i}: values differ"
            continue
        x, y = x.detach().double(), y.detach().double()
        d = (x - y).abs()
        if d.numel():
            max_abs = max(max_abs, d.max().item())
            big = y.abs() > atol
            if big.any():
                max_rel = max(max_rel, (d[big] / y.abs()[big]).max().item())
        if not torch.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            ok, why = False, why or f"output {i} outside rtol {rtol:g} atol {atol:g}"
    return max_abs, max_rel, ok, why


def count_kernels(fn, inputs, calls: int = 3) -> Tuple[float, float]:
    """(GPU kernels per call, their summed time per call in µs): device events of torch.profiler,
    memcpy/memset left out."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(*inputs)
        torch.cuda.synchronize()
    n, us = 0, 0.0
    for e in prof.events():
        if e.device_type == DeviceType.CUDA and not e.name.lower().startswith(("memcpy", "memset")):
            n += 1
            us += e.time_range.elapsed_us()
    return n / calls, us / calls


def measure(fn, inputs, device: str, warmup: int, iters: int, rounds: int = 5, warm_s: float = 0.5):
    """(first call s, output after warm-up, ms per call, (kernels, GPU µs) per call or None). Warm-up:
    `warmup` calls and at least `warm_s` seconds of calls (clocks up); ms per call: the smallest of
    `rounds` medians of `iters` calls each (launch-bound models are noisy)."""
    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    t0 = time.perf_counter()
    fn(*inputs)
    sync()
    first = time.perf_counter() - t0
    t0, done = time.perf_counter(), 1
    while done < warmup or time.perf_counter() - t0 < warm_s:
        fn(*inputs)
        done += 1
        if done % 10 == 0:
            sync()
    out = fn(*inputs)
    sync()
    gc.collect()
    gc.disable()  # no collection inside a timed call (a compile leaves much garbage behind)
    try:
        medians = _timed_rounds(fn, inputs, sync, iters, rounds)
    finally:
        gc.enable()
    kernels = count_kernels(fn, inputs) if cuda else None
    return first, out, min(medians) * 1e3, kernels


def _timed_rounds(fn, inputs, sync, iters: int, rounds: int) -> List[float]:
    medians = []
    for _ in range(max(1, rounds)):
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            fn(*inputs)
            sync()
            times.append(time.perf_counter() - t)
        medians.append(statistics.median(times))
    return medians


def _fxlens_summary(stats: List[Dict[str, Any]]) -> Dict[str, Any]:
    s: Dict[str, Any] = {"graphs": len(stats),
                         "nodes_before": sum(int(x.get("nodes_before", 0)) for x in stats),
                         "nodes_after": sum(int(x.get("nodes_after", 0)) for x in stats),
                         "steps": sum(int(x.get("steps", 0)) for x in stats),
                         "fxlens_seconds": sum(float(x.get("fxlens_seconds", 0.0)) for x in stats),
                         "then_seconds": sum(float(x.get("then_seconds", 0.0)) for x in stats),
                         "modes": sorted({str(x.get("mode", "?")) for x in stats})}
    passed = [x for x in stats if x.get("mode") == "passthrough"]
    if passed:
        s["passthrough"] = len(passed)
        s["reason"] = str(passed[0].get("reason", ""))[:160]
    return s


PHASES = {"tracing": "bytecode_tracing", "pre_grad": "_recursive_pre_grad_passes", "lowering": "GraphLowering.run",
          "scheduling": "Scheduler.__init__", "codegen": "Scheduler.codegen", "kernel_compile": "async_compile.wait",
          "total": "_compile.compile_inner"}


def _phases() -> Dict[str, float]:
    """Seconds spent in the main phases of the compile(s) since the row began (Dynamo's own metrics)."""
    try:
        from torch._dynamo.utils import compile_times
        names, values = compile_times(repr="csv", aggregate=True)
        got = dict(zip(names, (float(v) for v in values)))
        return {k: round(got[v], 3) for k, v in PHASES.items() if v in got}
    except Exception:  # noqa: BLE001 - a figure to explain compile times, no more
        return {}


def _optimus_counts() -> Dict[str, int]:
    from torch._dynamo.utils import counters
    return {k: int(v) for k, v in counters["inductor"].items() if k.startswith("batch_") and v}


def run_row(row: str, model, inputs, device: str, a) -> Tuple[Row, Any]:
    """One row on one model: (its figures, its output)."""
    r = Row("", "", row)
    torch._dynamo.reset()
    from torch._dynamo import utils as dynamo_utils
    dynamo_utils.counters.clear()
    if hasattr(dynamo_utils, "compilation_time_metrics"):
        dynamo_utils.compilation_time_metrics.clear()
    ctx: Any = contextlib.nullcontext()
    backend = None
    if row == "eager":
        fn = model
    elif row == "inductor":
        fn = torch.compile(model)
    elif row in ("optimus", "optimus_freezing"):
        from torch._inductor import config
        opts = {"pre_grad_fusion_options": {name: {} for name in FUSIONS}}
        if row == "optimus_freezing":
            opts["freezing"] = True
        ctx = config.patch(opts)
        fn = torch.compile(model)
    elif row == "fxlens":
        if not hasattr(fxlens, "backend"):
            r.error = "skipped: fxlens.backend is not there (yet)"
            return r, None
        t0 = time.perf_counter()
        backend = fxlens.backend(preset="all", freeze=True, then="inductor")
        load = time.perf_counter() - t0
        r.note = f"engine loaded in {load:.2f} s" if load >= 0.05 else ""
        fn = torch.compile(model, backend=backend)
    else:
        raise ValueError(row)
    fresh: Any = contextlib.nullcontext()
    if row != "eager" and not a.cache:
        from torch._inductor.utils import fresh_cache
        fresh = fresh_cache()
    with fresh, ctx, torch.no_grad():
        first, out, ms, kernels = measure(fn, inputs, device, a.warmup, a.iters, a.rounds, a.warm_s)
    r.ms = ms
    if kernels is not None:
        r.kernels, r.gpu_us = kernels
    r.compile_s = None if row == "eager" else first
    if row != "eager":
        r.phases = _phases()
    if row.startswith("optimus"):
        fused = _optimus_counts()
        r.note = ", ".join(f"{k} {v}" for k, v in sorted(fused.items())) or "no batch fusion applied"
    if backend is not None:
        r.fxlens = _fxlens_summary(list(getattr(backend, "stats", [])))
    return r, out


def run_model(name: str, build, batch: str, rows: List[str], device: str, a) -> List[Row]:
    out_rows: List[Row] = []

    def failed(row: str, msg: str) -> Row:
        return Row(name, batch, row, error=msg)

    try:
        torch.manual_seed(0)
        model, inputs = build()
        model = model.eval().to(device)
        inputs = tuple(t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs)
    except ImportError as e:
        return [failed("eager", f"skipped: {_error(e)} (library not installed)")]
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        return [failed("eager", "build failed: " + _error(e))]
    rtol = atol = 1e-3 if device.startswith("cuda") else 1e-4
    ref = None
    with torch.no_grad():
        try:
            ref = [t.detach().clone() for t in _flat(model(*inputs))]
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            return [failed("eager", "eager run failed: " + _error(e))]
    for row in rows:
        t0 = time.time()
        try:
            r, out = run_row(row, model, inputs, device, a)
            r.model, r.batch = name, batch
            if out is not None:
                if row == "eager":
                    r.max_abs, r.max_rel, r.ok = 0.0, 0.0, True
                else:
                    r.max_abs, r.max_rel, r.ok, why = compare(out, ref, rtol, atol)
                    if why:
                        r.note = (r.note + "; " if r.note else "") + "✗ " + why
        except Exception as e:  # noqa: BLE001 - recorded in the table
            traceback.print_exc()
            r = failed(row, _error(e))
        finally:
            torch._dynamo.reset()
            if device.startswith("cuda"):
                with contextlib.suppress(Exception):
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
        out_rows.append(r)
        print(f"[{name} {row}] {time.time() - t0:.1f}s " + json.dumps({k: v for k, v in asdict(r).items() if v not in (None, '', {})}),
              file=sys.stderr, flush=True)
    del model, inputs, ref
    gc.collect()
    return out_rows


# ----------------------------------------------------------------------------------------- report

def _f(v: Optional[float], fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def _cell(s: str) -> str:
    return s.replace("|", "/").replace("\n", " ")


def run_meta(a, seconds: float) -> Dict[str, Any]:
    """How a run was made: the table's header (kept in --json, so that --merge can say it again)."""
    dev = a.device
    if a.device.startswith("cuda") and torch.cuda.is_available():
        dev = f"{a.device} ({torch.cuda.get_device_name(0)})"
    return {"device": dev, "torch": torch.__version__, "iters": a.iters, "warmup": a.warmup, "rounds": a.rounds,
            "tf32": a.tf32, "cache": a.cache, "seconds": round(seconds, 1)}


def _header(m: Dict[str, Any]) -> str:
    return (f"{m['device']}, PyTorch {m['torch']}: ms is the smallest of {m['rounds']} medians of {m['iters']} calls "
            f"after {m['warmup']} warm-up calls; TF32 {'on' if m['tf32'] else 'off'}; "
            f"{'caches shared by the rows' if m['cache'] else 'each row compiled in a fresh cache'}; {m['seconds']:.0f} s.")


def markdown(rows: List[Row], metas: List[Dict[str, Any]]) -> str:
    by: Dict[str, Dict[str, Row]] = {}
    for r in rows:
        by.setdefault(r.model, {})[r.row] = r
    m0 = metas[0] if metas else {"device": "?", "torch": torch.__version__}
    lines = [
        f"# fxlens backend vs Inductor ({m0['device']}, PyTorch {m0['torch']})",
        "",
        "eval mode, torch.no_grad(); ms: synchronized wall time per call; kernels: GPU kernels per call (GPU µs: "
        "their summed time, from torch.profiler); compile: the first call, in seconds; outputs against eager within "
        "rtol/atol 1e-3 on CUDA, 1e-4 on CPU. Optimus: "
        f"pre_grad_fusion_options = {{{', '.join(FUSIONS)}}}. fxlens: "
        "fxlens.backend(preset=\"all\", freeze=True, then=\"inductor\").",
        "",
        *[("Run: " if len(metas) == 1 else f"Run {i + 1}: ") + _header(m) for i, m in enumerate(metas)],
        "",
        "| model | batch | eager ms | Inductor ms | +Optimus ms | fxlens ms | fxlens vs Inductor | fxlens vs +Optimus "
        "| kernels e / I / O / f | GPU µs e / I / O / f | compile s I / O / f | fxlens' share of compile |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def ms(m, row):
        r = m.get(row)
        if r is None:
            return "–"
        if r.error:
            return "✗" if not r.error.startswith("skipped") else "skipped"
        return _f(r.ms, ".3f") + ("" if r.ok in (True, None) else " ✗")

    def speed(m, base):
        f, b = m.get("fxlens"), m.get(base)
        if not f or not b or f.ms is None or b.ms is None or not f.ms:
            return "–"
        gpu = f" (GPU {b.gpu_us / f.gpu_us:.2f}×)" if f.gpu_us and b.gpu_us else ""
        return f"{b.ms / f.ms:.2f}×{gpu}"

    for name, m in by.items():
        first = next(iter(m.values()))
        kern = " / ".join(_f(m[r].kernels, ".0f") if r in m else "–" for r in ROWS)
        gpu = " / ".join(_f(m[r].gpu_us, ".0f") if r in m else "–" for r in ROWS)
        comp = " / ".join(_f(m[r].compile_s, ".1f") if r in m else "–" for r in ROWS[1:])
        share = "–"
        fx = m.get("fxlens")
        if fx and fx.fxlens and fx.fxlens.get("then_seconds"):
            s = fx.fxlens
            share = f"{s['fxlens_seconds']:.2f} s / {s['then_seconds']:.1f} s ({100 * s['fxlens_seconds'] / s['then_seconds']:.0f}%)"
        lines.append(f"| {name} | {first.batch} | {ms(m, 'eager')} | {ms(m, 'inductor')} | {ms(m, 'optimus')} | "
                     f"{ms(m, 'fxlens')} | {speed(m, 'inductor')} | {speed(m, 'optimus')} | {kern} | {gpu} | {comp} | {share} |")

    lines += ["", "## Rows", "",
              "| model | row | ms/call | × eager | kernels/call | GPU µs/call | compile s | max abs diff | max rel diff | outputs | notes |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, m in by.items():
        eager = m.get("eager")
        for row in ALL_ROWS:
            r = m.get(row)
            if r is None:
                continue
            if r.error:
                lines.append(f"| {name} | {ROW_TITLES[row]} | {_cell(r.error)} | | | | | | | | |")
                continue
            x = f"{eager.ms / r.ms:.2f}" if eager and eager.ms and r.ms else "–"
            okc = "ref" if row == "eager" else ("✓" if r.ok else "✗")
            notes = r.note
            if r.fxlens:
                s = r.fxlens
                notes = (f"{s['graphs']} graph(s), nodes {s['nodes_before']} → {s['nodes_after']}, {s['steps']} steps, "
                         f"mode {'/'.join(s['modes'])}; fxlens {s['fxlens_seconds']:.2f} s, Inductor {s['then_seconds']:.1f} s"
                         + (f"; {s['passthrough']} passed through: {s.get('reason', '')}" if s.get("passthrough") else "")
                         + (f"; {notes}" if notes else ""))
            if r.phases:
                p = r.phases
                notes = (notes + "; " if notes else "") + "compile: " + ", ".join(
                    f"{k.replace('_', ' ')} {p[k]:.1f}" for k in ("tracing", "pre_grad", "lowering", "scheduling", "codegen",
                                                                "kernel_compile") if k in p) + " s"
            lines.append(f"| {name} | {ROW_TITLES[row]} | {_f(r.ms, '.3f')} | {x} | {_f(r.kernels, '.0f')} | "
                         f"{_f(r.gpu_us, '.0f')} | {_f(r.compile_s, '.1f')} | {_f(r.max_abs, '.2e')} | {_f(r.max_rel, '.2e')} | "
                         f"{okc} | {_cell(notes)} |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------- main

def _settings(a) -> None:
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    if a.device == "cpu":
        torch.set_num_threads(max(1, min(a.threads, os.cpu_count() or 1)))


def _warm_up(a) -> None:
    """One small Inductor compile (Optimus' passes on) so that imports, compile workers and the pattern
    matcher's initialization are paid before the first row's compile time is taken."""
    t0 = time.perf_counter()
    try:
        from torch._inductor import config
        from torch._inductor.utils import fresh_cache
        torch._dynamo.reset()
        lin = torch.nn.Linear(8, 8).to(a.device)
        with fresh_cache(), config.patch(pre_grad_fusion_options={name: {} for name in FUSIONS}), torch.no_grad():
            torch.compile(lambda x: torch.relu(lin(x)) + torch.tanh(lin(x)))(torch.randn(4, 8, device=a.device))
    except Exception as e:  # noqa: BLE001 - the rows will say what is wrong
        print(f"warm-up compile failed: {_error(e)}", file=sys.stderr)
    finally:
        torch._dynamo.reset()
    print(f"warm-up compile: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def _isolated(name: str, batch: str, a) -> List[Row]:
    """One model in a child process; its rows, or one row saying how the child ended."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        cmd = [sys.executable, os.path.abspath(__file__), "--models", name, "--rows", a.rows, "--device", a.device,
               "--iters", str(a.iters), "--warmup", str(a.warmup), "--warm-s", str(a.warm_s), "--rounds", str(a.rounds), "--ctr-batch", str(a.ctr_batch),
               "--tangle", str(a.tangle),
               "--threads", str(a.threads), "--json", path, "--quiet"] + (["--tf32"] if a.tf32 else []) + \
              (["--cache"] if a.cache else [])
        try:
            p = subprocess.run(cmd, timeout=a.model_timeout or None)
            if os.path.exists(path):
                with open(path) as f:
                    return [Row(**d) for d in json.load(f)["rows"]]
            return [Row(name, batch, "eager", error=f"child process ended with code {p.returncode}, no rows")]
        except subprocess.TimeoutExpired:
            return [Row(name, batch, "eager", error=f"timed out after {a.model_timeout:.0f} s")]


def _save_json(path: Optional[str], metas: List[Dict[str, Any]], rows: List[Row]) -> None:
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"runs": metas, "rows": [asdict(r) for r in rows]}, f, indent=1)
        os.replace(path + ".tmp", path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="", help="comma-separated (default: CTR kinds, ctr, tangle200, the zoo's MODELS; "
                    "none with --merge)")
    ap.add_argument("--exclude", default="", help="comma-separated models left out of --models (or of the default)")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ALL_ROWS)}")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds of --iters calls; the fastest median counts")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--warm-s", type=float, default=0.5, help="warm-up lasts at least this long (seconds)")
    ap.add_argument("--ctr-batch", type=int, default=2048)
    ap.add_argument("--tangle", type=int, default=200, help="blocks of the tangle model (its name: tangleN)")
    ap.add_argument("--threads", type=int, default=4, help="CPU threads on --device cpu")
    ap.add_argument("--tf32", action="store_true", help="leave TF32 on (cuDNN and matmul)")
    ap.add_argument("--cache", action="store_true", help="rows share Inductor's caches (warm compiles after the first)")
    ap.add_argument("--isolate", action="store_true", help="each model in a child process")
    ap.add_argument("--model-timeout", type=float, default=0, help="with --isolate: seconds per model (0: none)")
    ap.add_argument("--out", default=None, help="also write the markdown table to this file")
    ap.add_argument("--json", default=None, help="also write the rows as JSON")
    ap.add_argument("--quiet", action="store_true", help="no table on stdout")
    ap.add_argument("--merge", action="append", default=[], metavar="JSON",
                    help="rows of an earlier run (its --json) put first in the table; repeatable")
    a = ap.parse_args()
    rows = [r for r in a.rows.split(",") if r]
    bad = [r for r in rows if r not in ALL_ROWS]
    if bad:
        ap.error(f"unknown rows {bad}; known: {ALL_ROWS}")
    table = builders(a.ctr_batch, a.tangle)
    names = [n for n in a.models.split(",") if n] or ([] if a.merge and not a.exclude else default_models(table))
    names = [n for n in names if n not in a.exclude.split(",")]
    if names and a.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device cuda: no CUDA device here (use --device cpu)")
    _settings(a)
    if names and not a.isolate and any(r != "eager" for r in rows):
        _warm_up(a)
    t0 = time.time()
    results: List[Row] = []
    metas: List[Dict[str, Any]] = []
    for path in a.merge:
        with open(path) as f:
            data = json.load(f)
        metas += data["runs"]
        results += [Row(**d) for d in data["rows"]]
    for name in names:
        if name not in table or name.startswith("_"):
            results.append(Row(name, "", "eager", error=f"unknown model; known: {', '.join(k for k in table if not k.startswith('_'))}"))
            continue
        build, batch = table[name]
        if a.isolate:
            results += _isolated(name, batch, a)
        else:
            results += run_model(name, build, batch, rows, a.device, a)
        _save_json(a.json, metas + [run_meta(a, time.time() - t0)], results)  # each model as it ends
    if names:
        metas.append(run_meta(a, time.time() - t0))
    _save_json(a.json, metas, results)
    md = markdown(results, metas)
    if not a.quiet:
        print(md)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
