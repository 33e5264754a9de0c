// SPDX-License-Identifier: MIT
// The canvas' own layout for graphs of any size (Qt-free, Graphviz-free). A view of a graph shows
// the nodes of expanded modules and one box per collapsed module (nn_module_stack); the layered
// layout places it in O((V + E) log V): longest-path layers in program order, barycenter ordering
// within layers, then coordinates. Graphviz `dot` needs seconds for 2k nodes and minutes for 20k;
// this takes milliseconds for 20k and about a second for 160k (docs/BENCHMARKS.md).
#pragma once

#include "ir/Graph.h"

#include <set>
#include <string>
#include <vector>

namespace fxlens::layout {

struct ViewItem {
    enum class Kind : uint8_t { Node, Module };
    Kind kind = Kind::Node;
    const ir::Node *node = nullptr; ///< Node items
    std::string module;             ///< Module items: qualified path ("blocks.3"); Node items: innermost module
    std::string label;              ///< node name or module path
    std::string detail;             ///< target, or "<type>, N nodes" for a module
    std::string value;              ///< the node's recorded value ("f32[4, 14]"), "" when unknown
    size_t nodeCount = 1;
    double x = 0, y = 0, w = 0, h = 0; ///< top-left corner and size
    int layer = 0;
};

struct ViewEdge {
    uint32_t from = 0, to = 0;
};

struct ViewGraph {
    std::vector<ViewItem> items;
    std::vector<ViewEdge> edges;
    double width = 0, height = 0;
    /// Item of a graph node (the node itself or the collapsed module that holds it).
    std::vector<int32_t> itemOfNode; ///< by node id; -1 for erased ids
};

/// The module chain a node is drawn in: its own, or for an input or parameter outside any module
/// (ATen exports) the chain of its first reader.
const std::vector<ir::ModuleFrame> &displayModules(const ir::Node *n);

/// The view for a set of expanded module paths ("" is the root and always expanded): a node whose
/// module chain has a collapsed module shows as that module's box.
ViewGraph buildView(const ir::Graph &g, const std::set<std::string> &expanded);

/// Every module path of the graph (for "expand all").
std::set<std::string> allModules(const ir::Graph &g);

struct LayoutOptions {
    double layerGap = 36;
    double itemGap = 14;
    int sweeps = 2; ///< barycenter sweeps (down, up, ...)
    /// Layers wider than max(this, 2 * sqrt(scene area)) wrap onto further rows.
    double minWrapWidth = 2400;
};

void layeredLayout(ViewGraph &v, const LayoutOptions &o = {});

} // namespace fxlens::layout
