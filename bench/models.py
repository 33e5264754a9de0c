# SPDX-License-Identifier: MIT
"""The model zoo: public architectures built from their constructors and configs with random weights
(nothing is downloaded), each through every exporter, then through fxlens:

    export -> info/lint -> run vs PyTorch -> optimize --preset all --verify -> load_graph vs PyTorch
           -> convert --to python, run vs PyTorch -> frozen round trips -> (GUI screenshot)
           -> (GPU: profile --optimize)

    .venv/bin/python bench/models.py                         # everything, writes docs/MODELS.md
    .venv/bin/python bench/models.py --models bert_base --exporters dynamo --no-md
    .venv/bin/python bench/models.py --device cuda --profile   # on the GPU machine

"PyTorch" is the exported graph run by PyTorch itself (fxlens.load_graph, with the original module for
symbolic_trace graphs): run, load_graph and the generated Python must give its outputs within rtol 1e-4,
atol 1e-5. Where PyTorch's own exporter fails, the companion's message is recorded instead.

The frozen stage (every graph saved with weights): `optimize --preset all --freeze -o G.frozen.json`,
then the frozen graph against the same reference: fxlens.load_graph with module=model, with
state_dict=model.state_dict() (the fold graph recomputes the frozen weights) and on its own weights,
`fxlens-cli verify G G.frozen.json`, and the module `convert --to python` writes, run on the frozen
weights. A graph that calls modules (torch.fx.symbolic_trace) runs in PyTorch only with its module:
state_dict= and its own weights are n/a there; on a device where PyTorch cannot run the exported
graph (no reference) only verify runs.

Exit code 1 when any cell that PyTorch can export fails.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import fxlens  # noqa: E402
from fxlens.graph_format import read_dict  # noqa: E402

CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))
GUI = os.environ.get("FXLENS_GUI", os.path.join(ROOT, "build", "app", "gui", "fxlens"))
RTOL, ATOL = 1e-4, 1e-5
MARKER = "<!-- end of the generated matrix: text below is kept when bench/models.py rewrites this file -->"
EXPORTERS = ["fx", "dynamo", "export", "post_grad"]


# ----------------------------------------------------------------------------------------- models

def _image(batch=2, size=224):
    return (torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(0)),)


def _tokens(batch=2, seq=16, vocab=1000):
    return (torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(0)),)


def resnet50():
    import torchvision
    return torchvision.models.resnet50(weights=None), _image()


def mobilenet_v3_large():
    import torchvision
    return torchvision.models.mobilenet_v3_large(weights=None), _image()


def efficientnet_b0():
    import torchvision
    return torchvision.models.efficientnet_b0(weights=None), _image()


def vit_b_16():
    import torchvision
    return torchvision.models.vit_b_16(weights=None), _image()


def timm_vit_small():
    import timm
    return timm.create_model("vit_small_patch16_224", pretrained=False), _image()


class _LastHidden(torch.nn.Module):
    """A transformers model returning its last hidden state (a tensor, not a ModelOutput)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        if getattr(self.model.config, "use_cache", None) is not None:
            return self.model(input_ids=input_ids, use_cache=False, return_dict=False)[0]
        return self.model(input_ids=input_ids, return_dict=False)[0]


def bert_base():
    from transformers import BertConfig, BertModel
    cfg = BertConfig(attn_implementation="eager")
    return _LastHidden(BertModel(cfg, add_pooling_layer=False)), _tokens()


def gpt2():
    from transformers import GPT2Config, GPT2Model
    cfg = GPT2Config(attn_implementation="eager", use_cache=False)
    return _LastHidden(GPT2Model(cfg)), _tokens()


def ctr():
    from fxlens.models import CTRModel, ctr_inputs
    m = CTRModel()
    return m, ctr_inputs(m)


class _SegmentationOut(torch.nn.Module):
    """torchvision's segmentation models return {"out": ...}: the tensor itself."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def deeplabv3():
    """Semantic segmentation (DeepLabV3, MobileNetV3 backbone): F.interpolate back to the input size."""
    import torchvision
    m = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False)
    return _SegmentationOut(m), _image(size=128)


def mixtral_moe():
    """A mixture-of-experts decoder (Mixtral, small): its experts call transformers' custom operator
    grouped_mm_fallback, which has a Python kernel only."""
    from transformers import MixtralConfig, MixtralModel
    cfg = MixtralConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, vocab_size=1000,
                        max_position_embeddings=64, attn_implementation="eager", use_cache=False)
    return _LastHidden(MixtralModel(cfg)), _tokens()


def _tv(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None), _image()
    return make


def distilbert():
    from transformers import DistilBertConfig, DistilBertModel
    return _LastHidden(DistilBertModel(DistilBertConfig(attn_implementation="eager"))), _tokens()


def roberta():
    from transformers import RobertaConfig, RobertaModel
    return _LastHidden(RobertaModel(RobertaConfig(attn_implementation="eager"), add_pooling_layer=False)), _tokens()


def t5_encoder():
    from transformers import T5Config, T5EncoderModel
    return _LastHidden(T5EncoderModel(T5Config(num_layers=4, attn_implementation="eager"))), _tokens()


def hf_vit():
    from transformers import ViTConfig, ViTModel
    class Pixels(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = ViTModel(ViTConfig(attn_implementation="eager"), add_pooling_layer=False)

        def forward(self, x):
            return self.model(pixel_values=x, return_dict=False)[0]
    return Pixels(), _image()


def timm_model(name):
    def make():
        import timm
        return timm.create_model(name, pretrained=False), _image()
    return make


# Other architectures of the same families: `--models extra` (checked by hand, not in the default matrix).
EXTRA: Dict[str, Callable] = {
    "convnext_tiny": _tv("convnext_tiny"), "swin_t": _tv("swin_t"), "regnet_y_400mf": _tv("regnet_y_400mf"),
    "densenet121": _tv("densenet121"), "mobilenet_v2": _tv("mobilenet_v2"), "distilbert": distilbert, "roberta": roberta,
    "t5_encoder": t5_encoder, "hf_vit": hf_vit, "timm_deit_tiny": timm_model("deit_tiny_patch16_224"),
    "timm_resnet18": timm_model("resnet18"),
}

MODELS: Dict[str, Callable] = {
    "resnet50": resnet50, "mobilenet_v3_large": mobilenet_v3_large, "efficientnet_b0": efficientnet_b0,
    "vit_b_16": vit_b_16, "timm_vit_small": timm_vit_small, "bert_base": bert_base, "gpt2": gpt2, "ctr": ctr,
    "deeplabv3": deeplabv3, "mixtral_moe": mixtral_moe,
}
ALL = dict(MODELS, **EXTRA)
HF = {"bert_base", "gpt2"}


# ----------------------------------------------------------------------------------------- exporters

def export(name: str, exporter: str, model, inputs, out: str) -> List[str]:
    """Writes the graph(s) of one model through one exporter (weights and example inputs saved)."""
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"{name}_{exporter}")
    if exporter == "fx":
        fxlens.export_module(model, list(inputs), base + ".json", name=name, weights=True)
        return [base + ".json"]
    if exporter == "dynamo":
        torch._dynamo.reset()
        backend = fxlens.compile_backend(out, name=f"{name}_dynamo", weights=True)
        with torch.no_grad():
            torch.compile(model, backend=backend)(*inputs)
        return list(backend.files)
    if exporter == "export":
        with torch.no_grad():
            ep = torch.export.export(model, tuple(inputs))
        fxlens.export_program(ep, base + ".json", name=name, weights=True)
        return [base + ".json"]
    if exporter == "post_grad":
        torch._dynamo.reset()
        with fxlens.capture_post_grad(out, name=f"{name}", weights=True) as cap, torch.no_grad():
            torch.compile(model)(*inputs)
        return list(cap.files)
    raise ValueError(exporter)


# ----------------------------------------------------------------------------------------- checks

def _flat(out) -> List[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flat(o)]
    return []


def _close(a: List[torch.Tensor], b: List[torch.Tensor]) -> Optional[str]:
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape:
            return f"output {i}: shape {tuple(x.shape)} vs {tuple(y.shape)}"
        if x.is_floating_point():
            if not torch.allclose(x.float(), y.float(), rtol=RTOL, atol=ATOL):
                return f"output {i}: max abs err {(x.float() - y.float()).abs().max().item():.3g}"
        elif not torch.equal(x, y):
            return f"output {i}: values differ"
    return None


def _cli(*args, timeout=1200):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)


@dataclass
class Cell:
    model: str
    exporter: str
    graphs: int = 0
    nodes: int = 0
    nodes_after: int = 0
    export: str = ""       # "ok", or PyTorch's / the companion's message
    run: str = ""
    verify: str = ""
    load_graph: str = ""
    python: str = ""
    frozen: str = ""       # "ok", "n/a", or the failed sub-checks (FROZEN_CHECKS) with their first error line
    folded: int = 0        # values folded by --freeze
    frozen_checks: str = ""  # the sub-checks that do not apply, and why
    fusions: Dict[str, int] = field(default_factory=dict)
    profile: Dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def ok(self) -> bool:
        steps = [self.run, self.verify, self.load_graph, self.python, self.frozen]
        return self.export.startswith("PyTorch") or all(s in ("ok", "n/a") or s.startswith(("runs", "n/a:")) for s in steps)


def _error(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]


class _CliFailed(Exception):
    """fxlens-cli exited non-zero; the message is its first error line."""


def _outputs_on(module: torch.nn.Module, inputs, device: str) -> List[torch.Tensor]:
    """`module`'s outputs (on the CPU) for `inputs`, both run on `device`; the module goes back where
    it was afterwards (a graph loaded with module= shares the model's parameters and submodules)."""
    first = next(iter(list(module.parameters()) + list(module.buffers())), None)
    home = first.device if first is not None else torch.device("cpu")
    try:
        with torch.no_grad():
            return [t.detach().cpu() for t in _flat(module.to(device)(*[t.clone().to(device) for t in inputs]))]
    finally:
        module.to(home)


def _compare(make: Callable[[], torch.nn.Module], inputs, ref, device: str = "cpu") -> str:
    """"ok" when the module `make` builds gives the reference outputs on `device`, else the first line
    of what went wrong."""
    try:
        return _close(_outputs_on(make(), inputs, device), ref) or "ok"
    except _CliFailed as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - recorded in the matrix
        return _error(e)


def _python_kernels(data) -> List[str]:
    """Namespaces of the custom operators the graph calls that have Python kernels only."""
    return sorted({n["target"].split(".")[0] for n in data["nodes"] if n.get("meta", {}).get("custom_op") == "python"})


def _check_python_kernels(path, data, module, inputs, ref, cell: Cell) -> None:
    """A graph calling a custom operator with a Python kernel only (Mixtral's grouped_mm_fallback):
    fxlens-cli must say exactly that, and the Python route must run it with the namespace allowed."""
    namespaces = _python_kernels(data)
    r = _cli("run", path)
    said = r.returncode != 0 and "has only a Python kernel" in r.stderr and "allow_namespaces" in r.stderr
    why = f"n/a: custom operator of {', '.join(namespaces)} with a Python kernel only (fxlens-cli says so)"
    cell.run = why if said else (_first_error(r) if r.returncode else "ran, but the message was expected")
    cell.verify = cell.python = cell.frozen = why if said else cell.run
    if ref is None:  # the graph runs in PyTorch only on the device it was exported on
        cell.load_graph = "n/a"
        return
    cell.load_graph = _compare(lambda: fxlens.load_graph(path, module=module, allow_any_target=True,
                                                         allow_namespaces=namespaces), inputs, ref)


def _check_load_graph(path, module, inputs, ref) -> str:
    """The (optimized) graph back in PyTorch through fxlens.load_graph, against the reference."""
    # Our own export: trusted targets.
    return _compare(lambda: fxlens.load_graph(path, module=module, allow_any_target=True), inputs, ref)


def _python_module(path, data, module) -> torch.nn.Module:
    """The module `convert --to python` writes for `path`, with `module`'s weights (for the modules it
    calls) and the weights file the graph names."""
    r = _cli("convert", path, "--to", "python")
    if r.returncode != 0:
        raise _CliFailed(_first_error(r))
    ns: Dict[str, Any] = {}
    exec(compile(r.stdout, path[:-5] + ".py", "exec"), ns)  # our own generated module
    pm = ns["Model"]()
    if module is not None:
        pm.load_state_dict(module.state_dict(), strict=False)
    if data.get("weights"):
        pm.load_weights(os.path.join(os.path.dirname(path), data["weights"]))
    return pm


def _check_python(path, data, module, inputs, ref) -> str:
    """convert --to python, the module run with the graph's weights, against the reference."""
    return _compare(lambda: _python_module(path, data, module), inputs, ref)


FROZEN_CHECKS = ("module=", "state_dict=", "own weights", "verify", "python")


def _check_frozen(path, data, model, inputs, ref, device: str, cell: "Cell") -> None:
    """The frozen round trips of one graph saved with weights: `optimize --preset all --freeze`, then
    the frozen graph against the reference loaded with module= (the model), state_dict= (its
    state_dict: the fold graph recomputes the frozen weights) and on its own weights, `verify original
    frozen` (the executor computes the frozen weights through the fold graph), and the generated Python
    module on the frozen weights. Sets cell.frozen to "ok", "n/a" or the failed sub-checks with the
    first line of each error; cell.frozen_checks names the sub-checks that do not apply, and why."""
    if not data.get("weights"):
        cell.frozen = "n/a"  # nothing to freeze from: optimize --freeze refuses made-up weights
        return
    frozen = path[:-5] + ".frozen.json"
    r = _cli("optimize", path, "-o", frozen, "--preset", "all", "--freeze", "--device", device)
    if r.returncode != 0:
        cell.frozen = "freeze: " + _first_error(r)
        return
    m = re.search(r"freeze: (\d+) value", r.stdout)
    cell.folded += int(m.group(1)) if m else 0
    fdata = read_dict(frozen)
    # A graph that calls modules (symbolic_trace) runs in PyTorch only with the model's modules.
    calls_modules = any(n["op"] == "call_module" for n in fdata["nodes"])
    load = lambda **kw: lambda: fxlens.load_graph(frozen, allow_any_target=True, **kw)  # noqa: E731 - trusted
    results: Dict[str, str] = {}
    if ref is not None:
        results["module="] = _compare(load(module=model), inputs, ref, device)
        if not calls_modules:
            results["state_dict="] = _compare(load(state_dict=model.state_dict()), inputs, ref, device)
            results["own weights"] = _compare(load(), inputs, ref, device)
    r = _cli("verify", path, frozen, "--device", device)
    results["verify"] = "ok" if r.returncode == 0 and "outputs match" in r.stdout else _first_error(r)
    if ref is not None:
        results["python"] = _compare(lambda: _python_module(frozen, fdata, model if calls_modules else None),
                                     inputs, ref, device)
    failed = [f"{k}: {v}" for k, v in results.items() if v != "ok"]
    cell.frozen = "; ".join(failed) if failed else "ok"
    skipped = [k for k in FROZEN_CHECKS if k not in results]
    if skipped:
        why = "calls modules" if ref is not None else f"no PyTorch reference on {device}"
        cell.frozen_checks = f"{', '.join(skipped)} n/a: {why}"


def _module_for(path, model):
    return model if any(n["op"] == "call_module" for n in read_dict(path)["nodes"]) else None


def check_graph(path: str, model, cell: Cell, device: str, profile: bool, screenshot: Optional[str]) -> None:
    data = read_dict(path)
    cell.nodes += len(data["nodes"])
    tmp = path[:-5]
    module = _module_for(path, model)
    inputs = fxlens.load_inputs(path)
    # The reference: PyTorch running the exported graph.
    custom = sorted({n["target"].split(".")[0] for n in data["nodes"] if n.get("meta", {}).get("custom_op")})
    gm = fxlens.load_graph(path, module=module, allow_any_target=True, allow_namespaces=custom)  # our own export
    # On a GPU the reference runs there too (cuDNN and cuBLAS pick the same kernels for both).
    ref = None
    try:
        with torch.no_grad():
            run_in = [t.clone().to(device) for t in inputs]
            ref = [t.detach().cpu().clone() for t in _flat(gm.to(device)(*run_in))]
    except RuntimeError as e:
        if device == "cpu":
            raise
        # A graph that creates tensors on the export's device (torch.arange(..., device='cpu')) does not
        # run on a GPU in PyTorch as written; fxlens places them on the run's device. No reference then.
        print(f"{path}: no PyTorch reference on {device}: {str(e).splitlines()[0]}", file=sys.stderr)
    finally:
        gm.to("cpu")
    from safetensors.torch import save_file
    if ref is not None:
        save_file({f"output:{i}": t.contiguous() for i, t in enumerate(ref)}, tmp + ".expected.safetensors")

    for step in ("info", "lint"):
        r = _cli(step, path)
        if r.returncode != 0:
            raise RuntimeError(f"{step}: {r.stderr.strip()}")
    if _python_kernels(data):
        _check_python_kernels(path, data, module, inputs, ref, cell)
        return
    expect = ["--expect", tmp + ".expected.safetensors"] if ref is not None else []
    r = _cli("run", path, *expect, "--device", device)
    cell.run = ("ok" if ref is not None else "runs (no PyTorch reference on this device)") if r.returncode == 0 else _first_error(r)
    opt = tmp + ".opt.json"
    r = _cli("optimize", path, "-o", opt, "--preset", "all", "--verify", "--device", device)
    cell.verify = "ok" if r.returncode == 0 and "outputs match" in r.stdout else _first_error(r)
    m = re.search(r"nodes: \d+ -> (\d+)", r.stdout)
    cell.nodes_after += int(m.group(1)) if m else 0
    for pat, n in re.findall(r"^  (\S+)\s+(\d+)$", r.stdout, re.M):
        if pat.startswith(("batch_", "merge_", "split_", "unbind_", "stack_", "cast_")):
            cell.fusions[pat] = cell.fusions.get(pat, 0) + int(n)
    if device == "cpu":
        cell.load_graph = _check_load_graph(opt if os.path.exists(opt) else path, module, inputs, ref)
        cell.python = _check_python(path, data, module, inputs, ref)
    else:
        # Exported graphs may create tensors on the export's device (PyTorch runs them as written);
        # load_graph and the Python export are checked by the CPU matrix.
        cell.load_graph = cell.python = "n/a"
    _check_frozen(path, data, model, inputs, ref, device, cell)
    if profile:
        r = _cli("profile", path, "--optimize", "--device", device, "-o", tmp + ".profile.json")
        with open(tmp + ".profile.txt", "w") as f:
            f.write(r.stdout + r.stderr)
        cell.profile = {"ok": r.returncode == 0, "summary": _profile_summary(r.stdout), "error": "" if r.returncode == 0 else _first_error(r)}
    if screenshot and os.path.exists(GUI):
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        subprocess.run([GUI, path, "--screenshot", screenshot], capture_output=True, env=env, timeout=300)


def _profile_summary(out: str) -> List[str]:
    """The per-iteration figures of each profiled version (A: as exported, B: optimized)."""
    keep = []
    for line in out.splitlines():
        if line.startswith(("== ", "optimized with")) or re.match(r"(kernels|ATen ops|GPU busy|op time|wall|CPU launch|peak memory)", line):
            keep.append(re.sub(r"\s{2,}", "  ", line.strip()))
    return keep


def _first_error(r) -> str:
    text = (r.stderr or r.stdout).strip().splitlines()
    for line in text:
        if "error" in line.lower() or "differ" in line.lower() or "mismatch" in line.lower():
            return line.strip()[:200]
    return (text[-1] if text else f"exit {r.returncode}")[:200]


def run_cell(name: str, exporter: str, out: str, device: str, profile: bool, screenshots: Optional[str]) -> Cell:
    cell = Cell(name, exporter)
    t0 = time.time()
    torch.manual_seed(0)
    model, inputs = ALL[name]()
    model = model.eval()
    try:
        files = export(name, exporter, model, inputs, out)
        cell.export = "ok"
    except Exception as e:  # noqa: BLE001 - PyTorch's or the companion's message
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        cell.export = f"PyTorch/companion: {type(e).__name__}: {msg}"[:240]
        cell.seconds = time.time() - t0
        return cell
    cell.graphs = len(files)
    for i, path in enumerate(files):
        shot = os.path.join(screenshots, f"{name}_{exporter}.png") if screenshots and i == 0 else None
        sub = Cell(name, exporter)
        try:
            check_graph(path, model, sub, device, profile, shot)
        except Exception as e:  # noqa: BLE001
            sub.run = sub.run or f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
            traceback.print_exc()
        cell.nodes += sub.nodes
        cell.nodes_after += sub.nodes_after
        cell.folded += sub.folded
        cell.frozen_checks = cell.frozen_checks or sub.frozen_checks
        for k, v in sub.fusions.items():
            cell.fusions[k] = cell.fusions.get(k, 0) + v
        for f in ("run", "verify", "load_graph", "python", "frozen"):
            mine, theirs = getattr(cell, f), getattr(sub, f) or "not reached"
            setattr(cell, f, theirs if not mine or mine in ("ok", "n/a") or mine.startswith("runs") else mine)
        if sub.profile:
            cell.profile.setdefault("graphs", []).append(sub.profile)
    cell.seconds = time.time() - t0
    return cell


def drop_weights(folder: str, stem: str) -> None:
    """Deletes the weights one cell wrote (`<stem>*.safetensors` except example inputs and expected
    outputs): BERT-base and GPT-2 leave ~0.9 GB per exporter, which a CI disk cannot hold for the whole
    matrix. The graphs stay for the checks that read them afterwards (tst_MatchConsumers_zoo)."""
    if not os.path.isdir(folder):
        return
    for f in os.listdir(folder):
        if f.startswith(stem) and f.endswith(".safetensors") and not f.endswith((".inputs.safetensors", ".expected.safetensors")):
            os.remove(os.path.join(folder, f))


# ----------------------------------------------------------------------------------------- report

def markdown(cells: List[Cell], device: str) -> str:
    mark = lambda s: "✓" if s == "ok" else s if s == "n/a" or s.startswith("runs") else ("✗ " + s.replace("|", "/") if s else "")
    lines = [
        "# Model zoo",
        "",
        "Public architectures built from their constructors with random weights (nothing downloaded), batch 2,",
        "eval mode, through every exporter; generated by `.venv/bin/python bench/models.py` "
        f"(device: {device}). Reference: PyTorch running the exported graph (rtol 1e-4, atol 1e-5).",
        "*frozen*: `optimize --preset all --freeze`, then the frozen graph through load_graph with module=,",
        "with state_dict= and on its own weights, `verify` original vs frozen, and `convert --to python` on",
        "the frozen weights (values folded; the sub-checks that do not apply).",
        "",
        "| model | exporter | graphs | nodes → after `all` | run | optimize --verify | load_graph | convert → python | frozen | fusions | s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in cells:
        if not c.export.startswith("ok"):
            lines.append(f"| {c.model} | {c.exporter} | – | – | {c.export.replace('|', '/')} | | | | | | {c.seconds:.0f} |")
            continue
        fus = ", ".join(f"{k} {v}" for k, v in sorted(c.fusions.items())) or "–"
        frozen = mark(c.frozen)
        if c.frozen == "ok":
            frozen += f" {c.folded} folded" + (f"; {c.frozen_checks}" if c.frozen_checks else "")
        lines.append(f"| {c.model} | {c.exporter} | {c.graphs} | {c.nodes} → {c.nodes_after} | {mark(c.run)} | {mark(c.verify)} | "
                     f"{mark(c.load_graph)} | {mark(c.python)} | {frozen} | {fus} | {c.seconds:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--exporters", default=",".join(EXPORTERS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--profile", action="store_true", help="profile --optimize every graph (GPU machine)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--screenshots", default=None, help="folder for a GUI screenshot of each model's first graph")
    ap.add_argument("--json", default=None, help="also write the cells as JSON")
    ap.add_argument("--md", default=os.path.join(ROOT, "docs", "MODELS.md"))
    ap.add_argument("--no-md", action="store_true")
    ap.add_argument("--drop-weights", action="store_true",
                    help="delete each graph's weight files once its checks ran (keeps graphs, inputs, outputs)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    cells = []
    names = list(EXTRA) if a.models == "extra" else a.models.split(",")
    for name in names:
        for exporter in a.exporters.split(","):
            c = run_cell(name, exporter, os.path.join(a.out, name), a.device, a.profile, a.screenshots)
            if a.drop_weights:
                drop_weights(os.path.join(a.out, name), f"{name}_{exporter}")
            cells.append(c)
            print(json.dumps(c.__dict__), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([c.__dict__ for c in cells], f, indent=1)
    if not a.no_md:
        # Hand-written sections after the marker (GPU figures, notes) are kept.
        tail = ""
        if os.path.exists(a.md):
            old = open(a.md).read()
            if MARKER in old:
                tail = old[old.index(MARKER):]
        with open(a.md, "w") as f:
            f.write(markdown(cells, a.device) + "\n" + (tail or MARKER + "\n"))
    return 0 if all(c.ok() for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
