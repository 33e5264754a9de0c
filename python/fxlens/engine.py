# SPDX-License-Identifier: MIT
"""fxlens' engine in this process: torch.fx graphs through the C++ core (``fxlens._core``) and back,
with no file and no subprocess.

A graph crosses as the file format's JSON text: :func:`graph_to_dict` writes it as the exporters do,
the core parses it, runs the same session, registry and presets as ``fxlens-cli optimize`` and
returns the rewritten graph's text, which :func:`dict_to_graph` turns back into an fx.Graph whose call
targets are the original graph's own objects where the names agree.

    engine = fxlens.Engine(patterns=["my_patterns/"])      # built-in patterns + the user's files
    result = engine.optimize_graph(gm, preset="all")      # an OptimizeResult
    result.graph_module, result.steps, result.nodes_before, result.nodes_after
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence

import torch
import torch.fx as fx

from .graph_format import FormatError, dict_to_graph, graph_to_dict, target_name

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _core():
    try:
        from . import _core as core  # type: ignore[attr-defined]
    except ImportError as e:
        raise ImportError(
            "fxlens' C++ extension (fxlens._core) is not built for this Python: run scripts/setup.sh in the "
            f"fxlens checkout, or install the fxlens wheel ({e})") from None
    return core


def builtin_pattern_dir() -> str:
    """The pattern files that ship with fxlens: inside the wheel (fxlens/patterns), or the checkout's
    patterns/ for an editable install; "" when neither exists (the C++ patterns still load)."""
    for d in (os.path.join(_PACKAGE_DIR, "patterns"),
              os.path.join(os.path.dirname(os.path.dirname(_PACKAGE_DIR)), "patterns")):
        if os.path.isdir(d) and any(f.endswith(".fxpat") for f in os.listdir(d)):
            return d
    return ""


def _paths(patterns: Optional[Iterable[str]]) -> List[str]:
    if patterns is None:
        return []
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    return [os.path.abspath(os.fspath(p)) for p in patterns]


@dataclass
class OptimizeResult:
    """What one run of the engine did to a graph."""
    graph: fx.Graph
    graph_module: Optional[fx.GraphModule]
    nodes_before: int
    nodes_after: int
    steps: List[Dict[str, str]]             # {"pattern", "anchor", "summary"} per applied rewrite
    rewrites_by_pattern: Dict[str, int]
    rollbacks: List[Dict[str, str]]
    seconds: float                          # the engine's own time (matching and rewriting)
    stop_reason: str
    source: Dict[str, Any] = field(repr=False, default_factory=dict)  # the graph as the engine read it
    trace: Optional[str] = field(repr=False, default=None)


class Engine:
    """The built-in patterns (C++ families and the pattern files that ship with fxlens) plus the
    user's pattern files (`patterns`: directories of *.fxpat or files). A pattern file that does not
    compile raises ValueError with its file, line and column."""

    def __init__(self, patterns: Optional[Iterable[str]] = None):
        self.paths = _paths(patterns)
        for p in self.paths:
            if not os.path.exists(p):
                raise FileNotFoundError(f"{p}: no such pattern file or directory")
        self._engine = _core().Engine(builtin_pattern_dir(), self.paths)

    @property
    def user_patterns(self) -> List[str]:
        return list(self._engine.user_patterns)

    def patterns(self) -> List[Dict[str, Any]]:
        """Every pattern: name, labels, benefit, phase, description, user."""
        return list(self._engine.patterns())

    def optimize_text(self, text: str, *, name: str = "graph", preset: str = "all", names: Sequence[str] = (),
                      max_steps: Optional[int] = None, checked: bool = False, trace: bool = False) -> Dict[str, Any]:
        """The engine on a graph file's text; the result as the core returns it (graph as text)."""
        return self._engine.optimize(text, name, preset, ",".join(names), -1 if max_steps is None else int(max_steps),
                                     checked, trace)

    def optimize_graph(self, gm: fx.GraphModule, *, name: str = "graph", ir: str = "torch", source: str = "fx",
                       preset: str = "all", names: Sequence[str] = (), max_steps: Optional[int] = None,
                       checked: bool = False, trace: bool = False,
                       modules: Optional[List[Dict[str, Any]]] = None) -> OptimizeResult:
        """Rewrites `gm`'s graph with the preset (or the named patterns). The result's graph_module
        holds `gm`'s attributes; node meta is kept where a node survives by name."""
        data = graph_to_dict(gm.graph, gm, name=name, ir=ir, source=source)
        if modules is not None:  # the model's hierarchy (Dynamo: from nn_module_stack), not the holder's
            data["modules"] = modules
        r = self.optimize_text(json.dumps(data, allow_nan=False), name=name, preset=preset, names=names,
                               max_steps=max_steps, checked=checked, trace=trace)
        graph = graph_from_text(r["graph"], gm.graph, where=name)
        return OptimizeResult(graph=graph, graph_module=fx.GraphModule(gm, graph), nodes_before=r["nodes_before"],
                              nodes_after=r["nodes_after"], steps=list(r["steps"]),
                              rewrites_by_pattern=dict(r["rewrites_by_pattern"]), rollbacks=list(r["rollbacks"]),
                              seconds=r["seconds"], stop_reason=r["stop_reason"], source=data, trace=r["trace"])


def graph_from_text(text: str, like: Optional[fx.Graph] = None, where: str = "graph") -> fx.Graph:
    """A graph file's text as an fx.Graph. With `like` (the graph it was made from), call targets
    resolve to `like`'s own objects by name (so any function Dynamo captured comes back as itself) and
    nodes that kept their name keep their meta."""
    data = json.loads(text)
    known: Dict[str, Any] = {}
    meta: Dict[str, Dict[str, Any]] = {}
    if like is not None:
        for n in like.nodes:
            if n.op == "call_function":
                known.setdefault(target_name(n.target), n.target)
            meta[n.name] = n.meta
    graph = dict_to_graph(data, where, allow_any_target=False, known_targets=known)
    for n in graph.nodes:
        m = meta.get(n.name)
        if m is not None and n.op != "output":
            n.meta = dict(m)
    if like is not None:
        place_created_factories(graph, set(meta), _graph_device(like))
    return graph


def _graph_device(graph: fx.Graph) -> Optional[torch.device]:
    """The one accelerator (non-CPU device) the tensor values of `graph` live on, from the meta its
    capture recorded (Dynamo's example_value, make_fx's val); None when there is none or several.
    CPU tensors beside it (0-dim constants) do not count."""
    devices = set()
    for n in graph.nodes:
        v = n.meta.get("val", n.meta.get("example_value"))
        for t in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(t, torch.Tensor) and t.device.type != "cpu":
                devices.add(t.device)
    return devices.pop() if len(devices) == 1 else None


def _factory(target: Any) -> bool:
    """Whether a call of `target` creates a tensor on the device its `device` argument names (the
    ATen schema of the op, or of the torch function's ATen op of the same name, has `device`; the
    *_like functions take their input's device instead)."""
    if target in (torch.tensor, torch.as_tensor):
        return True
    if isinstance(target, torch._ops.OpOverload):
        schemas = [target._schema]
    else:  # a torch function: the overloads of the ATen op of its name
        name = getattr(target, "__name__", "")
        packet = getattr(torch.ops.aten, name, None) if getattr(torch, name, None) is target else None
        schemas = [getattr(packet, o)._schema for o in packet.overloads()] if packet is not None else []
    if any(sc.name.endswith("_like") for sc in schemas):
        return False
    return any(a.name == "device" for s in schemas for a in s.arguments)


def place_created_factories(graph: fx.Graph, kept: set, device: Optional[torch.device]) -> int:
    """Tensors that rewrites create (an embedding batch's row offsets: torch.arange) go where the
    graph's own tensors live: a factory call that fxlens added (its name is not in `kept`) and that
    names no device gets `device=`. The executor places such tensors on its run's device; PyTorch
    would put them on the CPU. Returns how many calls it placed."""
    if device is None or device.type == "cpu":
        return 0
    placed = 0
    for n in graph.nodes:
        if n.op == "call_function" and n.name not in kept and "device" not in n.kwargs and _factory(n.target):
            n.kwargs = {**n.kwargs, "device": device}
            placed += 1
    return placed


_DEFAULT: Dict[tuple, Engine] = {}


def engine_for(patterns: Optional[Iterable[str]] = None) -> Engine:
    """One Engine per set of pattern paths in this process (pattern files compile once)."""
    key = tuple(_paths(patterns))
    if key not in _DEFAULT:
        _DEFAULT[key] = Engine(list(key))
    return _DEFAULT[key]


def patterns(paths: Optional[Iterable[str]] = None) -> List[Dict[str, Any]]:
    """The patterns the engine knows (built-in, and the pattern files of `paths`)."""
    return engine_for(paths).patterns()


def optimize_file_text(text: str, **kw: Any) -> Dict[str, Any]:
    """The engine on a graph file's text (what `fxlens-cli optimize` reads), for tests and tools."""
    return engine_for(kw.pop("patterns", None)).optimize_text(text, **kw)


__all__ = ["Engine", "OptimizeResult", "engine_for", "patterns", "builtin_pattern_dir", "graph_from_text",
           "optimize_file_text", "FormatError"]
