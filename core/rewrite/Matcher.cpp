// SPDX-License-Identifier: MIT
// PatternSet, matchAt and findMatches: one rule and one order for every list of matches.
#include "rewrite/Matcher.h"

#include "rewrite/Mutation.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace fxlens::rewrite {

bool runsOn(const Pattern &p, const ir::Graph &g)
{
    return p.level == IrLevel::Both || (p.level == IrLevel::Aten) == (g.irLevel == "aten");
}

PatternSet::PatternSet(std::span<const Pattern *const> patterns, const ir::Graph &g)
{
    for (const Pattern *p : patterns)
        if (runsOn(*p, g))
            m_patterns.push_back(p);
    std::stable_sort(m_patterns.begin(), m_patterns.end(), [](const Pattern *a, const Pattern *b) { return a->benefit > b->benefit; });
    for (const Pattern *p : m_patterns)
        m_maxPhase = std::max(m_maxPhase, p->phase);
    for (const Pattern *p : m_patterns)
        for (const auto &k : p->anchors)
            (k.target.empty() ? m_anyTarget[k.op] : m_byKey[k]).push_back(p);
    for (auto &kv : m_byKey) {
        m_keys.push_back(kv.first);
        mergeAnyTarget(kv.first, kv.second);
    }
}

std::vector<AnchorKey> PatternSet::keys() const { return m_keys; }

const Pattern *PatternSet::named(const std::string &name) const
{
    for (const Pattern *p : m_patterns)
        if (p->name == name)
            return p;
    return nullptr;
}

void PatternSet::mergeAnyTarget(const AnchorKey &k, std::vector<const Pattern *> &list) const
{
    auto it = m_anyTarget.find(k.op);
    if (it == m_anyTarget.end())
        return;
    list.insert(list.end(), it->second.begin(), it->second.end());
    // Keep the driver's order: benefit first, then the order patterns were given in.
    std::stable_sort(list.begin(), list.end(), [this](const Pattern *a, const Pattern *b) {
        if (a->benefit != b->benefit)
            return a->benefit > b->benefit;
        return std::find(m_patterns.begin(), m_patterns.end(), a) < std::find(m_patterns.begin(), m_patterns.end(), b);
    });
}

const std::vector<const Pattern *> &PatternSet::at(const Node &n) const
{
    static const std::vector<const Pattern *> none;
    AnchorKey k{n.op(), n.target()};
    auto it = m_byKey.find(k);
    if (it != m_byKey.end())
        return it->second;
    if (!m_anyTarget.count(n.op()))
        return none;
    // A target no pattern names: only the patterns anchored on any target of this op kind apply.
    auto &list = m_byKey[k];
    mergeAnyTarget(k, list);
    return list;
}

AliasSource aliasOnce(const ir::Graph &g)
{
    auto alias = std::make_shared<std::optional<AliasInfo>>();
    return [&g, alias]() -> const AliasInfo * {
        if (!*alias)
            alias->emplace(g);
        return (*alias)->any() ? &**alias : nullptr;
    };
}

Verdict matchAt(const Pattern &p, Node *anchor, const MatchContext &ctx, const AliasSource &alias, Match &m, MatchFailure &why)
{
    m.context = &ctx;
    m.pattern = p.name;
    m.anchor = anchor;
    if (!p.match(anchor, m, why))
        return Verdict::NoMatch;
    m.pattern = p.name;
    m.anchor = anchor;
    if (p.mutationAware)
        return Verdict::Match;
    const AliasInfo *a = alias ? alias() : nullptr;
    return !a || mutationSafe(*a, m.nodes, why) ? Verdict::Match : Verdict::Unsafe;
}

std::vector<Match> findMatches(const ir::Graph &g, const PatternSet &patterns, const MatchContext &ctx, const AliasSource &alias,
                               size_t limit, const SkipFilter &skip)
{
    std::vector<Match> out;
    const std::vector<Node *> nodes = g.nodes();
    for (int phase = 0; phase <= patterns.maxPhase() && out.size() < limit; ++phase) {
        for (auto it = nodes.rbegin(); it != nodes.rend() && out.size() < limit; ++it) {
            Node *n = *it;
            for (const Pattern *p : patterns.at(*n)) {
                if (p->phase != phase || (skip && skip(*p, *n)))
                    continue;
                Match m;
                MatchFailure why;
                if (matchAt(*p, n, ctx, alias, m, why) != Verdict::Match)
                    continue;
                out.push_back(std::move(m));
                if (out.size() >= limit)
                    break;
            }
        }
    }
    return out;
}

std::vector<Match> findMatches(const ir::Graph &g, std::span<const Pattern *const> patterns, size_t limit)
{
    const PatternSet set(patterns, g);
    const GraphMatchContext ctx(g);
    auto out = findMatches(g, set, ctx, aliasOnce(g), limit);
    for (auto &m : out)
        m.context = nullptr; // the context ends here
    return out;
}

} // namespace fxlens::rewrite
