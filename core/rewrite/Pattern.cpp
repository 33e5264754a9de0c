// SPDX-License-Identifier: MIT
// PatternRegistry: unique names, presets and name lists.
#include "rewrite/Pattern.h"

#include "rewrite/Matcher.h"
#include "rewrite/Mutation.h"

#include <algorithm>
#include <atomic>
#include <set>

namespace fxlens::rewrite {

std::string PatternRegistry::add(std::unique_ptr<Pattern> p)
{
    if (p->name.empty())
        return "a pattern has no name";
    if (m_byName.count(p->name))
        return "duplicate pattern name '" + p->name + "'";
    m_byName[p->name] = p.get();
    m_patterns.push_back(std::move(p));
    return {};
}

uint64_t nextEditStamp()
{
    // One clock for all sessions and contexts, so that an edit count never repeats (caches keyed on
    // it stay valid across sessions that reuse an address, and across graphs).
    static std::atomic<uint64_t> clock{0};
    return ++clock;
}

const std::unordered_set<Node *> &GraphMatchContext::nodesWithKey(const AnchorKey &k) const
{
    auto [it, fresh] = m_cache.try_emplace({k.op, k.target});
    if (fresh)
        for (Node *n = m_g.first(); n; n = n->next())
            if (k.covers(*n))
                it->second.insert(n);
    return it->second;
}

bool PatternRegistry::remove(const std::string &name)
{
    auto it = m_byName.find(name);
    if (it == m_byName.end())
        return false;
    Pattern *p = it->second;
    m_byName.erase(it);
    m_patterns.erase(std::remove_if(m_patterns.begin(), m_patterns.end(), [&](const auto &q) { return q.get() == p; }), m_patterns.end());
    return true;
}

const Pattern *PatternRegistry::find(const std::string &name) const
{
    auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : it->second;
}

std::vector<const Pattern *> PatternRegistry::all() const
{
    std::vector<const Pattern *> out;
    for (const auto &p : m_patterns)
        out.push_back(p.get());
    return out;
}

std::vector<const Pattern *> PatternRegistry::preset(const std::string &name, std::string &error) const
{
    std::vector<const Pattern *> out;
    if (name == "all") {
        // Everything but the `catalog` family: pattern files that restate built-in C++ patterns in
        // a narrower form (docs/PATTERNS.md); they would only add match attempts.
        for (const auto &p : m_patterns)
            if (!p->hasLabel("catalog"))
                out.push_back(p.get());
        return out;
    }
    // Any label names a family (vertical, horizontal, normalization, catalog, user, ...); a family
    // always brings the normalizations its patterns rely on and the clean-ups (dead code,
    // functionalization) that make real graphs matchable.
    std::set<std::string> labels;
    for (const auto &p : m_patterns)
        labels.insert(p->labels.begin(), p->labels.end());
    if (labels.count(name)) {
        for (const auto &p : m_patterns)
            if (p->hasLabel(name) || p->hasLabel("normalization") || p->hasLabel("cleanup"))
                out.push_back(p.get());
        return out;
    }
    std::string known = "all";
    for (const auto &l : labels)
        known += ", " + l;
    error = "unknown preset '" + name + "' (" + known + ")";
    return out;
}

std::vector<const Pattern *> PatternRegistry::byNames(const std::string &spec, std::string &error) const
{
    std::vector<const Pattern *> out;
    size_t start = 0;
    while (start <= spec.size()) {
        size_t comma = spec.find(',', start);
        std::string name = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!name.empty()) {
            const Pattern *p = find(name);
            if (!p) {
                error = "unknown pattern '" + name + "'";
                return {};
            }
            out.push_back(p);
        }
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

Explanation explain(const Pattern &p, const ir::Graph &g, Node *node)
{
    Explanation e;
    for (const auto &k : p.anchors)
        e.anchors += (e.anchors.empty() ? "" : ", ") + std::string(ir::opKindName(k.op)) + "[" + (k.target.empty() ? "*" : k.target) + "]";
    e.anchor = p.anchoredAt(*node);
    e.match.pattern = p.name;
    e.match.anchor = node;
    if (!e.anchor)
        return e;
    if (!runsOn(p, g)) {
        const std::string level = p.level == IrLevel::Aten ? "aten" : "torch";
        e.failure = {"level", node->name(), "a graph of the " + level + " IR", "a graph of the " + g.irLevel + " IR"};
        return e;
    }
    const GraphMatchContext ctx(g);
    e.matched = matchAt(p, node, ctx, aliasOnce(g), e.match, e.failure) == Verdict::Match;
    e.match.context = nullptr; // the context ends here
    return e;
}

std::string Explanation::toString() const
{
    if (!anchor)
        return "no match: " + match.anchor->name() + " is not an anchor of " + match.pattern + " (anchors: " + anchors + ")";
    if (matched)
        return "match: " + match.summary;
    return "no match: " + failure.toString();
}

} // namespace fxlens::rewrite
