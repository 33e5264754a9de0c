// SPDX-License-Identifier: MIT
// What the app gives the window (views/Services.h): the pattern files, and — in builds with the
// LibTorch executor — the per-step check, the profiler and Tune's cost model, through the same
// functions the CLI uses (exec::makeStepVerifier, exec::profileVersions, exec::measuringCostModel).
// The view tests use it too.
#pragma once

#include "Services.h"

#ifdef FXLENS_HAVE_TORCH
#include "exec/Executor.h"
#include "exec/Measure.h"
#include "exec/Profiler.h"
#include "exec/TorchRuntime.h"
#endif

#include <string>
#include <utility>

namespace fxlens::app {

inline views::Services appServices(std::string patternDir)
{
    views::Services s;
    s.patternDir = std::move(patternDir);
#ifdef FXLENS_HAVE_TORCH
    s.makeVerifier = [](const ir::Graph &original, std::string &error) {
        return exec::makeStepVerifier(original, exec::ExecOptions{}, error);
    };
    s.profile = [](const views::ProfileRequest &r, const std::function<bool(size_t, size_t)> &progress) {
        views::ProfileOutcome out;
        std::vector<exec::VersionJob> jobs;
        for (size_t i = 0; i < r.graphs.size(); ++i)
            jobs.push_back(
                {r.graphs[i], i < r.labels.size() ? r.labels[i] : std::string(), i < r.versionIds.size() ? r.versionIds[i] : int(i)});
        exec::ExecOptions eo;
        eo.device.clear(); // CUDA when there is one, else the CPU with a note
        eo.graphDir = r.graphDir;
        exec::ProfileOptions po;
        po.iterations = r.iterations;
        po.warmup = r.warmup;
        po.freezeWeights = r.freezeWeights;
        po.graph = r.graphName;
        auto res = exec::profileVersions(jobs, eo, po, progress);
        if (!res) {
            out.error = res.error().toString();
            return out;
        }
        out.profiles = std::move(res.value().profiles);
        out.device = res.value().device;
        out.note = res.value().note;
        out.cancelled = res.value().cancelled;
        return out;
    };
    s.makeCostModel = [](const ir::Graph &original, const views::CostModelRequest &r, std::string &note,
                         std::string &error) -> std::unique_ptr<rewrite::CostModel> {
        exec::ExecOptions eo;
        const bool cuda = exec::probeRuntime().cudaAvailable; // as profiling chooses: the GPU, else the CPU
        eo.device = cuda ? "cuda" : "cpu";
        eo.graphDir = r.graphDir;
        auto cost = exec::measuringCostModel(original, eo, {r.iterations, r.warmup, r.freezeWeights}, note);
        if (!cost) {
            error = cost.error().toString();
            return nullptr;
        }
        if (!cuda)
            note += " (CUDA is not available on this machine: timed on the CPU)";
        return std::move(cost.value());
    };
#endif
    return s;
}

} // namespace fxlens::app
