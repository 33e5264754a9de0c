# SPDX-License-Identifier: MIT
"""What the companion tests share about the fxlens-cli under test."""
import functools
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))


@functools.lru_cache(maxsize=None)
def has_executor() -> bool:
    """fxlens-cli exists and was built with LibTorch (`doctor` says which)."""
    if not os.path.exists(CLI):
        return False
    out = subprocess.run([CLI, "doctor"], capture_output=True, text=True).stdout
    return "LibTorch" in out and "LibTorch: no" not in out


def flat_tensors(o):
    """The tensors of a model's or graph's outputs, in order (tuples, lists, dicts, ModelOutput)."""
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (list, tuple)):
        return [t for x in o for t in flat_tensors(x)]
    if isinstance(o, dict):
        return [t for x in o.values() for t in flat_tensors(x)]
    if hasattr(o, "to_tuple"):
        return flat_tensors(o.to_tuple())
    return []
