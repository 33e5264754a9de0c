// SPDX-License-Identifier: MIT
// DOT export: a graph as Graphviz text, with one cluster per module of the hierarchy.
#pragma once

#include "ir/Graph.h"

#include <string>

namespace fxlens::io {

struct DotOptions {
    bool clusterModules = true; ///< draw nn_module_stack paths as nested clusters
    bool showShapes = true;     ///< label edges with shape/dtype
};

std::string writeDot(const ir::Graph &g, const DotOptions &opts = {});

} // namespace fxlens::io
