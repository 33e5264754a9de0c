// SPDX-License-Identifier: MIT
// libgvc wrapper.
#include "layout/GraphvizRender.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

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

} // namespace fxlens::layout
