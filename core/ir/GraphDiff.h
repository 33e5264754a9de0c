// SPDX-License-Identifier: MIT
// GraphDiff: which nodes a rewrite added, removed or changed (matched by name).
#pragma once

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace fxlens::ir {

struct NodeChange {
    std::string name;
    std::string before; ///< printed node in A
    std::string after;  ///< printed node in B
};

struct GraphDiff {
    std::vector<std::string> added;   ///< in B, not in A (B's order)
    std::vector<std::string> removed; ///< in A, not in B (A's order)
    std::vector<NodeChange> changed;  ///< same name, different op/target/args/kwargs/meta value
    bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
    /// Unified-diff-like text: "- %x ...", "+ %y ...", "~ %z ..." lines.
    std::string toString() const;
};

/// Compares two graphs node by node. Node references compare by name, so a node whose input was
/// replaced shows up as changed.
GraphDiff diffGraphs(const Graph &a, const Graph &b);

} // namespace fxlens::ir
