# SPDX-License-Identifier: MIT
"""OpInfo coverage of fxlens' LibTorch executor: every entry of PyTorch's OpInfo database
(torch.testing._internal.common_methods_invocations.op_db) as a one-op module, captured, exported,
run by `fxlens-cli run` and compared with eager PyTorch.

    .venv/bin/python bench/opinfo_coverage.py                       # both routes -> docs/measurements/opinfo-cpu.md
    .venv/bin/python bench/opinfo_coverage.py --route fx --json fx.json --out fx.md
    .venv/bin/python bench/opinfo_coverage.py --route fx --every 20  # what python/tests/test_opinfo.py runs
    .venv/bin/python bench/opinfo_coverage.py --route dynamo --ops add,nn.functional.conv2d --keep /tmp/oi
    python3 bench/opinfo_coverage.py --device cuda --workers 8      # GPU machine -> docs/measurements/opinfo-cuda.md

Per op: the first CPU sample (`op.sample_inputs("cpu", float32)`; an op without float32 on the CPU
takes its first supported dtype in the order of DTYPE_ORDER; with --device cuda the same on CUDA, where
Jiterator ops count too, and fxlens-cli runs with --device cuda), seeded, as a module whose forward calls
`op.op(sample.input, *sample.args, **sample.kwargs)`: the tensors (nested in lists, tuples and dicts
too) are the module's inputs, everything else is a constant of the generated code. Building that
module, the comparison and the classes of fxlens-cli's errors live in bench/opinfo_samples.py.

route fx      torch.fx.symbolic_trace -> fxlens.export_module(m, inputs, g.json, weights=True)
route dynamo  torch.compile(m, backend=fxlens.compile_backend(dir, weights=True), dynamic=False)

and then `fxlens-cli run g.json -o out.safetensors` on the inputs the exporter saved next to the graph;
the outputs are read with the safetensors package and compared with eager (tensor leaves of the result
in order, as the executor flattens its output): rtol 1e-4 / atol 1e-5 (|a - e| <= atol + rtol |e|, as
torch.testing, NaN equal to NaN), integers and bools exact; ops whose result is random (the ATen
overload carries Tag.nondeterministic_seeded, its name says rand/dropout/bernoulli/normal/..., or two
eager runs differ) or uninitialized (empty*) are compared by shape and dtype only. For Dynamo the
reference of each graph is what that graph returned when Dynamo called it (its example inputs are the
ones saved); an op passes there only as one graph without graph breaks. Captures that PyTorch itself
gets wrong (the traced module differs from eager) are a class of their own.

OpInfo's random ops call their op through `wrapper_set_seed` (seeding inside freeze_rng_state, which
Dynamo does not trace): the harness replaces it with a plain call and seeds before every run itself.

Every op gets one outcome: pass, fail (CLASSES) with the first error line, or left out (LEFT_OUT,
outside the denominator). Ops run in worker processes (one op at a time each, fed by this process,
which restarts a worker that crashes or overruns its op's time limit); they run a copy of fxlens-cli
taken at the start, so a rebuild during the run changes nothing. The report names the commit, the
files changed in the tree and the binary's build time: what was measured.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence

# The sample half (op_db, one-op module, comparison, fxlens-cli runs and their classes) lies next to
# this file; python/tests/test_opinfo.py loads this file by path, so bench/ may not be on sys.path yet.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import opinfo_samples  # noqa: E402
from opinfo_samples import (ATOL, CLI, CLI_TIMEOUT_S, DTYPE_ORDER, ROOT, RTOL,  # noqa: E402,F401
                            _clone, _detached, _error_line, all_keys, build_module, check_graph, classify_cli,
                            compare, first_line, is_random, load_op_db, op_key, pick_dtype, read_outputs,
                            run_cli, tensor_leaves)



def default_md(device: str) -> str:
    return os.path.join(ROOT, "docs", "measurements", f"opinfo-{device}.md")

# The Python side of one op (sample, eager, capture, export, compare); Dynamo's first compile in a
# fresh worker includes its own warm-up.
PY_TIMEOUT_S = {"fx": 60.0, "dynamo": 120.0}
ROUTES = ("fx", "dynamo")

# Fail classes, in the order the report lists them.
CLASSES = {
    "no ATen operator": "the executor finds no ATen operator for the target",
    "fits no overload": "an ATen operator exists but the arguments fit none of its overloads",
    "no executor for target": "a target (or a form of it) the executor has no mechanism for: operator.r*, "
                              "tensor attributes, ...",
    "unsupported argument": "an argument or index value the executor cannot evaluate",
    "graph file refused": "fxlens-cli refuses the exported graph file (exit 3: a dtype, value or field it cannot read)",
    "input file refused": "fxlens-cli cannot read the inputs or weights the exporter saved (complex, ...)",
    "kernel error": "the ATen kernel the executor called raised (arguments passed wrongly)",
    "run error": "fxlens-cli run failed with another message",
    "crash/backtrace": "stderr holds a C++ backtrace, or the process died on a signal",
    "timeout": f"fxlens-cli ran over {CLI_TIMEOUT_S:.0f} s, or the Python side over its limit",
    "unreadable output file": "fxlens-cli wrote outputs the safetensors package cannot open (complex, ...)",
    "wrong output count/structure": "not as many output tensors as eager",
    "wrong shape/dtype": "an output tensor of another shape or dtype than eager's",
    "wrong values": "outputs of eager's shape and dtype but other values",
    "export failed": "fxlens' exporter raised on the captured graph (or could not save its inputs)",
    "graph break": "Dynamo split the op into several graphs or ran part of it eagerly (dynamo route)",
    "capture differs from eager": "the captured graph, run by PyTorch, already differs from eager",
    "harness error": "this script failed on the op (a bug here, not in fxlens)",
}
# Left out of the denominator, in report order.
LEFT_OUT = {
    "no CPU dtype (Jiterator-only)": "a Jiterator op: CUDA kernels compiled at run time",
    "no CPU dtype": "the op supports no dtype on the CPU",
    "no CUDA dtype": "the op supports no dtype on CUDA",
    "no sample input": "sample_inputs yields nothing on the device for the chosen dtype",
    "sample inputs raise": "sample_inputs raises on the device",
    "sparse layout": "a sample or result tensor is not strided (sparse, ...): safetensors holds strided tensors only",
    "eager raises": "the module fails in eager PyTorch on its first sample",
    "returns no tensor": "the op returns no tensor: the output file would be empty, nothing to compare",
    "not captured by symbolic_trace": "torch.fx.symbolic_trace raises on the module (fx route)",
    "not captured by Dynamo": "torch.compile raised before/while capturing (dynamo route)",
    "no graph from Dynamo": "Dynamo handed no graph to the backend (it ran the op eagerly or folded it)",
}


# ----------------------------------------------------------------------------------------- one op

class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def _rec(key: str, route: str, outcome: str, cls: str = "", error: str = "", **extra) -> Dict[str, Any]:
    return {"op": key, "route": route, "outcome": outcome, "class": cls, "error": error, **extra}


def _leftout(key, route, cls, error="", **extra):
    return _rec(key, route, "left out", cls, error, **extra)


def _fail(key, route, cls, error="", **extra):
    return _rec(key, route, "fail", cls, error, **extra)


def prepare(op) -> Dict[str, Any]:
    """The op's module, inputs and eager result, or {"left_out": (class, message)}."""
    import torch
    key = op_key(op)
    device = opinfo_samples.DEVICE
    where = "CPU" if device == "cpu" else "CUDA"
    if key.startswith("jiterator_") and device == "cpu":
        return {"left_out": ("no CPU dtype (Jiterator-only)", "Jiterator compiles CUDA kernels at run time")}
    dtype = pick_dtype(op)
    if dtype is None:
        return {"left_out": (f"no {where} dtype", f"supported {where} dtypes: "
                                                 f"{sorted(map(str, op.supported_dtypes(device)))}")}
    info: Dict[str, Any] = {"dtype": str(dtype)[6:]}
    torch.manual_seed(0)
    try:
        sample = next(iter(op.sample_inputs(device, dtype, requires_grad=False)), None)
    except Exception as e:
        return {**info, "left_out": ("sample inputs raise", f"{type(e).__name__}: {first_line(str(e))}")}
    if sample is None:
        return {**info, "left_out": ("no sample input", f"no {where} {info['dtype']} sample")}
    m, inputs = build_module(op, sample)
    inputs = _detached(inputs)
    info.update(module=m, inputs=inputs, source=m.source)
    if any(t.layout != torch.strided for t in inputs):
        return {**info, "left_out": ("sparse layout", f"input layouts {sorted({str(t.layout) for t in inputs})}")}
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            out1 = tensor_leaves(m(*_clone(inputs)))
            out2 = tensor_leaves(m(*_clone(inputs)))
    except Exception as e:
        return {**info, "left_out": ("eager raises", f"{type(e).__name__}: {first_line(str(e))}")}
    if not out1:
        return {**info, "left_out": ("returns no tensor", "the result holds no tensor")}
    if any(t.layout != torch.strided for t in out1):
        return {**info, "left_out": ("sparse layout", f"result layouts {sorted({str(t.layout) for t in out1})}")}
    random = is_random(op)
    if not random and compare(out1, out2) is not None:
        random = True  # two eager runs differ: nondeterministic
    info.update(expected=[t.cpu() for t in _detached(out1)], values=not random)
    return info


def _same_inputs_or_rewrite(graph: str, pristine: Sequence) -> bool:
    """ShapeProp ran the module on the example inputs before they were saved: an op that writes its
    input (resize_, zero_) changed them. The saved inputs file gets the untouched values back.
    Returns whether it had to."""
    import fxlens
    import torch
    from safetensors.torch import save_file
    ipath = fxlens.inputs_path_for(graph)
    if not os.path.exists(ipath) or not pristine:
        return False
    def raw(t):
        return t.contiguous().reshape(-1).view(torch.uint8) if t.numel() else t.reshape(-1)
    saved = fxlens.load_inputs(graph)
    pristine = [t.cpu() for t in pristine]
    if len(saved) == len(pristine) and all(a.shape == b.shape and a.dtype == b.dtype and torch.equal(raw(a), raw(b))
                                           for a, b in zip(saved, pristine)):
        return False
    save_file({f"input:{i}": t.contiguous() for i, t in enumerate(pristine)}, ipath)
    return True


def run_fx(op, prep: Dict[str, Any], workdir: str) -> Dict[str, Any]:
    import torch
    import fxlens
    key = op_key(op)
    m, inputs, expected, values = prep["module"], prep["inputs"], prep["expected"], prep["values"]
    extra = {"dtype": prep["dtype"], "compared": "values" if values else "shape/dtype"}
    try:
        gm = torch.fx.symbolic_trace(m)
    except Exception as e:
        return _leftout(key, "fx", "not captured by symbolic_trace", f"{type(e).__name__}: {first_line(str(e))}",
                        **extra)
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            traced = tensor_leaves(gm(*_clone(inputs)))
    except Exception as e:
        return _fail(key, "fx", "capture differs from eager", f"traced module raises: {type(e).__name__}: "
                     f"{first_line(str(e))}", **extra)
    bad = compare(expected, traced, values)
    if bad:
        return _fail(key, "fx", "capture differs from eager", f"traced module: {bad[1]}", **extra)
    path = os.path.join(workdir, "g.json")
    try:
        with torch.no_grad():
            fxlens.export_module(m, _clone(inputs), path, name="g", weights=True)
    except Exception as e:
        return _fail(key, "fx", "export failed", f"{type(e).__name__}: {first_line(str(e))}", **extra)
    if _same_inputs_or_rewrite(path, inputs):
        extra["note"] = "the op writes its input: saved inputs restored"
    extra["targets"] = sorted({getattr(n.target, "__name__", str(n.target))
                               for n in gm.graph.nodes if n.op in ("call_function", "call_method")})
    bad = check_graph(path, expected, values)
    if bad:
        return _fail(key, "fx", bad[0], bad[1], **extra)
    return _rec(key, "fx", "pass", **extra)


def run_dynamo(op, prep: Dict[str, Any], workdir: str) -> Dict[str, Any]:
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters
    import fxlens
    key = op_key(op)
    m, inputs, expected, values = prep["module"], prep["inputs"], prep["expected"], prep["values"]
    extra: Dict[str, Any] = {"dtype": prep["dtype"], "compared": "values" if values else "shape/dtype"}
    torch._dynamo.reset()
    counters.clear()
    graph_outputs: List[Any] = []

    def inner(gm, example_inputs):
        index = len(graph_outputs)
        graph_outputs.append(None)

        def call(*args):
            out = gm.forward(*args)
            graph_outputs[index] = [t.cpu() for t in _detached(tensor_leaves(out))]
            return out
        return call

    backend = fxlens.compile_backend(workdir, name="g", weights=True, inner=inner)
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            result = torch.compile(m, backend=backend, dynamic=False)(*_clone(inputs))
    except Exception as e:
        msg = f"{type(e).__name__}: {first_line(str(e))}"
        if "fxlens" in msg or "safetensors" in msg or any("fxlens" in (f.filename or "") for f in _tb_frames(e)):
            return _fail(key, "dynamo", "export failed", msg, **extra)
        return _leftout(key, "dynamo", "not captured by Dynamo", msg, **extra)
    breaks = [_break_reason(b) for b in sorted(counters["graph_break"].keys())]
    extra["graphs"] = len(backend.files)
    if not backend.files:
        return _leftout(key, "dynamo", "no graph from Dynamo", ("graph break: " + breaks[0])
                        if breaks else "Dynamo wrote no graph", **extra)
    errors = []
    for i, graph in enumerate(backend.files):
        ref = graph_outputs[i] if i < len(graph_outputs) else None
        if ref is None:
            errors.append(("harness error", f"graph {i} was compiled but never called"))
            continue
        bad = check_graph(graph, ref, values)
        if bad:
            errors.append(bad)
    extra["graphs_run"] = f"{len(backend.files) - len(errors)}/{len(backend.files)}"
    if len(backend.files) > 1 or breaks:
        why = breaks[0] if breaks else f"{len(backend.files)} graphs"
        return _fail(key, "dynamo", "graph break", f"{why} ({extra['graphs_run']} graphs run and match)", **extra)
    if errors:
        return _fail(key, "dynamo", errors[0][0], errors[0][1], **extra)
    bad = compare(expected, tensor_leaves(result), values)
    if bad:
        return _fail(key, "dynamo", "capture differs from eager", f"compiled module: {bad[1]}", **extra)
    return _rec(key, "dynamo", "pass", **extra)


def _break_reason(text: str) -> str:
    """A graph break's first line, with its explanation when the first line is generic."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    why = next((ln[len("Explanation:"):].strip() for ln in lines if ln.startswith("Explanation:")), "")
    return (lines[0] if lines else "") + (f": {why}" if why else "")


def _tb_frames(e: BaseException):
    import traceback
    return traceback.extract_tb(e.__traceback__) if e.__traceback__ else []


def run_op(op, route: str, workdir: str) -> Dict[str, Any]:
    key = op_key(op)
    t0 = time.monotonic()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(int(PY_TIMEOUT_S[route]))
    try:
        prep = prepare(op)
        if "left_out" in prep:
            rec = _leftout(key, route, *prep["left_out"], dtype=prep.get("dtype", ""))
        else:
            rec = (run_fx if route == "fx" else run_dynamo)(op, prep, workdir)
    except _Timeout:
        rec = _fail(key, route, "timeout", f"Python side (sample, eager, capture, export) ran over "
                    f"{PY_TIMEOUT_S[route]:.0f} s")
    except Exception as e:
        rec = _fail(key, route, "harness error", f"{type(e).__name__}: {first_line(str(e))}")
    finally:
        signal.alarm(0)
    rec["seconds"] = round(time.monotonic() - t0, 2)
    return rec


# ----------------------------------------------------------------------------------------- workers

def worker_main(route: str, workdir: str) -> None:
    """Reads op keys on stdin, one a line; writes one JSON record a line on the protocol fd (the
    original stdout; anything the ops print goes to stderr)."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import torch
    import warnings
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    ops = {op_key(op): op for op in load_op_db()}
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        key = line.strip()
        if not key:
            continue
        d = os.path.join(workdir, re.sub(r"[^A-Za-z0-9_.-]", "_", key))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        rec = run_op(ops[key], route, d) if key in ops else _fail(key, route, "harness error", "no such op")
        rec["error"] = rec["error"].replace(d + os.sep, "")  # file names relative to the op's folder
        proto.write(json.dumps(rec) + "\n")


class _Worker:
    def __init__(self, route: str, workdir: str, log, cli: str):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", route,
                                      "--workdir", workdir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, text=True, bufsize=1, start_new_session=True,
                                     env=dict(os.environ, FXLENS_CLI=cli, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1",
                                              FXLENS_OPINFO_DEVICE=opinfo_samples.DEVICE,
                                              TORCHINDUCTOR_CACHE_DIR=os.path.join(workdir, "inductor-cache")))
        self.key: Optional[str] = None
        self.since = time.monotonic()
        self.ready = False
        self.buf = ""

    def send(self, key: str) -> None:
        self.key, self.since = key, time.monotonic()
        self.proc.stdin.write(key + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker's own session: it and its fxlens-cli
        except ProcessLookupError:
            pass
        self.proc.wait()


def run_route(route: str, keys: Optional[Sequence[str]] = None, *, workers: int = 2,
              workdir: Optional[str] = None, progress: bool = False) -> List[Dict[str, Any]]:
    """Runs `route` ("fx" or "dynamo") on `keys` (default: every op of op_db) in `workers` processes;
    returns one record per op, in the order of `keys`."""
    keys = list(keys) if keys is not None else all_keys()
    own = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix=f"opinfo-{route}-")
    os.makedirs(workdir, exist_ok=True)
    # The workers run a copy of fxlens-cli: a rebuild during the run neither breaks it nor mixes builds.
    # fxlens-cli hands the commands that run graphs to fxlens-cli-exec beside it: both are copied.
    cli = os.path.join(workdir, "fxlens-cli")
    shutil.copy2(CLI, cli)
    exec_cli = os.path.join(os.path.dirname(CLI), "fxlens-cli-exec")
    if os.path.exists(exec_cli):
        shutil.copy2(exec_cli, os.path.join(workdir, "fxlens-cli-exec"))
    # The limit on one op as this process sees it: the worker's own alarm, the CLI runs, start-up.
    limit = PY_TIMEOUT_S[route] + 4 * CLI_TIMEOUT_S + 60
    pending = list(reversed(keys))
    results: Dict[str, Dict[str, Any]] = {}
    log = open(os.path.join(workdir, f"{route}-workers.log"), "a")
    sel = selectors.DefaultSelector()
    pool: List[_Worker] = []
    failed_starts = 0

    def spawn():
        w = _Worker(route, workdir, log, cli)
        sel.register(w.proc.stdout, selectors.EVENT_READ, w)
        pool.append(w)

    def drop(w: _Worker, kill: bool):
        sel.unregister(w.proc.stdout)
        pool.remove(w)
        if kill:
            w.kill()
        else:
            w.proc.stdin.close()
            w.proc.wait()

    def fail_current(w: _Worker, cls: str, msg: str):
        if w.key is not None and w.key not in results:
            results[w.key] = _fail(w.key, route, cls, msg, seconds=round(time.monotonic() - w.since, 2))
            if progress:
                print(f"[{route} {len(results)}/{len(keys)}] {w.key}: fail {cls} {msg}", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    try:
        while len(results) < len(keys):
            idle = sum(1 for w in pool if w.key is None)
            while pending and len(pool) < workers and idle < len(pending):
                spawn()
                idle += 1
            for sk, _ in sel.select(timeout=1.0):
                w: _Worker = sk.data
                line = w.proc.stdout.readline()
                if not line:  # the worker died
                    rc = w.proc.wait()
                    if not w.ready:
                        failed_starts += 1
                        if failed_starts >= 3:
                            raise RuntimeError(f"{route} workers die at start-up (exit {rc}); see "
                                               f"{os.path.join(workdir, route + '-workers.log')}")
                    fail_current(w, "crash/backtrace", f"the Python worker died (exit {rc}) on this op")
                    drop(w, kill=True)
                    continue
                msg = json.loads(line)
                if msg.get("ready"):
                    w.ready = True
                else:
                    results[msg["op"]] = msg
                    w.key = None
                    if progress:
                        print(f"[{route} {len(results)}/{len(keys)} {time.monotonic() - t0:.0f}s] {msg['op']}: "
                              f"{msg['outcome']} {msg['class']} {_short(msg['error'], 100)}",
                              file=sys.stderr, flush=True)
                if pending:
                    w.send(pending.pop())
                else:
                    drop(w, kill=False)
            now = time.monotonic()
            for w in list(pool):
                if w.key is not None and now - w.since > limit:
                    fail_current(w, "timeout", f"the op ran over {limit:.0f} s (worker killed)")
                    drop(w, kill=True)
                elif not w.ready and now - w.since > 300:
                    raise RuntimeError(f"a {route} worker did not start in 300 s")
    finally:
        for w in list(pool):
            w.kill()
        log.close()
        if own:
            shutil.rmtree(workdir, ignore_errors=True)
    return [results[k] for k in keys]


# ----------------------------------------------------------------------------------------- report

def summarize(records: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    counted = [r for r in records if r["outcome"] != "left out"]
    passed = sum(r["outcome"] == "pass" for r in counted)
    fails: Dict[str, List[Dict[str, Any]]] = {}
    left: Dict[str, List[Dict[str, Any]]] = {}
    for r in records:
        if r["outcome"] == "fail":
            fails.setdefault(r["class"], []).append(r)
        elif r["outcome"] == "left out":
            left.setdefault(r["class"], []).append(r)
    order = {c: i for i, c in enumerate(list(CLASSES) + list(LEFT_OUT))}
    return {"ops": len(records), "counted": len(counted), "passed": passed,
            "pass_rate": passed / len(counted) if counted else 0.0,
            "fails": dict(sorted(fails.items(), key=lambda kv: order.get(kv[0], 99))),
            "left_out": dict(sorted(left.items(), key=lambda kv: order.get(kv[0], 99))),
            "seconds": round(sum(r.get("seconds", 0) for r in records), 1)}


def summary_text(route: str, s: Dict[str, Any]) -> str:
    lines = [f"{route}: {s['passed']}/{s['counted']} pass ({100 * s['pass_rate']:.1f}% of the captured ops; "
             f"{s['ops']} ops, {s['ops'] - s['counted']} left out)"]
    for c, rs in s["fails"].items():
        lines.append(f"  fail {c}: {len(rs)}")
    for c, rs in s["left_out"].items():
        lines.append(f"  left out: {c}: {len(rs)}")
    return "\n".join(lines)


def _md_escape(s: str) -> str:
    return (s or "").replace("|", "\\|").replace("\n", " ").replace("`", "'")


def _short(s: str, n: int = 160) -> str:
    s = s or ""
    return s if len(s) <= n else s[:n - 1] + "…"


def write_markdown(path: str, by_route: Dict[str, List[Dict[str, Any]]], meta: Dict[str, Any]) -> None:
    import torch
    out: List[str] = []
    device = meta.get("device", "cpu")
    where = "CPU" if device == "cpu" else "CUDA"
    out.append(f"# OpInfo coverage of the executor ({where})\n")
    out.append("Generated by `bench/opinfo_coverage.py` (the method is in its docstring): every entry of "
               f"`torch.testing._internal.common_methods_invocations.op_db`, its first {where} float32 sample "
               "as a one-op module, captured, exported with its inputs, run by `fxlens-cli run"
               + ("" if device == "cpu" else f" --device {device}") + "` and compared with "
               "eager PyTorch. Do not edit by hand: rerun the harness.\n")
    out.append(f"* torch {torch.__version__}, {len(next(iter(by_route.values())))} OpInfo entries; "
               f"{meta.get('date', '')}")
    out.append(f"* command: `{meta.get('command', '')}`")
    if meta.get("commit"):
        out.append(f"* tree: commit {meta['commit']}" + (f" with uncommitted changes to {meta['changed']}"
                                                          if meta.get("changed") else "") +
                   f"; fxlens-cli built {meta.get('cli_built', '?')} (sha256 {meta.get('cli_sha256', '?')}…)")
    for route, secs in meta.get("wall", {}).items():
        out.append(f"* {route} route: {secs:.0f} s wall on {meta.get('workers', 2)} worker processes")
    out.append("")
    out.append("## Summary\n")
    sums = {r: summarize(recs) for r, recs in by_route.items()}
    out.append("| route | ops | left out | captured | pass | fail | pass % of captured | pass % of all ops |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r, s in sums.items():
        out.append(f"| {r} | {s['ops']} | {s['ops'] - s['counted']} | {s['counted']} | {s['passed']} | "
                   f"{s['counted'] - s['passed']} | {100 * s['pass_rate']:.1f}% | "
                   f"{100 * s['passed'] / max(1, s['ops']):.1f}% |")
    out.append("")
    out.append("Outcomes per class (fails count in the denominator, left-out ops do not):\n")
    routes = list(by_route)
    out.append("| class | kind | " + " | ".join(routes) + " | meaning |")
    out.append("| --- | --- | " + " | ".join("---" for _ in routes) + " | --- |")
    out.append("| pass | pass | " + " | ".join(str(sums[r]["passed"]) for r in routes) + " | |")
    for c, what in CLASSES.items():
        n = [len(sums[r]["fails"].get(c, [])) for r in routes]
        if any(n):
            out.append(f"| {c} | fail | " + " | ".join(map(str, n)) + f" | {what} |")
    for c, what in LEFT_OUT.items():
        n = [len(sums[r]["left_out"].get(c, [])) for r in routes]
        if any(n):
            out.append(f"| {c} | left out | " + " | ".join(map(str, n)) + f" | {what} |")
    out.append("")
    for r in routes:
        s = sums[r]
        out.append(f"## Route {r}: failures by class\n")
        for c, rs in s["fails"].items():
            out.append(f"### {c} ({len(rs)})\n")
            out.append(", ".join(f"`{x['op']}`" for x in rs) + "\n")
            seen: List[str] = []
            for x in rs:
                if _short(x["error"], 300) not in seen:
                    seen.append(_short(x["error"], 300))
                if len(seen) == 2:
                    break
            for e in seen:
                out.append(f"    {e}")
            out.append("")
        out.append(f"## Route {r}: ops left out\n")
        out.append("| op | reason | detail |")
        out.append("| --- | --- | --- |")
        for c, rs in s["left_out"].items():
            for x in rs:
                out.append(f"| `{x['op']}` | {c} | {_md_escape(_short(x['error']))} |")
        out.append("")
    out.append("## Per op\n")
    out.append("Cells: `pass`, `pass*` (compared by shape and dtype only: random or uninitialized results), "
               "the fail class, or `(left out: reason)`; the last column holds the first error line of each "
               "failing route, shortened (in full in the harness' `--json` output).\n")
    out.append("| op | dtype | " + " | ".join(routes) + " | first error |")
    out.append("| --- | --- | " + " | ".join("---" for _ in routes) + " | --- |")
    rows = list(zip(*[by_route[r] for r in routes]))
    for row in rows:
        cells = []
        for x in row:
            if x["outcome"] == "pass":
                cells.append("pass" + ("*" if x.get("compared") == "shape/dtype" else ""))
            elif x["outcome"] == "fail":
                cells.append(x["class"])
            else:
                cells.append(f"(left out: {x['class']})")
        dtype = next((x.get("dtype") for x in row if x.get("dtype")), "")
        errs = [(x["route"] + ": " if len(routes) > 1 else "") +
                _short(re.sub(r"^g(_\d+)?\.json: error: ", "", x["error"]), 120)
                for x in row if x["outcome"] == "fail"]
        if len(errs) == 2 and errs[0].split(": ", 1)[1] == errs[1].split(": ", 1)[1]:
            errs = ["both: " + errs[0].split(": ", 1)[1]]
        out.append(f"| `{row[0]['op']}` | {dtype} | " + " | ".join(cells) + f" | {_md_escape('; '.join(errs))} |")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# ----------------------------------------------------------------------------------------- main

def build_info() -> Dict[str, str]:
    """What was measured: the commit, whether the tree had changes, and the fxlens-cli binary."""
    import hashlib
    def git(*a):
        r = subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else ""
    changed = [ln[3:] for ln in git("status", "--porcelain", "--untracked-files=no").splitlines() if len(ln) > 3]
    h = hashlib.sha256()
    with open(CLI, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return {"commit": git("rev-parse", "--short", "HEAD").strip(), "changed": ", ".join(changed),
            "cli_sha256": h.hexdigest()[:16],
            "cli_built": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(os.path.getmtime(CLI)))}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--route", choices=["fx", "dynamo", "both"], default="both")
    ap.add_argument("--ops", help="comma-separated op keys (name or name.variant); default: all of op_db")
    ap.add_argument("--every", type=int, default=1, help="every N-th op of op_db (deterministic subset)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="where samples, eager and fxlens-cli run (cuda: the GPU machine)")
    ap.add_argument("--out", default=None, help="markdown report (default with all ops: "
                    "docs/measurements/opinfo-DEVICE.md)")
    ap.add_argument("--json", default=None, help="per-op records as JSON")
    ap.add_argument("--keep", default=None, help="work folder to keep (graphs, inputs, outputs, worker logs)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--from-json", metavar="FILE", help="write the report (--out) of a saved --json run; runs nothing")
    ap.add_argument("--worker", choices=ROUTES, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    opinfo_samples.DEVICE = os.environ["FXLENS_OPINFO_DEVICE"] = args.device if not args.worker else \
        opinfo_samples.DEVICE
    if args.worker:
        worker_main(args.worker, args.workdir)
        return 0
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        meta = saved.get("meta", {})
        out = args.out or default_md(meta.get("device", "cpu"))
        write_markdown(out, saved["routes"], {**meta, "wall": saved["wall_s"]})
        print(f"wrote {out}")
        return 0
    if not os.path.exists(CLI):
        print(f"no fxlens-cli at {CLI} (set FXLENS_CLI)", file=sys.stderr)
        return 2
    keys = args.ops.split(",") if args.ops else all_keys()
    keys = keys[::args.every]
    routes = list(ROUTES) if args.route == "both" else [args.route]
    by_route: Dict[str, List[Dict[str, Any]]] = {}
    wall: Dict[str, float] = {}
    info = build_info()
    for r in routes:
        t0 = time.monotonic()
        by_route[r] = run_route(r, keys, workers=args.workers, progress=not args.quiet,
                                workdir=os.path.join(args.keep, r) if args.keep else None)
        wall[r] = time.monotonic() - t0
        print(summary_text(r, summarize(by_route[r])) + f"\n  wall {wall[r]:.0f} s", flush=True)
    cmd = "python bench/opinfo_coverage.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    meta = {"command": cmd.strip(), "workers": args.workers, "date": time.strftime("%Y-%m-%d"),
            "device": args.device, **info}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"wall_s": wall, "meta": meta, "routes": by_route}, f, indent=1)
    out = args.out or (default_md(args.device) if not args.ops and args.every == 1 and args.route == "both" else None)
    if out:
        write_markdown(out, by_route, {**meta, "wall": wall})
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
