# SPDX-License-Identifier: MIT
"""fxlens companion: export torch.fx / torch.compile / torch.export graphs for fxlens and load them back;
fxlens' engine in-process (fxlens.backend for torch.compile, fxlens.pre_grad_pass and
fxlens.post_grad_pass inside Inductor)."""
from .backend import Backend, PreGradPass, backend, post_grad_pass, pre_grad_pass
from .engine import Engine, OptimizeResult, patterns
from .export import (capture_post_grad, compile_backend, export_graph_module, export_module, export_program,
                     inputs_path_for, load_graph, load_inputs, load_weights_file, weights_path_for)
from .freeze import Reparameterized, freeze, reparameterize
from .graph_format import FormatError

__version__ = "0.1.0"
__all__ = ["backend", "pre_grad_pass", "post_grad_pass", "Backend", "PreGradPass", "Engine", "OptimizeResult", "patterns",
           "export_graph_module", "export_module", "export_program", "compile_backend", "capture_post_grad",
           "load_graph", "load_inputs", "load_weights_file", "weights_path_for", "inputs_path_for", "FormatError",
           "freeze", "reparameterize", "Reparameterized"]
