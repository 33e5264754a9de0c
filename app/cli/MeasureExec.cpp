// SPDX-License-Identifier: MIT
// What tune measures with: whole versions on the executor (exec::Runner), replayed as a CUDA graph
// on a GPU and timed by the host clock on the CPU; in this process, or in one `measure-worker`
// process per device (TuneCommand.cpp's pool). Uses the executor's LibTorch-free API only.
#include "Cli.h"

#include "exec/Executor.h"
#include "exec/TorchRuntime.h"
#include "io/GraphJson.h"
#include "util/Text.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace fxlens::cli {

namespace {

/// Times whole runs of each version: `warmup` runs, then the median of `iters` timed ones and half
/// their interquartile range. On CUDA one run is captured as a CUDA graph and replayed.
class RunnerCost : public rewrite::CostModel {
public:
    RunnerCost(std::unique_ptr<exec::Runner> r, int iters, int warmup, bool freeze)
        : m_runner(std::move(r)), m_iters(std::max(1, iters)), m_warmup(warmup), m_freeze(freeze)
    {
    }

    std::vector<Result<rewrite::Measurement>> measure(const std::vector<const ir::Graph *> &versions) override
    {
        std::vector<Result<rewrite::Measurement>> out;
        for (const ir::Graph *g : versions)
            out.push_back(one(*g));
        return out;
    }

    std::string note() const
    {
        bool cuda = m_runner->device().rfind("cuda", 0) == 0;
        return m_runner->device() + (cuda ? ", CUDA graph replay" : ", host timer") + (m_freeze ? ", frozen weights" : "") +
            ", median of " + std::to_string(m_iters) + " after " + std::to_string(m_warmup) + " warm-up";
    }

private:
    Result<rewrite::Measurement> one(const ir::Graph &g)
    {
        struct Cleanup {
            exec::Runner &r;
            ~Cleanup()
            {
                r.releaseCudaGraph();
                r.unfreeze();
            }
        } cleanup{*m_runner};
        if (m_freeze)
            if (auto f = m_runner->freeze(g); !f)
                return f.error();
        bool replay = m_runner->device().rfind("cuda", 0) == 0 && m_runner->captureCudaGraph(g).ok();
        std::vector<double> t;
        for (int k = 0; k < m_warmup + m_iters; ++k) {
            auto t0 = std::chrono::steady_clock::now();
            auto r = m_runner->run(g);
            if (!r)
                return r.error();
            m_runner->synchronize();
            if (k >= m_warmup)
                t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        auto q = [&](double f) { return t[std::min(t.size() - 1, size_t(f * double(t.size() - 1) + 0.5))]; };
        return rewrite::Measurement{q(0.5), (q(0.75) - q(0.25)) / 2, t.size(), replay ? "cuda graph" : "runs"};
    }

    std::unique_ptr<exec::Runner> m_runner;
    int m_iters, m_warmup;
    bool m_freeze;
};

exec::ExecOptions measureOptions(const Args &a)
{
    exec::ExecOptions o;
    o.device = a.device;
    o.seed = a.seed;
    o.inputsFile = a.inputs;
    o.randomInputs = a.randomInputs;
    o.libraries = a.libraries;
    o.weightsFile = a.weights;
    o.graphDir = std::filesystem::path(a.positional[0]).parent_path().string();
    return o;
}

/// --devices: the list given; `cuda` stands for every GPU.
std::vector<std::string> deviceList(const std::string &spec)
{
    std::vector<std::string> out;
    size_t p = 0;
    while (p <= spec.size()) {
        size_t e = spec.find(',', p);
        std::string d = spec.substr(p, e == std::string::npos ? std::string::npos : e - p);
        if (d == "cuda") {
            int n = exec::probeRuntime().cudaDevices;
            for (int i = 0; i < n; ++i)
                out.push_back("cuda:" + std::to_string(i));
        } else if (!d.empty())
            out.push_back(d);
        if (e == std::string::npos)
            break;
        p = e + 1;
    }
    return out;
}

} // namespace

std::unique_ptr<rewrite::CostModel> tuneCostModel(const ir::Graph &original, const Args &a, std::string &note, std::string &err)
{
    if (!a.devices.empty()) {
        auto devices = deviceList(a.devices);
        if (devices.empty()) {
            err = "--devices " + a.devices + ": no such device here";
            return nullptr;
        }
        std::string list;
        for (const auto &d : devices)
            list += (list.empty() ? "" : ", ") + d;
        note = std::to_string(devices.size()) + " worker process(es) on " + list + ", median of " + std::to_string(a.iters) +
            (a.freeze ? ", frozen weights" : "");
        return startWorkers(a, devices, err);
    }
    auto runner = exec::Runner::create(original, measureOptions(a));
    if (!runner) {
        err = a.positional[0] + ": " + runner.error().toString();
        return nullptr;
    }
    auto cost = std::make_unique<RunnerCost>(std::move(runner.value()), a.iters, a.warmup, a.freeze);
    note = cost->note();
    return cost;
}

int cmdMeasureWorker(const Args &a)
{
    int code = kOk;
    auto g = load(a, code);
    if (!g) {
        std::printf("{\"error\":\"cannot load %s\"}\n", a.positional[0].c_str());
        return code;
    }
    std::string note, err;
    Args own = a;
    own.devices.clear();
    auto cost = tuneCostModel(*g, own, note, err);
    if (!cost) {
        std::printf("{\"error\":\"%s\"}\n", escapeQuoted(err).c_str());
        return kFailed;
    }
    std::printf("{\"ready\":true,\"device\":\"%s\"}\n", a.device.c_str());
    std::fflush(stdout);
    std::string path;
    while (std::getline(std::cin, path)) {
        auto v = path.empty() ? Result<std::unique_ptr<ir::Graph>>(Diagnostic{Diagnostic::Severity::Error, "", 0, 0, "", "no version"})
                              : io::readGraphFile(path);
        if (!v) {
            std::printf("{\"error\":\"%s\"}\n", escapeQuoted(v.error().toString()).c_str());
        } else {
            auto m = cost->measure({v.value().get()});
            if (m[0].ok())
                std::printf("{\"seconds\":%.9g,\"spread\":%.9g,\"runs\":%zu}\n", m[0]->seconds, m[0]->spread, m[0]->runs);
            else
                std::printf("{\"error\":\"%s\"}\n", escapeQuoted(m[0].error().toString()).c_str());
        }
        std::fflush(stdout);
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    return kOk;
}

} // namespace fxlens::cli
