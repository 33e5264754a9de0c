// SPDX-License-Identifier: MIT
// profile: profiles graph versions (ExecCommands.cpp runs them) or opens saved profiles, prints
// them and their comparison, and writes profiles and Chrome traces.
#include "Cli.h"

#include "io/GraphJson.h"
#include "rewrite/Session.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace fxlens::cli {

namespace {

/// Optimizes a copy of `g` with the preset or pattern list of `a` (profile --optimize).
std::unique_ptr<ir::Graph> optimizedCopy(const ir::Graph &g, const Args &a, std::string &err)
{
    rewrite::PatternRegistry reg;
    if (!loadPatterns(a, reg, "profile")) {
        err = "the patterns did not load";
        return nullptr;
    }
    auto selected = a.patterns.empty() ? reg.preset(a.preset, err) : reg.byNames(a.patterns, err);
    if (!err.empty())
        return nullptr;
    auto copy = g.clone();
    rewrite::Session session(*copy, selected, {});
    auto r = session.run();
    std::printf("optimized with %s: %zu -> %zu nodes in %zu rewrites\n",
                a.patterns.empty() ? ("preset " + a.preset).c_str() : a.patterns.c_str(), g.size(), copy->size(), r.steps);
    return copy;
}

} // namespace

int cmdProfile(const Args &a)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli profile: expected one graph or profile file\n";
        return kUsage;
    }
    if (!a.compare.empty() && a.optimize) {
        std::cerr << "fxlens-cli profile: --compare and --optimize both name the second version; use one\n";
        return kUsage;
    }
    const std::string first = a.positional[0];
    std::vector<std::string> sources = {first};
    if (!a.compare.empty())
        sources.push_back(a.compare);
    std::vector<prof::Profile> profiles;
    std::vector<std::unique_ptr<ir::Graph>> graphs;
    std::vector<std::string> graphSources;
    // Saved profiles open anywhere; graphs are read now and profiled below.
    for (const auto &src : sources) {
        if (prof::isProfileFile(src)) {
            auto p = prof::readProfile(src);
            if (!p) {
                std::cerr << p.error().toString() << "\n";
                return kBadInput;
            }
            profiles.push_back(std::move(p.value()));
            continue;
        }
        auto g = io::readGraphFile(src);
        if (!g) {
            std::cerr << g.error().toString() << "\n";
            return kBadInput;
        }
        graphs.push_back(std::move(g.value()));
        graphSources.push_back(src);
        profiles.emplace_back(); // filled below
    }
    if (a.optimize) {
        if (graphs.empty()) {
            std::cerr << "fxlens-cli profile: --optimize needs a graph, not a saved profile\n";
            return kUsage;
        }
        std::string err;
        auto opt = optimizedCopy(*graphs.front(), a, err);
        if (!opt) {
            std::cerr << "fxlens-cli profile: " << err << "\n";
            return kUsage;
        }
        graphs.push_back(std::move(opt));
        graphSources.push_back(first);
        profiles.emplace_back();
        sources.push_back(first + " (optimized)");
    }
    if (!graphs.empty()) {
        if (int c = profileGraphs(a, graphs, graphSources, profiles); c != kOk)
            return c;
    }
    for (size_t i = 0; i < profiles.size(); ++i) {
        if (profiles.size() > 1)
            std::printf("== %s\n", i == 0 ? "A" : "B");
        std::printf("%s\n", prof::formatProfile(profiles[i]).c_str());
    }
    if (profiles.size() == 2)
        std::printf("%s", prof::formatComparison(profiles[0], profiles[1]).c_str());
    const std::pair<std::string, size_t> saves[] = {{a.output, 0}, {a.compareOutput, 1}};
    for (const auto &[path, i] : saves) {
        if (path.empty() || i >= profiles.size())
            continue;
        if (auto w = prof::writeProfile(profiles[i], path); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    if (!a.trace.empty()) {
        std::vector<const prof::Profile *> ps;
        for (const auto &p : profiles)
            ps.push_back(&p);
        if (auto w = prof::writeChromeTrace(ps, a.trace); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    return kOk;
}

} // namespace fxlens::cli
