# SPDX-License-Identifier: MIT
"""What Inductor makes of a graph file: compiles it with Inductor (provenance tracking on), runs it under
torch.profiler and attributes every kernel to the FX nodes of the file it came from.

Inductor records, while it generates code, which post-grad nodes each kernel computes
(`torch._inductor.debug.set_kernel_post_grad_provenance_tracing`) and which pre-grad nodes each
post-grad node came from (`create_mapping_pre_post_grad_nodes`, from the nodes' `from_node` meta).
The graph given to Inductor is the file's graph itself (compile_fx, no Dynamo re-trace), so its
pre-grad nodes are the file's nodes by name: kernel -> post-grad nodes -> FX nodes of the file.

Kernels in the profiler: Inductor's C++ kernels (`cpp_fused_*`, named `graph_N_cpp_fused_*` when
`config.cpp.enable_kernel_profile` is on) and Triton kernels by their names; extern calls (GEMMs,
mkldnn, SDPA, ...) as the ATen op the compiled code calls, matched to Inductor's extern records in
call order. `fxlens-cli profile --compiled` runs `python -m fxlens.compiled` and turns what it writes
(`format: "fxlens-compiled-run"`) into a profile file.

The post-grad graph those records name (Inductor's graph after its post-grad passes) is kept too and
written beside the output as an fxlens graph file (`run.post_grad.json`), with each of its nodes' FX
nodes: what the app's linked post-grad view shows and follows."""
import argparse
import json
import os
import platform
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

import torch

_GRAPH_PREFIX = re.compile(r"^graph_\d+_")
_HANDLE = re.compile(r":\d+$")
# The ATen op an extern kernel call shows as in the profiler.
_EXTERN = re.compile(r"^(?:extern_kernels\.(\w+)|torch\.ops\.(\w+)\.(\w+)(?:\.\w+)?|aten\.(\w+)(?:\.\w+)?)$")


def _op_of_extern(kernel: str) -> str:
    """'extern_kernels.addmm' -> 'aten::addmm'; 'torch.ops.mkldnn._linear_pointwise.default' ->
    'mkldnn::_linear_pointwise'; '' when the name is no extern call."""
    m = _EXTERN.match(kernel)
    if not m:
        return ""
    if m.group(1):
        return "aten::" + m.group(1)
    if m.group(2):
        return m.group(2) + "::" + m.group(3)
    return "aten::" + m.group(4)


class PostGradCapture:
    """Context: keeps Inductor's post-grad graph of the compile, the one whose node names the provenance
    records use (taken when the post-grad passes are done, before lowering), as fxlens graph JSON."""

    def __init__(self) -> None:
        self.graph: Optional[Dict[str, Any]] = None
        self._depth = 0

    def __enter__(self):
        import torch._inductor.compile_fx as cfx
        from .graph_format import graph_to_dict
        self._original = original = cfx._recursive_post_grad_passes
        me = self

        def passes(gm, *args, **kwargs):
            me._depth += 1
            try:
                original(gm, *args, **kwargs)
            finally:
                me._depth -= 1
            if me._depth == 0:  # the outermost graph (subgraphs are passed through first)
                me.graph = graph_to_dict(gm.graph, gm, ir="aten", source="inductor_post_grad")

        cfx._recursive_post_grad_passes = passes
        return self

    def __exit__(self, *exc):
        import torch._inductor.compile_fx as cfx
        cfx._recursive_post_grad_passes = self._original


class Provenance:
    """Inductor's provenance records of one compile: kernel -> post-grad nodes -> pre-grad nodes."""

    def __init__(self) -> None:
        self.kernel_post: Dict[str, List[str]] = {}  # "cpp_fused_add_0:3" -> post-grad node names
        self.post_to_pre: Dict[str, List[str]] = {}
        self.post_grad = PostGradCapture()  # the post-grad graph these names are nodes of

    def capture(self):
        """Context: records what Inductor dumps at the end of each graph's compile."""
        import torch._inductor.debug as dbg
        original = dbg.dump_inductor_provenance_info
        me = self

        def dump() -> Dict[str, Any]:
            out = original()
            me.kernel_post.update(dict(dbg._inductor_triton_kernel_to_post_grad_node_info))
            me.post_to_pre.update(dict(dbg._inductor_post_to_pre_grad_nodes.get("postToPre", {})))
            return out

        class _Ctx:
            def __enter__(self):
                dbg.dump_inductor_provenance_info = dump
                me.post_grad.__enter__()

            def __exit__(self, *exc):
                dbg.dump_inductor_provenance_info = original
                me.post_grad.__exit__(*exc)

        return _Ctx()

    def kernels(self) -> Dict[str, List[Tuple[int, List[str]]]]:
        """Kernel name (no debug handle) -> [(handle, post-grad nodes)] in handle (codegen) order."""
        out: Dict[str, List[Tuple[int, List[str]]]] = {}
        for key, post in self.kernel_post.items():
            name, _, handle = key.rpartition(":")
            if not name:
                name, handle = key, "0"
            out.setdefault(name, []).append((int(handle) if handle.isdigit() else 0, list(post)))
        for v in out.values():
            v.sort(key=lambda t: t[0])
        return out

    def fx_nodes(self, post: List[str], known: set) -> List[str]:
        names: List[str] = []
        for p in post:
            for pre in self.post_to_pre.get(p, []):
                if pre in known and pre not in names:
                    names.append(pre)
        return names


def _decoded(v: Any) -> Any:
    return tuple(v["tuple"]) if isinstance(v, dict) and "tuple" in v else v


def _leaf_modules(path: str) -> torch.nn.Module:
    """A root holding the torch.nn leaf modules a graph file's call_module nodes name, built from the
    constants the file records (in_features, eps, ...; `bias` from the parameters listed)."""
    import importlib
    import inspect

    from .graph_format import read_dict
    data = read_dict(path)
    called = {n["target"] for n in data.get("nodes", []) if n.get("op") == "call_module"}
    params = {p["name"] for p in data.get("params", [])}
    root = torch.nn.Module()
    for m in data.get("modules", []):
        if m.get("path") not in called:
            continue
        module, _, cls_name = m["type"].rpartition(".")
        if not module.startswith("torch.nn."):
            raise ValueError(f"{path}: module '{m['path']}' is a {m['type']}, not a torch.nn module; "
                             "profile --compiled rebuilds only torch.nn modules")
        cls = getattr(importlib.import_module(module), cls_name)
        attrs = {k: _decoded(v) for k, v in m.get("attrs", {}).items()}
        kwargs = {}
        for name in list(inspect.signature(cls.__init__).parameters)[1:]:
            if name == "bias" and "bias" not in attrs:
                kwargs["bias"] = f"{m['path']}.bias" in params
            elif name in attrs:
                kwargs[name] = attrs[name]
        owner = root
        *parents, leaf = m["path"].split(".")
        for part in parents:
            if not hasattr(owner, part):
                owner.add_module(part, torch.nn.Module())
            owner = getattr(owner, part)
        owner.add_module(leaf, cls(**kwargs))
    return root


def _load(path: str, random_weights: bool):
    """The graph file as a GraphModule; call_module graphs get their torch.nn modules rebuilt."""
    from .export import load_graph, load_weights_file, weights_path_for
    from .graph_format import read_dict
    data = read_dict(path)
    if not any(n.get("op") == "call_module" for n in data.get("nodes", [])):
        return load_graph(path, random_weights=random_weights)
    root = _leaf_modules(path)
    wfile = os.path.join(os.path.dirname(path), data["weights"]) if data.get("weights") else weights_path_for(path)
    if os.path.exists(wfile):
        root.load_state_dict(load_weights_file(wfile), strict=False)
    return load_graph(path, module=root)


def place(gm: torch.fx.GraphModule, device: str) -> torch.fx.GraphModule:
    """The graph file's module on `device`: its parameters and buffers, its plain tensor attributes
    (constants a capture kept) and the tensors its factory calls create (a graph captured on the CPU
    names device='cpu'; a rewrite's torch.arange names none, which means the CPU)."""
    from .engine import _factory
    gm = gm.to(device)
    target = torch.device(device)
    if target.type == "cpu":
        return gm
    for mod in gm.modules():
        for k, v in list(vars(mod).items()):
            if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter):
                setattr(mod, k, v.to(target))
    for n in gm.graph.nodes:
        if n.op == "call_function" and _factory(n.target):
            dev = n.kwargs.get("device")
            if dev is None or torch.device(dev).type == "cpu":
                n.kwargs = {**n.kwargs, "device": target}
    gm.recompile()
    return gm


def _example_inputs(path: str) -> List[torch.Tensor]:
    from .export import load_inputs
    from .graph_format import read_dict
    inputs = load_inputs(path)
    if inputs:
        return inputs
    g = torch.Generator().manual_seed(0)
    for n in read_dict(path).get("nodes", []):
        if n.get("op") != "placeholder":
            continue
        t = (n.get("meta", {}).get("val") or {}).get("tensor")
        if t is None:
            raise ValueError(f"{path}: placeholder '{n.get('name')}' records no tensor shape; save example inputs with the graph")
        dtype = getattr(torch, t["dtype"])
        if dtype.is_floating_point:
            inputs.append(torch.randn(t["shape"], generator=g).to(dtype))
        else:
            inputs.append(torch.zeros(t["shape"], dtype=dtype))
    return inputs


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def _attribute(kind: str, name: str, post: Optional[List[str]], prov: Provenance, known: set) -> Tuple[List[str], str]:
    if post is None:
        return [], ("no provenance record: Inductor did not generate this call" if kind == "op"
                    else "no provenance record for this kernel")
    nodes = prov.fx_nodes(post, known)
    if not nodes:
        return [], ("its post-grad nodes (" + ", ".join(post[:4]) + ("..." if len(post) > 4 else "") +
                    ") come from no node of the graph file" if post else "Inductor recorded no post-grad node for it")
    return nodes, ""


class _Matcher:
    """Names profiled calls after Inductor's records: kernels by name, extern calls by op in call order."""

    def __init__(self, prov: Provenance, known: set) -> None:
        self.prov, self.known = prov, known
        self.by_name = prov.kernels()
        self.extern: Dict[str, List[List[str]]] = {}
        for name, recs in self.by_name.items():
            op = _op_of_extern(name)
            if op:
                self.extern.setdefault(op, []).extend(post for _, post in recs)
        self.extern_order = {op: sorted(range(len(v))) for op, v in self.extern.items()}

    def kernel(self, name: str) -> Tuple[str, List[str], List[str], str]:
        """(shown name, post-grad nodes, FX nodes, reason) of a kernel named in the profiler."""
        base = _GRAPH_PREFIX.sub("", name)
        recs = self.by_name.get(base)
        post = None
        if recs:
            post = []
            for _, p in recs:
                post.extend(x for x in p if x not in post)
        nodes, reason = _attribute("kernel", base, post, self.prov, self.known)
        return base, post or [], nodes, reason

    def extern_call(self, op: str, seen: Dict[str, int]) -> Tuple[List[str], List[str], str]:
        k = seen.get(op, 0)
        seen[op] = k + 1
        recs = self.extern.get(op, [])
        post = recs[k] if k < len(recs) else None
        nodes, reason = _attribute("op", op, post, self.prov, self.known)
        return post or [], nodes, reason


def _runtime_call(name: str) -> bool:
    """A CUDA runtime or driver call (cudaLaunchKernel, cuLaunchKernelEx, ...): its correlation id is
    CUPTI's, another id space than the ops'."""
    return name.startswith("cu")


def _ids_under(e) -> List[int]:
    """The correlation ids of a profiler op and of every op under it (0: none recorded)."""
    ids = [e.id] if e.id > 0 and not _runtime_call(e.name) else []
    for c in e.cpu_children:
        ids.extend(_ids_under(c))
    return ids


class DeviceActivity:
    """One activity on the GPU (kernel, memcpy, memset): its name, the correlation id of the CPU op
    that launched it (0: not linked), its start and duration, and the host time of the runtime call
    that launched it (None: not seen), in the profiler's microseconds."""

    def __init__(self, name: str, launched_by: int, start_us: float, dur_us: float,
                 launch_us: Optional[float] = None) -> None:
        self.name, self.launched_by, self.start_us, self.dur_us = name, launched_by, start_us, dur_us
        self.launch_us = launch_us


def device_activities(prof) -> List[DeviceActivity]:
    """Every CUDA activity of a finished profile on the time base of `prof.events()`, without the
    GPU-side copies of user annotations. Kineto links an activity to the innermost CPU op that
    launched it (`linked_correlation_id`), and to the runtime call (cudaLaunchKernel, cuLaunchKernel,
    ...) that launched it by the CUPTI correlation id both carry."""
    from torch.autograd import DeviceType
    results = prof.profiler.kineto_results
    base = results.trace_start_ns()
    launches: Dict[int, float] = {}
    found = []
    for ev in results.events():
        if ev.device_type() == DeviceType.CUDA:
            if not ev.is_user_annotation():
                found.append(ev)
        elif _runtime_call(ev.name()) and ev.correlation_id() > 0:
            launches[ev.correlation_id()] = (ev.start_ns() - base) / 1000.0
    return [DeviceActivity(ev.name(), ev.linked_correlation_id(), (ev.start_ns() - base) / 1000.0,
                           ev.duration_ns() / 1000.0, launches.get(ev.correlation_id())) for ev in found]


def assign_activities(iterations: List[Tuple[Tuple[float, float], List[Any]]], activities: List[DeviceActivity]
                      ) -> Tuple[List[List[List[DeviceActivity]]], List[List[DeviceActivity]]]:
    """Each GPU activity of the timed iterations, once: to the top-level call of the compiled graph
    that launched it (the call whose host time holds its runtime launch; without a launch seen, the
    call holding the op kineto links it to), else to the iteration whose window holds its launch (or
    start) as launched by no call.
    `iterations`: (window, top-level calls) per iteration. Returns the activities per call of each
    iteration and the unclaimed ones per iteration; activities outside every window are left out."""
    owner: Dict[int, Tuple[int, int]] = {}
    spans: List[Tuple[float, float, int, int]] = []
    for i, (_, calls) in enumerate(iterations):
        for j, c in enumerate(calls):
            for cid in _ids_under(c):
                owner.setdefault(cid, (i, j))
            spans.append((c.time_range.start, c.time_range.end, i, j))
    spans.sort()
    starts = [sp[0] for sp in spans]
    per_call: List[List[List[DeviceActivity]]] = [[[] for _ in calls] for _, calls in iterations]
    other: List[List[DeviceActivity]] = [[] for _ in iterations]
    import bisect
    for a in activities:
        where = None
        if a.launch_us is not None:
            k = bisect.bisect_right(starts, a.launch_us) - 1
            if k >= 0 and spans[k][0] <= a.launch_us <= spans[k][1]:
                where = (spans[k][2], spans[k][3])
        elif a.launched_by > 0:
            where = owner.get(a.launched_by)
        if where is not None:
            per_call[where[0]][where[1]].append(a)
            continue
        t = a.launch_us if a.launch_us is not None else a.start_us
        for i, ((lo, hi), _) in enumerate(iterations):
            if lo <= t <= hi:
                other[i].append(a)
                break
    return per_call, other


def post_grad_mapping(prov: Provenance, post_grad: Dict[str, Any], known: set) -> Dict[str, List[str]]:
    """Post-grad node -> the graph file's nodes it came from, for every node of the post-grad graph
    that Inductor's provenance traces to the file (post_to_pre restricted to both graphs' nodes)."""
    out: Dict[str, List[str]] = {}
    for n in post_grad.get("nodes", []):
        fx = prov.fx_nodes([n["name"]], known)
        if fx:
            out[n["name"]] = fx
    return out


def _post_grad_entries(prov: Provenance, path: str, known: set) -> Dict[str, Any]:
    """The run's post-grad graph (named after the graph file) and its nodes' FX nodes."""
    graph = prov.post_grad.graph
    if graph is None:
        return {}
    graph["name"] = os.path.basename(path).split(".")[0] + "_post_grad"
    return {"post_grad_graph": graph, "post_grad_nodes": post_grad_mapping(prov, graph, known)}


def post_grad_path_for(output: str) -> str:
    """run.json -> run.post_grad.json: where the post-grad graph is written beside an output."""
    base = output[:-3] if output.endswith(".gz") else output
    base = base[:-5] if base.endswith(".json") else base
    return base + ".post_grad.json"


def _top_calls(it) -> List[Any]:
    """The top-level calls of one timed iteration: the ops of the compiled graph's call."""
    calls = [e for e in it.cpu_children]
    compiled = [e for e in calls if e.name.startswith("## Call CompiledFxGraph")]
    top: List[Any] = []
    for c in compiled or calls:
        top.extend(c.cpu_children)
    return top


def _kernels_of_iteration(top: List[Any], matcher: _Matcher, index: int, t0: float,
                          on_gpu: Optional[Tuple[List[List[DeviceActivity]], List[DeviceActivity]]] = None
                          ) -> List[Dict[str, Any]]:
    """The rows of one timed iteration: each top-level call (on the CPU) or, on CUDA (`on_gpu`: the
    activities per call and those no call launched), each GPU activity its call launched."""
    out: List[Dict[str, Any]] = []
    seen: Dict[str, int] = {}
    for i, e in enumerate(top):
        is_kernel = e.name.startswith(("cpp_", "triton_")) or _GRAPH_PREFIX.match(e.name) is not None
        if is_kernel:
            name, post, nodes, reason = matcher.kernel(e.name)
            kind = "kernel"
        else:
            name = e.name
            post, nodes, reason = matcher.extern_call(e.name, seen)
            kind = "extern"
        spans = [(a.start_us, a.dur_us, a.name) for a in on_gpu[0][i]] if on_gpu else \
            [(e.time_range.start, e.time_range.elapsed_us(), "")]
        for start, dur, device_name in spans:
            row = {"name": name, "kind": kind, "iteration": index, "start_us": start - t0, "dur_us": dur,
                   "post_grad": post, "nodes": nodes, "reason": reason}
            if device_name and device_name != name:  # a GEMM's cuBLAS kernel under its aten::mm
                row.update(name=device_name, call=name)
            out.append(row)
    for a in on_gpu[1] if on_gpu else []:
        out.append({"name": a.name, "kind": "device", "iteration": index, "start_us": a.start_us - t0,
                    "dur_us": a.dur_us, "post_grad": [], "nodes": [],
                    "reason": _OUTSIDE})
    return out


_OUTSIDE = "launched outside the compiled graph's calls"


def fill_by_position(per_iteration: List[List[Dict[str, Any]]]) -> int:
    """The compiled graph launches the same GPU work in the same order on every call. Where the
    profiler lost the host side of some launches in an iteration (its activities are rows launched
    by no call), and the iteration's activities by start time have the names of a complete
    iteration's, each such row takes the attribution of the row at its place there. Returns how
    many rows it filled."""
    def order(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return sorted(rows, key=lambda r: r["start_us"])

    complete = [order(rows) for rows in per_iteration if rows and all(r["reason"] != _OUTSIDE for r in rows)]
    filled = 0
    for rows in per_iteration:
        if not complete or all(r["reason"] != _OUTSIDE for r in rows):
            continue
        mine = order(rows)
        ref = next((c for c in complete if [r["name"] for r in c] == [r["name"] for r in mine]), None)
        if ref is None:
            continue
        for r, like in zip(mine, ref):
            if r["reason"] == _OUTSIDE:
                r.update({k: like[k] for k in ("kind", "post_grad", "nodes", "reason") if k in like})
                if "call" in like:
                    r["call"] = like["call"]
                r["placed"] = "by its place among the iteration's launches"
                filled += 1
    return filled


def profile_compiled(path: str, device: str = "cpu", warmup: int = 3, iters: int = 10,
                     random_weights: bool = True, post_grad: Optional[List[str]] = None) -> Dict[str, Any]:
    """Compiles the graph file with Inductor, profiles `iters` timed iterations after `warmup`, and
    returns the run as `fxlens-compiled-run` JSON (kernels with their post-grad and FX nodes).
    `post_grad`: pattern files run inside the compile on Inductor's post-grad graph (what they
    rewrote is in the run's `post_grad_pass`)."""
    import torch._inductor.config as ic
    from torch._inductor.compile_fx import compile_fx
    from torch.profiler import ProfilerActivity, profile, record_function

    gm = _load(path, random_weights)
    known = {n.name for n in gm.graph.nodes}
    inputs = [x.to(device) for x in _example_inputs(path)]
    gm = place(gm, device)
    prov = Provenance()
    patch: Dict[str, Any] = {"trace.provenance_tracking_level": 1, "cpp.enable_kernel_profile": True}
    user_pass = None
    if post_grad:
        from .backend import post_grad_pass
        user_pass = post_grad_pass(patterns=post_grad, strict=True)
        patch["post_grad_custom_post_pass"] = user_pass
    with torch.no_grad(), ic.patch(patch), prov.capture():
        compiled = compile_fx(gm, inputs)
        for _ in range(warmup):
            compiled(*inputs)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
        with profile(activities=acts) as prof:
            for i in range(iters):
                with record_function(f"fxlens_iteration_{i}"):
                    compiled(*inputs)
                    if device.startswith("cuda"):
                        torch.cuda.synchronize()  # the iteration's window holds its GPU work
    from torch.autograd import DeviceType
    # (on CUDA each annotation also has a GPU-side copy: the host's are the iterations)
    iters_ev = sorted((e for e in prof.events() if e.name.startswith("fxlens_iteration_") and e.device_type == DeviceType.CPU),
                      key=lambda e: e.time_range.start)
    t0 = iters_ev[0].time_range.start if iters_ev else 0
    matcher = _Matcher(prov, known)
    tops = [_top_calls(it) for it in iters_ev]
    per_call: List[Any] = []
    other: List[Any] = []
    if device.startswith("cuda"):
        windows = [((it.time_range.start, it.time_range.end), top) for it, top in zip(iters_ev, tops)]
        per_call, other = assign_activities(windows, device_activities(prof))
    kernels: List[Dict[str, Any]] = []
    iterations: List[Dict[str, Any]] = []
    per_iteration = [_kernels_of_iteration(tops[i], matcher, i, t0, (per_call[i], other[i]) if per_call else None)
                     for i in range(len(iters_ev))]
    fill_by_position(per_iteration)
    for i, it in enumerate(iters_ev):
        kernels.extend(per_iteration[i])
        iterations.append({"index": i, "start_us": it.time_range.start - t0, "wall_us": it.time_range.elapsed_us()})
    return {"format": "fxlens-compiled-run", "format_version": 1, "graph": path, "backend": "inductor",
            "device": device, "device_name": _device_name(device), "torch": torch.__version__,
            "warmup": warmup, "iterations": iterations, "kernels": kernels,
            "provenance": {"kernels": prov.kernel_post, "post_to_pre": prov.post_to_pre},
            "post_grad_pass": user_pass.stats if user_pass is not None else None,
            **_post_grad_entries(prov, path, known)}


def summary(run: Dict[str, Any]) -> Tuple[float, float, int]:
    """(attributed time, busy time, unattributed kernels) over the timed iterations, microseconds."""
    busy = sum(k["dur_us"] for k in run["kernels"])
    attributed = sum(k["dur_us"] for k in run["kernels"] if k["nodes"])
    return attributed, busy, sum(1 for k in run["kernels"] if not k["nodes"])


def _write_json(data: Dict[str, Any], path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _post_grad_beside(run: Dict[str, Any], output: str) -> Dict[str, Any]:
    """Writes the run's post-grad graph as a graph file beside `output` (run.post_grad.json); the run
    then names that file (relative to the run's directory) instead of holding the graph."""
    graph = run.pop("post_grad_graph", None)
    if graph is None:
        return run
    from .graph_format import write_dict
    path = post_grad_path_for(output)
    write_dict(graph, path)
    run["post_grad_graph"] = os.path.basename(path)
    return run


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fxlens.compiled", description=__doc__.split("\n")[0])
    ap.add_argument("graph")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--post-grad", default="", help="pattern files or folders (comma-separated) run on Inductor's post-grad graph")
    a = ap.parse_args(argv)
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"fxlens.compiled: --device {a.device}: this PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    try:
        run = profile_compiled(a.graph, a.device, a.warmup, a.iters,
                               post_grad=[p for p in a.post_grad.split(",") if p] or None)
    except Exception as e:  # the graph does not load or compile: the whole message, then its gist in one line
        text = str(e).strip()
        print(text, file=sys.stderr)
        gist = next((line.strip() for line in text.splitlines() if line.strip()), "")
        print(f"fxlens.compiled: {a.graph}: {type(e).__name__}: {gist}", file=sys.stderr)
        return 1
    _write_json(_post_grad_beside(run, a.output), a.output)
    for st in run.get("post_grad_pass") or []:
        done = ", ".join(f"{k} ×{v}" for k, v in sorted(st.get("rewrites_by_pattern", {}).items())) or "nothing"
        print(f"fxlens.compiled: post-grad patterns on {st['graph']}: {st['nodes_before']} -> {st['nodes_after']} nodes "
              f"({done})" + (f"; left unchanged: {st['reason']}" if st.get("reason") else ""))
    attributed, busy, missing = summary(run)
    placed = sum(1 for k in run["kernels"] if k.get("placed"))
    print(f"fxlens.compiled: {len(run['kernels'])} kernels in {len(run['iterations'])} iterations; "
          f"attributed {attributed:.1f} of {busy:.1f} us busy; {missing} unattributed"
          + (f"; {placed} placed by their place in another iteration (the profiler lost their launch)" if placed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
