// SPDX-License-Identifier: MIT
// libgvc wrapper.
#include "layout/GraphvizRender.h"
#include "layout/Layered.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace fxlens::layout {

namespace {
std::mutex &graphvizMutex()
{
    static std::mutex m;
    return m;
}
Diagnostic error(std::string msg)
{
    Diagnostic d;
    d.message = std::move(msg);
    return d;
}
} // namespace

Result<std::string> renderDot(const std::string &dot, const std::string &format, const std::string &engine)
{
    std::lock_guard<std::mutex> lock(graphvizMutex());
    GVC_t *gvc = gvContext();
    if (!gvc)
        return error("Graphviz: cannot create a context");
    Agraph_t *g = agmemread(dot.c_str());
    if (!g) {
        gvFreeContext(gvc);
        return error("Graphviz: cannot parse the DOT text");
    }
    if (gvLayout(gvc, g, engine.c_str()) != 0) {
        agclose(g);
        gvFreeContext(gvc);
        return error("Graphviz: layout engine '" + engine + "' failed or is not installed");
    }
    char *data = nullptr;
    unsigned int length = 0;
    int rc = gvRenderData(gvc, g, format.c_str(), &data, &length);
    std::string out;
    if (rc == 0 && data)
        out.assign(data, length);
    if (data)
        gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
    agclose(g);
    gvFreeContext(gvc);
    if (rc != 0)
        return error("Graphviz: cannot render format '" + format + "'");
    return out;
}

Status graphvizLayout(ViewGraph &v)
{
    // Items as fixed-size boxes (inches), edges as they are; `plain` output gives the centres.
    std::string dot = "digraph G {\n  graph [rankdir=TB, nodesep=0.2, ranksep=0.45];\n  node [shape=box, fixedsize=true, label=\"\"];\n";
    char buf[160];
    for (size_t i = 0; i < v.items.size(); ++i) {
        std::snprintf(buf, sizeof buf, "  n%zu [width=%.3f, height=%.3f];\n", i, v.items[i].w / 72.0, v.items[i].h / 72.0);
        dot += buf;
    }
    for (const auto &e : v.edges) {
        std::snprintf(buf, sizeof buf, "  n%u -> n%u;\n", e.from, e.to);
        dot += buf;
    }
    dot += "}\n";
    auto plain = renderDot(dot, "plain", "dot");
    if (!plain)
        return plain.error();
    // plain: "graph scale width height", "node name x y w h ...", y grows upwards, inches.
    double gw = 0, gh = 0;
    const std::string &text = plain.value();
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        double scale = 0, x = 0, y = 0;
        unsigned id = 0;
        if (std::sscanf(line.c_str(), "graph %lf %lf %lf", &scale, &gw, &gh) == 3)
            continue;
        if (std::sscanf(line.c_str(), "node n%u %lf %lf", &id, &x, &y) == 3 && id < v.items.size()) {
            auto &it = v.items[id];
            it.x = x * 72.0 - it.w / 2;
            it.y = (gh - y) * 72.0 - it.h / 2;
        }
    }
    v.width = gw * 72.0;
    v.height = gh * 72.0;
    // Keep every item inside the extent (dot's box may be a little tighter than ours).
    for (const auto &it : v.items) {
        v.width = std::max(v.width, it.x + it.w);
        v.height = std::max(v.height, it.y + it.h);
    }
    for (auto &it : v.items) {
        it.x = std::max(0.0, it.x);
        it.y = std::max(0.0, it.y);
    }
    return {};
}

} // namespace fxlens::layout
