// SPDX-License-Identifier: MIT
// bench_load: time to read, lint and (optionally) print a graph file. Usage: bench_load FILE [REPEAT]
#include "io/GraphJson.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_load FILE [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 2 ? std::atoi(argv[2]) : 3;
    std::ifstream in(argv[1], std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    using clock = std::chrono::steady_clock;
    double bestRead = 1e9, bestLint = 1e9, bestWrite = 1e9;
    size_t nodes = 0;
    for (int i = 0; i < repeat; ++i) {
        auto t0 = clock::now();
        auto r = fxlens::io::parseGraphJson(text, argv[1]);
        auto t1 = clock::now();
        if (!r) {
            std::fprintf(stderr, "%s\n", r.error().toString().c_str());
            return 3;
        }
        auto errors = r.value()->lint();
        auto t2 = clock::now();
        std::string out = fxlens::io::writeGraphJson(*r.value());
        auto t3 = clock::now();
        nodes = r.value()->size();
        if (!errors.empty()) {
            std::fprintf(stderr, "lint: %s\n", errors.front().toString().c_str());
            return 1;
        }
        bestRead = std::min(bestRead, std::chrono::duration<double>(t1 - t0).count());
        bestLint = std::min(bestLint, std::chrono::duration<double>(t2 - t1).count());
        bestWrite = std::min(bestWrite, std::chrono::duration<double>(t3 - t2).count());
    }
    std::printf("file=%s bytes=%zu nodes=%zu read_s=%.3f lint_s=%.3f read+lint_s=%.3f write_s=%.3f (best of %d)\n", argv[1], text.size(),
                nodes, bestRead, bestLint, bestRead + bestLint, bestWrite, repeat);
    return 0;
}
