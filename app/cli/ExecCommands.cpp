// SPDX-License-Identifier: MIT
// The commands and services that run graphs with LibTorch: run, verify, check-pattern, and what
// optimize (--verify, --verify-each, --freeze), profile and doctor ask of the executor. A build
// without LibTorch compiles NoExec.cpp instead.
#include "Cli.h"
#include "ExecArgs.h"

#include "exec/Executor.h"
#include "exec/PatternCheck.h"
#include "exec/Profiler.h"
#include "exec/TorchRuntime.h"
#include "io/GraphJson.h"
#include "lang/PatternLang.h"
#include "rewrite/Freeze.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace fxlens::cli {

exec::ExecOptions execOptions(const Args &a, const std::string &graphPath)
{
    exec::ExecOptions o;
    o.device = a.device;
    o.seed = a.seed;
    o.inputsFile = a.inputs;
    o.randomInputs = a.randomInputs;
    o.libraries = a.libraries;
    o.weightsFile = a.weights;
    o.graphDir = std::filesystem::path(graphPath).parent_path().string();
    return o;
}

/// optimize --freeze: folds the weight-only nodes of `g` into new weights `_frozen_<node>` and writes
/// the frozen graph to `out`, its weights to `<stem>.frozen.safetensors` and the fold graph (the
/// folded nodes, reading the original weights) to `<stem>.fold.json`, all in `out`'s folder.
int writeFrozen(const Args &a, const ir::Graph &g, const std::string &out)
{
    namespace fs = std::filesystem;
    auto runner = exec::Runner::create(g, execOptions(a, a.positional[0]));
    if (!runner) {
        std::cerr << "fxlens-cli optimize: --freeze: " << runner.error().toString() << "\n";
        return kFailed;
    }
    // Frozen values are written as weights: made-up ones would pass for the model's.
    if (const auto made = runner.value()->randomWeights(); !made.empty() && !a.randomWeights) {
        const std::string file = a.weights.empty() ? g.weightsFile : a.weights;
        const std::string why = file.empty()
            ? std::string("the graph has no weights file")
            : "its weights file '" + file + "' lacks " + std::to_string(made.size()) + " of its weights (first '" + made.front() + "')";
        return refuseRandomFreeze(a, why);
    }
    const auto folded = rewrite::weightOnlyNodes(g);
    std::vector<std::string> names;
    for (const ir::Node *n : rewrite::freezeBoundary(g, folded))
        names.push_back(n->name());
    auto values = runner.value()->evaluateWeightNodes(g, names);
    if (!values) {
        std::cerr << "fxlens-cli optimize: --freeze: " << values.error().toString() << "\n";
        return kFailed;
    }
    std::vector<std::string> chosen;
    for (const auto &n : names)
        if (values.value().count(n))
            chosen.push_back(n);
    auto split = rewrite::splitFrozen(g, chosen);
    std::vector<std::string> kept;
    for (const auto &p : split.frozen->params)
        kept.push_back(p.name);
    auto tensors = runner.value()->weightValues(kept);
    for (size_t i = 0; i < chosen.size(); ++i) {
        const io::SafeTensor &t = values.value().at(chosen[i]);
        ir::ParamInfo p;
        p.name = split.targets[i];
        p.isBuffer = true;
        p.shape = t.shape;
        p.dtype = io::fxlensDtype(t.dtype);
        split.frozen->params.push_back(p);
        tensors[p.name] = t;
    }
    std::string stem = fs::path(out).filename().string();
    for (const char *ext : {".json.gz", ".json"})
        if (stem.size() > std::strlen(ext) && stem.compare(stem.size() - std::strlen(ext), std::string::npos, ext) == 0) {
            stem.resize(stem.size() - std::strlen(ext));
            break;
        }
    const fs::path dir = fs::path(out).parent_path();
    split.frozen->weightsFile = stem + ".frozen.safetensors";
    split.frozen->foldFile = split.targets.empty() ? "" : stem + ".fold.json";
    if (auto w = io::writeSafetensors(tensors, (dir / split.frozen->weightsFile).string()); !w) {
        std::cerr << w.error().toString() << "\n";
        return kFailed;
    }
    if (!split.frozen->foldFile.empty())
        if (auto w = io::writeGraphFile(*split.fold, (dir / split.frozen->foldFile).string()); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    if (auto w = io::writeGraphFile(*split.frozen, out); !w) {
        std::cerr << w.error().toString() << "\n";
        return kFailed;
    }
    size_t bytes = 0;
    for (const auto &[name, t] : tensors)
        bytes += t.data.size();
    std::printf("freeze: %zu value(s) folded from %zu node(s); nodes %zu -> %zu; weights %s (%zu tensors, %.1f MB)%s%s\n", chosen.size(),
                size_t(std::count(folded.begin(), folded.end(), true)), g.size(), split.frozen->size(), split.frozen->weightsFile.c_str(),
                tensors.size(), double(bytes) / 1e6, split.frozen->foldFile.empty() ? "" : "; fold graph ", split.frozen->foldFile.c_str());
    return kOk;
}

int cmdRun(const Args &a)
{
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    auto runner = exec::Runner::create(*g, execOptions(a, a.positional[0]));
    if (!runner) {
        std::cerr << "fxlens-cli run: " << runner.error().toString() << "\n";
        return kFailed;
    }
    if (a.freeze) {
        auto f = runner.value()->freeze(*g);
        if (!f) {
            std::cerr << "fxlens-cli run: --freeze: " << f.error().toString() << "\n";
            return kFailed;
        }
        std::printf("frozen: %zu weight-only node(s) folded\n", f.value());
    }
    if (a.cudaGraph) {
        auto c = runner.value()->captureCudaGraph(*g);
        if (!c) {
            std::cerr << "fxlens-cli run: --cuda-graph: " << c.error().toString() << "\n";
            return kFailed;
        }
        std::printf("cuda graph: captured (runs replay it)\n");
    }
    // The first run compiles the graph into a plan (and binds each call's overload); later runs
    // reuse it. Every later run must reproduce the first run's outputs.
    std::vector<double> ms;
    Result<std::shared_ptr<exec::Outputs>> out = std::shared_ptr<exec::Outputs>();
    std::shared_ptr<exec::Outputs> first;
    for (int k = 0; k < a.repeat; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        out = runner.value()->run(*g);
        if (out)
            runner.value()->synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (!out) {
            Diagnostic d = out.error();
            d.file = a.positional[0];
            std::cerr << d.toString() << "\n";
            return kFailed;
        }
        if (k == 0) {
            // A replayed CUDA graph overwrites its outputs: keep the first run's values.
            first = a.cudaGraph && a.repeat > 1 ? runner.value()->snapshot(*out.value()) : out.value();
            continue;
        }
        auto same = runner.value()->compare(*first, *out.value());
        if (!same.pass) {
            std::printf("run %d of %d differs from run 1:\n%s", k + 1, a.repeat, same.summary().c_str());
            return kFailed;
        }
    }
    if (a.repeat > 1) {
        std::vector<double> later(ms.begin() + 1, ms.end());
        std::sort(later.begin(), later.end());
        std::printf("runs: %d, all outputs equal to run 1; first %.3f ms, later runs median %.3f ms, best %.3f ms\n", a.repeat, ms[0],
                    later[later.size() / 2], later.front());
    }
    auto infos = runner.value()->describe(*out.value());
    for (size_t i = 0; i < infos.size(); ++i) {
        std::string shape;
        for (auto s : infos[i].shape)
            shape += (shape.empty() ? "" : ", ") + std::to_string(s);
        std::printf("output %zu: %s[%s] abs sum %.6g\n", i, infos[i].dtype.c_str(), shape.c_str(), infos[i].absSum);
    }
    if (!a.output.empty()) {
        auto w = runner.value()->saveOutputs(*out.value(), a.output);
        if (!w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    if (!a.expect.empty()) {
        auto rep = runner.value()->compareWithFile(*out.value(), a.expect);
        if (!rep) {
            std::cerr << "fxlens-cli run: " << rep.error().toString() << "\n";
            return kBadInput;
        }
        std::printf("expect: %s", rep.value().summary().c_str());
        return rep.value().pass ? kOk : kFailed;
    }
    return kOk;
}

int cmdVerify(const Args &a)
{
    if (a.positional.size() != 2) {
        std::cerr << "fxlens-cli verify: expected two graph files\n";
        return kUsage;
    }
    auto ga = io::readGraphFile(a.positional[0]), gb = io::readGraphFile(a.positional[1]);
    for (auto *r : {&ga, &gb})
        if (!*r) {
            std::cerr << r->error().toString() << "\n";
            return kBadInput;
        }
    // The original runs first: its weights feed the frozen graph's fold graph (verifyGraphs).
    const bool swap = !ga.value()->foldFile.empty() && gb.value()->foldFile.empty();
    const ir::Graph &first = swap ? *gb.value() : *ga.value(), &second = swap ? *ga.value() : *gb.value();
    auto rep = exec::verifyGraphs(first, second, execOptions(a, a.positional[swap ? 1 : 0]));
    if (!rep) {
        std::cerr << "fxlens-cli verify: " << rep.error().toString() << "\n";
        return kFailed;
    }
    std::printf("%s", rep.value().summary().c_str());
    return rep.value().pass ? kOk : kFailed;
}

int cmdCheckPattern(const Args &a)
{
    rewrite::PatternRegistry reg;
    std::unique_ptr<lang::FilePattern> owned;
    int code = kOk;
    const lang::FilePattern *fp = filePatternArg(a, reg, owned, "check-pattern", "its checks are the corpus tests", code);
    if (!fp)
        return code;
    auto rep = exec::checkPattern(*fp, a.trials, a.seed, a.device);
    std::printf("%s: %s", fp->name.c_str(), rep.summary().c_str());
    return rep.ok() ? kOk : kFailed;
}

std::string executorMissing(const std::string &) { return {}; }

void runInExecutor(char **, const Args &) {} // this program is the executor

std::function<std::string(const ir::Graph &)> stepVerifier(const ir::Graph &original, const Args &a, std::string &err)
{
    return exec::makeStepVerifier(original, execOptions(a, a.positional[0]), err);
}

int verifyResult(const ir::Graph &original, const ir::Graph &result, const Args &a)
{
    auto rep = exec::verifyGraphs(original, result, execOptions(a, a.positional[0]));
    if (!rep) {
        std::cerr << "fxlens-cli optimize: --verify: " << rep.error().toString() << "\n"
                  << "fxlens-cli optimize: warning: the result is unverified" << (a.output.empty() ? "" : " (still written)") << "\n";
        return kFailed;
    }
    std::printf("verify: %s", rep.value().summary().c_str());
    return rep.value().pass ? kOk : kFailed;
}

int profileGraphs(const Args &a, std::vector<std::unique_ptr<ir::Graph>> &graphs, const std::vector<std::string> &graphSources,
                  std::vector<prof::Profile> &profiles, const std::vector<std::pair<std::string, int>> &labels)
{
    // The versions to profile are the entries not filled from saved profiles, in order.
    std::vector<exec::VersionJob> jobs;
    std::vector<size_t> slots;
    for (size_t i = 0, gi = 0; i < profiles.size(); ++i) {
        if (!profiles[i].mode.empty())
            continue;
        exec::VersionJob j;
        j.graph = graphs[gi].get();
        j.label = labels.size() > gi ? labels[gi].first
            : a.optimize && i == 1   ? "optimized (" + (a.patterns.empty() ? a.preset : a.patterns) + ")"
            : profiles.size() > 1    ? (i == 0 ? "A" : "B")
                                     : "";
        j.versionId = labels.size() > gi ? labels[gi].second : int(i);
        jobs.push_back(j);
        slots.push_back(i);
        ++gi;
    }
    exec::ExecOptions eo = execOptions(a, graphSources.front());
    if (!a.deviceGiven)
        eo.device.clear(); // CUDA when there is one, else the CPU with a note
    exec::ProfileOptions o;
    o.iterations = a.iters;
    o.warmup = a.warmup;
    o.graph = std::filesystem::path(graphSources.front()).filename().string();
    o.freezeWeights = a.freeze;
    o.cudaGraph = a.cudaGraph;
    o.hostOps = a.hostOps;
    o.rawEventsPath = a.rawEvents;
    auto r = exec::profileVersions(jobs, eo, o);
    if (!r) {
        Diagnostic d = r.error();
        d.file = graphSources.front();
        std::cerr << "fxlens-cli profile: " << d.toString() << "\n";
        return kFailed;
    }
    if (!r.value().note.empty())
        std::cerr << "fxlens-cli profile: " << r.value().note << ". Pass --device cpu to silence this, or run on a machine with a GPU.\n";
    for (size_t k = 0; k < slots.size(); ++k)
        profiles[slots[k]] = std::move(r.value().profiles[k]);
    return kOk;
}

std::string executorReport()
{
    return exec::probeRuntime().toString() +
        "NVTX ranges: " + (exec::nvtxCompiledIn() ? "yes (domain \"fxlens\")" : "no (NVTX v3 headers not found at build time)") + "\n";
}

} // namespace fxlens::cli
