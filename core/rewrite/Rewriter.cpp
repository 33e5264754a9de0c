// SPDX-License-Identifier: MIT
// Rewriter and its reversible edit log.
#include "rewrite/Rewriter.h"
#include "ir/ModuleRange.h"
#include "rewrite/Schema.h"
#include "util/Assert.h"

#include <unordered_map>
#include <unordered_set>

namespace fxlens::rewrite {

Node *Rewriter::create(ir::OpKind op, std::string target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs,
                       const std::string &name, Node *before, const Node *like, std::vector<std::string> replaced)
{
    Node *n = m_g.create(op, std::move(target), std::move(args), std::move(kwargs), name, before);
    if (like) {
        n->meta().moduleStack = like->meta().moduleStack;
        n->meta().stackTrace = like->meta().stackTrace;
    }
    // A node that stands in for the same op of many sibling blocks belongs to their range
    // ("blocks.0–49"), not to the first block's module.
    if (replaced.size() > 1) {
        std::vector<const Node *> olds;
        olds.reserve(replaced.size());
        for (const auto &name : replaced)
            olds.push_back(m_g.find(name));
        if (auto range = ir::rangeModuleStack(olds))
            n->meta().moduleStack = std::move(*range);
    }
    n->meta().provenance = ir::Provenance{m_pattern, m_step, std::move(replaced)};
    m_edits.push_back({Edit::Kind::Insert, n, before, {}, {}, {}, {}});
    m_touched.push_back(n);
    for (auto *l : m_listeners)
        l->notifyNodeInserted(n);
    return n;
}

void Rewriter::setInputs(Node *n, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs)
{
    FXLENS_ASSERT(n && !n->isErased() && n->graph() == &m_g, "setInputs on a live node of this graph");
    Edit e{Edit::Kind::SetInputs, n, nullptr, n->args(), args, n->kwargs(), kwargs};
    for (Node *in : n->inputNodes())
        m_touched.push_back(in); // an input may have lost its last user
    m_g.setInputs(n, std::move(args), std::move(kwargs));
    m_edits.push_back(std::move(e));
    m_touched.push_back(n);
    for (auto *l : m_listeners)
        l->notifyNodeModified(n);
}

void Rewriter::replaceAllUsesWith(Node *from, Node *to)
{
    FXLENS_ASSERT(from && to && !to->isErased(), "uses are replaced by a live node");
    std::vector<Node *> users = from->users();
    for (Node *u : users) {
        if (u == to)
            continue;
        Edit e{Edit::Kind::SetInputs, u, nullptr, u->args(), {}, u->kwargs(), {}};
        m_g.replaceUse(u, from, to);
        e.newArgs = u->args();
        e.newKwargs = u->kwargs();
        m_edits.push_back(std::move(e));
        m_touched.push_back(u);
        for (auto *l : m_listeners)
            l->notifyNodeModified(u);
    }
    m_touched.push_back(to);
    m_touched.push_back(from);
    for (auto *l : m_listeners)
        l->notifyNodeReplaced(from, to);
}

namespace {
Argument substitute(const Argument &a, const std::unordered_map<const Node *, Node *> &map)
{
    if (a.isNode()) {
        auto it = map.find(a.toNode());
        return it == map.end() ? a : Argument::node(it->second);
    }
    if (a.items().empty() && a.entries().empty())
        return a;
    Argument c = a;
    for (auto &x : c.items())
        x = substitute(x, map);
    for (auto &kv : c.entries())
        kv.second = substitute(kv.second, map);
    return c;
}
} // namespace

void Rewriter::replaceAllUsesWith(const std::vector<std::pair<Node *, Node *>> &pairs)
{
    std::unordered_map<const Node *, Node *> map;
    std::vector<Node *> users;
    std::unordered_set<Node *> seen;
    for (const auto &[from, to] : pairs) {
        map[from] = to;
        for (Node *u : from->users())
            if (seen.insert(u).second)
                users.push_back(u);
    }
    for (Node *u : users) {
        std::vector<Argument> args;
        args.reserve(u->args().size());
        for (const auto &a : u->args())
            args.push_back(substitute(a, map));
        std::vector<std::pair<std::string, Argument>> kwargs;
        for (const auto &kv : u->kwargs())
            kwargs.emplace_back(kv.first, substitute(kv.second, map));
        Edit e{Edit::Kind::SetInputs, u, nullptr, u->args(), args, u->kwargs(), kwargs};
        m_g.setInputs(u, std::move(args), std::move(kwargs));
        m_edits.push_back(std::move(e));
        m_touched.push_back(u);
        for (auto *l : m_listeners)
            l->notifyNodeModified(u);
    }
    for (const auto &[from, to] : pairs) {
        m_touched.push_back(to);
        m_touched.push_back(from);
        for (auto *l : m_listeners)
            l->notifyNodeReplaced(from, to);
    }
}

bool Rewriter::erase(Node *n)
{
    if (!n->users().empty() || n->isErased())
        return false;
    for (auto *l : m_listeners)
        l->notifyNodeErased(n);
    Node *next = n->next();
    auto inputs = n->inputNodes();
    if (!m_g.erase(n))
        return false;
    m_edits.push_back({Edit::Kind::Erase, n, next, {}, {}, {}, {}});
    for (Node *in : inputs)
        m_touched.push_back(in);
    return true;
}

void Rewriter::moveBefore(Node *n, Node *before)
{
    if (n == before || n->next() == before)
        return;
    Edit e{Edit::Kind::Move, n, n->next(), {}, {}, {}, {}};
    e.movedBefore = before;
    m_g.moveBefore(n, before);
    m_edits.push_back(std::move(e));
    m_touched.push_back(n);
}

void Rewriter::eraseIfDead(Node *n)
{
    std::vector<Node *> work{n};
    while (!work.empty()) {
        Node *x = work.back();
        work.pop_back();
        if (x->isErased() || !x->users().empty() || x->op() == ir::OpKind::Placeholder || x->op() == ir::OpKind::Output)
            continue;
        if (rewrite::writesInPlace(x->target()))
            continue; // a side effect: never dead
        auto inputs = x->inputNodes();
        if (erase(x))
            work.insert(work.end(), inputs.begin(), inputs.end());
    }
}

void Rewriter::undo(Graph &g, const std::vector<Edit> &edits)
{
    for (auto it = edits.rbegin(); it != edits.rend(); ++it) {
        switch (it->kind) {
        case Edit::Kind::Insert: g.erase(it->node); break;
        case Edit::Kind::Erase: g.restore(it->node, it->before); break;
        case Edit::Kind::SetInputs: g.setInputs(it->node, it->oldArgs, it->oldKwargs); break;
        case Edit::Kind::Move: g.moveBefore(it->node, it->before); break;
        }
    }
}

void Rewriter::redo(Graph &g, const std::vector<Edit> &edits)
{
    for (const auto &e : edits) {
        switch (e.kind) {
        case Edit::Kind::Insert: g.restore(e.node, e.before); break;
        case Edit::Kind::Erase: g.erase(e.node); break;
        case Edit::Kind::SetInputs: g.setInputs(e.node, e.newArgs, e.newKwargs); break;
        case Edit::Kind::Move: g.moveBefore(e.node, e.movedBefore); break;
        }
    }
}

} // namespace fxlens::rewrite
