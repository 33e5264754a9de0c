// SPDX-License-Identifier: MIT
// Graph diff by node name.
#include "ir/GraphDiff.h"

#include "ir/Printer.h"

namespace fxlens::ir {

GraphDiff diffGraphs(const Graph &a, const Graph &b)
{
    GraphDiff d;
    PrintOptions opts;
    opts.showMeta = true;
    for (Node *n = a.first(); n; n = n->next()) {
        Node *m = b.find(n->name());
        if (!m) {
            d.removed.push_back(n->name());
            continue;
        }
        // Printed form compares op, target, args/kwargs (node refs by name), user count and value meta.
        std::string pa = printNode(*n, opts), pb = printNode(*m, opts);
        if (pa != pb)
            d.changed.push_back({n->name(), pa, pb});
    }
    for (Node *m = b.first(); m; m = m->next())
        if (!a.find(m->name()))
            d.added.push_back(m->name());
    return d;
}

std::string GraphDiff::toString() const
{
    std::string s;
    for (const auto &r : removed)
        s += "- %" + r + "\n";
    for (const auto &a : added)
        s += "+ %" + a + "\n";
    for (const auto &c : changed)
        s += "~ " + c.before + "\n  => " + c.after + "\n";
    return s;
}

} // namespace fxlens::ir
