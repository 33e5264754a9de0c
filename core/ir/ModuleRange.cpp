// SPDX-License-Identifier: MIT
#include "ir/ModuleRange.h"
#include "ir/Node.h"

#include <algorithm>
#include <set>

namespace fxlens::ir {

long moduleIndex(const std::string &path)
{
    const size_t dot = path.rfind('.');
    const std::string last = dot == std::string::npos ? path : path.substr(dot + 1);
    if (last.empty() || last.size() > 9 || !std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return -1;
    return std::stol(last);
}

std::string moduleParent(const std::string &path)
{
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string rangeLabel(const std::string &parent, const std::vector<std::string> &members)
{
    std::set<long> indices;
    for (const auto &m : members)
        if (moduleParent(m) == parent && moduleIndex(m) >= 0)
            indices.insert(moduleIndex(m));
    if (indices.empty())
        return {};
    std::string ranges;
    for (auto it = indices.begin(); it != indices.end();) {
        const long first = *it;
        long last = first;
        while (++it != indices.end() && *it == last + 1)
            last = *it;
        ranges += (ranges.empty() ? "" : ",") + std::to_string(first);
        if (last > first)
            ranges += "\u2013" + std::to_string(last);
    }
    return parent.empty() ? ranges : parent + "." + ranges;
}

bool rangeContains(const std::string &range, const std::string &path)
{
    const long index = moduleIndex(path);
    const std::string parent = moduleParent(path);
    if (index < 0 || range.size() <= parent.size() + 1 || range.compare(0, parent.size(), parent) != 0 ||
        (!parent.empty() && range[parent.size()] != '.'))
        return false;
    const std::string dash = "\u2013";
    std::string spans = range.substr(parent.empty() ? 0 : parent.size() + 1);
    if (spans.find(dash) == std::string::npos && spans.find(',') == std::string::npos)
        return false; // a module's own index, no range
    for (size_t at = 0; at <= spans.size();) {
        const size_t comma = std::min(spans.find(',', at), spans.size());
        const std::string span = spans.substr(at, comma - at);
        const size_t d = span.find(dash);
        const std::string lo = span.substr(0, d), hi = d == std::string::npos ? lo : span.substr(d + dash.size());
        const long first = moduleIndex(lo), last = moduleIndex(hi);
        if (first < 0 || last < 0)
            return false;
        if (index >= first && index <= last)
            return true;
        at = comma + 1;
    }
    return false;
}

namespace {

/// The frame of every chain at `level` where the chains part: siblings of one class, one parent.
bool siblingsAt(const std::vector<const std::vector<ModuleFrame> *> &chains, size_t level, std::vector<std::string> &paths)
{
    const ModuleFrame &first = (*chains[0])[level];
    for (const auto *c : chains) {
        const ModuleFrame &f = (*c)[level];
        if (f.type != first.type || moduleParent(f.path) != moduleParent(first.path) || moduleIndex(f.path) < 0)
            return false;
        paths.push_back(f.path);
    }
    return true;
}

} // namespace

std::optional<std::vector<ModuleFrame>> rangeModuleStack(const std::vector<const Node *> &replaced)
{
    std::vector<const std::vector<ModuleFrame> *> chains; // of the replaced nodes that ran in a module
    for (const Node *n : replaced)
        if (n && !n->meta().moduleStack.empty())
            chains.push_back(&n->meta().moduleStack);
    if (chains.size() < 2)
        return std::nullopt;
    size_t depth = SIZE_MAX;
    for (const auto *c : chains)
        depth = std::min(depth, c->size());
    std::vector<ModuleFrame> out;
    size_t level = 0;
    for (; level < depth; ++level) {
        const bool same = std::all_of(chains.begin(), chains.end(), [&](const auto *c) { return (*c)[level] == (*chains[0])[level]; });
        if (!same)
            break;
        out.push_back((*chains[0])[level]);
    }
    if (level == depth) // one chain is all of the others' start: the same module, or its parent
        return std::all_of(chains.begin(), chains.end(), [&](const auto *c) { return c->size() == depth; }) ? std::nullopt
                                                                                                            : std::optional(out);
    std::vector<std::string> paths;
    if (!siblingsAt(chains, level, paths)) // modules that are not numbered siblings (query, key, value)
        return out.empty() ? std::nullopt : std::optional(out);
    const std::string range = rangeLabel(moduleParent(paths[0]), paths);
    out.push_back({range, range, (*chains[0])[level].type});
    // Deeper frames that are the same child of each sibling ("linear" of every block).
    for (size_t below = level + 1; below < depth; ++below) {
        const ModuleFrame &f0 = (*chains[0])[below];
        if (f0.path.rfind(paths[0] + ".", 0) != 0)
            return out;
        const std::string suffix = f0.path.substr(std::min(f0.path.size(), paths[0].size()));
        for (size_t k = 0; k < chains.size(); ++k) {
            const ModuleFrame &f = (*chains[k])[below];
            if (f.type != f0.type || f.path != paths[k] + suffix)
                return out;
        }
        out.push_back({range + suffix, range + suffix, f0.type});
    }
    return out;
}

} // namespace fxlens::ir
