// SPDX-License-Identifier: MIT
// Stacks of repeated sibling modules: a ModuleList's 50 identical blocks drawn as one box
// "blocks.0–49 ×50" (Qt-free). A module's structural fingerprint hashes its subgraph (ops, targets
// relative to the module, values, how its nodes read each other and the world outside it), never
// its nodes' names, so identical siblings fingerprint alike and a sibling with one other op does not.
#pragma once

#include "ir/Graph.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fxlens::layout {

/// Siblings of one parent with the same class and fingerprint ("blocks.0" … "blocks.49").
struct ModuleStack {
    std::string parent;               ///< "blocks" ("" for siblings at the root named "0", "1", …)
    std::string type;                 ///< their class
    std::vector<std::string> members; ///< qualified paths, by index
};

/// By module path: a hash of the module's subgraph (the nodes whose module chain holds it).
std::unordered_map<std::string, uint64_t> moduleFingerprints(const ir::Graph &g);

/// Sibling modules whose last path component is an index ("blocks.7"), grouped by parent, class
/// and fingerprint; groups of at least `minMembers`, in program order of their first member.
std::vector<ModuleStack> findStacks(const ir::Graph &g, size_t minMembers = 4);

} // namespace fxlens::layout

namespace fxlens::layout {

/// What buildView needs of the stacks it shows: the collapsed boxes a stack stands for (its
/// members that are not expanded: an expanded member shows on its own, the rest stay stacked) and
/// the lanes feeding it: nodes shown as themselves whose every reader is in that stack, grouped by
/// op and target (tangle50's 50 getitems of one split, one per block), drawn as one item.
class StackIndex {
public:
    using BoxOf = const ir::ModuleFrame *(*)(const ir::Node *, const std::set<std::string> &);
    StackIndex(const ir::Graph &g, const std::vector<ModuleStack> &stacks, const std::set<std::string> &expanded,
               const std::vector<uint8_t> &hidden, BoxOf boxOf);
    /// The stack whose box stands for the collapsed module `path`, -1 when none.
    int stackOfBox(const std::string &path) const;
    /// The lane a node is drawn in, -1 when none.
    int laneOf(const ir::Node *n) const;
    /// "blocks.0–49": the stacked members' range (the box's module).
    const std::string &range(int stack) const { return m_stacks[size_t(stack)].range; }
    size_t members(int stack) const { return m_stacks[size_t(stack)].members; }
    /// The stacks with boxes whose members are children of `parent`.
    const std::vector<int> &stacksIn(const std::string &parent) const;
    /// Nodes in a lane, and its stack.
    size_t laneSize(int lane) const { return m_lanes[size_t(lane)].size; }
    int laneStack(int lane) const { return m_lanes[size_t(lane)].stack; }
    size_t lanes() const { return m_lanes.size(); }

private:
    struct Active {
        std::string range;
        size_t members = 0;
    };
    struct Lane {
        int stack = -1;
        size_t size = 0;
    };
    std::vector<Active> m_stacks;
    std::unordered_map<std::string, int> m_stackOf;               ///< by member path
    std::unordered_map<std::string, std::vector<int>> m_stacksIn; ///< by parent path
    std::vector<Lane> m_lanes;
    std::unordered_map<uint32_t, int> m_laneOf; ///< by node id
};

} // namespace fxlens::layout
