// SPDX-License-Identifier: MIT
// libgvc wrapper.
#include "layout/GraphvizRender.h"
#include "layout/Layered.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
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
    // plain: "graph scale width height", "node name x y w h ...", "edge tail head n x1 y1 ... xn yn
    // ...", y grows upwards, inches. Edges keep dot's splines (sampled B-spline control points).
    double gw = 0, gh = 0;
    std::map<std::pair<uint32_t, uint32_t>, size_t> edgeOf;
    for (size_t e = 0; e < v.edges.size(); ++e)
        edgeOf[{v.edges[e].from, v.edges[e].to}] = e;
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
            continue;
        }
        unsigned tail = 0, head = 0;
        int count = 0, used = 0;
        if (std::sscanf(line.c_str(), "edge n%u n%u %d%n", &tail, &head, &count, &used) == 3 && count >= 2) {
            auto it = edgeOf.find({tail, head});
            if (it == edgeOf.end())
                continue;
            std::vector<Point> ctrl;
            const char *p = line.c_str() + used;
            for (int k = 0; k < count; ++k) {
                int adv = 0;
                if (std::sscanf(p, "%lf %lf%n", &x, &y, &adv) != 2)
                    break;
                p += adv;
                ctrl.push_back({x * 72.0, (gh - y) * 72.0});
            }
            // Cubic Bézier pieces (p0 p1 p2 p3, p3 p4 p5 p6, ...), each sampled at 8 steps.
            auto &route = v.edges[it->second].route;
            route.clear();
            for (size_t k = 0; k + 3 < ctrl.size(); k += 3)
                for (int s = k == 0 ? 0 : 1; s <= 8; ++s) {
                    const double t = s / 8.0, u = 1 - t;
                    route.push_back(
                        {u * u * u * ctrl[k].x + 3 * u * u * t * ctrl[k + 1].x + 3 * u * t * t * ctrl[k + 2].x + t * t * t * ctrl[k + 3].x,
                         u * u * u * ctrl[k].y + 3 * u * u * t * ctrl[k + 1].y + 3 * u * t * t * ctrl[k + 2].y +
                             t * t * t * ctrl[k + 3].y});
                }
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
    // The route ends on the item's border (dot stops short of it for the arrowhead).
    for (auto &e : v.edges) {
        if (e.route.empty())
            continue;
        const auto &b = v.items[e.to];
        e.route.push_back({std::clamp(e.route.back().x, b.x, b.x + b.w), b.y});
    }
    return {};
}

} // namespace fxlens::layout
