// SPDX-License-Identifier: MIT
#include "KernelGroups.h"

#include "ProfilePanel.h"

#include <algorithm>
#include <map>
#include <utility>

namespace fxlens::views {

namespace {

/// `nodes` and the elements taken from the tuples they compute (a split's chunks, var_mean's mean),
/// each after its tuple: a getitem is its tuple's kernel's too (the profiler and the compiler name no
/// node for it).
std::vector<const ir::Node *> withElements(const std::vector<const ir::Node *> &nodes)
{
    std::vector<const ir::Node *> out;
    for (const ir::Node *n : nodes) {
        out.push_back(n);
        for (const ir::Node *user : n->users())
            if (user->target() == "operator.getitem" && std::find(nodes.begin(), nodes.end(), user) == nodes.end() &&
                std::find(out.begin(), out.end(), user) == out.end())
                out.push_back(user);
    }
    return out;
}

/// One group per (kernel, what it covers): the same kernel name over other nodes (addmm of another
/// linear) is another call. `covers(k)`: a kernel's key (empty: none) and `nodesOf(key)` its nodes.
template <class Key, class Covers, class NodesOf>
std::vector<KernelGroup> groupKernels(const prof::Profile &p, Covers covers, NodesOf nodesOf)
{
    std::vector<KernelGroup> groups;
    std::map<std::pair<std::string, Key>, size_t> index;
    for (uint32_t i = 0; i < p.kernels.size(); ++i) {
        const auto &k = p.kernels[i];
        const Key &key = covers(k);
        if (key.empty())
            continue;
        auto [it, added] = index.emplace(std::make_pair(k.name, key), groups.size());
        if (added) {
            KernelGroup g;
            g.name = QString::fromStdString(k.name);
            g.nodes = withElements(nodesOf(key));
            groups.push_back(std::move(g));
        }
        auto &g = groups[it->second];
        g.kernels.push_back(i);
        g.usPerIteration += k.durUs / std::max(p.iterations, 1);
    }
    groups.erase(std::remove_if(groups.begin(), groups.end(), [](const KernelGroup &g) { return g.nodes.empty(); }), groups.end());
    return groups;
}

} // namespace

std::vector<KernelGroup> kernelGroups(const prof::Profile &p, const ir::Graph &graph)
{
    if (!p.compiled())
        return {};
    return groupKernels<std::vector<int>>(
        p, [](const prof::KernelRec &k) -> const std::vector<int> & { return k.nodes; },
        [&](const std::vector<int> &nodes) {
            std::vector<const ir::Node *> out;
            for (const int n : nodes)
                if (const ir::Node *node = graph.find(p.nodes[size_t(n)].name))
                    out.push_back(node);
            return out;
        });
}

std::vector<KernelGroup> postGradKernelGroups(const prof::Profile &p, const ir::Graph &postGrad)
{
    return groupKernels<std::vector<std::string>>(
        p, [](const prof::KernelRec &k) -> const std::vector<std::string> & { return k.postGrad; },
        [&](const std::vector<std::string> &names) {
            std::vector<const ir::Node *> out;
            for (const auto &name : names)
                if (const ir::Node *node = postGrad.find(name))
                    out.push_back(node);
            std::sort(out.begin(), out.end(), [](const ir::Node *a, const ir::Node *b) { return a->id() < b->id(); });
            return out;
        });
}

int groupOfKernel(const std::vector<KernelGroup> &groups, uint32_t kernel)
{
    for (size_t g = 0; g < groups.size(); ++g)
        if (std::find(groups[g].kernels.begin(), groups[g].kernels.end(), kernel) != groups[g].kernels.end())
            return int(g);
    return -1;
}

QString groupLabel(const KernelGroup &g) { return g.name + QStringLiteral(" · ") + ProfilePanel::formatTime(g.usPerIteration); }

} // namespace fxlens::views
