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
    /// Non-empty when the graph cannot be written as Python without running code the file did not
    /// ask for (a node name or keyword that is not an identifier, a target outside the allowed
    /// namespaces, an opaque value): then `code` is empty.
    std::string error;
};

/// Whether a graph file may name `target` as a call_function target in generated Python: torch
/// (less its file, code-loading and process namespaces), operator, math, torchvision.ops, ATen and
/// prims ops, and a few builtins. The Python companion's load_graph applies the same list.
bool allowedTarget(const std::string &target);

/// `Model()` registers every parameter and buffer of the graph with its recorded shape and dtype
/// (zeros) under its qualified name, so that `load_state_dict` of the original module (or
/// `Model.load_weights(path)` of a safetensors file) fills them. call_module nodes of common leaf
/// types (Linear, Conv, BatchNorm, LayerNorm, Embedding, activations, pooling, ...) are written as
/// their torch.nn.functional calls on the module's parameters and constants.
PythonOutput writePython(const ir::Graph &g);

} // namespace fxlens::io
