// SPDX-License-Identifier: MIT
// PythonWriter: a graph version as a standalone, runnable Python module (a torch.nn.Module whose
// forward is the graph, one statement per node, as torch.fx's own code generation writes it).
#pragma once

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace fxlens::io {

struct PythonOutput {
    std::string code;
    /// Nodes the module cannot run (a call_module of a type fxlens does not know): they raise
    /// NotImplementedError when reached, and are listed here by name.
    std::vector<std::string> unsupported;
};

/// `Model()` registers every parameter and buffer of the graph with its recorded shape and dtype
/// (zeros) under its qualified name, so that `load_state_dict` of the original module (or
/// `Model.load_weights(path)` of a safetensors file) fills them. call_module nodes of common leaf
/// types (Linear, Conv, BatchNorm, LayerNorm, Embedding, activations, pooling, ...) are written as
/// their torch.nn.functional calls on the module's parameters and constants.
PythonOutput writePython(const ir::Graph &g);

} // namespace fxlens::io
