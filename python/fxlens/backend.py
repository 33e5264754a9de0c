# SPDX-License-Identifier: MIT
"""fxlens inside torch.compile.

    torch.compile(model, backend=fxlens.backend())                       # one line
    torch.compile(model, backend=fxlens.backend(preset="all", patterns=["my_patterns/"], freeze=True,
                                                then="inductor", trace="fxlens-trace/"))
    torch._inductor.config.pre_grad_custom_pass = fxlens.pre_grad_pass()  # inside Inductor's own compile

:func:`backend` rewrites each graph Dynamo captures with fxlens' engine (in this process), then hands
it to Inductor (or runs it eagerly). Parameters and buffers, which Dynamo passes as graph inputs, are
seen by the engine as the model's weights (get_attr nodes with their module path) and go back to
being inputs afterwards, so the compiled function keeps Dynamo's calling convention:

* inference (grad disabled, or no input needs grad), with ``freeze``: values computed from weights
  alone (the stack of 26 embedding tables a batched lookup reads, a fused Q/K/V weight) are computed
  once, at compile time, and held as constants; the other weights stay live inputs;
* training: nothing is folded; gradients flow to the model's own parameters through the rewritten
  graph (stack/cat of weights are differentiable), so they equal the model's.

Graphs with symbolic sizes (``dynamic=True``) go on unchanged, with a one-line warning. Any failure
inside fxlens also passes the graph on unchanged with a warning naming the graph (``strict=True``
raises instead): fxlens never stops a compile.
"""
from __future__ import annotations

import os
import time
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch
import torch.fx as fx

from .engine import Engine, engine_for
from .graph_format import _fetch_attr, write_dict

_THEN = ("inductor", "eager")


def lift_weights(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Tuple[fx.GraphModule, Dict[str, str]]:
    """A copy of `gm` whose placeholders that carry parameters/buffers are get_attr nodes of their
    module path, owning the model's own values (export's lifting, `own=True`). Returns it and
    {module path: placeholder name}."""
    from .export import _lift_dynamo_inputs
    by_placeholder: Dict[str, str] = {}
    lifted_gm, _ = _lift_dynamo_inputs(gm.graph, gm.graph, example_inputs, own=True, lifted=by_placeholder)
    return lifted_gm, {fqn: name for name, fqn in by_placeholder.items()}


def restore_inputs(gm: fx.GraphModule, original: fx.GraphModule, lifted: Dict[str, str]) -> fx.GraphModule:
    """`gm` with Dynamo's calling convention again: the placeholders of `original`, in its order;
    get_attr nodes of lifted weights read those placeholders. Other attributes (`_frozen_*`
    constants, Dynamo's own) stay attributes of the result."""
    graph = fx.Graph()
    by_name: Dict[str, fx.Node] = {}
    for n in original.graph.nodes:
        if n.op == "placeholder":
            p = graph.create_node("placeholder", n.target, n.args, n.kwargs, name=n.name)
            p.meta = dict(n.meta)
            by_name[n.name] = p
    env: Dict[fx.Node, fx.Node] = {}
    root = torch.nn.Module()
    from .export import _set_attr
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if n.name not in by_name:
                raise RuntimeError(f"placeholder '{n.name}' of the rewritten graph is not an input of Dynamo's graph")
            env[n] = by_name[n.name]
        elif n.op == "get_attr" and n.target in lifted:
            env[n] = by_name[lifted[n.target]]
        else:
            if n.op == "get_attr":
                value = _fetch_attr(gm, n.target)
                if isinstance(value, torch.Tensor):
                    _set_attr(root, n.target, value, isinstance(value, torch.nn.Parameter))
                else:
                    setattr(root, n.target, value)
            env[n] = graph.node_copy(n, lambda x: env[x])
    return fx.GraphModule(root, graph)


def _symbolic(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> bool:
    """Whether the graph has symbolic sizes (dynamic=True, or sizes Dynamo marked dynamic)."""
    if any(isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool)) for x in example_inputs):
        return True
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("example_value")
        if isinstance(v, (torch.SymInt, torch.SymFloat)):
            return True
        if isinstance(v, torch.Tensor) and any(not isinstance(d, int) for d in v.shape):
            return True
    return False


def _check_preset(engine: Engine, preset: str, who: str) -> None:
    labels = {label for p in engine.patterns() for label in p["labels"].split(",") if label}
    if preset != "all" and preset not in labels:
        raise ValueError(f"{who}: unknown preset '{preset}' (all, {', '.join(sorted(labels))})")


def _training(example_inputs: Sequence[Any]) -> bool:
    return torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs)


class Backend:
    """The callable torch.compile gets (see :func:`backend`). `stats` has one dict per graph:
    nodes_before, nodes_after, steps, frozen (values folded), mode (inference, training or
    passthrough), fxlens_seconds (fxlens' own time in this compile), then_seconds (Inductor's or
    eager's), and reason (why a graph passed through)."""

    def __init__(self, preset: str, patterns: Optional[Iterable[str]], freeze: bool, then: str,
                 trace: Optional[str], max_steps: Optional[int], name: str, strict: bool):
        if then not in _THEN:
            raise ValueError(f"fxlens.backend: then='{then}' (expected one of {', '.join(_THEN)})")
        self.engine: Engine = engine_for(patterns)  # pattern files compile now: errors at the call site
        _check_preset(self.engine, preset, "fxlens.backend")
        self.preset, self.freeze, self.then, self.trace = preset, freeze, then, trace
        self.max_steps, self.name, self.strict = max_steps, name, strict
        self.stats: List[Dict[str, Any]] = []
        if trace:
            os.makedirs(trace, exist_ok=True)

    def __call__(self, gm: fx.GraphModule, example_inputs: List[Any]) -> Callable:
        index = len(self.stats)
        stat: Dict[str, Any] = {"graph": f"{self.name}_{index}", "nodes_before": 0, "nodes_after": 0, "steps": 0,
                                "frozen": 0, "mode": "passthrough", "fxlens_seconds": 0.0, "then_seconds": 0.0}
        self.stats.append(stat)
        t0 = time.perf_counter()
        if _symbolic(gm, example_inputs):
            stat["reason"] = "symbolic sizes"
            warnings.warn(f"fxlens.backend: {stat['graph']} has symbolic sizes (dynamic shapes); passed on unchanged",
                          stacklevel=2)
            target = gm
        else:
            try:
                target = self._optimize(gm, example_inputs, stat)
            except Exception as e:  # fxlens never stops a compile (unless strict)
                if self.strict:
                    raise
                stat["mode"], stat["reason"] = "passthrough", f"{type(e).__name__}: {e}"
                first = str(e).splitlines()[0] if str(e) else ""
                warnings.warn(f"fxlens.backend: {stat['graph']} passed on unchanged: {type(e).__name__}: {first}",
                              stacklevel=2)
                target = gm
        stat["fxlens_seconds"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        if self.then == "inductor":
            from torch._inductor.compile_fx import compile_fx
            compiled = compile_fx(target, example_inputs)
        else:
            compiled = target.forward
        stat["then_seconds"] = time.perf_counter() - t1
        return compiled

    def _optimize(self, gm: fx.GraphModule, example_inputs: Sequence[Any], stat: Dict[str, Any]) -> fx.GraphModule:
        training = _training(example_inputs)
        lifted_gm, lifted = lift_weights(gm, example_inputs)
        from .export import _modules_from_meta
        result = self.engine.optimize_graph(lifted_gm, name=stat["graph"], ir="torch", source="dynamo",
                                            preset=self.preset, max_steps=self.max_steps,
                                            modules=_modules_from_meta(gm.graph))
        stat.update(nodes_before=result.nodes_before, nodes_after=result.nodes_after, steps=len(result.steps),
                    mode="training" if training else "inference")
        if self.trace:
            self._write_trace(result, stat["graph"])
        optimized = result.graph_module
        if self.freeze and not training:
            from .freeze import freeze as _freeze
            optimized, _ = _freeze(optimized)
            stat["frozen"] = sum(1 for n in optimized.graph.nodes if n.op == "get_attr" and n.target.startswith("_frozen_"))
        out = restore_inputs(optimized, gm, lifted)
        out.graph.lint()
        return out

    def _write_trace(self, result: Any, name: str) -> None:
        """The graph as the engine read it, with the session that rewrote it: `fxlens FILE` opens it
        and replays the steps (the history, each step's diff, undo to the original)."""
        data = dict(result.source)
        data["session"] = {"format": "fxlens-session", "version": 1, "tool": "fxlens.backend", "preset": self.preset,
                           "patterns": "", "pattern_paths": list(self.engine.paths),
                           "steps": [{"pattern": s["pattern"], "anchor": s["anchor"]} for s in result.steps]}
        write_dict(data, os.path.join(self.trace, f"{name}.json"))


def backend(preset: str = "all", patterns: Optional[Iterable[str]] = None, freeze: bool = True,
            then: str = "inductor", trace: Optional[str] = None, *, max_steps: Optional[int] = None,
            name: str = "graph", strict: bool = False) -> Backend:
    """A torch.compile backend: each Dynamo graph rewritten by fxlens' engine (`preset`, plus the
    pattern files or directories in `patterns`), weight-only values folded in inference when
    `freeze`, then compiled by Inductor (`then="inductor"`) or run eagerly (`then="eager"`). With
    `trace` (a directory), each graph is written there with its rewrite history: `fxlens FILE` opens
    it and replays the steps. See the module's documentation for training and dynamic shapes."""
    return Backend(preset, patterns, freeze, then, trace, max_steps, name, strict)


class PreGradPass:
    """For ``torch._inductor.config.pre_grad_custom_pass``: fxlens' patterns inside Inductor's own
    compile (its pre-grad graph: Torch IR, weights as inputs; nothing is folded). Keeps `stats` as
    the backend does."""

    where, ir, source = "pre_grad", "torch", "inductor_pre_grad"

    def __init__(self, preset: str, patterns: Optional[Iterable[str]], max_steps: Optional[int], strict: bool):
        self.engine = engine_for(patterns)
        self.paths = list(self.engine.paths)
        _check_preset(self.engine, preset, "fxlens.pre_grad_pass")
        self.preset, self.max_steps, self.strict = preset, max_steps, strict
        self.stats: List[Dict[str, Any]] = []

    def __deepcopy__(self, memo: Dict[int, Any]) -> "PreGradPass":
        return self  # Inductor's config.patch copies its values; the pass and its stats stay one

    def __getstate__(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "engine"}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.engine = engine_for(state.get("paths"))

    def uuid(self) -> str:
        """Inductor's caches key on this: the preset and the pattern files' contents."""
        import hashlib
        h = hashlib.sha256(self.preset.encode())
        for p in sorted(self.engine.paths):
            for root, _, files in os.walk(p) if os.path.isdir(p) else [(os.path.dirname(p), [], [os.path.basename(p)])]:
                for f in sorted(files):
                    with open(os.path.join(root, f), "rb") as fh:
                        h.update(fh.read())
        return h.hexdigest()

    def _after(self, graph: fx.Graph) -> None:
        """What the rewritten graph needs before Inductor goes on with it."""

    def __call__(self, graph: fx.Graph) -> None:
        name = f"{self.where}_{len(self.stats)}"
        stat: Dict[str, Any] = {"graph": name, "nodes_before": 0, "nodes_after": 0, "steps": 0, "mode": "passthrough"}
        self.stats.append(stat)
        t0 = time.perf_counter()
        try:
            gm = graph.owning_module if graph.owning_module is not None else fx.GraphModule(torch.nn.Module(), graph)
            if _symbolic(gm, []):
                stat["reason"] = "symbolic sizes"
                warnings.warn(f"fxlens.{self.where}_pass: {name} has symbolic sizes; left unchanged", stacklevel=2)
                return
            result = self.engine.optimize_graph(gm, name=name, ir=self.ir, source=self.source,
                                                preset=self.preset, max_steps=self.max_steps)
            if result.steps:
                replace_graph(graph, result.graph)
                self._after(graph)
            stat.update(nodes_before=result.nodes_before, nodes_after=result.nodes_after, steps=len(result.steps),
                        mode=self.where, rewrites_by_pattern=result.rewrites_by_pattern)
        except Exception as e:
            if self.strict:
                raise
            stat["reason"] = f"{type(e).__name__}: {e}"
            warnings.warn(f"fxlens.{self.where}_pass: {name} left unchanged: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}", stacklevel=2)
        finally:
            stat["fxlens_seconds"] = time.perf_counter() - t0


def replace_graph(graph: fx.Graph, new: fx.Graph) -> None:
    """Replaces `graph`'s nodes with `new`'s in place (the placeholders, matched by name, stay; the
    other nodes keep the meta `new` gives them)."""
    old_placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    first = next((n for n in graph.nodes if n.op != "placeholder"), None)
    env: Dict[fx.Node, fx.Node] = {}
    anchor = first
    for n in new.nodes:
        if n.op == "placeholder":
            if n.name not in old_placeholders:
                raise RuntimeError(f"placeholder '{n.name}' is not an input of the pre-grad graph")
            env[n] = old_placeholders[n.name]
            continue
        if n.op == "output":
            continue
        with graph.inserting_before(anchor):
            env[n] = graph.node_copy(n, lambda x: env[x])
    old_output = next(n for n in graph.nodes if n.op == "output")
    new_output = next(n for n in new.nodes if n.op == "output")
    old_output.args = fx.map_arg(new_output.args, lambda x: env[x])
    # Everything of the old body is now dead: erase it from the back.
    fresh = set(env.values())
    for n in reversed(list(graph.nodes)):
        if n.op in ("placeholder", "output") or n in fresh:
            continue
        graph.erase_node(n)


def pre_grad_pass(preset: str = "all", patterns: Optional[Iterable[str]] = None, *, max_steps: Optional[int] = None,
                  strict: bool = False) -> PreGradPass:
    """A pass for ``torch._inductor.config.pre_grad_custom_pass``: fxlens' built-in patterns and the
    pattern files in `patterns` applied to every graph Inductor compiles, before autograd."""
    return PreGradPass(preset, patterns, max_steps, strict)


def post_grad_pass(preset: str = "all", patterns: Optional[Iterable[str]] = None, *, max_steps: Optional[int] = None,
                   strict: bool = False):
    """A pass for ``torch._inductor.config.post_grad_custom_post_pass``: fxlens' patterns (ATen-level
    ones: ``level = "aten"`` or ``"both"``) and the pattern files in `patterns` applied to Inductor's
    post-grad graph of every compile, right before it lowers it (fxlens.inductor_pass.PostGradPass)."""
    from .inductor_pass import PostGradPass
    return PostGradPass(preset, patterns, max_steps, strict)


__all__ = ["backend", "Backend", "pre_grad_pass", "PreGradPass", "post_grad_pass", "lift_weights", "restore_inputs", "replace_graph"]
