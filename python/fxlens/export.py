# SPDX-License-Identifier: MIT
"""Export FX graphs from torch.fx, torch.compile (Dynamo) and torch.export to fxlens files, and load
them back into runnable GraphModules.

Every exported graph has the same calling convention: placeholders are the model's inputs, and
parameters, buffers and constant tensors are ``get_attr`` nodes named by their qualified name. Their
shapes/dtypes are in the file; their values optionally in a safetensors side file.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch
import torch.fx as fx

from .freeze import FROZEN_PREFIX
from .graph_format import (FormatError, _fetch_attr, _type_name, module_entries, dict_to_graph, graph_to_dict,
                           normalize_module_path, read_dict, write_dict)

__all__ = ["export_graph_module", "export_module", "export_program", "compile_backend", "capture_post_grad",
           "load_graph", "weights_path_for", "inputs_path_for", "load_weights_file", "load_inputs"]


def weights_path_for(path: str) -> str:
    """graph.json / graph.json.gz -> graph.safetensors"""
    base = path[:-3] if path.endswith(".gz") else path
    base = base[:-5] if base.endswith(".json") else base
    return base + ".safetensors"


def inputs_path_for(path: str) -> str:
    """graph.json / graph.json.gz -> graph.inputs.safetensors"""
    return weights_path_for(path)[:-len(".safetensors")] + ".inputs.safetensors"


# The dtypes safetensors has a code for (docs/FORMAT.md, "Dtypes"); fxlens-cli reads and writes the same.
_SAFETENSORS_DTYPES = {getattr(torch, n) for n in (
    "float64", "float32", "float16", "bfloat16", "complex64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float4_e2m1fn_x2") if isinstance(getattr(torch, n, None), torch.dtype)}


def _check_storable(tensors: Dict[str, Any], path: str) -> None:
    """Refuses (FormatError naming the tensor and its dtype) what safetensors cannot hold, before
    any file is written."""
    for k, v in tensors.items():
        if not isinstance(v, torch.Tensor):
            continue
        d = str(v.dtype).replace("torch.", "")
        why = None
        if v.layout != torch.strided:
            why = f"a {str(v.layout).replace('torch.', '')} tensor: safetensors holds dense tensors (.to_dense())"
        elif v.dtype in (torch.complex32, torch.complex128):
            why = (f"safetensors has no code for {d} (its one complex code is C64): convert it with "
                   ".to(torch.complex64), or store torch.view_as_real(t)")
        elif v.is_quantized:
            why = (f"safetensors has no code for {d} (a quantized dtype): store t.dequantize(), or t.int_repr() "
                   "with its scale and zero point")
        elif v.dtype not in _SAFETENSORS_DTYPES:
            why = f"safetensors has no code for {d}"
        elif v.dim() == 0 and d == "float4_e2m1fn_x2":
            why = "a 0-dim float4_e2m1fn_x2 has no safetensors shape"
        if why:
            raise FormatError(f"{path}: cannot save '{k}' ({d}): {why}; nothing was written")


def _save_weights(tensors: Dict[str, torch.Tensor], path: str) -> str:
    """Writes tensors by name; tied tensors (one storage, same view) are stored once and the other
    names recorded in the metadata ("fxlens.aliases"), which fxlens and load_graph resolve."""
    import json
    from safetensors.torch import save_file
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    stored: Dict[str, torch.Tensor] = {}
    aliases: Dict[str, str] = {}
    seen: Dict[Any, str] = {}
    for k, v in tensors.items():
        v = v.detach()
        key = None
        if v.numel() > 0 and v.layout == torch.strided and v.device.type != "meta":
            key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape), tuple(v.stride()), v.dtype)
        if key is not None and key in seen:
            aliases[k] = seen[key]
            continue
        if key is not None:
            seen[key] = k
        # safetensors refuses shared storage and non-contiguous tensors: store independent copies.
        stored[k] = v.cpu().contiguous().clone()
    save_file(stored, path, metadata={"fxlens.aliases": json.dumps(aliases)} if aliases else None)
    return path


def _save_inputs(values: Sequence[Any], path: str) -> Optional[str]:
    """The example inputs as input:<i> (placeholder order); non-tensor inputs are left out (the
    executor then uses the placeholder's default)."""
    from safetensors.torch import save_file
    tensors = {f"input:{i}": v.detach().cpu().contiguous().clone() for i, v in enumerate(values)
               if isinstance(v, torch.Tensor)}
    if not tensors:
        return None
    save_file(tensors, path)
    return path


def load_weights_file(path: str) -> Dict[str, torch.Tensor]:
    """Reads a weights file written by fxlens (tied weights resolved)."""
    import json
    from safetensors import safe_open
    out: Dict[str, torch.Tensor] = {}
    with safe_open(path, framework="pt") as f:
        for k in f.keys():
            out[k] = f.get_tensor(k)
        meta = f.metadata() or {}
    for alias, src in json.loads(meta.get("fxlens.aliases", "{}")).items():
        if src in out:
            out[alias] = out[src]
    return out


class _ParamHolder(torch.nn.Module):
    """A root module that owns parameters/buffers under their qualified names."""


def _set_attr(root: torch.nn.Module, qualname: str, value: torch.Tensor, as_param: bool) -> None:
    *path, leaf = qualname.split(".")
    mod = root
    for p in path:
        if not hasattr(mod, p):
            mod.add_module(p, _ParamHolder())
        mod = getattr(mod, p)
    if as_param and isinstance(value, torch.nn.Parameter):
        mod.register_parameter(leaf, value)  # the model's own parameter: its gradients land there
    elif as_param:
        mod.register_parameter(leaf, torch.nn.Parameter(value, requires_grad=value.is_floating_point()))
    else:
        mod.register_buffer(leaf, value)


def _modules_from_meta(graph: fx.Graph) -> List[Dict[str, str]]:
    seen: Dict[str, str] = {"": "root"}
    for node in graph.nodes:
        for value in (node.meta.get("nn_module_stack") or {}).values():
            path, typ = value if isinstance(value, (tuple, list)) else (value, "")
            p = normalize_module_path(str(path))
            if p and p not in seen:
                seen[p] = _type_name(typ)
            # Parents of a path are modules too.
            while "." in p:
                p = p.rsplit(".", 1)[0]
                seen.setdefault(p, "")
    return [{"path": p, "type": t} for p, t in sorted(seen.items())]


def _fold_path_for(path: str) -> str:
    """graph.json / graph.json.gz -> graph.fold.json"""
    return weights_path_for(path)[:-len(".safetensors")] + ".fold.json"


def _write(graph: fx.Graph, root: torch.nn.Module, path: str, *, name: str, ir: str, source: str,
           weights: bool, modules: Optional[List[Dict[str, str]]] = None,
           inputs: Optional[Sequence[Any]] = None, freeze: bool = False) -> str:
    if weights and inputs is not None:
        _check_storable({f"input:{i}": v for i, v in enumerate(inputs)}, path)
    if freeze:
        # The frozen graph (weight-only values as new weights) and its fold graph, which computes
        # them from the original weights (fxlens-cli optimize --freeze writes the same pair).
        from .freeze import freeze as _freeze
        if not weights:
            raise FormatError(f"{path}: freeze=True needs weights=True (the frozen values are weights)")
        frozen, fold = _freeze(fx.GraphModule(root, graph), views=False)  # what a file holds exactly
        fold_path = _fold_path_for(path)
        if any(n.op == "get_attr" and n.target.startswith(FROZEN_PREFIX) for n in frozen.graph.nodes):
            _write(fold.graph, fold, fold_path, name=(name or "graph") + ".fold", ir=ir, source=source, weights=True)
        else:
            fold_path = None
        _write(frozen.graph, frozen, path, name=name, ir=ir, source=source, weights=True, modules=modules,
               inputs=inputs)
        if fold_path:
            data = read_dict(path)
            data["fold"] = os.path.basename(fold_path)
            write_dict(data, path)
        return path
    wpath = None
    if weights:
        tensors = {}
        for node in graph.nodes:
            if node.op == "get_attr":
                obj = _fetch_attr(root, node.target)
                if isinstance(obj, torch.Tensor):
                    tensors[node.target] = obj
        # Every name of a tied tensor (the file stores it once, see _save_weights).
        for pname, p in list(root.named_parameters(remove_duplicate=False)) + list(root.named_buffers(remove_duplicate=False)):
            tensors.setdefault(pname, p)
        _check_storable(tensors, path)
        wpath = _save_weights(tensors, weights_path_for(path))
    if ir == "torch":  # calls PyTorch defines in Python: the ATen ops they ran (fxlens.decompose)
        from .decompose import record_decompositions
        record_decompositions(graph)
    data = graph_to_dict(graph, root, name=name, ir=ir, source=source,
                         weights=os.path.basename(wpath) if wpath else None)
    if weights and inputs is not None:
        ipath = _save_inputs(inputs, inputs_path_for(path))
        if ipath:
            data["inputs"] = os.path.basename(ipath)
    if modules is not None:
        data["modules"] = modules
    write_dict(data, path)
    return path


def export_graph_module(gm: fx.GraphModule, path: str, *, name: str = "", ir: str = "torch",
                        source: str = "fx", weights: bool = False, freeze: bool = False) -> str:
    """Writes an existing GraphModule (shapes come from node.meta: val, example_value or tensor_meta).
    `freeze` (needs `weights`): weight-only nodes become weights, see fxlens.freeze."""
    return _write(gm.graph, gm, path, name=name or type(gm).__name__, ir=ir, source=source, weights=weights,
                  freeze=freeze)


def _is_transformers_model(module: torch.nn.Module) -> bool:
    return any(c.__module__.startswith("transformers.") for c in type(module).__mro__)


def _trace(module: torch.nn.Module, example_inputs: Sequence[Any],
           concrete_args: Optional[Dict[str, Any]]) -> fx.GraphModule:
    """torch.fx.symbolic_trace; HuggingFace transformers models through transformers' own fx tracer.
    A model that cannot be traced symbolically gets a message naming the routes that work."""
    try:
        if _is_transformers_model(module):
            try:  # transformers < 5 ships its own fx tracer
                import inspect
                from transformers.utils.fx import symbolic_trace as hf_symbolic_trace
            except ImportError:
                hf_symbolic_trace = None
            if hf_symbolic_trace is not None:
                names = [p for p in inspect.signature(module.forward).parameters][:len(example_inputs)]
                return hf_symbolic_trace(module, input_names=names)
        return fx.symbolic_trace(module, concrete_args=concrete_args)
    except Exception as e:  # torch.fx raises many kinds (TraceError, TypeError, NotImplementedError, ...)
        raise FormatError(
            f"torch.fx.symbolic_trace cannot trace {type(module).__name__}: {type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else ''}. Python control flow on tensor values or sizes "
            "needs another route: fxlens.compile_backend (torch.compile / Dynamo, Torch IR) or "
            "fxlens.export_program(torch.export.export(model, inputs)) (ATen IR); optional arguments can "
            "be fixed with export_module(..., concrete_args={...})") from e


def export_module(module: torch.nn.Module, example_inputs: Sequence[Any], path: str, *, name: str = "",
                  weights: bool = False, concrete_args: Optional[Dict[str, Any]] = None,
                  freeze: bool = False) -> fx.GraphModule:
    """symbolic_trace + shape propagation on example inputs, then export. Returns the traced module.
    `concrete_args` fixes optional arguments (torch.fx.symbolic_trace's parameter of that name).
    With `weights`, the weights and the example inputs are saved next to the graph; `freeze` also
    folds weight-only nodes into new weights (graph.fold.json maps them back, see fxlens.freeze)."""
    from torch.fx.passes.shape_prop import ShapeProp

    class _Prop(ShapeProp):
        # ShapeProp records tensors only; keep scalar results (x.shape, sizes) too.
        def run_node(self, n):
            result = super().run_node(n)
            if not isinstance(result, torch.Tensor) and "tensor_meta" not in n.meta:
                if isinstance(result, (int, float, bool)) or (
                        isinstance(result, (tuple, list)) and all(isinstance(v, int) for v in result)):
                    n.meta["val"] = result
            return result

    gm = _trace(module, example_inputs, concrete_args)
    _Prop(gm).propagate(*example_inputs)
    modules = module_entries(module)
    _write(gm.graph, gm, path, name=name or type(module).__name__, ir="torch", source="symbolic_trace",
           weights=weights, modules=modules, inputs=list(example_inputs), freeze=freeze)
    return gm


def _lifted_to_get_attr(graph: fx.Graph, placeholder_to_fqn: Dict[str, str]) -> None:
    """Turns placeholders that carry parameters/buffers into get_attr nodes of their qualified name."""
    for node in list(graph.nodes):
        if node.op == "placeholder" and node.name in placeholder_to_fqn:
            with graph.inserting_before(node):
                ga = graph.get_attr(placeholder_to_fqn[node.name])
            ga.meta = dict(node.meta)
            node.replace_all_uses_with(ga)
            graph.erase_node(node)


def export_program(ep: "torch.export.ExportedProgram", path: str, *, name: str = "program",
                   weights: bool = False, decompose: bool = True, freeze: bool = False) -> fx.GraphModule:
    """Exports a torch.export program (ATen IR). With `decompose` (default) the program is first
    lowered to functional core ATen (``run_decompositions``): the IR Inductor's post-grad passes see
    (no stack/unbind/in-place ops). Lifted parameters/buffers/constants become get_attr nodes;
    returns the GraphModule that was written (inputs = the program's user inputs). `freeze` (needs
    `weights`): weight-only nodes become weights (see fxlens.freeze); the unfrozen module is returned."""
    from torch.export.graph_signature import InputKind, OutputKind
    if decompose:
        try:
            ep = ep.run_decompositions()
        except Exception as e:  # a decomposition PyTorch itself cannot run on this program
            import warnings
            warnings.warn(f"{name}: torch.export's run_decompositions() failed ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}); exporting the program undecomposed "
                          "(decompose=False): ATen IR, not core ATen", stacklevel=2)
    graph = fx.Graph()
    env = graph.graph_copy(ep.graph_module.graph, {})
    graph.output(env)
    gm = fx.GraphModule(torch.nn.Module(), graph)
    for spec in ep.graph_signature.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            raise FormatError(f"{name}: outputs of kind {spec.kind.name} (e.g. buffer mutation in training "
                              "mode) are not supported; export the model in eval mode")
    mapping: Dict[str, str] = {}
    root = gm
    state = ep.state_dict
    constants = getattr(ep, "constants", {}) or {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            continue
        if spec.target is None:
            continue
        mapping[spec.arg.name] = spec.target
        value = state.get(spec.target) if spec.target in state else constants.get(spec.target)
        if isinstance(value, torch.Tensor):
            _set_attr(root, spec.target, value.detach().clone(), spec.kind == InputKind.PARAMETER)
    _lifted_to_get_attr(gm.graph, mapping)
    gm.recompile()
    user_inputs = None
    example = getattr(ep, "example_inputs", None)
    if example is not None:
        import torch.utils._pytree as pytree
        args, kwargs = example
        flat = pytree.tree_leaves((args, kwargs))
        n_user = sum(1 for spec in ep.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT)
        if len(flat) == n_user:
            user_inputs = flat
    _write(gm.graph, gm, path, name=name, ir="aten", source="export", weights=weights,
           modules=_modules_from_meta(gm.graph), inputs=user_inputs, freeze=freeze)
    return gm


# ----------------------------------------------------------------------------------------- Dynamo

def _dynamo_param_fqn(node: fx.Node) -> Optional[str]:
    ga = node.meta.get("grapharg")
    source = getattr(ga, "source", None)
    if source is None:
        return None
    return normalize_module_path(_source_name(source))


def _source_name(source: Any) -> str:
    name = getattr(source, "name", None)
    if callable(name):  # older torch: a method
        name = name()
    return name if isinstance(name, str) else str(source)


def _lift_dynamo_inputs(graph: fx.Graph, dynamo_graph: fx.Graph, values: Sequence[Any], *,
                        own: bool = False, lifted: Optional[Dict[str, str]] = None) -> "tuple":
    """A copy of `graph` whose placeholders that carry parameters or buffers (found through the Dynamo
    graph's placeholders, in the same order, and the real values passed) are get_attr nodes of their
    module path, owning those values: detached copies, or with `own` the model's own Parameter
    objects and buffers (fxlens.backend: gradients and in-place updates reach the model). Returns
    (GraphModule, the other inputs' values); `lifted` gets {placeholder name: module path}."""
    g = fx.Graph()
    g.output(g.graph_copy(graph, {}))
    # Constants the graph reads as attributes of its own module (Inductor lifts tensors made in
    # forward to `_tensor_constant<i>` of the post-grad graph's module) stay constants of the copy.
    root = torch.nn.Module()
    owner = graph.owning_module
    for n in g.nodes:
        if n.op == "get_attr" and owner is not None:
            try:
                value = _fetch_attr(owner, n.target)
            except AttributeError:
                continue
            if isinstance(value, torch.Tensor):
                _set_attr(root, n.target, value.detach(), False)
    copy = fx.GraphModule(root, g)
    dyn = [n for n in dynamo_graph.nodes if n.op == "placeholder"]
    mapping: Dict[str, str] = {} if lifted is None else lifted
    user_inputs = []
    for i, (node, value) in enumerate(zip([n for n in g.nodes if n.op == "placeholder"], values)):
        dnode = dyn[i] if i < len(dyn) else None
        fqn = _dynamo_param_fqn(dnode) if dnode is not None and isinstance(value, torch.Tensor) else None
        is_param = isinstance(value, torch.nn.Parameter)
        is_buffer = (fqn is not None and not is_param
                     and "_buffers" in _source_name(getattr(dnode.meta.get("grapharg"), "source", "")))
        if fqn and (is_param or is_buffer) and fqn not in mapping.values():
            mapping[node.name] = fqn
            _set_attr(copy, fqn, value if own else value.detach(), is_param)
        else:
            user_inputs.append(value)
    _lifted_to_get_attr(copy.graph, mapping)
    copy.recompile()
    return copy, user_inputs


def compile_backend(out_dir: str, *, name: str = "graph", weights: bool = False,
                    inner: Optional[Callable] = None, freeze: bool = False) -> Callable:
    """A torch.compile backend that writes every Dynamo-captured graph (Torch IR) as
    ``{out_dir}/{name}_{i}.json`` and then runs it with `inner` (default: eager).

    Parameters that Dynamo lifts to graph inputs are written as get_attr nodes with their module path.
    The list of written files is in ``backend.files``; their example inputs in ``backend.inputs``.
    `freeze` (needs `weights`): weight-only nodes become weights (see fxlens.freeze)."""
    os.makedirs(out_dir, exist_ok=True)

    def backend(gm: fx.GraphModule, example_inputs: List[torch.Tensor]):
        index = len(backend.files)
        path = os.path.join(out_dir, f"{name}_{index}.json")
        copy, user_inputs = _lift_dynamo_inputs(gm.graph, gm.graph, example_inputs)
        _write(copy.graph, copy, path, name=f"{name}_{index}", ir="torch", source="dynamo", weights=weights,
               modules=_modules_from_meta(gm.graph), inputs=user_inputs, freeze=freeze)
        backend.files.append(path)
        backend.inputs.append(user_inputs)
        if inner is not None:
            return inner(gm, example_inputs)
        return gm.forward

    backend.files = []  # type: ignore[attr-defined]
    backend.inputs = []  # type: ignore[attr-defined]
    return backend


class capture_post_grad:
    """Context manager: while active, every post-grad ATen graph Inductor builds is written as
    ``{out_dir}/{name}_post_grad_{i}.json`` (through Inductor's post_grad_custom_post_pass hook).

    With `weights` (default), Inductor's entry is watched too, so that the real values it is called
    with are saved: parameters and buffers (by their module path, as get_attr nodes) in the weights
    file, the other inputs as the graph's example inputs."""

    def __init__(self, out_dir: str, name: str = "graph", weights: bool = True):
        self.out_dir = out_dir
        self.name = name
        self.weights = weights
        self.files: List[str] = []
        self._calls: List[Any] = []

    def __enter__(self):
        from torch._inductor import compile_fx as cfx
        from torch._inductor import config
        from torch._inductor.custom_graph_pass import CustomGraphPass

        outer = self

        class _Capture(CustomGraphPass):
            def __call__(self, graph: fx.Graph) -> None:
                outer._write(graph)

            def uuid(self):
                return None  # never cache: the pass has side effects

        os.makedirs(self.out_dir, exist_ok=True)
        self._old = config.post_grad_custom_post_pass
        config.post_grad_custom_post_pass = _Capture()
        self._old_compile_fx = cfx.compile_fx

        def compile_fx(gm, example_inputs, *args, **kwargs):
            # The Dynamo graph and the real values Inductor is called with (placeholders in order).
            outer._calls.append((gm, list(example_inputs)))
            return outer._old_compile_fx(gm, example_inputs, *args, **kwargs)

        cfx.compile_fx = compile_fx
        return self

    def _write(self, graph: fx.Graph) -> None:
        path = os.path.join(self.out_dir, f"{self.name}_post_grad_{len(self.files)}.json")
        gname = os.path.basename(path)[:-5]
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        call = self._calls[-1] if self._calls else None
        if not self.weights or call is None or len(call[1]) != len(placeholders):
            data = graph_to_dict(graph, graph.owning_module, name=gname, ir="aten", source="inductor_post_grad")
            write_dict(data, path)
            self.files.append(path)
            return
        dyn_gm, values = call
        copy, user_inputs = _lift_dynamo_inputs(graph, dyn_gm.graph, values)
        _write(copy.graph, copy, path, name=gname, ir="aten", source="inductor_post_grad", weights=True,
               modules=_modules_from_meta(graph), inputs=user_inputs)
        self.files.append(path)

    def __exit__(self, *exc):
        from torch._inductor import compile_fx as cfx
        from torch._inductor import config
        config.post_grad_custom_post_pass = self._old
        cfx.compile_fx = self._old_compile_fx
        return False


# ----------------------------------------------------------------------------------------- loading

def _confined(graph_path: str, name: str) -> str:
    """A side file named by a graph (weights, inputs), which must lie in the graph's own folder."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(graph_path)))
    full = os.path.realpath(os.path.join(folder, name))
    if os.path.dirname(full) != folder and not full.startswith(folder + os.sep):
        raise FormatError(f"{graph_path}: side file '{name}' is outside the graph's folder; refused")
    return full


def _root_from_state(graph: fx.Graph, state: Dict[str, torch.Tensor], missing: str,
                     constants: Optional[Callable[[str], Optional[torch.Tensor]]] = None) -> torch.nn.Module:
    """A root holding the get_attr values of `graph` from `state`, else from `constants` (the buffers
    a checkpoint leaves out); `missing` ({} = the name) when neither has one."""
    root = torch.nn.Module()
    for n in graph.nodes:
        if n.op == "get_attr":
            v = state.get(n.target)
            if v is None and constants is not None:
                v = constants(n.target)
            if v is None:
                raise FormatError(missing.replace("{}", n.target, 1))
            _set_attr(root, n.target, v, False)
    return root


def _original_values(state_dict: Optional[Dict[str, torch.Tensor]],
                     module: Optional[torch.nn.Module]) -> Dict[str, torch.Tensor]:
    """The original model's values by qualified name: `module`'s parameters and buffers under every
    name (tied and non-persistent ones too, which its state_dict leaves out), then its state_dict, then
    `state_dict` over them."""
    state: Dict[str, torch.Tensor] = {}
    if module is not None:
        for name, v in list(module.named_parameters(remove_duplicate=False)) + list(
                module.named_buffers(remove_duplicate=False)):
            state[name] = v
        state.update(module.state_dict(keep_vars=True))
    if state_dict is not None:
        state.update(state_dict)
    return state


def _buffers_of_file(path: str, data: Dict[str, Any]) -> Callable[[str], Optional[torch.Tensor]]:
    """A lookup of the buffers (kind "buffer": non-persistent ones such as position ids, constants) in
    the weights file a graph names: what a checkpoint may lack. Parameters are never taken from it:
    a checkpoint without one is an error, not a silent mix of two models."""
    buffers = {p["name"] for p in data.get("params", []) if p.get("kind") == "buffer"}
    cache: Dict[str, Dict[str, torch.Tensor]] = {}

    def lookup(name: str) -> Optional[torch.Tensor]:
        if name not in buffers or not data.get("weights"):
            return None
        if "w" not in cache:
            wpath = _confined(path, data["weights"])
            cache["w"] = load_weights_file(wpath) if os.path.exists(wpath) else {}
        return cache["w"].get(name)

    return lookup


def _only_what_the_output_reads(graph: fx.Graph) -> None:
    """Removes the nodes the output does not read: a fold graph takes no input, but older versions
    could keep one (an assert on the model's input kept its placeholder)."""
    needed: set = set()
    stack = [n for n in graph.nodes if n.op == "output"]
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(n.all_input_nodes)
    for n in reversed(list(graph.nodes)):
        if n not in needed:
            graph.erase_node(n)


def _factories_on(graph: fx.Graph, device: torch.device) -> None:
    """Calls that create tensors on a recorded device (`arange(..., device='cuda:0')`, the device the
    model was captured on) create them on `device` instead: where the fold's weights are."""
    for n in graph.nodes:
        if n.op in ("call_function", "call_method") and isinstance(n.kwargs.get("device"), (str, torch.device)):
            n.kwargs = {**n.kwargs, "device": device}


def _run_fold(path: str, data: Dict[str, Any], state: Dict[str, torch.Tensor], allow_any_target: bool):
    """(names, values): a frozen graph's `_frozen_*` values, computed by its fold graph from `state`."""
    fold_path = _confined(path, data["fold"])
    fold_data = read_dict(fold_path)
    fold_graph = dict_to_graph(fold_data, fold_path, allow_any_target=allow_any_target)
    _only_what_the_output_reads(fold_graph)
    root = _root_from_state(fold_graph, state, f"{fold_path}: the state_dict has no '{{}}' (the fold graph reads it)",
                            _buffers_of_file(fold_path, fold_data))
    first = next(root.buffers(), None)
    _factories_on(fold_graph, first.device if first is not None else torch.device("cpu"))
    try:
        with torch.no_grad():
            values = fx.GraphModule(root, fold_graph)()
    except Exception as e:
        raise FormatError(f"{fold_path}: the fold graph of {path} fails: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}") from e
    out = next(n for n in fold_graph.nodes if n.op == "output")
    return [a.name for a in out.args[0]], values


def _load_frozen(path: str, data: Dict[str, Any], graph: fx.Graph, state: Dict[str, torch.Tensor],
                 allow_any_target: bool, module: Optional[torch.nn.Module] = None) -> fx.GraphModule:
    """A frozen graph with its `_frozen_*` weights computed by its fold graph from `state`."""
    names, values = _run_fold(path, data, state, allow_any_target)
    root = torch.nn.Module()
    for name, v in zip(names, values):
        _set_attr(root, FROZEN_PREFIX + name, v, False)
    own: Optional[Dict[str, torch.Tensor]] = None  # the graph's weights file: constants a state_dict lacks
    for n in graph.nodes:
        if n.op == "get_attr" and not _has_attr(root, n.target):
            if n.target not in state:
                if own is None:
                    own = load_weights_file(_confined(path, data["weights"])) if data.get("weights") else {}
                if n.target not in own:
                    raise FormatError(f"{path}: node '{n.name}': the state_dict has no '{n.target}' "
                                      "(nor the graph's weights file)")
            _set_attr(root, n.target, state[n.target] if n.target in state else own[n.target], False)
        elif n.op == "call_module":
            if module is None:
                raise FormatError(f"{path}: node '{n.name}' calls module '{n.target}'; pass module=")
            *parents, leaf = n.target.split(".")
            holder = root
            for p in parents:
                if not hasattr(holder, p):
                    holder.add_module(p, _ParamHolder())
                holder = getattr(holder, p)
            holder.add_module(leaf, _fetch_attr(module, n.target))
    return fx.GraphModule(root, graph)


def load_graph(path: str, module: Optional[torch.nn.Module] = None, weights: Optional[str] = None,
               random_weights: bool = False, seed: int = 0, allow_any_target: bool = False,
               state_dict: Optional[Dict[str, torch.Tensor]] = None,
               allow_namespaces: Sequence[str] = ()) -> fx.GraphModule:
    """Loads an fxlens graph file as a runnable GraphModule.

    Parameters come from `module` (the original model: needed for call_module nodes), else from the
    safetensors file `weights` (default: the file named in the graph, which must lie in the graph's
    folder), else, with `random_weights`, from seeded random values of the recorded shapes.
    call_function targets resolve only from torch, operator, math and a few builtins;
    `allow_any_target=True` lets a trusted file name any importable function. Custom operators
    (torch.library: `ns.op.overload`) run when their namespace is in `allow_namespaces` and this
    process registered them (import the library that defines them first).

    A frozen graph (optimize --freeze, export with freeze=True) loads its own weights file; given the
    original model's `state_dict` (or `module`: its parameters and buffers, non-persistent ones
    included), its `_frozen_*` weights are recomputed by the fold graph it names, so an original
    checkpoint still loads. Buffers a `state_dict` leaves out (non-persistent ones: position ids)
    come from the weights file the graph names; a missing parameter is an error."""
    data = read_dict(path)
    graph = dict_to_graph(data, path, allow_any_target=allow_any_target, allow_namespaces=allow_namespaces)
    if data.get("fold") and (state_dict is not None or module is not None):
        return _load_frozen(path, data, graph, _original_values(state_dict, module), allow_any_target, module)
    if state_dict is not None and module is None:
        return fx.GraphModule(_root_from_state(graph, state_dict, f"{path}: the state_dict has no '{{}}'",
                                               _buffers_of_file(path, data)), graph)
    if module is not None:
        return fx.GraphModule(module, graph)
    needs_modules = [n.target for n in graph.nodes if n.op == "call_module"]
    if needs_modules:
        raise FormatError(f"{path}: node(s) call module(s) {needs_modules[:3]}...; pass the original module "
                          "(load_graph(path, module=model)) to run this graph")
    root = torch.nn.Module()
    specs = {p["name"]: p for p in data.get("params", [])}
    wfile = weights
    if wfile is None and data.get("weights"):
        wfile = _confined(path, data["weights"])
    if wfile is not None and os.path.exists(wfile):
        for k, v in load_weights_file(wfile).items():
            _set_attr(root, k, v, specs.get(k, {}).get("kind", "parameter") == "parameter")
    elif random_weights:
        g = torch.Generator().manual_seed(seed)
        for p in data.get("params", []):
            dtype = getattr(torch, p["dtype"])
            if dtype.is_floating_point and p["name"].endswith("running_var"):
                v = torch.rand(p["shape"], generator=g).to(dtype) + 0.5  # a variance: positive
            elif dtype.is_floating_point:
                v = torch.randn(p["shape"], generator=g).to(dtype) * 0.1
            else:
                v = torch.zeros(p["shape"], dtype=dtype)
            _set_attr(root, p["name"], v, p.get("kind") == "parameter")
    missing = [n.target for n in graph.nodes if n.op == "get_attr" and not _has_attr(root, n.target)]
    if missing:
        raise FormatError(f"{path}: no value for {missing[:3]}: no weights file; pass weights=, module= or "
                          "random_weights=True")
    return fx.GraphModule(root, graph)


def _has_attr(root: torch.nn.Module, target: str) -> bool:
    try:
        _fetch_attr(root, target)
        return True
    except AttributeError:
        return False


def load_inputs(path: str) -> List[torch.Tensor]:
    """The example inputs saved with a graph (input:0, input:1, ...), in placeholder order; [] when none."""
    data = read_dict(path)
    if not data.get("inputs"):
        return []
    ipath = _confined(path, data["inputs"])
    from safetensors.torch import load_file
    values = load_file(ipath)
    return [values[k] for k in sorted(values, key=lambda k: int(k.split(":")[1]))]
