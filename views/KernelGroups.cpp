// SPDX-License-Identifier: MIT
#include "KernelGroups.h"

#include "ProfilePanel.h"

#include <algorithm>
#include <map>
#include <utility>

namespace fxlens::views {

std::vector<KernelGroup> kernelGroups(const prof::Profile &p, const ir::Graph &graph)
{
    std::vector<KernelGroup> groups;
    if (!p.compiled())
        return groups;
    // One group per (kernel, nodes): the same kernel name over other nodes (addmm of another
    // linear) is another call.
    std::map<std::pair<std::string, std::vector<int>>, size_t> index;
    for (uint32_t i = 0; i < p.kernels.size(); ++i) {
        const auto &k = p.kernels[i];
        if (k.nodes.empty())
            continue;
        auto [it, added] = index.emplace(std::make_pair(k.name, k.nodes), groups.size());
        if (added) {
            KernelGroup g;
            g.name = QString::fromStdString(k.name);
            for (const int n : k.nodes)
                if (const ir::Node *node = graph.find(p.nodes[size_t(n)].name))
                    g.nodes.push_back(node);
            groups.push_back(std::move(g));
        }
        auto &g = groups[it->second];
        g.kernels.push_back(i);
        g.usPerIteration += k.durUs / std::max(p.iterations, 1);
    }
    groups.erase(std::remove_if(groups.begin(), groups.end(), [](const KernelGroup &g) { return g.nodes.empty(); }), groups.end());
    return groups;
}

std::vector<KernelGroup> postGradKernelGroups(const prof::Profile &p, const ir::Graph &postGrad)
{
    std::vector<KernelGroup> groups;
    std::map<std::pair<std::string, std::vector<std::string>>, size_t> index;
    for (uint32_t i = 0; i < p.kernels.size(); ++i) {
        const auto &k = p.kernels[i];
        if (k.postGrad.empty())
            continue;
        auto [it, added] = index.emplace(std::make_pair(k.name, k.postGrad), groups.size());
        if (added) {
            KernelGroup g;
            g.name = QString::fromStdString(k.name);
            for (const auto &name : k.postGrad)
                if (const ir::Node *node = postGrad.find(name))
                    g.nodes.push_back(node);
            std::sort(g.nodes.begin(), g.nodes.end(), [](const ir::Node *a, const ir::Node *b) { return a->id() < b->id(); });
            groups.push_back(std::move(g));
        }
        auto &g = groups[it->second];
        g.kernels.push_back(i);
        g.usPerIteration += k.durUs / std::max(p.iterations, 1);
    }
    groups.erase(std::remove_if(groups.begin(), groups.end(), [](const KernelGroup &g) { return g.nodes.empty(); }), groups.end());
    return groups;
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
