// SPDX-License-Identifier: MIT
// Canvas layout speed: build the view and run the layered layout, modules collapsed (what the
// canvas shows first) and everything expanded (a flat graph), best of REPEAT; then each module
// down to depth 2 opened in place (placeInPlace, as a double-click opens it) from the view with its
// parents open, all those openings together (kept: how many placeInPlace kept), best of REPEAT.
//
//   bench_layout FILE [REPEAT]
#include "io/GraphJson.h"
#include "layout/Layered.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

using namespace fxlens;

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_layout FILE [REPEAT]\n");
        return 2;
    }
    const int repeat = argc > 2 ? std::atoi(argv[2]) : 3;
    auto r = io::readGraphFile(argv[1]);
    if (!r) {
        std::fprintf(stderr, "%s\n", r.error().toString().c_str());
        return 3;
    }
    const ir::Graph &g = *r.value();
    for (int mode = 0; mode < 2; ++mode) {
        const auto expanded = mode == 0 ? std::set<std::string>{} : layout::allModules(g);
        double best = 1e9;
        size_t items = 0, edges = 0;
        double w = 0, h = 0;
        for (int i = 0; i < repeat; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            auto v = layout::buildView(g, expanded);
            layout::layeredLayout(v);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            best = std::min(best, s);
            items = v.items.size();
            edges = v.edges.size();
            w = v.width;
            h = v.height;
        }
        std::printf("file=%s nodes=%zu view=%s items=%zu edges=%zu extent=%.0fx%.0f best_s=%.4f (of %d)\n", argv[1], g.size(),
                    mode == 0 ? "collapsed" : "expanded", items, edges, w, h, best, repeat);
    }
    // Each module of depth 0 to 2 opened in place from the view with its parents open.
    std::vector<std::pair<layout::ViewGraph, layout::ViewGraph>> opens; // (before, after)
    const auto modules = layout::allModules(g);
    for (const auto &m : modules) {
        if (std::count(m.begin(), m.end(), '.') > 2)
            continue;
        std::set<std::string> parents;
        for (size_t k = m.find('.'); k != std::string::npos; k = m.find('.', k + 1))
            if (modules.count(m.substr(0, k)))
                parents.insert(m.substr(0, k));
        layout::ViewGraph before = layout::buildView(g, parents);
        layout::layeredLayout(before);
        parents.insert(m);
        opens.emplace_back(std::move(before), layout::buildView(g, parents));
    }
    double best = 1e9;
    size_t inPlace = 0;
    for (int i = 0; i < repeat; ++i) {
        inPlace = 0;
        auto work = opens;
        const auto t0 = std::chrono::steady_clock::now();
        for (auto &[before, after] : work)
            inPlace += layout::placeInPlace(after, before);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("file=%s view=in-place opens=%zu kept=%zu best_s=%.4f (of %d)\n", argv[1], opens.size(), inPlace, best, repeat);
    return 0;
}
