// SPDX-License-Identifier: MIT
// GraphDiff: what a rewrite added, removed, changed or moved, as ordered lines. Built from two
// graphs (diffGraphs, nodes matched by name) or from one step's edits (rewrite::diffStep).
#pragma once

#include "ir/Graph.h"

#include <string>
#include <vector>

namespace fxlens::ir {

struct DiffLine {
    enum class Kind { Added, Removed, Changed, Moved };
    Kind kind;
    std::string name;   ///< the node
    std::string before; ///< Removed / Changed: the node as it was
    std::string after;  ///< Added / Changed: the node as it is; Moved: where it went
};

struct GraphDiff {
    std::vector<DiffLine> lines;
    bool empty() const { return lines.empty(); }
    std::vector<std::string> added() const { return names(DiffLine::Kind::Added); }
    std::vector<std::string> removed() const { return names(DiffLine::Kind::Removed); }
    std::vector<DiffLine> changed() const;
    /// "+ <node>", "- <node>", "~ <before>  ->  <after>", "~ <name> moved before <x>" lines.
    std::string toString() const;

private:
    std::vector<std::string> names(DiffLine::Kind k) const;
};

/// A node printed on one line, without meta comments ("%y = torch.relu(%x)").
std::string nodeLine(const Node &n, bool meta = false);

/// Compares two graphs node by node: removed (A's order), added (B's order), then changed. Node
/// references compare by name, so a node whose input was replaced shows up as changed; the printed
/// form compares op, target, args/kwargs, user count and value meta.
GraphDiff diffGraphs(const Graph &a, const Graph &b);

} // namespace fxlens::ir
