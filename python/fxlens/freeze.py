# SPDX-License-Identifier: MIT
"""Weight freezing and re-parameterization of optimized graphs.

An optimized graph computes, on every call, values that depend on weights only: the stack of 200
per-block weights a batched linear reads, its transpose, a concatenated Q/K/V weight. fxlens cuts
such a graph in two (the same cut as ``fxlens-cli optimize --freeze``):

* the *frozen* graph reads each such value as a new weight ``_frozen_<node>``;
* the *fold* graph holds the folded nodes and returns those values from the original weights, so
  an original checkpoint (``state_dict``) still loads.

``freeze(gm)`` gives a module for inference (the values are buffers). ``reparameterize(gm)`` gives
one for training: where the fold is pure data movement (stack, cat, transpose, reshape: every
original element lands in exactly one place), the folded value itself becomes the parameter, so
backward no longer un-stacks gradients per block; ``original_state_dict()`` and
``original_grads()`` map back to the original names (through the fold's transpose, which inverts
such a fold exactly), and ``load_original_state_dict()`` loads an original checkpoint.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx as fx

from .graph_format import target_name

FROZEN_PREFIX = "_frozen_"  # a flat attribute: "_frozen.to" would clash with Module.to
_IMPURE_WORDS = ("dropout", "rand", "bernoulli", "normal", "uniform", "multinomial", "empty", "seed")


def _text(node: fx.Node) -> str:
    return target_name(node.target) if node.op == "call_function" else str(node.target)


def _writes_in_place(node: fx.Node) -> bool:
    t = _text(node)
    leaf = t.split(".")[-1]
    if node.op == "call_method" and leaf.endswith("_") and not leaf.endswith("__"):
        return True
    parts = t.split(".")
    if t.startswith("aten.") and len(parts) >= 2 and parts[1].endswith("_") and not parts[1].endswith("__"):
        return True
    if t.startswith(("operator.i", "_operator.i")) and leaf not in ("is_", "is_not", "index", "invert", "itemgetter"):
        return True
    return "out" in node.kwargs or node.kwargs.get("inplace") is True


def _foldable(node: fx.Node) -> bool:
    if node.op not in ("call_function", "call_method"):
        return False
    t = _text(node)
    return not any(w in t for w in _IMPURE_WORDS) and not _writes_in_place(node) and not node.is_impure()


def weight_only_nodes(graph: fx.Graph) -> set:
    """get_attr nodes, and pure calls whose inputs are all such nodes (none: a constant such as
    torch.tensor(...), made once instead of on every call)."""
    folded: set = set()
    for n in graph.nodes:
        if n.op == "get_attr":
            folded.add(n)
        elif _foldable(n) and all(i in folded for i in n.all_input_nodes):
            folded.add(n)
    return folded


# Calls whose value is a view of their first input (or a piece of it): no data of their own. The
# first ones reorder or broadcast: their strides are never what a file holds.
_REORDER = {"transpose", "t", "T", "mT", "permute", "movedim", "moveaxis", "swapaxes", "swapdims", "expand",
            "expand_as", "broadcast_to", "as_strided", "diagonal", "unfold"}
_VIEWS = {"view", "_unsafe_view", "view_as", "reshape", "reshape_as", "_reshape_alias", "flatten", "unflatten",
          "squeeze", "unsqueeze", "narrow", "slice", "select", "alias", "detach", "real", "imag", "view_as_real",
          "view_as_complex"}
_PIECES = {"split", "split_with_sizes", "tensor_split", "chunk", "unbind", "hsplit", "vsplit", "dsplit",
           "unsafe_split", "unsafe_chunk"}


def _op_name(node: fx.Node) -> str:
    """aten.permute.default -> permute, torch.transpose -> transpose, a method's name as it is."""
    if node.op == "call_method":
        return str(node.target)
    parts = _text(node).split(".")
    return parts[1] if parts[0] == "aten" and len(parts) > 1 else parts[-1]


def _layout(node: Any) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
    """(shape, stride) of a node's recorded tensor value (val, example_value or tensor_meta)."""
    if not isinstance(node, fx.Node):
        return None
    v = node.meta.get("val", node.meta.get("example_value"))
    try:
        if isinstance(v, torch.Tensor):
            return tuple(int(d) for d in v.shape), tuple(int(d) for d in v.stride())
        tm = node.meta.get("tensor_meta")
        if tm is not None and getattr(tm, "stride", None) is not None:
            return tuple(int(d) for d in tm.shape), tuple(int(d) for d in tm.stride)
    except (TypeError, RuntimeError):  # symbolic sizes
        return None
    return None


def _recorded_contiguous(node: fx.Node) -> bool:
    """The node's recorded value is laid out contiguously (unknown: no): fxlens-cli's
    recordedContiguous (core/rewrite/Freeze.cpp)."""
    layout = _layout(node)
    if layout is None or len(layout[0]) != len(layout[1]):
        return False
    expected = 1
    for size, stride in zip(reversed(layout[0]), reversed(layout[1])):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _copies(node: fx.Node) -> bool:
    """A reshape/flatten whose input's recorded strides admit no view: it makes fresh storage."""
    src, out = _layout(node.args[0] if node.args else None), _layout(node)
    if src is None or out is None:
        return False
    try:
        torch.empty_strided(src[0], src[1], device="meta").view(out[0])
        return False
    except RuntimeError:  # "view size is not compatible with input tensor's size and stride": a copy
        return True


def _strided_view(node: fx.Node) -> bool:
    """The call's value is a view of what it reads with strides a file cannot hold: one that reorders
    or broadcasts (permute, expand), or another view whose recorded layout is not contiguous.
    fxlens-cli's stridedView (core/rewrite/Freeze.cpp)."""
    if node.op not in ("call_function", "call_method"):
        return False
    name = _op_name(node)
    if name in _REORDER:
        return True
    if _recorded_contiguous(node):
        return False
    if node.op == "call_function" and _text(node) in ("operator.getitem", "_operator.getitem"):
        src = node.args[0] if node.args else None
        return isinstance(src, fx.Node) and src.op in ("call_function", "call_method") and _op_name(src) in _PIECES
    if name in ("reshape", "flatten") and _copies(node):
        return False
    return name in _VIEWS or name in _PIECES


def boundary(graph: fx.Graph, folded: set, views: bool = True) -> List[fx.Node]:
    """Folded calls that an unfolded node reads: the values freezing keeps. With `views=False` a
    strided view at that edge (see _strided_view) is not kept (the same cut as fxlens-cli optimize
    --freeze): it stays in the graph and the value it views is kept instead, since a view written to
    a file is a materialized copy (other strides, so the matmul reading it rounds differently; an
    expand many times the weight's size)."""
    kept = set(folded)
    if not views:
        # In reverse order a view's readers are settled before it: a chain of views goes back whole.
        for n in reversed(list(graph.nodes)):
            if n in kept and n.op != "get_attr" and _strided_view(n) and any(u not in kept for u in n.users):
                kept.discard(n)
    return [n for n in graph.nodes if n in kept and n.op != "get_attr" and any(u not in kept for u in n.users)]


def _fetch(root: torch.nn.Module, qualname: str) -> Any:
    obj: Any = root
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _set(root: torch.nn.Module, qualname: str, value: torch.Tensor, as_param: bool) -> None:
    *path, leaf = qualname.split(".")
    mod = root
    for p in path:
        if not hasattr(mod, p):
            mod.add_module(p, torch.nn.Module())
        mod = getattr(mod, p)
    if as_param:
        mod.register_parameter(leaf, torch.nn.Parameter(value))
    else:
        mod.register_buffer(leaf, value)


def split_graph(graph: fx.Graph, chosen: Sequence[fx.Node]) -> Tuple[fx.Graph, fx.Graph, List[str]]:
    """(frozen graph, fold graph, new targets): each chosen node of `graph` read as get_attr
    `_frozen_<name>` in the frozen graph; the fold graph returns the chosen values in that order."""
    names = [n.name for n in chosen]
    # Fold graph: the chosen nodes and what they read.
    needed: set = set()
    stack = list(chosen)
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        stack.extend(n.all_input_nodes)
    fold = fx.Graph()
    env: Dict[fx.Node, fx.Node] = {}
    for n in graph.nodes:
        if n in needed:
            env[n] = fold.node_copy(n, lambda x: env[x])
    fold.output(tuple(env[n] for n in chosen))
    # Frozen graph.
    frozen = fx.Graph()
    vmap: Dict[fx.Node, fx.Node] = {}
    out = frozen.graph_copy(graph, vmap)
    frozen.output(out)
    first = next(n for n in frozen.nodes if n.op != "placeholder")
    targets = []
    for name in names:
        old = next(n for n in frozen.nodes if n.name == name)
        target = FROZEN_PREFIX + name
        with frozen.inserting_before(first):
            attr = frozen.get_attr(target)
        attr.meta = dict(old.meta)
        old.replace_all_uses_with(attr)
        targets.append(target)
    frozen.eliminate_dead_code()
    return frozen, fold, targets


def _root_for(graph: fx.Graph, source: torch.nn.Module) -> torch.nn.Module:
    """A root holding what `graph` reads from `source` (get_attr values, called modules)."""
    root = torch.nn.Module()
    for n in graph.nodes:
        if n.op == "get_attr" and not n.target.startswith(FROZEN_PREFIX):
            v = _fetch(source, n.target)
            if isinstance(v, torch.Tensor):
                _set(root, n.target, v, isinstance(v, torch.nn.Parameter))
        elif n.op == "call_module":
            *path, leaf = n.target.split(".")
            mod = root
            for p in path:
                if not hasattr(mod, p):
                    mod.add_module(p, torch.nn.Module())
                mod = getattr(mod, p)
            mod.add_module(leaf, _fetch(source, n.target))
    return root


def freeze(gm: fx.GraphModule, views: bool = True) -> Tuple[fx.GraphModule, fx.GraphModule]:
    """(frozen module, fold module) for inference: the weight-only values are computed once and kept
    as buffers `_frozen_<node>`; the fold module recomputes them from the original weights.

    `views=False` makes the cut that is written to files (fxlens-cli optimize --freeze, exporters'
    freeze=True): strided views of weights (a transpose, an expand) stay in the frozen graph reading
    the value they view, and any other value with strides of its own stays computed, since a file
    holds each value contiguous."""
    folded = weight_only_nodes(gm.graph)
    chosen = boundary(gm.graph, folded, views=views)
    # Only tensor values become weights (a folded Python number or shape stays computed).
    _, probe, _ = split_graph(gm.graph, chosen)
    with torch.no_grad():
        probe_values = fx.GraphModule(_root_for(probe, gm), probe)() if chosen else ()
    chosen = [n for n, v in zip(chosen, probe_values)
              if isinstance(v, torch.Tensor) and (views or v.is_contiguous())]
    frozen, fold, _ = _cut(gm, chosen, as_parameters=False)
    return frozen, fold


def _cut(gm: fx.GraphModule, chosen: Sequence[fx.Node],
         as_parameters: bool) -> Tuple[fx.GraphModule, fx.GraphModule, List[str]]:
    """(frozen module, fold module, targets) for the chosen nodes of `gm`: their values computed
    once by the fold and held by the frozen module as buffers or parameters."""
    frozen_graph, fold_graph, targets = split_graph(gm.graph, chosen)
    fold = fx.GraphModule(_root_for(fold_graph, gm), fold_graph)
    root = _root_for(frozen_graph, gm)
    with torch.no_grad():
        values = fold() if targets else ()
    for t, v in zip(targets, values):
        _set(root, t, v.detach().clone().contiguous() if as_parameters else v.detach().clone(), as_parameters)
    return fx.GraphModule(root, frozen_graph), fold, targets


def _permutation_fold(fold: fx.GraphModule, k: int, names: List[str]) -> bool:
    """Whether output `k` of `fold` moves each element of the weights it reads to exactly one place
    (f^T f = I on a random probe): then its transpose inverts it, and gradients map back exactly."""
    probe = {n: torch.randn_like(_fetch(fold, n), dtype=torch.float64) for n in names}
    leaves = {n: v.clone().requires_grad_(True) for n, v in probe.items()}
    with torch.enable_grad():
        outs = torch.func.functional_call(fold, {n: v.to(_fetch(fold, n).dtype) for n, v in leaves.items()}, ())
        out = outs[k]
        if out.numel() != sum(v.numel() for v in probe.values()):
            return False
        back = torch.autograd.grad(out, list(leaves.values()), grad_outputs=out.detach(), allow_unused=True)
    return all(b is not None and torch.allclose(b, p.to(b.dtype), rtol=1e-5, atol=1e-6)
               for b, p in zip(back, probe.values()))


def _attr_reads(graph: fx.Graph) -> Dict[fx.Node, List[str]]:
    """For each node: the get_attr targets it depends on."""
    reads: Dict[fx.Node, List[str]] = {}
    for n in graph.nodes:
        if n.op == "get_attr":
            reads[n] = [n.target]
        else:
            acc: List[str] = []
            for i in n.all_input_nodes:
                acc.extend(t for t in reads.get(i, []) if t not in acc)
            reads[n] = acc
    return reads


class Reparameterized(torch.nn.Module):
    """A graph module whose weight-only data movement was folded into its parameters (training).

    `graph_module` runs the frozen graph; its `_frozen_*` parameters replace the original weights
    named in `origins`. The original names map through `original_state_dict()`,
    `original_grads()` and `load_original_state_dict()`."""

    def __init__(self, graph_module: fx.GraphModule, fold: fx.GraphModule, targets: List[str],
                 origins: Dict[str, List[str]]):
        super().__init__()
        self.graph_module = graph_module
        object.__setattr__(self, "_fold", fold)  # not a submodule: its weights are not trained
        self.targets = list(targets)
        self.origins = origins
        # Checkpoints keep the original model's names and shapes (per-block weights, not the stacks).
        self.register_state_dict_post_hook(Reparameterized._save_as_original)
        self.register_load_state_dict_pre_hook(Reparameterized._load_from_original)

    @staticmethod
    def _save_as_original(module: "Reparameterized", state_dict: Dict[str, Any], prefix: str, local_metadata: Any) -> None:
        inner = prefix + "graph_module."
        for k in [k for k in state_dict if k.startswith(inner)]:
            del state_dict[k]
        for k, v in module.original_state_dict().items():
            state_dict[prefix + k] = v

    @staticmethod
    def _load_from_original(module: "Reparameterized", state_dict: Dict[str, Any], prefix: str, local_metadata: Any,
                            strict: bool, missing_keys: List[str], unexpected_keys: List[str],
                            error_msgs: List[str]) -> None:
        own = {k for k in module.graph_module.state_dict() if not k.startswith(FROZEN_PREFIX)}
        folded = {n for t in module.targets for n in module.origins[t]}
        original = {k[len(prefix):]: state_dict.pop(k) for k in list(state_dict)
                    if k.startswith(prefix) and k[len(prefix):] in own | folded}
        if not original:
            return  # a checkpoint of this module itself
        missing = sorted(folded - set(original))
        if missing:
            error_msgs.append(f"original checkpoint lacks {missing[:3]} (read by folded parameters)")
            return
        with torch.no_grad():
            values = torch.func.functional_call(module._fold, {n: original[n] for n in folded}, ()) if module.targets else ()
        for t, v in zip(module.targets, values):
            state_dict[prefix + "graph_module." + t] = v
        for k, v in original.items():
            if k in own:
                state_dict[prefix + "graph_module." + k] = v

    def forward(self, *args: Any) -> Any:
        return self.graph_module(*args)

    def _unfold(self, values: Sequence[torch.Tensor]) -> Dict[str, torch.Tensor]:
        """The fold's transpose applied to `values` (one per target), by original name."""
        names = sorted({n for t in self.targets for n in self.origins[t]})
        leaves = {n: _fetch(self._fold, n).detach().to(values[0].device).clone().requires_grad_(True) for n in names}
        with torch.enable_grad():
            outs = torch.func.functional_call(self._fold, leaves, ())
            grads = torch.autograd.grad(list(outs), list(leaves.values()), grad_outputs=[v.detach() for v in values],
                                        allow_unused=True)
        return {n: g for n, g in zip(names, grads) if g is not None}

    def original_state_dict(self) -> Dict[str, torch.Tensor]:
        """The weights under their original names (the folded ones mapped back, the others as they are)."""
        out = {k: v.detach() for k, v in self.graph_module.state_dict().items() if not k.startswith(FROZEN_PREFIX)}
        out.update(self._unfold([_fetch(self.graph_module, t) for t in self.targets]))
        return out

    def original_grads(self) -> Dict[str, torch.Tensor]:
        """Gradients under the original names (after backward): what the original model would have."""
        out = {n: p.grad for n, p in self.graph_module.named_parameters()
               if not n.startswith(FROZEN_PREFIX) and p.grad is not None}
        grads = [_fetch(self.graph_module, t).grad for t in self.targets]
        if all(g is not None for g in grads) and grads:
            out.update(self._unfold(grads))
        return out

    def load_original_state_dict(self, state_dict: Dict[str, torch.Tensor]) -> None:
        """Loads a checkpoint of the original model: folded weights are recomputed by the fold."""
        with torch.no_grad():
            params = {n: state_dict[n] for n in {n for t in self.targets for n in self.origins[t]}}
            values = torch.func.functional_call(self._fold, params, ()) if self.targets else ()
            for t, v in zip(self.targets, values):
                _fetch(self.graph_module, t).copy_(v)
            own = self.graph_module.state_dict()
            for k, v in state_dict.items():
                if k in own and not k.startswith(FROZEN_PREFIX):
                    own[k].copy_(v)


def reparameterize(gm: fx.GraphModule) -> Reparameterized:
    """For training: each weight-only value whose fold is pure data movement of weights no other
    part of the graph reads becomes a parameter (see Reparameterized); other folds stay computed."""
    folded = weight_only_nodes(gm.graph)
    candidates = boundary(gm.graph, folded)
    reads = _attr_reads(gm.graph)
    # Weights an unfolded node reads directly stay what they are: folding them too would train two copies.
    direct = {t for n in gm.graph.nodes if n not in folded for i in n.all_input_nodes if i.op == "get_attr"
              for t in [i.target]}
    _, probe_fold, _ = split_graph(gm.graph, candidates)
    probe_module = fx.GraphModule(_root_for(probe_fold, gm), probe_fold)
    claimed: Dict[str, int] = {}
    for n in candidates:
        for t in reads[n]:
            claimed[t] = claimed.get(t, 0) + 1
    chosen = []
    for k, n in enumerate(candidates):
        names = reads[n]
        if not names or any(t in direct or claimed[t] > 1 for t in names):
            continue
        # Only trained weights: a fold of buffers (running statistics, masks) stays what it is.
        if not all(isinstance(_fetch(gm, t), torch.nn.Parameter) and _fetch(gm, t).is_floating_point() for t in names):
            continue
        if _permutation_fold(probe_module, k, names):
            chosen.append(n)
    frozen, fold, targets = _cut(gm, chosen, as_parameters=True)
    origins = {t: list(reads[n]) for t, n in zip(targets, chosen)}
    return Reparameterized(frozen, fold, targets, origins)
