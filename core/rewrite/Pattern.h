// SPDX-License-Identifier: MIT
// Pattern, Match and PatternRegistry: what the rewrite engine applies.
#pragma once

#include "rewrite/Rewriter.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace fxlens::rewrite {

enum class IrLevel { Torch, Aten, Both };

struct Bindings;

/// The key a pattern is anchored on: an op kind and a target (empty target: every target of that op kind).
struct AnchorKey {
    ir::OpKind op;
    std::string target;
    bool operator<(const AnchorKey &o) const { return op != o.op ? op < o.op : target < o.target; }
    bool operator==(const AnchorKey &o) const { return op == o.op && target == o.target; }
    /// The node has this op and target (any target when `target` is empty).
    bool covers(const Node &n) const { return n.op() == op && (target.empty() || n.target() == target); }
};

/// What the engine offers a pattern while it matches: the anchor index (graph-level patterns such as
/// horizontal fusion look for their group there) and a counter that changes with every edit (for
/// caches of whole-graph analyses; from nextEditStamp(), so that two contexts never share a value).
class MatchContext {
public:
    virtual ~MatchContext() = default;
    virtual const std::unordered_set<Node *> &nodesWithKey(const AnchorKey &k) const = 0;
    virtual uint64_t editCount() const = 0;
};

/// A value of the one clock behind every MatchContext::editCount(): never the same twice in a process.
uint64_t nextEditStamp();

/// The context for matching outside a Session (findMatches, `explain`, the equivalence check): nodes
/// by anchor key, collected on first use for each key; the graph must not change while it is in use
/// (its edit count is one stamp for the context's whole life).
class GraphMatchContext : public MatchContext {
public:
    explicit GraphMatchContext(const ir::Graph &g) : m_g(g), m_stamp(nextEditStamp()) {}
    const std::unordered_set<Node *> &nodesWithKey(const AnchorKey &k) const override;
    uint64_t editCount() const override { return m_stamp; }

private:
    const ir::Graph &m_g;
    uint64_t m_stamp;
    mutable std::map<std::pair<ir::OpKind, std::string>, std::unordered_set<Node *>> m_cache;
};

/// A successful match: data the debugger shows before anything changes.
struct Match {
    const MatchContext *context = nullptr; ///< set by the engine before match()
    std::string pattern;
    Node *anchor = nullptr;
    std::vector<Node *> nodes;   ///< graph nodes the pattern matched (anchor included)
    std::vector<Node *> removes; ///< nodes the rewrite will make dead
    std::string summary;         ///< one line: what the rewrite will do
    /// Pattern-specific captured values, used by the pattern's rewrite.
    std::vector<int64_t> ints;
    std::vector<Node *> captured;
    /// What a pattern graph bound (GraphPattern); shared so that matches stay cheap to copy.
    std::shared_ptr<const Bindings> bindings;
};

/// Why a pattern did not match at a node: the pattern element, the graph node, expected vs found.
struct MatchFailure {
    std::string element;
    std::string node;
    std::string expected;
    std::string found;
    std::string toString() const { return element + " at '" + node + "': expected " + expected + ", found " + found; }
};

class Pattern {
public:
    virtual ~Pattern() = default;
    std::string name;
    IrLevel level = IrLevel::Both;
    std::vector<AnchorKey> anchors;
    int benefit = 1; ///< higher first
    /// The driver runs phase 0 to its fixpoint, then enables phase 1 (and so on), keeping earlier
    /// phases active: horizontal fusion (phase 1) sees the straightened graph and vertical patterns
    /// then clean up what fusion leaves.
    int phase = 0;
    std::vector<std::string> labels; ///< vertical, horizontal, normalization, user
    std::string description;
    /// The pattern reasons about mutation itself (dead-code elimination, functionalization). Other
    /// patterns never match where a matched node reads or is storage written in place (the engine
    /// refuses such matches; rewrite/Mutation.h).
    bool mutationAware = false;

    /// Looks at the graph around `anchor` without changing it.
    virtual bool match(Node *anchor, Match &m, MatchFailure &why) const = 0;
    /// Applies a match produced by match() on the unchanged graph, through the rewriter only.
    virtual void rewrite(const Match &m, Rewriter &rw) const = 0;

    /// The node is one of this pattern's anchors.
    bool anchoredAt(const Node &n) const
    {
        for (const auto &k : anchors)
            if (k.covers(n))
                return true;
        return false;
    }
    bool hasLabel(const std::string &l) const
    {
        for (const auto &x : labels)
            if (x == l)
                return true;
        return false;
    }
};

/// Why a pattern does or does not match at one node: `fxlens-cli explain` and the pattern editor's
/// "why not here". The engine's rule (rewrite/Matcher.h: IR level, the pattern, the mutation rule) on
/// a GraphMatchContext; nothing is changed.
struct Explanation {
    bool anchor = false; ///< the node is one of the pattern's anchors
    bool matched = false;
    Match match;          ///< when matched
    MatchFailure failure; ///< when an anchor that does not match: the first failing element
    std::string anchors;  ///< the pattern's anchors: "call_function[torch.cat], ..."
    /// "match: <summary>" / "no match: <failure>" / "no match: N is not an anchor of P (anchors: ...)".
    std::string toString() const;
};
Explanation explain(const Pattern &p, const ir::Graph &g, Node *node);

/// All known patterns by unique name. Duplicate names are refused.
class PatternRegistry {
public:
    /// Adds a pattern; returns an error message for a duplicate or empty name ("" on success).
    std::string add(std::unique_ptr<Pattern> p);
    const Pattern *find(const std::string &name) const;
    /// Removes a pattern (pattern files being reloaded); false when there is none of that name.
    /// Sessions holding the pattern must be finished first.
    bool remove(const std::string &name);
    std::vector<const Pattern *> all() const;
    /// A preset: "all" (every pattern but the `catalog` family, which restates built-in patterns in a
    /// narrower form), or a label family ("vertical", "catalog", ...) with the normalizations.
    /// An unknown name sets `error`.
    std::vector<const Pattern *> preset(const std::string &name, std::string &error) const;
    /// Patterns named in a comma-separated list; an unknown name sets `error`.
    std::vector<const Pattern *> byNames(const std::string &list, std::string &error) const;

private:
    std::vector<std::unique_ptr<Pattern>> m_patterns;
    std::map<std::string, Pattern *> m_byName;
};

} // namespace fxlens::rewrite
