// SPDX-License-Identifier: MIT
// DOT writer.
#include "io/DotWriter.h"

#include "ir/Target.h"
#include "util/Text.h"

#include <map>
#include <vector>

namespace fxlens::io {

using namespace fxlens::ir;

namespace {

std::string esc(const std::string &s) { return escapeQuoted(s); }

const char *fillFor(OpKind op)
{
    switch (op) {
    case OpKind::Placeholder: return "#cfe8cf";
    case OpKind::GetAttr: return "#e8e0cf";
    case OpKind::CallFunction: return "#dbe7f7";
    case OpKind::CallMethod: return "#efe0f5";
    case OpKind::CallModule: return "#f7e5cf";
    case OpKind::Output: return "#f5d0d0";
    }
    return "white";
}

std::string shortTarget(const Node &n)
{
    const std::string &t = n.target();
    if (n.op() == OpKind::CallModule || n.op() == OpKind::GetAttr || n.op() == OpKind::Placeholder)
        return t;
    // "aten.cat.default" reads best as "cat.default"; "torch.nn.functional.linear" as "linear".
    const ir::Target target = ir::Target::parse(t);
    if (target.isAten())
        return t.substr(5);
    return target.base();
}

struct Cluster {
    std::vector<const Node *> nodes;
    std::map<std::string, Cluster> children;
};

void emitCluster(std::string &out, const std::string &path, const Cluster &c, int &counter, int depth)
{
    std::string indent(size_t(depth) * 2, ' ');
    for (const auto &[name, child] : c.children) {
        out += indent + "subgraph cluster_" + std::to_string(counter++) + " {\n";
        out += indent + "  label=\"" + esc(name) + "\"; style=rounded; color=\"#9aa5b1\";\n";
        emitCluster(out, path.empty() ? name : path + "." + name, child, counter, depth + 1);
        out += indent + "}\n";
    }
    for (const Node *n : c.nodes)
        out += indent + "\"" + esc(n->name()) + "\";\n";
}

} // namespace

std::string writeDot(const Graph &g, const DotOptions &opts)
{
    std::string out = "digraph \"" + esc(g.name.empty() ? std::string("graph") : g.name) + "\" {\n";
    out += "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
    out += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#5f6b7a\"];\n";
    for (Node *n = g.first(); n; n = n->next()) {
        std::string label = n->name() + "\\n" + esc(shortTarget(*n));
        out += "  \"" + esc(n->name()) + "\" [label=\"" + label + "\", fillcolor=\"" + fillFor(n->op()) + "\"];\n";
    }
    if (opts.clusterModules) {
        Cluster root;
        for (Node *n = g.first(); n; n = n->next()) {
            Cluster *c = &root;
            for (const auto &f : n->meta().moduleStack) {
                // Each frame's path extends its parent's: nest by the last component relative to the parent.
                std::string name = f.path;
                c = &c->children[name];
            }
            c->nodes.push_back(n);
        }
        if (!root.children.empty()) {
            int counter = 0;
            std::string clusters;
            emitCluster(clusters, "", root, counter, 1);
            out += clusters;
        }
    }
    for (Node *n = g.first(); n; n = n->next()) {
        for (Node *in : n->inputNodes()) {
            out += "  \"" + esc(in->name()) + "\" -> \"" + esc(n->name()) + "\"";
            if (opts.showShapes && in->meta().val.isTensor())
                out += " [label=\"" + esc(in->meta().val.toString()) + "\"]";
            out += ";\n";
        }
    }
    out += "}\n";
    return out;
}

} // namespace fxlens::io
