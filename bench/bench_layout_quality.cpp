// SPDX-License-Identifier: MIT
// How readable the canvas' layout is, against Graphviz dot on the same views: for each graph, the
// default view (modules collapsed, constants hidden) and the fully expanded view, when it has at
// most LIMIT items (default 2000): edges drawn through items, edge crossings, back edges (cycles
// between module boxes) and layout time, for the layered layout with its routes and for dot with
// its splines.
//
//   [DOT_SECONDS=30] bench_layout_quality [--limit N] FILE...     (dot is stopped after DOT_SECONDS a view)
#include "io/GraphJson.h"
#include "layout/Layered.h"
#ifdef FXLENS_HAVE_GRAPHVIZ
#include "layout/GraphvizRender.h"
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace fxlens;
using Clock = std::chrono::steady_clock;

int main(int argc, char **argv)
{
    size_t limit = 2000;
    const int dotSeconds = std::getenv("DOT_SECONDS") ? std::atoi(std::getenv("DOT_SECONDS")) : 30;
    std::printf("%-34s %-9s %6s %6s | %8s %9s %5s %8s | %8s %9s %8s\n", "graph", "view", "items", "edges", "through", "crossings", "back",
                "ms", "dot thr", "dot cross", "dot ms");
    size_t totalThrough = 0, worse = 0, views = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--limit") && i + 1 < argc) {
            limit = size_t(std::atol(argv[++i]));
            continue;
        }
        auto g = io::readGraphFile(argv[i]);
        if (!g) {
            std::fprintf(stderr, "%s\n", g.error().toString().c_str());
            continue;
        }
        for (const bool expand : {false, true}) {
            auto v = layout::buildView(*g.value(), expand ? layout::allModules(*g.value()) : std::set<std::string>{});
            if (v.items.size() > limit || (expand && layout::allModules(*g.value()).empty()))
                continue;
            auto t0 = Clock::now();
            layout::layeredLayout(v);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            const auto q = layout::measureLayout(v);
            std::printf("%-34s %-9s %6zu %6zu | %8zu %9zu %5zu %8.1f |",
                        std::filesystem::path(argv[i]).filename().string().substr(0, 34).c_str(), expand ? "expanded" : "default",
                        v.items.size(), v.edges.size(), q.edgesThroughItems, q.crossings, q.backEdges, ms);
            totalThrough += q.edgesThroughItems;
            ++views;
#ifdef FXLENS_HAVE_GRAPHVIZ
            // dot in a child process with a time limit (it can take minutes on some views).
            std::fflush(stdout);
            int fds[2];
            if (pipe(fds) != 0)
                return 1;
            const pid_t child = fork();
            if (child == 0) {
                close(fds[0]);
                auto d = v;
                auto t1 = Clock::now();
                double out[3] = {-1, -1, -1};
                if (layout::graphvizLayout(d).ok()) {
                    const auto dq = layout::measureLayout(d);
                    out[0] = double(dq.edgesThroughItems), out[1] = double(dq.crossings);
                    out[2] = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
                }
                if (write(fds[1], out, sizeof out) != sizeof out)
                    _exit(1);
                _exit(0);
            }
            close(fds[1]);
            double got[3] = {-1, -1, -1};
            bool done = false;
            for (int waited = 0; waited < dotSeconds * 10 && !done; ++waited) {
                int status = 0;
                if (waitpid(child, &status, WNOHANG) == child)
                    done = true;
                else
                    usleep(100000);
            }
            if (!done) {
                kill(child, SIGKILL);
                waitpid(child, nullptr, 0);
                std::printf(" %8s (dot over %d s)\n", "-", dotSeconds);
            } else if (read(fds[0], got, sizeof got) == sizeof got && got[2] >= 0) {
                worse += double(q.crossings) > got[1];
                std::printf(" %8.0f %9.0f %8.1f\n", got[0], got[1], got[2]);
            } else {
                std::printf(" %8s\n", "failed");
            }
            close(fds[0]);
#else
            std::printf(" %8s\n", "-");
#endif
        }
    }
    std::printf("views=%zu edges_through_items_total=%zu views_with_more_crossings_than_dot=%zu\n", views, totalThrough, worse);
    return 0;
}
