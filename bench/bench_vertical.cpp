// SPDX-License-Identifier: MIT
// bench_vertical: time of a pattern preset to its fixpoint on one graph (graph loading and the
// per-repeat copy are not timed). Usage: bench_vertical FILE [REPEAT] [PRESET]
// Prints one line: file, IR, nodes before/after, rewrites, best and median seconds.
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_vertical FILE [REPEAT] [PRESET]\n");
        return 2;
    }
    const int repeat = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    const std::string preset = argc > 3 ? argv[3] : "vertical";
    auto r = fxlens::io::readGraphFile(argv[1]);
    if (!r) {
        std::fprintf(stderr, "%s\n", r.error().toString().c_str());
        return 3;
    }
    fxlens::rewrite::PatternRegistry reg;
    std::string err = fxlens::patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR);
    auto patterns = reg.preset(preset, err);
    if (!err.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 2;
    }
    std::vector<double> times;
    size_t before = r.value()->size(), after = 0, steps = 0;
    for (int i = 0; i < repeat; ++i) {
        auto g = r.value()->clone();
        auto t0 = std::chrono::steady_clock::now();
        fxlens::rewrite::Session s(*g, patterns);
        auto res = s.run();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        after = g->size();
        steps = res.steps;
    }
    std::sort(times.begin(), times.end());
    std::printf("file=%s ir=%s preset=%s nodes=%zu->%zu rewrites=%zu best_s=%.4f median_s=%.4f (of %d)\n", argv[1],
                r.value()->irLevel.c_str(), preset.c_str(), before, after, steps, times.front(), times[times.size() / 2], repeat);
    return 0;
}
