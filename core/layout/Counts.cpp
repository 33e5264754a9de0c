// SPDX-License-Identifier: MIT
// How many nodes a module holds, counted one way for its box and the Inspector (see Layered.h:
// NodeCount).
#include "ir/ModuleRange.h"
#include "layout/Layered.h"
#include "util/Text.h"

#include <unordered_set>

namespace fxlens::layout {

std::string NodeCount::text() const
{
    std::string out = countOf(ops, "op");
    if (weights)
        out += " \u00b7 " + countOf(weights, "weight");
    return out;
}

std::vector<const ir::Node *> constantReaders(const ir::Graph &g, const std::vector<uint8_t> &constants)
{
    std::vector<const ir::Node *> reader(g.idBound(), nullptr);
    std::vector<const ir::Node *> held;
    for (const ir::Node *n = g.first(); n; n = n->next())
        if (constants[n->id()])
            held.push_back(n);
    // Last first: a constant computed from others has its reader before they look for theirs.
    for (auto k = held.rbegin(); k != held.rend(); ++k)
        for (const ir::Node *u : (*k)->users()) {
            const ir::Node *r = constants[u->id()] ? reader[u->id()] : u;
            if (r) {
                reader[(*k)->id()] = r;
                break;
            }
        }
    return reader;
}

bool inModule(const ir::Node *n, const std::string &path)
{
    for (const auto &f : displayModules(n))
        if (!f.path.empty() && (f.path == path || ir::rangeContains(path, f.path)))
            return true;
    return false;
}

bool onlyReadIn(const ir::Node *constant, const std::vector<uint8_t> &constants, const std::string &path)
{
    std::vector<const ir::Node *> todo{constant};
    std::unordered_set<const ir::Node *> seen{constant};
    while (!todo.empty()) {
        const ir::Node *n = todo.back();
        todo.pop_back();
        for (const ir::Node *u : n->users()) {
            if (!constants[u->id()]) {
                if (!inModule(u, path))
                    return false;
            } else if (seen.insert(u).second) {
                todo.push_back(u);
            }
        }
    }
    return true;
}

NodeCount moduleNodeCount(const ir::Graph &g, const std::string &path)
{
    const std::vector<uint8_t> constants = constantNodes(g);
    const std::vector<const ir::Node *> reader = constantReaders(g, constants);
    NodeCount c;
    for (const ir::Node *n = g.first(); n; n = n->next()) {
        if (!constants[n->id()])
            c.ops += inModule(n, path);
        else if (const ir::Node *r = reader[n->id()])
            c.weights += inModule(r, path) && onlyReadIn(n, constants, path);
    }
    return c;
}

NodeCount graphNodeCount(const ir::Graph &g)
{
    const std::vector<uint8_t> constants = constantNodes(g);
    NodeCount c;
    for (const ir::Node *n = g.first(); n; n = n->next())
        ++(constants[n->id()] ? c.weights : c.ops);
    return c;
}

} // namespace fxlens::layout
