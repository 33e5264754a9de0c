// SPDX-License-Identifier: MIT
// bench_exec: time of one execution of a graph by the LibTorch executor (inputs and weights prepared
// once, not timed). Usage: bench_exec FILE [REPEAT] [DEVICE]
// Prints: nodes, best and median milliseconds per run, microseconds per node.
#include "exec/Executor.h"
#include "io/GraphJson.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_exec FILE [REPEAT] [DEVICE]\n");
        return 2;
    }
    const int repeat = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
    fxlens::exec::ExecOptions o;
    if (argc > 3)
        o.device = argv[3];
    auto g = fxlens::io::readGraphFile(argv[1]);
    if (!g) {
        std::fprintf(stderr, "%s\n", g.error().toString().c_str());
        return 3;
    }
    auto runner = fxlens::exec::Runner::create(*g.value(), o);
    if (!runner) {
        std::fprintf(stderr, "%s\n", runner.error().toString().c_str());
        return 1;
    }
    std::vector<double> ms;
    for (int i = 0; i < repeat + 2; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto out = runner.value()->run(*g.value());
        if (!out) {
            std::fprintf(stderr, "%s\n", out.error().toString().c_str());
            return 1;
        }
        runner.value()->synchronize();
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (i >= 2) // two warm-up runs
            ms.push_back(t);
    }
    if (std::getenv("FXLENS_BENCH_ALL"))
        for (double t : ms)
            std::printf("%.2f ", t);
    std::sort(ms.begin(), ms.end());
    const double nodes = double(g.value()->size());
    std::printf("file=%s device=%s nodes=%zu best_ms=%.3f median_ms=%.3f us_per_node=%.2f (of %d)\n", argv[1], o.device.c_str(),
                g.value()->size(), ms.front(), ms[ms.size() / 2], 1000.0 * ms[ms.size() / 2] / nodes, repeat);
    return 0;
}
