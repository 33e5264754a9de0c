// SPDX-License-Identifier: MIT
// The pattern-graph matcher: top-down from the anchor through operand edges, arguments read in
// schema order, a memo so that a named pattern node binds one graph node, per-element bindings in
// variadic lists, and a failure record that says where and why.
#include "rewrite/PatternGraph.h"

#include "rewrite/Schema.h"

#include <algorithm>
#include <unordered_set>

namespace fxlens::rewrite {

using ir::OpKind;

// --- Bindings -------------------------------------------------------------------------------------

Node *Bindings::node(const std::string &name) const
{
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : it->second;
}

const Argument *Bindings::value(const std::string &name) const
{
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
}

int64_t Bindings::integer(const std::string &name, int64_t dflt) const
{
    const Argument *a = value(name);
    return a && a->isInt() ? a->toInt() : dflt;
}

const std::vector<Argument> &Bindings::list(const std::string &name) const
{
    static const std::vector<Argument> empty;
    auto it = lists.find(name);
    return it == lists.end() ? empty : it->second;
}

std::vector<Node *> Bindings::nodeList(const std::string &name) const
{
    std::vector<Node *> out;
    for (const auto &a : list(name))
        out.push_back(a.isNode() ? a.toNode() : nullptr);
    return out;
}

// --- PArg -----------------------------------------------------------------------------------------

PArg PArg::capture(std::string n)
{
    PArg a;
    a.kind = Kind::Capture;
    a.name = std::move(n);
    return a;
}

PArg PArg::lit(Argument v)
{
    PArg a;
    a.kind = Kind::Literal;
    a.literal = std::move(v);
    return a;
}

PArg PArg::ref(int node)
{
    PArg a;
    a.kind = Kind::Node;
    a.node = node;
    return a;
}

PArg PArg::listOf(PArg elem, std::string name, bool partial)
{
    PArg a;
    a.kind = Kind::ListOf;
    a.items = {std::move(elem)};
    a.name = std::move(name);
    a.partial = partial;
    return a;
}

PArg PArg::listExact(std::vector<PArg> items)
{
    PArg a;
    a.kind = Kind::List;
    a.items = std::move(items);
    return a;
}

static std::string pnodeLabel(const std::vector<PNode> &nodes, int i)
{
    const PNode &p = nodes[size_t(i)];
    if (!p.name.empty())
        return p.name;
    return p.ops.empty() ? "_" : p.ops.front().second;
}

std::string PArg::toString(const std::vector<PNode> &nodes) const
{
    switch (kind) {
    case Kind::Any: return "_";
    case Kind::Capture: return "?" + name;
    case Kind::Literal: return literal.toString();
    case Kind::Node: return "%" + pnodeLabel(nodes, node);
    case Kind::List: {
        std::string s = "[";
        for (size_t i = 0; i < items.size(); ++i)
            s += (i ? ", " : "") + items[i].toString(nodes);
        return s + "]";
    }
    case Kind::ListOf: return std::string(partial ? "[.., " : "[") + items[0].toString(nodes) + ", ...]";
    }
    return "?";
}

std::string PatternGraph::toString() const
{
    std::string s;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const PNode &p = nodes[i];
        s += "%" + pnodeLabel(nodes, int(i)) + " = ";
        if (p.ops.empty()) {
            s += "input\n";
            continue;
        }
        for (size_t k = 0; k < p.ops.size(); ++k)
            s += (k ? "|" : "") + std::string(p.ops[k].first == OpKind::CallMethod ? "." : "") + p.ops[k].second;
        s += "(";
        for (size_t k = 0; k < p.args.size(); ++k)
            s += (k ? ", " : "") + p.args[k].toString(nodes);
        s += ")";
        if (p.users >= 0)
            s += " users=" + std::to_string(p.users);
        if (int(i) == root)
            s += "  # anchor";
        s += "\n";
    }
    for (const auto &c : constraints)
        s += "where " + c.text + "\n";
    return s;
}

// --- Matcher --------------------------------------------------------------------------------------

namespace {

bool sameValue(const Argument &a, const Argument &b)
{
    bool an = a.isInt() || a.isFloat(), bn = b.isInt() || b.isFloat();
    if (an && bn)
        return a.isInt() && b.isInt() ? a.toInt() == b.toInt() : a.toFloat() == b.toFloat();
    if (a.isSequence() && b.isSequence()) {
        if (a.items().size() != b.items().size())
            return false;
        for (size_t i = 0; i < a.items().size(); ++i)
            if (!sameValue(a.items()[i], b.items()[i]))
                return false;
        return true;
    }
    return a == b;
}

bool perElementName(const std::string &n) { return n.empty() || n[0] == '*'; }

struct Matcher {
    Matcher(const PatternGraph &g, Bindings &bb, MatchFailure &w) : pg(g), b(bb), why(w), bound(g.nodes.size(), nullptr) {}
    const PatternGraph &pg;
    Bindings &b;
    MatchFailure &why;
    std::vector<Node *> bound;
    int listDepth = 0;
    // Undo trail for partial lists: pattern nodes bound and capture names set, in order.
    std::vector<int> nodeTrail;
    std::vector<std::string> capTrail;
    // Per-element results of the innermost element being matched.
    std::vector<int> elemNodes;
    std::vector<std::pair<std::string, Argument>> elemCaps;

    bool fail(const std::string &element, const Node *n, std::string expected, std::string found)
    {
        why = {element, n ? n->name() : std::string("?"), std::move(expected), std::move(found)};
        return false;
    }

    std::string expectedOps(const PNode &p) const
    {
        std::string s;
        for (size_t k = 0; k < p.ops.size(); ++k)
            s += (k ? " | " : "") + std::string(p.ops[k].first == OpKind::CallMethod ? "Tensor." : "") + p.ops[k].second;
        return s;
    }

    bool matchNode(int pi, Node *n, bool isRoot)
    {
        const PNode &p = pg.nodes[size_t(pi)];
        if (bound[size_t(pi)]) {
            if (bound[size_t(pi)] == n)
                return true;
            return fail(pnodeLabel(pg.nodes, pi), n, "the node already bound ('" + bound[size_t(pi)]->name() + "')", "'" + n->name() + "'");
        }
        if (!p.ops.empty()) {
            bool ok = false;
            for (const auto &o : p.ops)
                if (n->op() == o.first && n->target() == o.second) {
                    ok = true;
                    break;
                }
            if (!ok)
                return fail(pnodeLabel(pg.nodes, pi), n, expectedOps(p),
                            n->op() == OpKind::CallFunction     ? n->target()
                                : n->op() == OpKind::CallMethod ? "Tensor." + n->target()
                                                                : std::string(ir::opKindName(n->op())) + " " + n->target());
            if (!isRoot && p.users >= 0 && int(n->users().size()) != p.users)
                return fail(pnodeLabel(pg.nodes, pi) + " users", n, std::to_string(p.users), std::to_string(n->users().size()));
        }
        bound[size_t(pi)] = n;
        nodeTrail.push_back(pi);
        if (listDepth > 0 && perElementName(p.name))
            elemNodes.push_back(pi);
        if (p.ops.empty())
            return true;
        b.matched.push_back(n);
        if (p.args.empty())
            return true;
        std::vector<Argument> in;
        const OpSchema *s = schemaFor(n->op(), n->target());
        if (s) {
            std::string err;
            if (!normalizedArgs(n, *s, in, &err))
                return fail(pnodeLabel(pg.nodes, pi) + " arguments", n, "a call that fits the schema of " + n->target(), err);
        } else {
            in = n->args();
        }
        for (size_t i = 0; i < p.args.size(); ++i) {
            std::string what = "argument " + (s && i < s->params.size() ? "'" + s->params[i].name + "'" : std::to_string(i)) + " of " +
                pnodeLabel(pg.nodes, pi);
            if (!matchArg(p.args[i], i < in.size() ? &in[i] : nullptr, n, what))
                return false;
        }
        return true;
    }

    bool capture(const std::string &name, const Argument &v, const Node *n, const std::string &what)
    {
        if (listDepth > 0 && name[0] == '*') {
            elemCaps.push_back({name, v});
            return true;
        }
        auto it = b.values.find(name);
        if (it != b.values.end()) {
            if (sameValue(it->second, v))
                return true;
            return fail(what, n, "?" + name + " = " + it->second.toString() + " (bound before)", v.toString());
        }
        b.values.emplace(name, v);
        capTrail.push_back(name);
        return true;
    }

    bool matchArg(const PArg &pa, const Argument *a, Node *n, const std::string &what)
    {
        static const Argument none;
        switch (pa.kind) {
        case PArg::Kind::Any: return true;
        case PArg::Kind::Capture: return capture(pa.name, a ? *a : none, n, what);
        case PArg::Kind::Literal:
            if (a && sameValue(*a, pa.literal))
                return true;
            return fail(what, n, pa.literal.toString(), a ? a->toString() : "nothing");
        case PArg::Kind::Node:
            if (!a || !a->isNode())
                return fail(what, n, "a node", a ? a->toString() : "nothing");
            return matchNode(pa.node, a->toNode(), false);
        case PArg::Kind::List:
            if (!a || !a->isSequence() || a->items().size() != pa.items.size())
                return fail(what, n, "a list of " + std::to_string(pa.items.size()),
                            !a                    ? "nothing"
                                : a->isSequence() ? "a list of " + std::to_string(a->items().size())
                                                  : a->toString());
            for (size_t i = 0; i < pa.items.size(); ++i)
                if (!matchArg(pa.items[i], &a->items()[i], n, what + "[" + std::to_string(i) + "]"))
                    return false;
            return true;
        case PArg::Kind::ListOf: return matchListOf(pa, a, n, what);
        }
        return false;
    }

    void rollback(size_t nodeMark, size_t capMark, size_t matchedMark)
    {
        while (nodeTrail.size() > nodeMark) {
            bound[size_t(nodeTrail.back())] = nullptr;
            nodeTrail.pop_back();
        }
        while (capTrail.size() > capMark) {
            b.values.erase(capTrail.back());
            capTrail.pop_back();
        }
        b.matched.resize(matchedMark);
    }

    bool matchListOf(const PArg &pa, const Argument *a, Node *n, const std::string &what)
    {
        if (!a || !a->isSequence() || a->items().empty())
            return fail(what, n, "a non-empty list", a ? a->toString() : "nothing");
        auto savedNodes = std::move(elemNodes);
        auto savedCaps = std::move(elemCaps);
        ++listDepth;
        std::vector<Argument> positions;
        MatchFailure firstFailure;
        bool anyFailure = false;
        std::map<std::string, std::vector<Argument>> collected;
        for (size_t i = 0; i < a->items().size(); ++i) {
            elemNodes.clear();
            elemCaps.clear();
            size_t nm = nodeTrail.size(), cm = capTrail.size(), mm = b.matched.size();
            if (!matchArg(pa.items[0], &a->items()[i], n, what + "[" + std::to_string(i) + "]")) {
                if (!pa.partial) {
                    --listDepth;
                    elemNodes = std::move(savedNodes);
                    elemCaps = std::move(savedCaps);
                    return false;
                }
                if (!anyFailure)
                    firstFailure = why;
                anyFailure = true;
                rollback(nm, cm, mm);
                continue;
            }
            positions.push_back(Argument::integer(int64_t(i)));
            for (int pi : elemNodes) {
                const std::string &name = pg.nodes[size_t(pi)].name;
                if (!name.empty())
                    collected[name].push_back(Argument::node(bound[size_t(pi)]));
                bound[size_t(pi)] = nullptr; // the next element binds it afresh
            }
            for (auto &kv : elemCaps)
                collected[kv.first].push_back(std::move(kv.second));
        }
        --listDepth;
        elemNodes = std::move(savedNodes);
        elemCaps = std::move(savedCaps);
        if (positions.empty()) {
            why = firstFailure;
            return false;
        }
        for (auto &kv : collected)
            b.lists[kv.first] = std::move(kv.second);
        if (!pa.name.empty())
            b.lists[pa.name] = std::move(positions);
        return true;
    }
};

} // namespace

bool matchPatternGraph(const PatternGraph &pg, Node *anchor, Bindings &b, MatchFailure &why)
{
    Matcher m(pg, b, why);
    if (!m.matchNode(pg.root, anchor, true))
        return false;
    for (size_t i = 0; i < pg.nodes.size(); ++i)
        if (m.bound[i] && !pg.nodes[i].name.empty())
            b.nodes[pg.nodes[i].name] = m.bound[i];
    for (const auto &c : pg.constraints)
        if (!c.check(b, why)) {
            if (why.element.empty())
                why.element = "constraint " + c.text;
            if (why.node.empty())
                why.node = anchor->name();
            return false;
        }
    return true;
}

// --- Builder --------------------------------------------------------------------------------------

int PatternBuilder::input(std::string name)
{
    m_g.nodes.push_back({std::move(name), {}, {}, -1});
    return int(m_g.nodes.size()) - 1;
}

int PatternBuilder::call(std::string name, std::vector<std::string> ops, std::vector<PArg> args, int users)
{
    PNode p;
    p.name = std::move(name);
    for (auto &o : ops) {
        if (o.rfind("method:", 0) == 0)
            p.ops.push_back({OpKind::CallMethod, o.substr(7)});
        else if (o.rfind("module:", 0) == 0)
            p.ops.push_back({OpKind::CallModule, o.substr(7)});
        else
            p.ops.push_back({OpKind::CallFunction, o});
    }
    p.args = std::move(args);
    p.users = users;
    m_g.nodes.push_back(std::move(p));
    return int(m_g.nodes.size()) - 1;
}

void PatternBuilder::constrain(std::string text, std::function<bool(const Bindings &, MatchFailure &)> check)
{
    m_g.constraints.push_back({std::move(text), std::move(check)});
}

PatternGraph PatternBuilder::build(int root)
{
    m_g.root = root;
    return std::move(m_g);
}

// --- GraphPattern ---------------------------------------------------------------------------------

void GraphPattern::deriveAnchors()
{
    anchors.clear();
    for (const auto &o : graph.nodes[size_t(graph.root)].ops)
        anchors.push_back({o.first, o.second});
}

bool GraphPattern::match(Node *anchor, Match &m, MatchFailure &why) const
{
    auto b = std::make_shared<Bindings>();
    if (!matchPatternGraph(graph, anchor, *b, why))
        return false;
    m.nodes = b->matched;
    // Matched calls that only feed other matched calls die with the anchor.
    std::unordered_set<Node *> in(b->matched.begin(), b->matched.end());
    for (Node *n : b->matched) {
        bool internal = n == anchor || std::all_of(n->users().begin(), n->users().end(), [&](Node *u) { return in.count(u) > 0; });
        if (internal && std::find(m.removes.begin(), m.removes.end(), n) == m.removes.end())
            m.removes.push_back(n);
    }
    m.summary = summarize ? summarize(*b) : name + " at " + anchor->name();
    m.bindings = std::move(b);
    return true;
}

void GraphPattern::rewrite(const Match &m, Rewriter &rw) const
{
    if (apply && m.bindings)
        apply(*m.bindings, rw);
}

} // namespace fxlens::rewrite
