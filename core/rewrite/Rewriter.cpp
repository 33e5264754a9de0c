// SPDX-License-Identifier: MIT
// Rewriter and its reversible edit log.
#include "rewrite/Rewriter.h"

namespace fxlens::rewrite {

Node *Rewriter::create(ir::OpKind op, std::string target, std::vector<Argument> args,
                       std::vector<std::pair<std::string, Argument>> kwargs, const std::string &name, Node *before,
                       const Node *like, std::vector<std::string> replaced)
{
    Node *n = m_g.create(op, std::move(target), std::move(args), std::move(kwargs), name, before);
    if (like) {
        n->meta().moduleStack = like->meta().moduleStack;
        n->meta().stackTrace = like->meta().stackTrace;
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
    Edit e{Edit::Kind::SetInputs, n, nullptr, n->args(), args, n->kwargs(), kwargs};
    for (Node *in : n->inputNodes())
        m_touched.push_back(in); // an input may have lost its last user
    m_g.setInputs(n, std::move(args), std::move(kwargs));
    m_edits.push_back(std::move(e));
    m_touched.push_back(n);
}

void Rewriter::replaceAllUsesWith(Node *from, Node *to)
{
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
    }
    m_touched.push_back(to);
    m_touched.push_back(from);
    for (auto *l : m_listeners)
        l->notifyNodeReplaced(from, to);
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

void Rewriter::eraseIfDead(Node *n)
{
    std::vector<Node *> work{n};
    while (!work.empty()) {
        Node *x = work.back();
        work.pop_back();
        if (x->isErased() || !x->users().empty() || x->op() == ir::OpKind::Placeholder ||
            x->op() == ir::OpKind::Output)
            continue;
        // Ops with side effects (in-place methods, *_ ATen overloads) are never dead.
        const std::string &t = x->target();
        if (!t.empty() && (t.back() == '_' || t.find("_.") != std::string::npos))
            continue;
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
        }
    }
}

} // namespace fxlens::rewrite
