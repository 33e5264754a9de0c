# SPDX-License-Identifier: MIT
"""Ground truth from PyTorch for fxlens' LibTorch executor: for every bundled example, Python runs the
graph (the original module for symbolic_trace graphs, the loaded GraphModule otherwise) on seeded inputs
and weights, writes weights, inputs and outputs to one safetensors file, and `fxlens-cli run --expect`
must reproduce the outputs within 1e-5 (relative to the output's magnitude, float32).

Tests marked `gpu` run the same on CUDA (skipped without a GPU)."""
import os
import re
import subprocess

import pytest
import torch
from safetensors.torch import load_file, save_file

import fxlens
from fxlens.graph_format import read_dict
from fxlens.models import Tangle, TransformerLayer
from clitools import has_executor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(ROOT, "resources", "examples")
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))

EXAMPLES = ["tangle4_fx.json", "tangle50_torch.json", "tangle50_aten.json", "transformer_fx.json",
            "transformer_dynamo.json", "transformer_aten.json", "resnet50_fx.json.gz", "resnet50_aten.json.gz"]



pytestmark = pytest.mark.skipif(not has_executor(), reason="fxlens-cli built without LibTorch")


def _module_for(name, path):
    """The original module of a symbolic_trace example, with the example's weights."""
    data = read_dict(path)
    if name.startswith("tangle4"):
        m = Tangle(4)
    elif name.startswith("transformer"):
        m = TransformerLayer()
    else:
        torchvision = pytest.importorskip("torchvision")
        torch.manual_seed(0)
        return torchvision.models.resnet50(weights=None).eval()
    if data.get("weights"):
        m.load_state_dict(load_file(os.path.join(os.path.dirname(path), data["weights"])))
    return m.eval()


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out] if isinstance(out, torch.Tensor) else []


def ground_truth(name, tmp_path, device="cpu"):
    path = os.path.join(EX, name)
    data = read_dict(path)
    g = torch.Generator().manual_seed(1)
    inputs = []
    for n in data["nodes"]:
        if n["op"] == "placeholder":
            t = n["meta"]["val"]["tensor"]
            inputs.append(torch.randn(*t["shape"], generator=g))
    if any(n["op"] == "call_module" for n in data["nodes"]):
        module = _module_for(name, path)
        gm = fxlens.load_graph(path, module=module)
        weights = dict(module.state_dict())
    else:
        gm = fxlens.load_graph(path, random_weights=True, seed=3)
        weights = {k: v for k, v in list(gm.named_parameters()) + list(gm.named_buffers())}
    gm = gm.to(device)
    with torch.no_grad():
        outs = _flat(gm(*[i.to(device) for i in inputs]))
    tensors = {f"weight:{k}": v.detach().cpu().contiguous() for k, v in weights.items()}
    tensors.update({f"input:{i}": t for i, t in enumerate(inputs)})
    tensors.update({f"output:{i}": t.detach().cpu().contiguous() for i, t in enumerate(outs)})
    gt = str(tmp_path / "gt.safetensors")
    save_file(tensors, gt)
    return path, gt, outs


def _check(name, tmp_path, device):
    path, gt, outs = ground_truth(name, tmp_path, device)
    # Three runs: the first through the interpreter, the later ones through the compiled plan; all
    # must agree, and the last is compared with PyTorch.
    r = subprocess.run([CLI, "run", path, "--weights", gt, "--inputs", gt, "--expect", gt, "--device", device, "--repeat", "3"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outputs match" in r.stdout
    errs = [float(x) for x in re.findall(r"max abs err ([0-9.e+-]+)", r.stdout)]
    assert len(errs) == len(outs)
    for e, o in zip(errs, outs):
        scale = max(1.0, o.abs().max().item())
        assert e <= 1e-5 * scale, (name, e, scale)


@pytest.mark.parametrize("name", EXAMPLES)
def test_executor_matches_pytorch(tmp_path, name):
    _check(name, tmp_path, "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name", EXAMPLES)
def test_executor_matches_pytorch_cuda(tmp_path, name):
    _check(name, tmp_path, "cuda")


def test_missing_cuda_is_a_clear_error(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    r = subprocess.run([CLI, "run", os.path.join(EX, "tangle4_fx.json"), "--device", "cuda"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "no CUDA device is usable here" in r.stderr


def test_run_saves_outputs_and_verify_compares(tmp_path):
    out = str(tmp_path / "o.safetensors")
    ex = os.path.join(EX, "tangle50_torch.json")
    r = subprocess.run([CLI, "run", ex, "-o", out, "--seed", "7"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert load_file(out)["output:0"].shape == (64, 1600)
    opt = str(tmp_path / "opt.json")
    r = subprocess.run([CLI, "optimize", ex, "--preset", "vertical", "--verify", "-o", opt], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verify: output 0: float32" in r.stdout and "outputs match" in r.stdout
    r = subprocess.run([CLI, "verify", ex, opt], capture_output=True, text=True)
    assert r.returncode == 0 and "outputs match" in r.stdout
    # A graph that computes something else: verify fails and says which output.
    bad = read_dict(opt)
    for n in bad["nodes"]:
        if n["target"] == "torch.tanh":
            n["target"] = "torch.sigmoid"
            break
    from fxlens.graph_format import write_dict
    write_dict(bad, str(tmp_path / "bad.json"))
    r = subprocess.run([CLI, "verify", ex, str(tmp_path / "bad.json")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "outputs differ" in r.stdout


class _CpuFlashAttention(torch.nn.Module):
    """The call Inductor's post-grad graphs traced on the CPU make (an operator PyTorch has for the
    CPU only), with both of its outputs."""

    def __init__(self, causal, masked):
        super().__init__()
        self.causal, self.masked = causal, masked

    def forward(self, q, k, v, m):
        kw = {"attn_mask": m} if self.masked else {}
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.0, self.causal, **kw)
        return out, lse


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("kind", ["plain", "causal", "mask", "half"])
def test_cpu_only_attention_runs_on_cuda(tmp_path, kind):
    """A graph traced on the CPU names aten._scaled_dot_product_flash_attention_for_cpu, which has no
    CUDA kernel: on CUDA the executor computes the same output and logsumexp with portable operators."""
    g = torch.Generator().manual_seed(0)
    dtype = torch.float16 if kind == "half" else torch.float32
    q, k, v = (torch.randn(2, 4, 16, 32, generator=g).to(dtype) for _ in range(3))
    m = torch.randn(2, 1, 16, 16, generator=g).to(dtype)  # the operator takes masks of q's dtype only
    module = _CpuFlashAttention(kind == "causal", kind == "mask")
    path = str(tmp_path / "attn.json")
    fxlens.export_module(module, (q, k, v, m), path)
    with torch.no_grad():
        out, lse = module(q, k, v, m)
    gt = str(tmp_path / "gt.safetensors")
    save_file({"input:0": q, "input:1": k, "input:2": v, "input:3": m, "output:0": out.contiguous(), "output:1": lse.contiguous()}, gt)
    r = subprocess.run([CLI, "run", path, "--inputs", gt, "--expect", gt, "--device", "cuda"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    errs = [float(x) for x in re.findall(r"max abs err ([0-9.e+-]+)", r.stdout)]
    assert len(errs) == 2, r.stdout
    tol = 2e-3 if kind == "half" else 1e-4
    assert max(errs) <= tol, (kind, errs)


def _loaded_libraries(args):
    """The shared libraries the dynamic loader opened for one fxlens-cli call (LD_DEBUG=libs)."""
    env = dict(os.environ, LD_DEBUG="libs")
    r = subprocess.run([CLI] + args, capture_output=True, text=True, env=env)
    return r, re.findall(r"calling init: (\S+)", r.stderr)


def test_only_commands_that_run_graphs_load_libtorch(tmp_path):
    """fxlens-cli reads, converts and rewrites graphs without loading LibTorch; run, verify and the
    executor's options go to fxlens-cli-exec beside it, with the same arguments."""
    ex = os.path.join(EX, "tangle4_fx.json")
    for args in (["info", ex], ["optimize", ex, "-o", str(tmp_path / "o.json")], ["convert", ex, "--to", "text"]):
        r, libs = _loaded_libraries(args)
        assert r.returncode == 0, r.stderr[-2000:]
        assert not [l for l in libs if "libtorch" in l], (args, [l for l in libs if "torch" in l])
    for args in (["run", ex, "--random-inputs"], ["optimize", ex, "--verify", "-o", str(tmp_path / "v.json")]):
        r, libs = _loaded_libraries(args)
        assert r.returncode == 0, r.stderr[-2000:]
        assert [l for l in libs if "libtorch_cpu" in l], args
        assert "output 0" in r.stdout or "outputs match" in r.stdout


def test_without_the_executor_program_the_command_says_so(tmp_path):
    """fxlens-cli copied without fxlens-cli-exec: the commands that run graphs name what is missing;
    the others work."""
    import shutil
    lone = str(tmp_path / "fxlens-cli")
    shutil.copy(CLI, lone)
    ex = os.path.join(EX, "tangle4_fx.json")
    r = subprocess.run([lone, "run", ex], capture_output=True, text=True)
    assert r.returncode == 1
    assert "no fxlens-cli-exec beside fxlens-cli" in r.stderr
    assert subprocess.run([lone, "info", ex], capture_output=True, text=True).returncode == 0
