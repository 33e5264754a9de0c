// SPDX-License-Identifier: MIT
// Graph statistics.
#include "ir/GraphInfo.h"

#include "ir/Printer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>

namespace fxlens::ir {

GraphInfo computeGraphInfo(const Graph &g)
{
    GraphInfo info;
    if (g.session)
        info.session = g.session->summary();
    std::vector<size_t> level(g.idBound(), 0);
    std::unordered_map<std::string, size_t> perModule;
    for (Node *n = g.first(); n; n = n->next()) {
        ++info.nodes;
        ++info.byOp[opKindName(n->op())];
        if (n->op() != OpKind::Placeholder && n->op() != OpKind::Output && n->op() != OpKind::GetAttr)
            ++info.byTarget[std::string(opKindName(n->op())) + " " + n->target()];
        size_t lv = 1;
        for (Node *in : n->inputNodes()) {
            ++info.edges;
            lv = std::max(lv, level[in->id()] + 1);
        }
        level[n->id()] = lv;
        info.depth = std::max(info.depth, lv);
        // Count the node in its module and every enclosing one.
        std::string path = n->meta().modulePath();
        ++perModule[""];
        while (!path.empty()) {
            ++perModule[path];
            auto dot = path.rfind('.');
            path = dot == std::string::npos ? std::string() : path.substr(0, dot);
        }
    }
    // Natural order: blocks.2 before blocks.10.
    auto natural = [](const std::string &a, const std::string &b) {
        size_t i = 0, j = 0;
        while (i < a.size() && j < b.size()) {
            if (std::isdigit((unsigned char)a[i]) && std::isdigit((unsigned char)b[j])) {
                size_t i2 = i, j2 = j;
                while (i2 < a.size() && std::isdigit((unsigned char)a[i2]))
                    ++i2;
                while (j2 < b.size() && std::isdigit((unsigned char)b[j2]))
                    ++j2;
                std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
                if (na.size() != nb.size())
                    return na.size() < nb.size();
                if (na != nb)
                    return na < nb;
                i = i2;
                j = j2;
                continue;
            }
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
        return a.size() - i < b.size() - j;
    };
    std::map<std::string, std::string, decltype(natural)> types(natural);
    for (const auto &m : g.modules)
        types[m.path] = m.type;
    for (const auto &[path, count] : perModule)
        types.emplace(path, "");
    for (const auto &[path, type] : types) {
        ModuleTreeEntry e;
        e.path = path;
        e.type = type;
        e.depth = path.empty() ? 0 : size_t(std::count(path.begin(), path.end(), '.')) + 1;
        auto it = perModule.find(path);
        e.nodes = it == perModule.end() ? 0 : it->second;
        info.moduleTree.push_back(e);
    }
    return info;
}

std::string GraphInfo::toString(size_t maxTargets) const
{
    std::string s;
    char buf[256];
    std::snprintf(buf, sizeof buf, "nodes: %zu\nedges: %zu\ndepth: %zu\n", nodes, edges, depth);
    s += buf;
    if (!session.empty())
        s += "session: " + session + "\n";
    s += "by op:\n";
    for (const auto &[op, c] : byOp) {
        std::snprintf(buf, sizeof buf, "  %-14s %zu\n", op.c_str(), c);
        s += buf;
    }
    std::vector<std::pair<std::string, size_t>> targets(byTarget.begin(), byTarget.end());
    std::stable_sort(targets.begin(), targets.end(), [](auto &a, auto &b) { return a.second > b.second; });
    s += "by target:\n";
    for (size_t i = 0; i < targets.size() && i < maxTargets; ++i) {
        std::snprintf(buf, sizeof buf, "  %7zu  %s\n", targets[i].second, targets[i].first.c_str());
        s += buf;
    }
    if (targets.size() > maxTargets)
        s += "  ... " + std::to_string(targets.size() - maxTargets) + " more targets\n";
    s += "modules: " + std::to_string(moduleTree.size()) + "\n";
    size_t shown = 0;
    for (const auto &m : moduleTree) {
        if (m.depth > 2 || shown >= 40)
            continue;
        ++shown;
        std::string label = m.path.empty() ? "<root>" : m.path.substr(m.path.rfind('.') == std::string::npos ? 0 : m.path.rfind('.') + 1);
        std::snprintf(buf, sizeof buf, "  %*s%s (%s) %zu nodes\n", int(m.depth * 2), "", label.c_str(),
                      m.type.empty() ? "?" : m.type.c_str(), m.nodes);
        s += buf;
    }
    if (shown < moduleTree.size())
        s += "  ... " + std::to_string(moduleTree.size() - shown) + " deeper or further modules\n";
    return s;
}

uint64_t fingerprint(const Graph &g)
{
    uint64_t h = 1469598103934665603ull; // FNV-1a over each node's printed form and a separator
    for (Node *n = g.first(); n; n = n->next()) {
        for (unsigned char c : printNode(*n)) {
            h ^= c;
            h *= 1099511628211ull;
        }
        h ^= 0xff;
        h *= 1099511628211ull;
    }
    return h;
}

std::string fingerprintHex(const Graph &g)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fingerprint(g)));
    return buf;
}

} // namespace fxlens::ir
