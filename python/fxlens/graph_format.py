# SPDX-License-Identifier: MIT
"""Encoding of torch.fx graphs in the fxlens graph format (docs/FORMAT.md) and back.

The writer accepts graphs from ``torch.fx.symbolic_trace`` (+ ShapeProp), Dynamo (``torch.compile``)
and ``torch.export`` (ATen IR). The reader rebuilds a runnable ``torch.fx.GraphModule``.
"""
from __future__ import annotations

import builtins
import gzip
import importlib
import json
import math
import operator
import os
import re
from typing import Any, Dict, List, Optional, Sequence

import torch
import torch.fx as fx

FORMAT_NAME = "fxlens-graph"
FORMAT_VERSION = 1

# Every dtype torch has, by its torch name (docs/FORMAT.md, "Dtypes"); the C++ reader knows the same.
DTYPE_NAMES = (
    "float64", "float32", "float16", "bfloat16", "complex32", "complex64", "complex128",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
    "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
)
_DTYPES = {getattr(torch, n): n for n in DTYPE_NAMES if isinstance(getattr(torch, n, None), torch.dtype)}
_DTYPE_BY_NAME = {v: k for k, v in _DTYPES.items()}


def dtype_name(dtype: torch.dtype) -> str:
    """The graph format's name of a torch dtype ("float32")."""
    return _DTYPES.get(dtype, str(dtype).replace("torch.", ""))


class FormatError(ValueError):
    """A graph file that cannot be read, with the file and node named in the message."""


# ----------------------------------------------------------------------------------------- targets

def target_name(target: Any) -> str:
    """Canonical, importable name of a call_function target ("torch.cat", "aten.cat.default")."""
    if isinstance(target, str):
        return target
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.cat.default
    if isinstance(target, torch._ops.OpOverloadPacket):
        return str(target)
    name = getattr(target, "__name__", None)
    if name and getattr(torch._C, name, None) is target:
        # pybind functions report a mangled __module__ (pybind11_detail_function_record_...).
        return f"torch._C.{name}"
    if name:
        # Prefer the public spelling users write: torch.split rather than torch.functional.split.
        for prefix, mod in (("torch", torch), ("torch.nn.functional", torch.nn.functional),
                            ("operator", operator), ("math", math), ("builtins", builtins)):
            if getattr(mod, name, None) is target:
                return f"{prefix}.{name}"
        module = getattr(target, "__module__", None)
        if module:
            return f"{module}.{getattr(target, '__qualname__', name)}"
    return repr(target)


# Namespaces a graph file may name as call targets (a file never becomes running code: anything else is
# refused unless the caller trusts the file). Inside torch, the parts that read or write files, load
# code or start processes are refused too.
_ALLOWED_ROOTS = ("torch.", "operator.", "_operator.", "math.", "torchvision.ops.", "aten.", "prims.")
_ALLOWED_BUILTINS = {"builtins." + n for n in ("getattr", "len", "int", "float", "bool", "min", "max", "abs", "round",
                                               "range", "slice", "tuple", "list", "sum", "pow", "divmod", "isinstance")}
_REFUSED_IN_TORCH = ("torch.load", "torch.save", "torch.hub", "torch.serialization", "torch.package", "torch.utils",
                     "torch.jit", "torch.compile", "torch.distributed", "torch.multiprocessing", "torch.backends",
                     "torch._dynamo", "torch._inductor", "torch.cuda.memory", "torch.fx", "torch.library",
                     "torch.ops.load_library", "torch.classes", "torch._C._jit", "torch.autograd.graph",
                     "torch.testing", "torch.onnx", "torch.export", "torch._export", "torch.overrides")


def target_allowed(name: str) -> bool:
    """Whether a graph file may name `name` as a call target without being trusted."""
    if name in _ALLOWED_BUILTINS:
        return True
    if not name.startswith(_ALLOWED_ROOTS):
        return False
    if any(part.startswith("__") for part in name.split(".")):
        return False
    return not any(name == r or name.startswith(r + ".") for r in _REFUSED_IN_TORCH)


def custom_operator_kernel(target: Any) -> Optional[str]:
    """For a custom operator (an op of torch.ops outside aten/prims): "cpp" when a C++ library
    registered its CPU or composite kernel (torchvision), "python" when only Python did
    (torch.library.custom_op); None for other targets."""
    if not isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return None
    name = target._schema.name if isinstance(target, torch._ops.OpOverload) else f"{target._qualified_op_name}"
    if name.split("::")[0] in ("aten", "prims", "_c10d_functional", "c10d_functional", "higher_order", "_quantized"):
        return None
    try:
        dump = torch._C._dispatch_dump(name)
    except RuntimeError:
        return None
    kernels = [line for line in dump.splitlines()
               if line.startswith(("CPU:", "CUDA:", "CompositeExplicitAutograd", "CompositeImplicitAutograd"))]
    if not kernels:
        return None
    return "python" if all(".py:" in line for line in kernels) else "cpp"


def _custom_operator(name: str) -> Any:
    """torch.ops.<ns>.<op>[.<overload>] for `ns.op[.overload]` (a custom operator, torch.library)."""
    ns, op, *overload = name.split(".")
    try:
        packet = getattr(getattr(torch.ops, ns), op)
        return getattr(packet, overload[0]) if overload else packet
    except (AttributeError, RuntimeError):
        raise FormatError(f"custom operator {ns}::{op} is not registered in this Python process: import the library "
                          "that defines it (torch.library) before loading the graph") from None


def resolve_target(name: str, allow_any: bool = False, allow_namespaces: Sequence[str] = ()) -> Any:
    """Inverse of :func:`target_name`. Names outside the allowed namespaces are refused unless
    `allow_any` (a trusted file); custom operators (`ns.op.overload`) of `allow_namespaces` resolve
    through torch.ops."""
    if "pybind11_detail_function_record" in name and name.endswith("_log_api_usage_once"):
        name = "torch._C._log_api_usage_once"  # files written before the spelling was fixed
    if name.split(".")[0] in allow_namespaces and name.count(".") in (1, 2):
        return _custom_operator(name)
    if not allow_any and not target_allowed(name):
        ns = name.split(".")[0]
        hint = (f"; a custom operator of namespace '{ns}' runs with allow_namespaces=['{ns}']"
                if name.count(".") == 2 else "")
        raise FormatError(f"target '{name}' is outside the namespaces a graph file may call (torch, operator, "
                          f"math, torchvision.ops); refused{hint}. Pass allow_any_target=True only for a file you trust")
    if name.startswith("prims."):
        parts = name.split(".")
        obj: Any = torch.ops.prims
        for p in parts[1:]:
            obj = getattr(obj, p)
        return obj
    if name.startswith("aten."):
        parts = name.split(".")
        obj: Any = torch.ops.aten
        for p in parts[1:]:
            obj = getattr(obj, p)
        return obj
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
            return obj
        except AttributeError:
            break
    raise FormatError(f"cannot resolve target '{name}'")


# ----------------------------------------------------------------------------------------- values

def _tensor_json(shape, dtype, stride, requires_grad) -> Dict[str, Any]:
    out: Dict[str, Any] = {"shape": [d if isinstance(d, int) else str(d) for d in shape],
                           "dtype": dtype_name(dtype)}
    if stride is not None and all(isinstance(s, int) for s in stride):
        out["stride"] = list(stride)
    out["requires_grad"] = bool(requires_grad)
    return {"tensor": out}


def encode_value_meta(v: Any) -> Any:
    """Meta of a node's value: tensor, sequence of values, scalar, or None when unknown."""
    if v is None:
        return None
    if isinstance(v, torch.Tensor):
        shape = [s if isinstance(s, int) else (int(s) if getattr(s, "node", None) is not None and s.node.is_constant() else str(s)) for s in v.shape]
        try:
            stride = [int(s) for s in v.stride()]
        except Exception:
            stride = None
        return _tensor_json(shape, v.dtype, stride, v.requires_grad)
    # torch.fx.passes.shape_prop.TensorMetadata
    if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "stride") and hasattr(v, "memory_format"):
        return _tensor_json([int(s) for s in v.shape], v.dtype, list(v.stride), v.requires_grad)
    if isinstance(v, (list, tuple)):
        return {"seq": [encode_value_meta(x) for x in v]}
    if isinstance(v, bool) or isinstance(v, int) or isinstance(v, float):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return {"scalar": v}
    if isinstance(v, torch.SymInt):
        return {"scalar": str(v)}
    return None


def encode_arg(a: Any) -> Any:
    if isinstance(a, fx.Node):
        return {"node": a.name}
    if a is None or isinstance(a, (bool, str)):
        return a
    if isinstance(a, int):
        return a
    if isinstance(a, float):
        if math.isnan(a):
            return {"float": "nan"}
        if math.isinf(a):
            return {"float": "inf" if a > 0 else "-inf"}
        return a
    if isinstance(a, tuple):
        return {"tuple": [encode_arg(x) for x in a]}
    if isinstance(a, list):
        return [encode_arg(x) for x in a]
    if isinstance(a, dict):
        return {"dict": {str(k): encode_arg(v) for k, v in a.items()}}
    if isinstance(a, slice):
        return {"slice": [encode_arg(a.start), encode_arg(a.stop), encode_arg(a.step)]}
    if isinstance(a, torch.dtype):
        return {"dtype": dtype_name(a)}
    if isinstance(a, torch.device):
        return {"device": str(a)}
    if isinstance(a, torch.layout):
        return {"layout": str(a).replace("torch.", "")}
    if isinstance(a, torch.memory_format):
        return {"memory_format": str(a).replace("torch.", "")}
    if a is Ellipsis:
        return {"opaque": "Ellipsis"}
    return {"opaque": repr(a)}


def decode_arg(a: Any, env: Dict[str, fx.Node], where: str) -> Any:
    if isinstance(a, list):
        return [decode_arg(x, env, where) for x in a]
    if not isinstance(a, dict):
        return a
    if len(a) != 1:
        raise FormatError(f"{where}: tagged argument must have one key, found {sorted(a)}")
    (tag, v), = a.items()
    if tag == "node":
        if v not in env:
            raise FormatError(f"{where}: references unknown node '{v}'")
        return env[v]
    if tag == "tuple":
        return tuple(decode_arg(x, env, where) for x in v)
    if tag == "dict":
        return {k: decode_arg(x, env, where) for k, x in v.items()}
    if tag == "slice":
        return slice(*(decode_arg(x, env, where) for x in v))
    if tag == "float":
        return float(v)
    if tag == "dtype":
        return _DTYPE_BY_NAME[v] if v in _DTYPE_BY_NAME else getattr(torch, v)
    if tag == "device":
        return torch.device(v)
    if tag in ("layout", "memory_format"):
        return getattr(torch, v)
    if tag == "opaque" and v == "Ellipsis":
        return Ellipsis
    if tag == "opaque":
        raise FormatError(f"{where}: argument {v} cannot be rebuilt in Python")
    raise FormatError(f"{where}: unknown argument tag '{tag}'")


# ----------------------------------------------------------------------------------------- module paths

_DYNAMO_PATH = re.compile(r"\[(?:'([^']*)'|(\d+))\]")


def normalize_module_path(path: str) -> str:
    """Dynamo spells module paths as "L['self']._modules['blocks']._modules['0']" or
    "L['self'].blocks[0]"; fxlens uses "blocks.0"."""
    p = path
    for prefix in ("L['self']", "L__self__", "self"):
        if p.startswith(prefix):
            p = p[len(prefix):]
            break
    p = _DYNAMO_PATH.sub(lambda m: "." + (m.group(1) or m.group(2)), p)
    parts = [s for s in p.split(".") if s and s not in ("_modules", "_parameters", "_buffers")]
    return ".".join(parts)


def _type_name(t: Any) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, type):
        return f"{t.__module__}.{t.__qualname__}"
    return str(t)


def _module_stack(node: fx.Node) -> List[Dict[str, str]]:
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return []
    out = []
    for key, value in stack.items():
        path, typ = value if isinstance(value, (tuple, list)) else (value, "")
        out.append({"key": str(key), "path": normalize_module_path(str(path)), "type": _type_name(typ)})
    return out


# ----------------------------------------------------------------------------------------- writer

def _node_json(node: fx.Node) -> Dict[str, Any]:
    if node.op == "call_function":
        target = target_name(node.target)
    else:
        target = str(node.target)
    meta: Dict[str, Any] = {}
    val = None
    for key in ("val", "example_value"):
        if key in node.meta:
            val = encode_value_meta(node.meta[key])
            break
    if val is None and "tensor_meta" in node.meta:
        val = encode_value_meta(node.meta["tensor_meta"])
    if val is not None and node.op != "output":
        meta["val"] = val
    stack = _module_stack(node)
    if stack:
        meta["nn_module_stack"] = stack
    if node.meta.get("stack_trace"):
        meta["stack_trace"] = node.meta["stack_trace"]
    sfs = node.meta.get("source_fn_stack")
    if sfs:
        name, fn = sfs[-1]
        meta["source_fn"] = [str(name), fn if isinstance(fn, str) else target_name(fn)]
    kind = custom_operator_kernel(node.target) if node.op == "call_function" else None
    if kind:
        meta["custom_op"] = kind
    traced = node.meta.get("fxlens_decomposition")  # fxlens.decompose.record_decompositions
    if traced is not None:
        from .decompose import decomposition_json
        meta["decomposition"] = decomposition_json(traced)
    return {"name": node.name, "op": node.op, "target": target,
            "args": [encode_arg(a) for a in node.args],
            "kwargs": {k: encode_arg(v) for k, v in node.kwargs.items()}, "meta": meta}


# Attributes the executor reads that some torch.nn modules do not declare as constants.
_EXTRA_ATTRS = ("inplace", "training", "p", "embed_dim", "num_heads", "batch_first", "min_val", "max_val",
                "negative_slope", "alpha", "beta", "threshold", "num_groups", "dim")


def _module_attrs(mod: torch.nn.Module) -> Dict[str, Any]:
    """A module's declared constants (``__constants__``: stride, padding, eps, ...) that JSON can hold;
    fxlens' executor needs them to run call_module nodes."""
    out = {}
    for k in list(getattr(type(mod), "__constants__", [])) + [k for k in _EXTRA_ATTRS if k in vars(mod)]:
        v = getattr(mod, k, None)
        if isinstance(v, (bool, int, float, str, type(None))) or (
                isinstance(v, (tuple, list)) and all(isinstance(x, (int, float, bool)) for x in v)):
            out[k] = encode_arg(v)
    return out


def module_entries(root: torch.nn.Module) -> List[Dict[str, Any]]:
    """The module hierarchy of `root` as format entries: path, type and constants."""
    out = []
    for path, mod in root.named_modules():
        entry = {"path": path, "type": _type_name(type(mod))}
        attrs = _module_attrs(mod)
        if attrs:
            entry["attrs"] = attrs
        out.append(entry)
    return out


def graph_to_dict(graph: fx.Graph, root: Optional[torch.nn.Module] = None, *, name: str = "", ir: str = "torch",
                  source: str = "", weights: Optional[str] = None) -> Dict[str, Any]:
    modules = []
    params = []
    if root is not None:
        modules = module_entries(root)
        seen = set()
        for pname, p in root.named_parameters(remove_duplicate=False):
            if pname in seen:
                continue
            seen.add(pname)
            params.append({"name": pname, "kind": "parameter", "shape": list(p.shape),
                           "dtype": dtype_name(p.dtype), "requires_grad": bool(p.requires_grad)})
        for bname, b in root.named_buffers(remove_duplicate=False):
            if bname in seen:
                continue
            seen.add(bname)
            params.append({"name": bname, "kind": "buffer", "shape": list(b.shape),
                           "dtype": dtype_name(b.dtype), "requires_grad": False})
        # get_attr of constants that are neither parameters nor buffers (e.g. _tensor_constant0).
        for node in graph.nodes:
            if node.op == "get_attr" and node.target not in seen:
                try:
                    obj = _fetch_attr(root, node.target)
                except AttributeError:
                    continue
                if isinstance(obj, torch.Tensor):
                    seen.add(node.target)
                    params.append({"name": node.target, "kind": "buffer", "shape": list(obj.shape),
                                   "dtype": dtype_name(obj.dtype), "requires_grad": False})
    out = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "name": name, "ir": ir, "source": source}
    if weights:
        out["weights"] = weights
    out["modules"] = modules
    out["params"] = params
    out["nodes"] = [_node_json(n) for n in graph.nodes]
    return out


def write_dict(data: Dict[str, Any], path: str) -> None:
    """Writes one node per line (the layout fxlens itself writes), gzip-compressed for *.gz paths."""
    head = {k: v for k, v in data.items() if k != "nodes"}
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',\n"nodes": [\n'
    text += ",\n".join(json.dumps(n, separators=(",", ":"), allow_nan=False) for n in data["nodes"])
    text += "\n]}\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def read_dict(path: str) -> Dict[str, Any]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise FormatError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    if data.get("format") != FORMAT_NAME:
        raise FormatError(f"{path}: not an fxlens graph file")
    if data.get("version") != FORMAT_VERSION:
        raise FormatError(f"{path}: unsupported schema version {data.get('version')}")
    return data


# ----------------------------------------------------------------------------------------- reader

def _fetch_attr(root: torch.nn.Module, target: str) -> Any:
    obj: Any = root
    for p in target.split("."):
        obj = getattr(obj, p)
    return obj


def dict_to_graph(data: Dict[str, Any], where: str = "<graph>", allow_any_target: bool = False,
                  known_targets: Optional[Dict[str, Any]] = None, allow_namespaces: Sequence[str] = ()) -> fx.Graph:
    """An fx.Graph from a graph file's data. `known_targets` (name -> callable) resolves call targets
    first: the objects of the graph the data was made from in this process (any function Dynamo
    captured, not only the namespaces a file may name)."""
    graph = fx.Graph()
    known_targets = known_targets or {}
    env: Dict[str, fx.Node] = {}
    for jn in data["nodes"]:
        name = jn["name"]
        loc = f"{where}: node '{name}'"
        op = jn["op"]
        args = tuple(decode_arg(a, env, loc) for a in jn.get("args", []))
        kwargs = {k: decode_arg(v, env, loc) for k, v in jn.get("kwargs", {}).items()}
        if op not in ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output"):
            raise FormatError(f"{loc}: unknown op kind '{op}'")
        try:
            if op != "call_function":
                target = jn["target"]
            elif jn["target"] in known_targets:
                target = known_targets[jn["target"]]
            else:
                target = resolve_target(jn["target"], allow_any_target, allow_namespaces)
        except FormatError as e:
            raise FormatError(f"{loc}: {e}") from None
        node = graph.create_node(op, target, args, kwargs, name=name)
        if node.name != name:
            raise FormatError(f"{loc}: name is not a valid Python identifier here (became '{node.name}')")
        env[name] = node
    graph.lint()
    return graph
