# SPDX-License-Identifier: MIT
"""The per-sample half of bench/opinfo_coverage.py (whose docstring describes the method): PyTorch's op
database, one OpInfo sample as a one-op module, the comparison of results with eager, and fxlens-cli
runs with their failures sorted into the report's classes.

Imported by bench/opinfo_coverage.py (in its worker processes too); it runs nothing itself.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import types
import unittest
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The fxlens-cli that run_cli starts: in the workers, the copy opinfo_coverage.run_route takes (FXLENS_CLI).
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))
RTOL, ATOL = 1e-4, 1e-5
CLI_TIMEOUT_S = 20.0
# The device the samples, eager and fxlens-cli run on ("cpu" or "cuda"); opinfo_coverage.py --device
# sets it for its workers.
DEVICE = os.environ.get("FXLENS_OPINFO_DEVICE", "cpu")

DTYPE_ORDER = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
               "bool", "complex64", "complex128"]
RANDOM_WORDS = ("rand", "dropout", "bernoulli", "normal", "multinomial", "poisson", "uniform",
                "exponential", "geometric", "cauchy", "log_normal", "rrelu", "randperm")
UNINITIALIZED_WORDS = ("empty",)


# ----------------------------------------------------------------------------------------- op_db

def _stub_expecttest() -> None:
    """torch.testing._internal imports `expecttest` (a test-only package) for its TestCase base; the
    op database needs none of it, so a stand-in is installed when the package is missing."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        m = types.ModuleType("expecttest")
        m.TestCase = unittest.TestCase  # type: ignore[attr-defined]
        m.ACCEPT = False  # type: ignore[attr-defined]
        sys.modules["expecttest"] = m


def _call_unseeded(op, *args, **kwargs):
    return op(*args, **kwargs)


def load_op_db() -> list:
    """op_db; the random ops' `op` (lambdas calling wrapper_set_seed, which seeds inside
    freeze_rng_state: something Dynamo does not trace) call the op directly instead: this harness
    seeds before every eager and captured call and compares random results by shape and dtype."""
    _stub_expecttest()
    from torch.testing._internal import common_methods_invocations as cmi
    cmi.wrapper_set_seed = _call_unseeded
    return cmi.op_db


def op_key(op) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def all_keys() -> List[str]:
    return [op_key(op) for op in load_op_db()]


def pick_dtype(op):
    import torch
    supported = op.supported_dtypes(DEVICE)
    if torch.float32 in supported:
        return torch.float32
    ordered = [getattr(torch, n) for n in DTYPE_ORDER if getattr(torch, n) in supported]
    rest = sorted((d for d in supported if d not in ordered), key=str)
    return (ordered + rest)[0] if ordered or rest else None


def is_random(op) -> bool:
    """Random results: the ATen overloads of the op's name carry Tag.nondeterministic_seeded, or
    its name says so."""
    import torch
    name = op.name.lower()
    if any(w in name for w in RANDOM_WORDS + UNINITIALIZED_WORDS):
        return True
    packet = getattr(torch.ops.aten, (op.aten_name or op.name).split(".")[-1], None)
    if packet is None or not hasattr(packet, "overloads"):
        return False
    try:
        return any(torch.Tag.nondeterministic_seeded in getattr(packet, o).tags for o in packet.overloads())
    except Exception:
        return False


# ----------------------------------------------------------------------------------------- module

class _Code:
    """Builds the forward's source: tensors become parameters x0, x1, ...; lists, tuples and dicts
    holding tensors are rebuilt; every other value is a constant c0, c1, ... of the code's globals."""

    def __init__(self):
        self.tensors: list = []
        self.consts: Dict[str, Any] = {}

    @staticmethod
    def _holds_tensor(v) -> bool:
        import torch
        if isinstance(v, torch.Tensor):
            return True
        if type(v) in (list, tuple):
            return any(_Code._holds_tensor(x) for x in v)
        if type(v) is dict:
            return any(_Code._holds_tensor(x) for x in v.values())
        return False

    def expr(self, v) -> str:
        import torch
        if isinstance(v, torch.Tensor):
            self.tensors.append(v)
            return f"x{len(self.tensors) - 1}"
        if self._holds_tensor(v):
            if type(v) is list:
                return "[" + ", ".join(self.expr(x) for x in v) + "]"
            if type(v) is tuple:
                return "(" + "".join(self.expr(x) + ", " for x in v) + ")"
            return "{" + ", ".join(f"{k!r}: {self.expr(x)}" for k, x in v.items()) + "}"
        name = f"c{len(self.consts)}"
        self.consts[name] = v
        return name


def build_module(op, sample):
    """(module, inputs): a module whose forward is `op.op(input, *args, **kwargs)` on its tensor inputs."""
    import torch
    code = _Code()
    parts = [code.expr(sample.input)] + [code.expr(a) for a in sample.args]
    parts += [f"{k}={code.expr(v)}" for k, v in sample.kwargs.items()]
    params = "".join(f", x{i}" for i in range(len(code.tensors)))
    src = f"def forward(self{params}):\n    return op_fn({', '.join(parts)})\n"
    scope: Dict[str, Any] = {"op_fn": op.op, **code.consts}
    exec(compile(src, f"<opinfo {op_key(op)}>", "exec"), scope)
    cls = type("OneOp", (torch.nn.Module,), {"forward": scope["forward"]})
    m = cls().eval()
    m.source = src  # type: ignore[attr-defined]
    return m, list(code.tensors)


# ----------------------------------------------------------------------------------------- compare

def tensor_leaves(v) -> list:
    """The tensors of a result in the order the executor flattens its output (lists, tuples, named
    tuples, dict values)."""
    import torch
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in tensor_leaves(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in tensor_leaves(x)]
    return []


def _clone(ts: Sequence) -> list:
    return [t.clone() for t in ts]


def _detached(ts: Sequence) -> list:
    return [t.detach().clone() for t in ts]


def compare(expected: Sequence, actual: Sequence, values: bool = True) -> Optional[Tuple[str, str]]:
    """None when `actual` equals `expected`, else (class, message)."""
    import torch
    if len(expected) != len(actual):
        return "wrong output count/structure", f"{len(actual)} output tensors, eager has {len(expected)}"
    for k, (e, a) in enumerate(zip(expected, actual)):
        if tuple(e.shape) != tuple(a.shape) or e.dtype != a.dtype:
            return "wrong shape/dtype", (f"output {k}: {str(a.dtype)[6:]}{list(a.shape)}, eager "
                                         f"{str(e.dtype)[6:]}{list(e.shape)}")
        if not values or e.numel() == 0:
            continue
        e, a = e.cpu(), a.cpu()
        if e.is_floating_point() or e.is_complex():
            rtol, atol = (1e-2, 1e-3) if e.dtype in (torch.float16, torch.bfloat16) else (RTOL, ATOL)
            try:
                torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True, check_stride=False,
                                           check_device=False)
            except AssertionError as err:
                lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
                detail = "; ".join(ln for ln in lines if ln.startswith(("Mismatched", "Greatest")))
                return "wrong values", f"output {k}: {detail or lines[0]}"
        elif not torch.equal(a, e):
            n = int((a != e).sum())
            return "wrong values", f"output {k}: {n} of {e.numel()} elements differ (exact dtype {str(e.dtype)[6:]})"
    return None


# ----------------------------------------------------------------------------------------- CLI

def first_line(text: str) -> str:
    for ln in (text or "").splitlines():
        if ln.strip():
            return ln.strip()[:400]
    return ""


def _error_line(stderr: str, stdout: str) -> str:
    for ln in (stderr + "\n" + stdout).splitlines():
        if "error" in ln.lower() and ln.strip():
            return ln.strip()[:400]
    return first_line(stderr) or first_line(stdout)


# fxlens' own messages (CallError in core/exec) by class; any other message of a node that failed
# at run time is the ATen kernel's.
_NO_MECHANISM = re.compile(r"no executor for|unsupported operator\.|getattr of tensor attribute|operator\.\S+ with \d+ "
                           r"arguments|x\.type\(\) with|is not supported|not deterministic|on a non-tensor|"
                           r"without a tensor result|operator\.setitem on")
_BAD_ARGUMENT = re.compile(r"cannot evaluate argument|unknown dtype|unsupported index|getitem on a|getitem needs|"
                           r"argument of kind|on numbers|getattr needs|getattr '|index \d+ out of range|"
                           r"torch\.tensor of a|needs (a container|input|a tensor)|expects \d+ arguments")


def classify_cli(rc: int, stdout: str, stderr: str) -> Tuple[str, str]:
    """(class, first error line) of a failed `fxlens-cli run`: exit 3 = the graph file was refused,
    1 = preparing inputs/weights ("fxlens-cli run: ...") or a node failed ("G.json: error: node 'n':
    target: message")."""
    text = stderr + "\n" + stdout
    line = _error_line(stderr, stdout)
    if rc < 0 or rc in (134, 136, 139) or re.search(r"Exception raised from|frame #\d|terminate called|"
                                                      r"Segmentation fault|Aborted|core dumped", text):
        sig = f" (signal {-rc})" if rc < 0 else ""
        return "crash/backtrace", (line or f"exit {rc}") + sig
    if rc == 3:
        return "graph file refused", line
    if line.startswith("fxlens-cli run:"):
        return ("input file refused" if ".safetensors" in line else "run error"), line
    if "no ATen operator" in line:
        return "no ATen operator", line
    if "fit no overload" in line or "arguments do not fit" in line:
        return "fits no overload", line
    if _NO_MECHANISM.search(line):
        return "no executor for target", line
    if _BAD_ARGUMENT.search(line):
        return "unsupported argument", line
    if re.search(r": error: node '", line):
        return "kernel error", line
    return "run error", line or f"exit {rc}"


def run_cli(graph: str, out: str) -> Optional[Tuple[str, str]]:
    """Runs fxlens-cli; None on success, else (class, first error line)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        device = ["--device", DEVICE] if DEVICE != "cpu" else []
        r = subprocess.run([CLI, "run", graph, "-o", out, *device], capture_output=True, text=True,
                           timeout=CLI_TIMEOUT_S, env=env, errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", f"fxlens-cli run {os.path.basename(graph)} ran over {CLI_TIMEOUT_S:.0f} s"
    if r.returncode != 0:
        return classify_cli(r.returncode, r.stdout, r.stderr)
    if re.search(r"Exception raised from|frame #\d", r.stderr):
        return "crash/backtrace", _error_line(r.stderr, r.stdout)
    return None


def read_outputs(path: str) -> list:
    """output:0, output:1, ... of a file fxlens-cli wrote (raises when the safetensors package cannot)."""
    from safetensors import safe_open
    with safe_open(path, framework="pt") as f:
        keys = list(f.keys())
        bad = [k for k in keys if not re.fullmatch(r"output:\d+", k)]
        if bad:
            raise ValueError(f"unexpected tensor names {bad[:3]}")
        return [f.get_tensor(k) for k in sorted(keys, key=lambda k: int(k.split(":")[1]))]


def check_graph(graph: str, expected: Sequence, values: bool) -> Optional[Tuple[str, str]]:
    """fxlens-cli run on one exported graph (its saved inputs), outputs compared with `expected`."""
    out = graph[:-5] + ".out.safetensors"
    err = run_cli(graph, out)
    if err:
        return err
    if not os.path.exists(out):
        return "unreadable output file", "fxlens-cli run exited 0 but wrote no output file"
    try:
        actual = read_outputs(out)
    except Exception as e:
        return "unreadable output file", f"{type(e).__name__}: {first_line(str(e))}"
    return compare(expected, actual, values)
