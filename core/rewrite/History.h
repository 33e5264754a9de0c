// SPDX-License-Identifier: MIT
// History: a session's applied steps and where it stands in them (undo, redo, checkout), the branches
// that a step applied after going back keeps, and the (pattern, anchor) pairs it skips.
#pragma once

#include "rewrite/Pattern.h"
#include "rewrite/Rewriter.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fxlens::rewrite {

/// One applied rewrite in the history; version k is the graph after steps[0..k-1].
struct Step {
    std::string pattern;
    std::string anchor;
    std::string summary;
    std::vector<Edit> edits;
    bool verified = false; ///< SessionConfig::verify ran on this version and it passed
};

/// A line of steps that left the current history at version `fork`: kept when a step is applied
/// after going back, so no applied (or verified) work is lost; History::switchBranch makes it current.
struct Branch {
    size_t fork = 0;
    std::vector<Step> steps; ///< versions fork+1 .. fork+steps.size() of that line
};

class History {
public:
    /// `moved(step, undone)` is called after a step's edits were undone (or redone) on the graph.
    History(Graph &g, std::function<void(const Step &, bool undone)> moved) : m_g(g), m_moved(std::move(moved)) {}

    /// The current version: 0 = the original graph, steps().size() = the latest.
    size_t version() const { return m_cursor; }
    const std::vector<Step> &steps() const { return m_steps; }
    const std::vector<Branch> &branches() const { return m_branches; }
    /// Records a step just applied to the current version; the steps after it (when the session
    /// went back) become a branch.
    void record(Step s);
    bool undo();
    bool redo();
    /// Moves to version v by undo/redo; false when there is no such version.
    bool checkout(size_t v);
    /// Makes branch `index` the current line and moves to its last version; the current line's steps
    /// after the branch's fork become a branch in its place. False for a bad index.
    bool switchBranch(size_t index);

    /// Marks (pattern, anchor) as skipped: neither the driver nor a candidate list proposes it again.
    void skip(const Pattern &p, const Node &anchor) { m_skipped.emplace(std::make_pair(&p, anchor.id()), p.name); }
    bool isSkipped(const Pattern &p, const Node &anchor) const { return m_skipped.count({&p, anchor.id()}) != 0; }
    /// Proposes (pattern, anchor) again; false when it was not skipped.
    bool unskip(const Pattern &p, const Node &anchor) { return m_skipped.erase({&p, anchor.id()}) != 0; }
    /// The (pattern, anchor node) pairs skipped, anchors alive now, in pattern-then-program order.
    std::vector<std::pair<std::string, std::string>> skipped() const;
    /// The patterns changed (Session::setPatterns): each skip goes to the pattern of its name that
    /// `named` gives, or is dropped when there is none. Old patterns are never read (they may be gone).
    void rebindSkips(const std::function<const Pattern *(const std::string &)> &named);

private:
    /// The steps after the current version become a branch (a new line starts here).
    void forkHere();

    Graph &m_g;
    std::function<void(const Step &, bool)> m_moved;
    std::vector<Step> m_steps;
    std::vector<Branch> m_branches;
    size_t m_cursor = 0;
    /// (pattern, anchor id) -> the pattern's name; ids survive undo, names a change of patterns.
    std::map<std::pair<const Pattern *, uint32_t>, std::string> m_skipped;
};

} // namespace fxlens::rewrite
