// SPDX-License-Identifier: MIT
// The frames of expanded modules in a laid-out view (see Layered.h: moduleFrames).
#include "layout/Layered.h"

#include <algorithm>
#include <map>

namespace fxlens::layout {

namespace {

struct Extent {
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    size_t members = 0;
    void add(double l, double t, double r, double b)
    {
        x0 = std::min(x0, l), y0 = std::min(y0, t), x1 = std::max(x1, r), y1 = std::max(y1, b);
    }
};

/// The modules a cluster path lies in, outermost first: its prefixes that are modules.
template <typename F> void forEachModule(const ViewGraph &v, const std::string &cluster, F &&f)
{
    for (size_t k = cluster.find('.');; k = cluster.find('.', k + 1)) {
        const std::string prefix = k == std::string::npos ? cluster : cluster.substr(0, k);
        if (v.modules.empty() || v.modules.count(prefix))
            f(prefix);
        if (k == std::string::npos)
            break;
    }
}

/// The longest common prefix of two module paths, at a dot.
std::string commonModule(const std::string &a, const std::string &b)
{
    size_t k = 0, lastDot = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k])
        if (a[k++] == '.')
            lastDot = k - 1;
    if (k == a.size() && (k == b.size() || b[k] == '.'))
        return a;
    if (k == b.size() && a[k] == '.')
        return b;
    return a.substr(0, lastDot);
}

} // namespace

std::vector<ModuleFrame> moduleFrames(const ViewGraph &v)
{
    std::map<std::string, Extent> extent;
    for (const auto &it : v.items)
        if (!it.cluster.empty())
            forEachModule(v, it.cluster, [&](const std::string &m) {
                auto &e = extent[m];
                e.add(it.x, it.y, it.x + it.w, it.y + it.h);
                ++e.members;
            });
    // The long edges inside a module run inside its frame (the places the layout left for them).
    for (const auto &e : v.edges) {
        if (e.via.empty())
            continue;
        const std::string inner = commonModule(v.items[e.from].cluster, v.items[e.to].cluster);
        if (!inner.empty())
            forEachModule(v, inner, [&](const std::string &m) {
                for (const auto &p : e.via)
                    extent[m].add(p.x - 3, p.y, p.x + 3, p.y);
            });
    }
    // Innermost first: each frame's outline goes into its parent's extent.
    std::vector<std::pair<int, std::string>> byDepth;
    byDepth.reserve(extent.size());
    for (const auto &[path, e] : extent)
        byDepth.emplace_back(int(std::count(path.begin(), path.end(), '.')), path);
    std::sort(byDepth.begin(), byDepth.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::vector<ModuleFrame> frames;
    for (const auto &[depth, path] : byDepth) {
        const Extent &e = extent[path];
        if (e.members < 2)
            continue;
        ModuleFrame f{path, e.x0 - kFramePad, e.y0 - kFrameTitle, e.x1 + kFramePad, e.y1 + kFramePad, depth, e.members};
        for (size_t k = path.rfind('.'); k != std::string::npos; k = path.rfind('.', k - 1)) {
            if (auto parent = extent.find(path.substr(0, k)); parent != extent.end()) {
                parent->second.add(f.x0, f.y0, f.x1, f.y1);
                break;
            }
            if (k == 0)
                break;
        }
        frames.push_back(std::move(f));
    }
    std::reverse(frames.begin(), frames.end());
    return frames;
}

bool framesTrue(const ViewGraph &v, std::string *why)
{
    auto within = [](const std::string &cluster, const std::string &path) {
        return cluster == path ||
            (cluster.size() > path.size() && cluster.compare(0, path.size(), path) == 0 && cluster[path.size()] == '.');
    };
    auto meet = [](double ax0, double ay0, double ax1, double ay1, double bx0, double by0, double bx1, double by1) {
        return ax0 < bx1 && bx0 < ax1 && ay0 < by1 && by0 < ay1;
    };
    auto fail = [&](const std::string &what) {
        if (why)
            *why = what;
        return false;
    };
    const std::vector<ModuleFrame> frames = moduleFrames(v);
    for (const auto &f : frames) {
        for (const auto &it : v.items) {
            if (meet(it.x, it.y, it.x + it.w, it.y + it.h, f.x0, f.y0, f.x1, f.y0 + kFrameTitle))
                return fail(it.label + " in the title band of " + f.path);
            if (!within(it.cluster, f.path) && meet(it.x, it.y, it.x + it.w, it.y + it.h, f.x0, f.y0, f.x1, f.y1))
                return fail(it.label + " in the frame of " + f.path);
        }
        for (const auto &g : frames)
            if (&f != &g && !within(f.path, g.path) && !within(g.path, f.path) && meet(f.x0, f.y0, f.x1, f.y1, g.x0, g.y0, g.x1, g.y1))
                return fail("the frames of " + f.path + " and " + g.path + " meet");
    }
    return true;
}

} // namespace fxlens::layout
