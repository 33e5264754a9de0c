// SPDX-License-Identifier: MIT
// The frames of expanded modules in a laid-out view (see Layered.h: moduleFrames).
#include "layout/Layered.h"

#include <algorithm>
#include <map>

namespace fxlens::layout {

namespace {

/// How far a frame's contents reach either side of a long edge's via point (its lane): with the
/// frame's pad, kEdgeFrameGap.
constexpr double kViaReach = kEdgeFrameGap - kFramePad;

struct Extent {
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    size_t members = 0;
    double lastTop = -1e300; ///< the top of its lowest item
    double itemsTop = 0;     ///< the top of its highest item
    void add(double l, double t, double r, double b)
    {
        x0 = std::min(x0, l), y0 = std::min(y0, t), x1 = std::max(x1, r), y1 = std::max(y1, b);
    }
};

/// The modules a cluster path lies in, outermost first: its prefixes that are modules.
template <typename F> void forEachModule(const ViewGraph &v, const std::string &cluster, F &&f)
{
    std::string prefix; // (one buffer for all the prefixes)
    for (size_t k = cluster.find('.');; k = cluster.find('.', k + 1)) {
        prefix.assign(cluster, 0, k == std::string::npos ? cluster.size() : k);
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

bool inModule(const std::string &cluster, const std::string &path)
{
    return cluster == path || (cluster.size() > path.size() && cluster.compare(0, path.size(), path) == 0 && cluster[path.size()] == '.');
}

/// Where a long edge's via points lie, as the layout placed its dummies (Dummies.cpp,
/// dummyCluster): in the innermost module of either end whose items reach the point's row, else
/// in the innermost module around both ends.
struct ViaModules {
    std::string common;
    struct End {
        int depth;
        const std::string *module;
        double reach; ///< the top of the module's first item (target end) or last item (source end)
    };
    std::vector<End> to, from; ///< the modules around one end only, outermost first

    ViaModules(const ViewGraph &v, const std::map<std::string, Extent> &extent, const ViewEdge &e)
        : common(commonModule(v.items[e.from].cluster, v.items[e.to].cluster))
    {
        for (const bool target : {true, false}) {
            int depth = 0;
            forEachModule(v, v.items[target ? e.to : e.from].cluster, [&](const std::string &m) {
                ++depth;
                auto x = extent.find(m);
                if (x != extent.end() && !inModule(common, m))
                    (target ? to : from).push_back({depth, &x->first, target ? x->second.y0 : x->second.lastTop});
            });
        }
    }

    const std::string &at(double y) const
    {
        const End *t = nullptr, *f = nullptr;
        for (const End &m : to)
            if (m.reach <= y + 0.5)
                t = &m;
        for (const End &m : from)
            if (m.reach >= y - 0.5)
                f = &m;
        if (t && (!f || t->depth >= f->depth))
            return *t->module;
        return f ? *f->module : common;
    }
};

} // namespace

std::vector<ModuleFrame> moduleFrames(const ViewGraph &v)
{
    std::map<std::string, Extent> extent;
    for (const auto &it : v.items)
        if (!it.cluster.empty())
            forEachModule(v, it.cluster, [&](const std::string &m) {
                auto &e = extent[m];
                e.add(it.x, it.y, it.x + it.w, it.y + it.h);
                e.lastTop = std::max(e.lastTop, it.y);
                ++e.members;
            });
    // The long edges run inside the frames the layout placed their dummies in (ViaModules).
    std::map<std::pair<double, double>, std::string> viaIn;
    for (const auto &e : v.edges) {
        if (e.via.empty())
            continue;
        const ViaModules modules(v, extent, e);
        for (const auto &p : e.via) {
            const std::string &m = modules.at(p.y);
            auto [at, fresh] = viaIn.emplace(std::make_pair(p.x, p.y), m);
            if (!fresh && at->second != m)
                at->second = commonModule(at->second, m);
        }
    }
    for (auto &[path, e] : extent)
        e.itemsTop = e.y0;
    for (const auto &pm : viaIn) {
        const auto &[x, y] = pm.first;
        if (!pm.second.empty()) // (x, y copied: clang-tidy's clang captures no structured binding)
            forEachModule(v, pm.second, [&, x = x, y = y](const std::string &f) {
                extent[f].add(x - kViaReach, y, x + kViaReach, y); // kEdgeFrameGap from the frame's sides
            });
    }
    // An edge entering a frame from above crosses its title band right of the title.
    for (const auto &e : v.edges) {
        const std::string &to = v.items[e.to].cluster, &from = v.items[e.from].cluster;
        if (to.empty() || inModule(from, to)) // every frame around its target is around its source
            continue;
        forEachModule(v, to, [&](const std::string &m) {
            const auto own = extent.find(m);
            if (e.back || own == extent.end() || own->second.members == 0 || inModule(from, m))
                return;
            const double top = own->second.itemsTop;
            double x = v.items[e.to].x + v.items[e.to].w / 2;
            bool entry = std::abs(v.items[e.to].y - top) < 0.5;
            for (const auto &p : e.via)
                if (std::abs(p.y - top) < 0.5) {
                    auto in = viaIn.find({p.x, p.y});
                    entry = in != viaIn.end() && inModule(in->second, m), x = p.x;
                }
            if (entry)
                own->second.x0 = std::min(own->second.x0, x - kFrameClearance - frameTitleWidth(m));
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
            if (!inModule(it.cluster, f.path) && meet(it.x, it.y, it.x + it.w, it.y + it.h, f.x0, f.y0, f.x1, f.y1))
                return fail(it.label + " in the frame of " + f.path);
        }
        for (const auto &g : frames)
            if (&f != &g && !inModule(f.path, g.path) && !inModule(g.path, f.path) && meet(f.x0, f.y0, f.x1, f.y1, g.x0, g.y0, g.x1, g.y1))
                return fail("the frames of " + f.path + " and " + g.path + " meet");
    }
    return true;
}

} // namespace fxlens::layout
