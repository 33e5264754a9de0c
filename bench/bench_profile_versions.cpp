// SPDX-License-Identifier: MIT
// The app's "Profile Versions" without the window, for GPU machines that have no Qt: the greedy
// history of a graph as the app's RewriteHistory builds it (preset "all", checked mode), copies of
// the versions listed, and the app's profile service (app/gui/AppServices.h, exec::profileVersions)
// on a worker thread with progress, as GraphDocument::profileVersions runs it. Prints the time of
// the whole job, the per-version table, and writes the profile set.
//
//   bench_profile_versions GRAPH [VERSIONS] [ITERS] [OUT.fxprof.json.gz]
#include "AppServices.h"
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"
#include "rewrite/VersionList.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

using namespace fxlens;
using Clock = std::chrono::steady_clock;

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_profile_versions GRAPH [VERSIONS] [ITERS] [OUT]\n");
        return 2;
    }
    const std::string file = argv[1], list = argc > 2 ? argv[2] : "spread:3", out = argc > 4 ? argv[4] : "";
    auto g = io::readGraphFile(file);
    if (!g) {
        std::fprintf(stderr, "%s\n", g.error().toString().c_str());
        return 3;
    }
    rewrite::PatternRegistry reg;
    if (auto e = patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR); !e.empty())
        std::fprintf(stderr, "patterns: %s\n", e.c_str());
    std::string err;
    rewrite::SessionConfig cfg;
    cfg.checked = true; // as the app's session
    auto work = g.value()->clone();
    rewrite::Session session(*work, reg.preset("all", err), cfg);
    const auto t0 = Clock::now();
    const auto run = session.run();
    const double history = std::chrono::duration<double>(Clock::now() - t0).count();
    auto versions = rewrite::parseVersionList(list, session.history().size(), session.history().size());
    if (!versions) {
        std::fprintf(stderr, "%s\n", versions.error().message.c_str());
        return 2;
    }
    // What GraphDocument::profileVersions hands the service: a copy of each version, its label and id.
    std::vector<std::unique_ptr<ir::Graph>> copies;
    views::ProfileRequest req;
    for (auto &c : rewrite::copyVersions(session, versions.value())) {
        req.labels.push_back(c.label);
        req.versionIds.push_back(int(c.version));
        copies.push_back(std::move(c.graph));
        req.graphs.push_back(copies.back().get());
    }
    req.iterations = argc > 3 ? std::atoi(argv[3]) : 10;
    req.graphName = std::filesystem::path(file).filename().string();
    req.graphDir = std::filesystem::path(file).parent_path().string();
    const views::Services services = app::appServices("");
    views::ProfileOutcome outcome;
    const auto t1 = Clock::now();
    std::thread worker([&] {
        outcome = services.profile(req, [&](size_t done, size_t total) {
            std::printf("  progress %zu/%zu at %.2f s\n", done, total, std::chrono::duration<double>(Clock::now() - t1).count());
            std::fflush(stdout);
            return true;
        });
    });
    worker.join();
    const double job = std::chrono::duration<double>(Clock::now() - t1).count();
    if (!outcome.error.empty()) {
        std::fprintf(stderr, "profiling failed: %s\n", outcome.error.c_str());
        return 1;
    }
    std::printf("graph=%s history_steps=%zu history_s=%.3f versions=%zu device=%s job_s=%.2f%s%s\n", req.graphName.c_str(), run.steps,
                history, outcome.profiles.size(), outcome.device.c_str(), job, outcome.note.empty() ? "" : " note=", outcome.note.c_str());
    std::vector<const prof::Profile *> ps;
    for (const auto &p : outcome.profiles)
        ps.push_back(&p);
    std::printf("%s", prof::formatVersionTable(ps).c_str());
    if (!out.empty())
        if (auto w = prof::writeProfiles(ps, out); !w) {
            std::fprintf(stderr, "%s\n", w.error().toString().c_str());
            return 1;
        }
    return 0;
}
