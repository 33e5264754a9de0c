// SPDX-License-Identifier: MIT
// The one definition of "a match", shared by the driver, its candidate lists, `explain`, the
// pattern editor and the GUI's match lists: which patterns run on a graph and in what order
// (PatternSet, as MLIR's PatternApplicator), the engine's rule for one pattern at one node
// (matchAt: the pattern's own match, then the mutation rule), and the read-only query of every
// match (findMatches, as torch.fx's SubgraphMatcher.match: it only reads the graph).
#pragma once

#include "rewrite/Pattern.h"

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace fxlens::rewrite {

class AliasInfo;

/// The pattern runs on graphs of this one's IR level: a pattern written for one level (torch or
/// aten) never runs on a graph of the other.
bool runsOn(const Pattern &p, const ir::Graph &g);

/// The patterns an engine applies to one graph, by anchor key, in the order the driver tries them
/// at a node: benefit first, then the order given. Patterns for the other IR level are left out.
class PatternSet {
public:
    PatternSet(std::span<const Pattern *const> patterns, const ir::Graph &g);
    /// Every pattern, by benefit (then the order given).
    const std::vector<const Pattern *> &all() const { return m_patterns; }
    /// The patterns anchored at `n`, in the driver's order.
    const std::vector<const Pattern *> &at(const Node &n) const;
    const Pattern *named(const std::string &name) const;
    int maxPhase() const { return m_maxPhase; }
    /// The anchor keys that name a target: what an anchor index holds.
    std::vector<AnchorKey> keys() const;

private:
    void mergeAnyTarget(const AnchorKey &k, std::vector<const Pattern *> &list) const;

    std::vector<const Pattern *> m_patterns;
    /// Patterns by anchor key (a cache: keys of targets no pattern names are added on first sight).
    mutable std::map<AnchorKey, std::vector<const Pattern *>> m_byKey;
    /// Patterns anchored on every target of an op kind (AnchorKey with an empty target).
    std::map<ir::OpKind, std::vector<const Pattern *>> m_anyTarget;
    std::vector<AnchorKey> m_keys;
    int m_maxPhase = 0;
};

/// The storage facts of the graph version being matched, asked for at most once per match and only
/// when the mutation rule applies; nullptr when nothing is written in place (every match is safe).
using AliasSource = std::function<const AliasInfo *()>;

/// An AliasSource for a graph that does not change while it is used: the analysis runs once, on
/// first use (copies share it).
AliasSource aliasOnce(const ir::Graph &g);

/// What matchAt found: a match, no match (the pattern's own failure), or a match the mutation rule
/// refuses (a matched node is, or reads, storage written in place; see Pattern::mutationAware).
enum class Verdict { Match, NoMatch, Unsafe };

/// The engine's rule for pattern `p` at `anchor`: the pattern's match on `ctx`, then the mutation
/// rule unless the pattern is mutation-aware. Sets `m.context`, `m.pattern` and `m.anchor`; `why`
/// says why not. The caller checks the anchor and the IR level (PatternSet, runsOn).
Verdict matchAt(const Pattern &p, Node *anchor, const MatchContext &ctx, const AliasSource &alias, Match &m, MatchFailure &why);

/// (pattern, anchor) pairs a query leaves out (the session's skips).
using SkipFilter = std::function<bool(const Pattern &, const Node &)>;

/// Every match of `patterns` on `g` in the order a fresh session on this version would apply them:
/// phase by phase, anchors in reverse program order (the driver's first sweep), an anchor's patterns
/// by benefit. At most `limit`. The matches keep `ctx` as their context.
std::vector<Match> findMatches(const ir::Graph &g, const PatternSet &patterns, const MatchContext &ctx, const AliasSource &alias,
                               size_t limit = SIZE_MAX, const SkipFilter &skip = {});

/// The read-only query: every match of `patterns` on `g` by the engine's rules and in the engine's
/// order (as above), with no session and nothing changed. The graph must not change during the
/// call; the matches' context is cleared (it ends with the call).
std::vector<Match> findMatches(const ir::Graph &g, std::span<const Pattern *const> patterns, size_t limit = SIZE_MAX);

} // namespace fxlens::rewrite
