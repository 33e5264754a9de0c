// SPDX-License-Identifier: MIT
// Graph diff by node name.
#include "ir/GraphDiff.h"

#include "ir/Printer.h"

namespace fxlens::ir {

std::vector<std::string> GraphDiff::names(DiffLine::Kind k) const
{
    std::vector<std::string> out;
    for (const auto &l : lines)
        if (l.kind == k)
            out.push_back(l.name);
    return out;
}

std::vector<DiffLine> GraphDiff::changed() const
{
    std::vector<DiffLine> out;
    for (const auto &l : lines)
        if (l.kind == DiffLine::Kind::Changed)
            out.push_back(l);
    return out;
}

std::string GraphDiff::toString() const
{
    std::string s;
    for (const auto &l : lines) {
        switch (l.kind) {
        case DiffLine::Kind::Added: s += "+ " + l.after + "\n"; break;
        case DiffLine::Kind::Removed: s += "- " + l.before + "\n"; break;
        case DiffLine::Kind::Changed: s += "~ " + l.before + "  ->  " + l.after + "\n"; break;
        case DiffLine::Kind::Moved: s += "~ " + l.name + " moved before " + l.after + "\n"; break;
        }
    }
    return s;
}

std::string nodeLine(const Node &n, bool meta)
{
    PrintOptions o;
    o.showMeta = meta;
    std::string s = printNode(n, o);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    const size_t lead = s.find_first_not_of(' ');
    return lead == std::string::npos ? s : s.substr(lead);
}

GraphDiff diffGraphs(const Graph &a, const Graph &b)
{
    GraphDiff d;
    std::vector<DiffLine> changed;
    for (Node *n = a.first(); n; n = n->next()) {
        Node *m = b.find(n->name());
        if (!m) {
            d.lines.push_back({DiffLine::Kind::Removed, n->name(), nodeLine(*n), {}});
            continue;
        }
        std::string pa = nodeLine(*n, true), pb = nodeLine(*m, true);
        if (pa != pb)
            changed.push_back({DiffLine::Kind::Changed, n->name(), std::move(pa), std::move(pb)});
    }
    for (Node *m = b.first(); m; m = m->next())
        if (!a.find(m->name()))
            d.lines.push_back({DiffLine::Kind::Added, m->name(), {}, nodeLine(*m)});
    d.lines.insert(d.lines.end(), changed.begin(), changed.end());
    return d;
}

} // namespace fxlens::ir
