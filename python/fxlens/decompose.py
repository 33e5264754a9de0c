# SPDX-License-Identifier: MIT
"""What PyTorch runs for calls it defines in Python, recorded at export.

fxlens' executor is LibTorch: it runs ATen operators. A call to a function PyTorch writes in Python
(``torch.nn.functional.interpolate``, ``F.softmin``, ``F.cross_entropy``, ``torch.tensordot(dims=)``,
``torch.cdist``, ``torch.block_diag``, ``Tensor.__rsub__``, ``Tensor.unique_consecutive``...) has no
ATen operator of that name, or one with another signature. The exporter therefore traces each such
call, on fake tensors of the node's recorded shapes, into the ATen ops it runs (``make_fx``) and keeps
that graph in the node's meta ("decomposition", docs/FORMAT.md); the executor runs it when the call
itself does not run. The mechanism is PyTorch's own tracing: a new function of the same kind needs no
code. Calls whose result depends on data (``nonzero``, ``unique``) cannot be traced this way and keep
no decomposition.
"""
from __future__ import annotations

import inspect
import operator
import warnings
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.fx as fx

META_KEY = "fxlens_decomposition"


def _python_defined(fn: Any) -> bool:
    fn = inspect.unwrap(fn) if callable(fn) else fn
    return inspect.isfunction(fn) or inspect.ismethod(fn)


def _no_aten_op(name: str) -> bool:
    return not hasattr(torch.ops.aten, name.rstrip("_") if not name.startswith("__") else name)


def _tensor_valued(node: fx.Node) -> bool:
    """The node's recorded value is a tensor or a non-empty sequence of them (read from the meta,
    nothing allocated: ShapeProp's TensorMetadata counts as a tensor)."""
    def one(v: Any) -> bool:
        return isinstance(v, torch.Tensor) or (hasattr(v, "shape") and hasattr(v, "stride") and hasattr(v, "dtype"))
    m = node.meta
    v = next((m[k] for k in ("val", "example_value", "tensor_meta") if k in m), None)
    return one(v) or (isinstance(v, (list, tuple)) and bool(v) and all(one(x) for x in v))


def wants_decomposition(node: fx.Node) -> bool:
    """Calls PyTorch defines in Python (functions, Tensor methods and properties, reflected
    operators), and torch calls or Tensor methods with no ATen operator of their name; not ATen ops,
    Python operators or calls that give no tensor."""
    if node.op == "call_function":
        t = node.target
        if isinstance(t, (torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator)):
            return False
        if t is getattr:  # a tensor property computed by PyTorch (x.mH, x.H, x.real)
            return (len(node.args) == 2 and isinstance(node.args[1], str) and isinstance(node.args[0], fx.Node)
                    and isinstance(_value(node.args[0].meta), torch.Tensor) and _tensor_valued(node))
        if getattr(t, "__module__", None) in ("_operator", "operator", "builtins", "math") or t is operator.getitem:
            return False
        module = getattr(inspect.unwrap(t), "__module__", "") or ""
        if not module.startswith("torch") or not _tensor_valued(node):
            return False
        return _python_defined(t) or _no_aten_op(getattr(t, "__name__", ""))
    if node.op == "call_method":
        name = str(node.target)
        method = getattr(torch.Tensor, name, None)
        if method is None or not _tensor_valued(node):
            return False
        return _python_defined(method) or _no_aten_op(name)
    return False


def _value(meta: Dict[str, Any]) -> Any:
    for key in ("val", "example_value"):
        if key in meta:
            return meta[key]
    return _from_tensor_meta(meta.get("tensor_meta"))


def _from_tensor_meta(tm: Any) -> Any:
    """ShapeProp's TensorMetadata (or a sequence of them, for calls returning several tensors)."""
    if tm is None:
        return None
    if hasattr(tm, "shape") and hasattr(tm, "stride"):
        try:
            return torch.empty_strided(tuple(tm.shape), tuple(tm.stride), dtype=tm.dtype)
        except RuntimeError:  # quantized and sparse values have no plain tensor to stand for them
            return None
    if isinstance(tm, (list, tuple)):
        return type(tm)(_from_tensor_meta(x) for x in tm) if not hasattr(tm, "_fields") else None
    return None


def _example(v: Any) -> Any:
    """A real tensor with the layout of `v` (a FakeTensor or tensor meta): make_fx fakes it again.
    Numbers and sequences of numbers (sizes: x.shape[-2:]) are the recorded values themselves."""
    if isinstance(v, torch.Tensor):
        if any(not isinstance(d, int) for d in v.shape):
            raise ValueError("symbolic shape")
        return torch.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype)
    if isinstance(v, (int, float, bool)) or (isinstance(v, (tuple, list)) and all(isinstance(x, int) for x in v)):
        return v
    raise ValueError(f"input of kind {type(v).__name__}")


def _key(node: fx.Node, examples: List[Any]) -> Tuple:
    def sig(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return ("T", tuple(x.shape), tuple(x.stride()), str(x.dtype))
        return ("V", repr(x))
    spec = fx.map_arg((node.args, node.kwargs), lambda n: ("node", n.name))
    return (node.op, str(node.target), repr(spec), tuple(sig(e) for e in examples))


def trace_call(node: fx.Node) -> Optional[fx.GraphModule]:
    """The call `node` makes, traced on fake inputs of its recorded values into ATen ops; None when
    it cannot be (unknown input values, data-dependent results, constants created inside)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    inputs = node.all_input_nodes
    examples = [_example(_value(i.meta)) for i in inputs]
    # Tensors are the decomposition's placeholders; numbers and sizes are the values recorded for
    # them (static shapes: they follow from the tensors' shapes, which the executor checks).
    fixed = {i: e for i, e in zip(inputs, examples) if not isinstance(e, torch.Tensor)}
    tensor_inputs = [i for i in inputs if i not in fixed]
    examples = [e for e in examples if isinstance(e, torch.Tensor)]

    def call(*values: Any) -> Any:
        env = dict(fixed)
        env.update(zip(tensor_inputs, values))
        args = fx.map_arg(node.args, lambda n: env[n])
        kwargs = fx.map_arg(node.kwargs, lambda n: env[n])
        if node.op == "call_method":
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        return node.target(*args, **kwargs)

    from torch._subclasses.fake_tensor import FakeTensorMode
    # A fake mode of its own, static shapes, outside any compile in progress (compile_backend runs
    # inside Dynamo, whose tracing context and shape environment must not see these tensors).
    with warnings.catch_warnings(), torch._guards.tracing(None):
        warnings.simplefilter("ignore")
        mode = FakeTensorMode()
        fakes = [mode.from_tensor(e, static_shapes=True) if isinstance(e, torch.Tensor) else e for e in examples]
        try:
            with mode:
                gm = make_fx(call, tracing_mode="real")(*fakes)
        except Exception:
            # A result whose size depends on the data (unique): traced on real values, kept only when
            # it is one ATen call on the inputs (nothing after it could have fixed a size).
            real = [torch.zeros_like(e) if isinstance(e, torch.Tensor) else e for e in examples]
            gm = make_fx(call, tracing_mode="real")(*real)
            calls = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
            if len(calls) != 1 or any(a.op != "placeholder" for a in calls[0].all_input_nodes):
                return None
    if any(n.op == "get_attr" for n in gm.graph.nodes):
        return None  # a constant made inside the call: not kept in the file
    if not any(n.op == "call_function" for n in gm.graph.nodes):
        return gm  # the call returns its input (dropout in eval): still a valid decomposition
    return gm


def record_decompositions(graph: fx.Graph) -> int:
    """Stores, in meta[META_KEY], the traced ATen graph of every call PyTorch defines in Python
    (see the module's documentation). Identical calls on identical shapes are traced once.
    Returns the number of nodes that got one."""
    cache: Dict[Tuple, Optional[fx.GraphModule]] = {}
    count = 0
    for node in graph.nodes:
        if not wants_decomposition(node):
            continue
        try:
            examples = [_example(_value(i.meta)) for i in node.all_input_nodes]
            key = _key(node, examples)
        except Exception:
            continue
        if key not in cache:
            try:
                cache[key] = trace_call(node)
            except Exception:
                cache[key] = None
        if cache[key] is not None:
            node.meta[META_KEY] = cache[key]
            count += 1
    return count


def decomposition_json(gm: fx.GraphModule) -> Dict[str, Any]:
    """The file's form of a decomposition: a graph document (placeholders = the node's tensor inputs)."""
    from .graph_format import graph_to_dict
    data = graph_to_dict(gm.graph, None, name="decomposition", ir="aten", source="make_fx")
    for key in ("modules", "params"):
        data.pop(key, None)
    for n in data["nodes"]:
        n["meta"].pop("stack_trace", None)
        n["meta"].pop("nn_module_stack", None)
        n["meta"].pop("source_fn", None)
    return data
