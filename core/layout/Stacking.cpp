// SPDX-License-Identifier: MIT
#include "layout/Stacking.h"
#include "ir/ModuleRange.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

namespace fxlens::layout {

namespace {

/// FNV-1a, 64 bits: stable across runs (std::hash need not be).
struct Hasher {
    uint64_t h = 1469598103934665603ull;
    void bytes(const void *p, size_t n)
    {
        const auto *c = static_cast<const unsigned char *>(p);
        for (size_t i = 0; i < n; ++i)
            h = (h ^ c[i]) * 1099511628211ull;
    }
    void text(const std::string &s)
    {
        bytes(s.data(), s.size());
        word(s.size());
    }
    void word(uint64_t v) { bytes(&v, sizeof v); }
};

/// One module's running fingerprint: its nodes so far, each with its ordinal within the module.
struct ModuleState {
    Hasher hash;
    uint32_t count = 0;
    std::unordered_map<uint32_t, uint32_t> ordinal; ///< by node id
};

/// A target named inside the module ("blocks.3.linear.weight") relative to it ("linear.weight").
std::string relative(const std::string &target, const std::string &module)
{
    return target.size() > module.size() && target.compare(0, module.size(), module) == 0 && target[module.size()] == '.'
        ? target.substr(module.size() + 1)
        : target;
}

void hashArgument(Hasher &h, const ir::Argument &a, const ModuleState &m)
{
    h.word(uint64_t(a.kind()));
    if (a.isNode()) {
        const ir::Node *in = a.toNode();
        if (auto it = m.ordinal.find(in->id()); it != m.ordinal.end()) {
            h.word(1);
            h.word(it->second);
        } else { // read from outside the module: what it carries, not which node
            h.word(2);
            h.text(in->meta().val.toString());
        }
        return;
    }
    h.word(uint64_t(a.toInt()));
    const double f = a.toFloat();
    uint64_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    h.word(bits);
    h.text(a.text());
    h.word(a.items().size());
    for (const auto &x : a.items())
        hashArgument(h, x, m);
    h.word(a.entries().size());
    for (const auto &[k, v] : a.entries()) {
        h.text(k);
        hashArgument(h, v, m);
    }
}

void addNode(ModuleState &m, const ir::Node *n, size_t level)
{
    const auto &chain = n->meta().moduleStack;
    const std::string &module = chain[level].path;
    Hasher &h = m.hash;
    h.word(uint64_t(n->op()));
    h.text(relative(n->target(), module));
    h.text(n->meta().val.toString());
    for (size_t k = level + 1; k < chain.size(); ++k) { // where inside the module it runs
        h.text(relative(chain[k].path, module));
        h.text(chain[k].type);
    }
    h.word(n->args().size());
    for (const auto &a : n->args())
        hashArgument(h, a, m);
    for (const auto &[k, v] : n->kwargs()) {
        h.text(k);
        hashArgument(h, v, m);
    }
    m.ordinal.emplace(n->id(), m.count++);
}

} // namespace

std::unordered_map<std::string, uint64_t> moduleFingerprints(const ir::Graph &g)
{
    std::unordered_map<std::string, ModuleState> states;
    for (const ir::Node *n = g.first(); n; n = n->next()) {
        const auto &chain = n->meta().moduleStack;
        for (size_t level = 0; level < chain.size(); ++level)
            if (!chain[level].path.empty())
                addNode(states[chain[level].path], n, level);
    }
    std::unordered_map<std::string, uint64_t> out;
    for (auto &[path, s] : states) {
        s.hash.word(s.count);
        out.emplace(path, s.hash.h);
    }
    return out;
}

std::vector<ModuleStack> findStacks(const ir::Graph &g, size_t minMembers)
{
    const auto prints = moduleFingerprints(g);
    // Sibling modules by (parent, class, fingerprint), in program order of their first node.
    using Key = std::tuple<std::string, std::string, uint64_t>;
    std::map<Key, size_t> groupOf;
    std::vector<ModuleStack> groups;
    std::unordered_map<std::string, bool> seen;
    for (const ir::Node *n = g.first(); n; n = n->next())
        for (const auto &f : n->meta().moduleStack) {
            if (f.path.empty() || ir::moduleIndex(f.path) < 0 || !seen.emplace(f.path, true).second)
                continue;
            const Key key{ir::moduleParent(f.path), f.type, prints.at(f.path)};
            auto [it, fresh] = groupOf.emplace(key, groups.size());
            if (fresh)
                groups.push_back({std::get<0>(key), f.type, {}});
            groups[it->second].members.push_back(f.path);
        }
    std::vector<ModuleStack> out;
    for (auto &s : groups)
        if (s.members.size() >= std::max<size_t>(minMembers, 2)) {
            std::sort(s.members.begin(), s.members.end(),
                      [](const std::string &a, const std::string &b) { return ir::moduleIndex(a) < ir::moduleIndex(b); });
            out.push_back(std::move(s));
        }
    return out;
}

StackIndex::StackIndex(const ir::Graph &g, const std::vector<ModuleStack> &stacks, const std::set<std::string> &expanded,
                       const std::vector<uint8_t> &hidden, BoxOf boxOf)
{
    m_stacks.resize(stacks.size());
    for (size_t s = 0; s < stacks.size(); ++s) {
        std::vector<std::string> folded;
        for (const auto &m : stacks[s].members)
            if (!expanded.count(m))
                folded.push_back(m);
        if (folded.size() < 2)
            continue;
        m_stacks[s] = {ir::rangeLabel(stacks[s].parent, folded), folded.size()};
        m_stacksIn[stacks[s].parent].push_back(int(s));
        for (const auto &m : folded)
            m_stackOf.emplace(m, int(s));
    }
    if (m_stackOf.empty())
        return;
    // Lanes: nodes shown as themselves, every shown reader inside one stack; by (stack, op, target).
    std::map<std::tuple<int, int, std::string>, std::vector<uint32_t>> groups;
    for (const ir::Node *n = g.first(); n; n = n->next()) {
        if (hidden[n->id()] || n->op() == ir::OpKind::Placeholder || n->op() == ir::OpKind::Output || boxOf(n, expanded))
            continue;
        int stack = -1;
        for (const ir::Node *u : n->users()) {
            if (hidden[u->id()])
                continue;
            const ir::ModuleFrame *box = boxOf(u, expanded);
            const int s = box ? stackOfBox(box->path) : -1;
            if (s < 0 || (stack >= 0 && s != stack)) {
                stack = -1;
                break;
            }
            stack = s;
        }
        if (stack >= 0)
            groups[{stack, int(n->op()), n->target()}].push_back(n->id());
    }
    for (const auto &[key, ids] : groups) {
        if (ids.size() < 2)
            continue;
        for (uint32_t id : ids)
            m_laneOf.emplace(id, int(m_lanes.size()));
        m_lanes.push_back({std::get<0>(key), ids.size()});
    }
}

int StackIndex::stackOfBox(const std::string &path) const
{
    const auto it = m_stackOf.find(path);
    return it == m_stackOf.end() ? -1 : it->second;
}

const std::vector<int> &StackIndex::stacksIn(const std::string &parent) const
{
    static const std::vector<int> none;
    const auto it = m_stacksIn.find(parent);
    return it == m_stacksIn.end() ? none : it->second;
}

int StackIndex::laneOf(const ir::Node *n) const
{
    const auto it = m_laneOf.find(n->id());
    return it == m_laneOf.end() ? -1 : it->second;
}

} // namespace fxlens::layout
