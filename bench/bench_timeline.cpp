// SPDX-License-Identifier: MIT
// Kernel timeline speed, offscreen: a synthetic profile of K kernels (default 100,000: 10
// iterations of a 5,000-node graph launching 2 kernels per node, on 2 streams) drawn at fit, then
// frame times while zooming in step by step and panning across at each zoom, as the median, 95th
// percentile and worst frame, and frames per second.
//
//   QT_QPA_PLATFORM=offscreen bench_timeline [KERNELS] [FRAMES]
#include "KernelTimeline.h"

#include <QApplication>
#include <QImage>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace fxlens;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Iterations of a chain of nodes, each launching `perNode` kernels that run after their launch.
static prof::Profile synthetic(size_t kernels)
{
    prof::Profile p;
    p.mode = "cuda";
    p.iterations = 10;
    const size_t perNode = 2, nodes = std::max<size_t>(1, kernels / p.iterations / perNode);
    for (size_t n = 0; n < nodes; ++n)
        p.nodes.push_back({"node_" + std::to_string(n), "call_function", n % 3 ? "aten.addmm.default" : "aten.cat.default", ""});
    double t = 0;
    uint64_t corr = 1;
    for (int it = 0; it < p.iterations; ++it) {
        const double start = t;
        for (size_t n = 0; n < nodes; ++n) {
            const double r0 = t;
            for (size_t k = 0; k < perNode; ++k) {
                prof::KernelRec kr;
                kr.name = n % 3 ? "ampere_sgemm_64x32_sliced1x4_tn" : "CatArrayBatchedCopy";
                kr.kind = "kernel";
                kr.device = 0;
                kr.stream = 7 + int64_t(k % 2);
                kr.launchUs = t + 1;
                kr.startUs = t + 3;
                kr.durUs = 1.5 + double((n * 7 + k) % 5);
                kr.iteration = it;
                kr.node = int(n);
                kr.correlation = corr++;
                kr.grid = {64, 1, 1};
                kr.block = {256, 1, 1};
                p.kernels.push_back(kr);
                t += 4;
            }
            p.ranges.push_back({int(n), it, r0, t - r0, 1});
        }
        p.iters.push_back({it, start, t - start, t - start, 0, 0});
        t += 50;
    }
    p.finish();
    return p;
}

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    const size_t kernels = argc > 1 ? size_t(std::atol(argv[1])) : 100000;
    const int frames = argc > 2 ? std::atoi(argv[2]) : 60;
    auto t0 = Clock::now();
    auto profile = std::make_shared<const prof::Profile>(synthetic(kernels));
    const double made = since(t0);
    views::KernelTimeline t;
    t.resize(1600, 400);
    QImage target(t.size(), QImage::Format_ARGB32_Premultiplied);
    auto t1 = Clock::now();
    t.setProfile(profile);
    t.render(&target);
    const double first = since(t1);
    std::printf("kernels=%zu node_ranges=%zu tracks=%zu build_s=%.3f set_profile_to_first_frame_s=%.3f fit_blocks=%zu fit_folds=%zu\n",
                profile->kernels.size(), profile->ranges.size(), t.tracks().size(), made, first, t.lastBlocks(), t.lastFolds());
    // Zoom levels from the whole recording (fit) to a few kernels across the view; at each, FRAMES
    // pans across the recording.
    std::vector<double> all;
    const double fitScale = t.usPerPixel(), end = profile->kernels.back().startUs;
    for (double zoom : {1.0, 10.0, 100.0, 1000.0, 10000.0}) {
        std::vector<double> ms;
        size_t blocks = 0;
        for (int f = 0; f < frames; ++f) {
            t.setView(end * f / frames, fitScale / zoom);
            auto tf = Clock::now();
            t.render(&target);
            ms.push_back(since(tf) * 1e3);
            blocks += t.lastBlocks();
        }
        std::sort(ms.begin(), ms.end());
        all.insert(all.end(), ms.begin(), ms.end());
        std::printf("zoom=%gx frames=%d median_ms=%.2f p95_ms=%.2f max_ms=%.2f blocks_per_frame=%zu\n", zoom, frames, ms[ms.size() / 2],
                    ms[ms.size() * 95 / 100], ms.back(), blocks / size_t(frames));
    }
    std::sort(all.begin(), all.end());
    double total = 0;
    for (double v : all)
        total += v;
    std::printf("all frames=%zu median_ms=%.2f p95_ms=%.2f max_ms=%.2f fps_mean=%.0f fps_p95=%.0f\n", all.size(), all[all.size() / 2],
                all[all.size() * 95 / 100], all.back(), 1000.0 * double(all.size()) / total, 1000.0 / all[all.size() * 95 / 100]);
    return 0;
}
