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


def _kernels_of_iteration(it, matcher: _Matcher, device: str, index: int, t0: float) -> List[Dict[str, Any]]:
    """The calls of one timed iteration: top-level ops of the compiled graph's call and, on CUDA,
    the device kernels they launched."""
    calls = [e for e in it.cpu_children]
    compiled = [e for e in calls if e.name.startswith("## Call CompiledFxGraph")]
    top: List[Any] = []
    for c in compiled or calls:
        top.extend(c.cpu_children)
    out: List[Dict[str, Any]] = []
    seen: Dict[str, int] = {}
    for e in top:
        is_kernel = e.name.startswith(("cpp_", "triton_")) or _GRAPH_PREFIX.match(e.name) is not None
        if is_kernel:
            name, post, nodes, reason = matcher.kernel(e.name)
            kind = "kernel"
        else:
            name = e.name
            post, nodes, reason = matcher.extern_call(e.name, seen)
            kind = "extern"
        spans = [(e.time_range.start, e.time_range.elapsed_us())]
        if device.startswith("cuda"):
            spans = [(k.time_range.start, k.time_range.elapsed_us()) for k in _device_kernels(e)]
        for start, dur in spans:
            out.append({"name": name, "kind": kind, "iteration": index, "start_us": start - t0, "dur_us": dur,
                        "post_grad": post, "nodes": nodes, "reason": reason})
    return out


def _device_kernels(e) -> List[Any]:
    ks = list(getattr(e, "kernels", []) or [])
    for c in e.cpu_children:
        ks.extend(_device_kernels(c))
    return ks


def profile_compiled(path: str, device: str = "cpu", warmup: int = 3, iters: int = 10,
                     random_weights: bool = True) -> Dict[str, Any]:
    """Compiles the graph file with Inductor, profiles `iters` timed iterations after `warmup`, and
    returns the run as `fxlens-compiled-run` JSON (kernels with their post-grad and FX nodes)."""
    import torch._inductor.config as ic
    from torch._inductor.compile_fx import compile_fx
    from torch.profiler import ProfilerActivity, profile, record_function

    gm = _load(path, random_weights)
    known = {n.name for n in gm.graph.nodes}
    inputs = [x.to(device) for x in _example_inputs(path)]
    gm = gm.to(device)
    prov = Provenance()
    with torch.no_grad(), ic.patch({"trace.provenance_tracking_level": 1, "cpp.enable_kernel_profile": True}), prov.capture():
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
                    torch.cuda.synchronize()
    iters_ev = sorted((e for e in prof.events() if e.name.startswith("fxlens_iteration_")),
                      key=lambda e: e.time_range.start)
    t0 = iters_ev[0].time_range.start if iters_ev else 0
    matcher = _Matcher(prov, known)
    kernels: List[Dict[str, Any]] = []
    iterations: List[Dict[str, Any]] = []
    for i, it in enumerate(iters_ev):
        ks = _kernels_of_iteration(it, matcher, device, i, t0)
        kernels.extend(ks)
        iterations.append({"index": i, "start_us": it.time_range.start - t0, "wall_us": it.time_range.elapsed_us()})
    return {"format": "fxlens-compiled-run", "format_version": 1, "graph": path, "backend": "inductor",
            "device": device, "device_name": _device_name(device), "torch": torch.__version__,
            "warmup": warmup, "iterations": iterations, "kernels": kernels,
            "provenance": {"kernels": prov.kernel_post, "post_to_pre": prov.post_to_pre},
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
    a = ap.parse_args(argv)
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"fxlens.compiled: --device {a.device}: this PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    try:
        run = profile_compiled(a.graph, a.device, a.warmup, a.iters)
    except Exception as e:  # the graph does not load or compile: said in one line
        print(f"fxlens.compiled: {a.graph}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    _write_json(_post_grad_beside(run, a.output), a.output)
    attributed, busy, missing = summary(run)
    print(f"fxlens.compiled: {len(run['kernels'])} kernels in {len(run['iterations'])} iterations; "
          f"attributed {attributed:.1f} of {busy:.1f} us busy; {missing} unattributed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
