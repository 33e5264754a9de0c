// SPDX-License-Identifier: MIT
// Canonical graph printer.
#include "ir/Printer.h"

namespace fxlens::ir {

static std::string printArgs(const std::vector<Argument> &args)
{
    std::string s = "(";
    for (size_t i = 0; i < args.size(); ++i) {
        if (i)
            s += ", ";
        s += args[i].toString();
    }
    if (args.size() == 1)
        s += ",";
    return s + ")";
}

static std::string printKwargs(const std::vector<std::pair<std::string, Argument>> &kwargs)
{
    std::string s = "{";
    for (size_t i = 0; i < kwargs.size(); ++i) {
        if (i)
            s += ", ";
        s += kwargs[i].first + ": " + kwargs[i].second.toString();
    }
    return s + "}";
}

std::string printNode(const Node &n, const PrintOptions &opts)
{
    std::string s = "%" + n.name() + " : [num_users=" + std::to_string(n.users().size()) + "] = ";
    s += opKindName(n.op());
    s += "[target=" + n.target() + "]";
    if (n.op() != OpKind::Placeholder && n.op() != OpKind::GetAttr)
        s += "(args = " + printArgs(n.args()) + ", kwargs = " + printKwargs(n.kwargs()) + ")";
    else if (!n.args().empty()) // placeholder default value
        s += "(default = " + n.args()[0].toString() + ")";
    bool meta = opts.showMeta && n.meta().val.kind != ValueMeta::Kind::Unknown && n.op() != OpKind::Output;
    bool mod = opts.showModule && !n.meta().modulePath().empty();
    if (meta || mod) {
        s += "  #";
        if (meta)
            s += " " + n.meta().val.toString();
        if (mod)
            s += " @" + n.meta().modulePath();
    }
    return s;
}

std::string printGraph(const Graph &g, const PrintOptions &opts)
{
    std::string s = "graph():\n";
    for (Node *n = g.first(); n; n = n->next()) {
        if (n->op() == OpKind::Output) {
            s += "    return " + (n->args().empty() ? std::string("None") : n->args()[0].toString()) + "\n";
            continue;
        }
        s += "    " + printNode(*n, opts) + "\n";
    }
    return s;
}

} // namespace fxlens::ir
