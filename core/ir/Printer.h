// SPDX-License-Identifier: MIT
// Canonical text form of a graph, in the spirit of print(torch.fx.Graph); used by golden tests.
#pragma once

#include "ir/Graph.h"

#include <string>

namespace fxlens::ir {

struct PrintOptions {
    bool showMeta = true;    ///< append "# f32[64, 32]" with the value's shape/dtype
    bool showModule = false; ///< append the innermost module path
};

/// One line for one node: `%name : [num_users=N] = op[target=T](args = (...), kwargs = {...})`.
std::string printNode(const Node &n, const PrintOptions &opts = {});
/// The whole graph: a "graph():" header, one indented line per node, and the return line.
std::string printGraph(const Graph &g, const PrintOptions &opts = {});

} // namespace fxlens::ir
