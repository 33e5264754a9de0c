// SPDX-License-Identifier: MIT
// profile: profiles graph versions (ExecCommands.cpp runs them) or opens saved profiles, prints
// them and their comparison, and writes profiles and Chrome traces.
#include "Cli.h"

#include "io/GraphJson.h"
#include "rewrite/Session.h"
#include "rewrite/VersionList.h"

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

/// profile --versions: the greedy history of `g` under the preset or patterns, and the graphs of
/// the versions listed (with labels and ids).
int historyVersions(const ir::Graph &g, const Args &a, std::vector<std::unique_ptr<ir::Graph>> &graphs,
                    std::vector<std::pair<std::string, int>> &labels)
{
    rewrite::PatternRegistry reg;
    if (!loadPatterns(a, reg, "profile"))
        return kUsage;
    std::string err;
    auto selected = a.patterns.empty() ? reg.preset(a.preset, err) : reg.byNames(a.patterns, err);
    if (!err.empty()) {
        std::cerr << "fxlens-cli profile: " << err << "\n";
        return kUsage;
    }
    auto work = g.clone();
    rewrite::Session session(*work, selected, {});
    const auto r = session.run();
    auto list = rewrite::parseVersionList(a.versions, session.history().size(), session.history().size());
    if (!list) {
        std::cerr << "fxlens-cli profile: --versions: " << list.error().message << "\n";
        return kUsage;
    }
    std::printf("history: %zu steps (%s), %zu -> %zu nodes; profiling %zu version(s)\n", r.steps, rewrite::stopReasonName(r.reason),
                g.size(), work->size(), list.value().size());
    for (auto &c : rewrite::copyVersions(session, list.value())) {
        labels.emplace_back(c.label, int(c.version));
        graphs.push_back(std::move(c.graph));
    }
    return kOk;
}

/// What profile works on: profiles opened from files, graphs to profile (each with its file and,
/// for --versions, its label), and a profile slot per graph (filled by profileGraphs).
struct ProfileInputs {
    std::vector<prof::Profile> profiles;
    std::vector<std::unique_ptr<ir::Graph>> graphs;
    std::vector<std::string> graphSources;
    std::vector<std::pair<std::string, int>> labels;
};

/// One input file, and at most one of --compare, --optimize and --versions.
int checkProfileOptions(const Args &a)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli profile: expected one graph or profile file\n";
        return kUsage;
    }
    const int secondVersion = int(!a.compare.empty()) + int(a.optimize) + int(!a.versions.empty());
    if (secondVersion > 1) {
        std::cerr << "fxlens-cli profile: --compare, --optimize and --versions each name the versions to profile; use one\n";
        return kUsage;
    }
    return kOk;
}

/// Reads the input file and --compare's: saved profiles (and profile sets) open anywhere; graphs
/// are read now (with --versions, the versions of their history) and profiled later.
int readProfileInputs(const Args &a, ProfileInputs &in)
{
    std::vector<std::string> sources = {a.positional[0]};
    if (!a.compare.empty())
        sources.push_back(a.compare);
    for (const auto &src : sources) {
        if (prof::isProfileFile(src)) {
            auto p = prof::readProfiles(src);
            if (!p) {
                std::cerr << p.error().toString() << "\n";
                return kBadInput;
            }
            for (auto &one : p.value())
                in.profiles.push_back(std::move(one));
            continue;
        }
        auto g = io::readGraphFile(src);
        if (!g) {
            std::cerr << g.error().toString() << "\n";
            return kBadInput;
        }
        if (!a.versions.empty()) {
            if (int c = historyVersions(*g.value(), a, in.graphs, in.labels); c != kOk)
                return c;
            in.graphSources.assign(in.graphs.size(), src);
            in.profiles.resize(in.profiles.size() + in.graphs.size());
            continue;
        }
        in.graphs.push_back(std::move(g.value()));
        in.graphSources.push_back(src);
        in.profiles.emplace_back(); // filled by profileGraphs
    }
    if (!a.versions.empty() && in.graphs.empty()) {
        std::cerr << "fxlens-cli profile: --versions needs a graph, not a saved profile\n";
        return kUsage;
    }
    return kOk;
}

/// --optimize: the first graph optimized, as a second version to profile.
int addOptimized(const Args &a, ProfileInputs &in)
{
    if (in.graphs.empty()) {
        std::cerr << "fxlens-cli profile: --optimize needs a graph, not a saved profile\n";
        return kUsage;
    }
    std::string err;
    auto opt = optimizedCopy(*in.graphs.front(), a, err);
    if (!opt) {
        std::cerr << "fxlens-cli profile: " << err << "\n";
        return kUsage;
    }
    in.graphs.push_back(std::move(opt));
    in.graphSources.push_back(a.positional[0]);
    in.profiles.emplace_back();
    return kOk;
}

/// Prints every profile, then the version table of a set or the comparison of two.
void printProfiles(const std::vector<prof::Profile> &profiles, bool set)
{
    for (size_t i = 0; i < profiles.size(); ++i) {
        if (set)
            std::printf("== %s\n", profiles[i].version.empty() ? std::to_string(i).c_str() : profiles[i].version.c_str());
        else if (profiles.size() > 1)
            std::printf("== %s\n", i == 0 ? "A" : "B");
        std::printf("%s\n", prof::formatProfile(profiles[i]).c_str());
    }
    std::vector<const prof::Profile *> all;
    all.reserve(profiles.size());
    for (const auto &p : profiles)
        all.push_back(&p);
    if (set)
        std::printf("%s", prof::formatVersionTable(all).c_str());
    else if (profiles.size() == 2)
        std::printf("%s", prof::formatComparison(profiles[0], profiles[1]).c_str());
}

/// -o (the one profile, A of a comparison, or every version as one profile set), --compare-output
/// (B) and --trace (every profile).
int writeProfileOutputs(const Args &a, const std::vector<prof::Profile> &profiles, bool set)
{
    std::vector<const prof::Profile *> all;
    all.reserve(profiles.size());
    for (const auto &p : profiles)
        all.push_back(&p);
    if (!a.output.empty()) {
        const std::vector<const prof::Profile *> saved = set ? all : std::vector<const prof::Profile *>{all.front()};
        if (auto w = prof::writeProfiles(saved, a.output); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    if (!a.compareOutput.empty() && profiles.size() > 1)
        if (auto w = prof::writeProfile(profiles[1], a.compareOutput); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    if (!a.trace.empty()) {
        if (auto w = prof::writeChromeTrace(all, a.trace); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    return kOk;
}

} // namespace

int cmdProfile(const Args &a)
{
    if (int c = checkProfileOptions(a); c != kOk)
        return c;
    ProfileInputs in;
    if (int c = readProfileInputs(a, in); c != kOk)
        return c;
    if (a.optimize)
        if (int c = addOptimized(a, in); c != kOk)
            return c;
    if (!in.graphs.empty()) {
        const int c = a.compiled ? profileCompiled(a, in.graphs, in.graphSources, in.profiles, in.labels)
                                 : profileGraphs(a, in.graphs, in.graphSources, in.profiles, in.labels);
        if (c != kOk)
            return c;
    }
    const bool set = in.profiles.size() > 2 || !a.versions.empty();
    printProfiles(in.profiles, set);
    return writeProfileOutputs(a, in.profiles, set);
}

} // namespace fxlens::cli
