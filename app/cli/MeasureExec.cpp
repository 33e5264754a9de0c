// SPDX-License-Identifier: MIT
// What tune measures with: whole versions on the executor (exec/Measure.h), in this process or in
// one `measure-worker` process per device (TuneCommand.cpp's pool).
#include "Cli.h"
#include "ExecArgs.h"

#include "exec/Measure.h"
#include "exec/TorchRuntime.h"
#include "io/GraphJson.h"
#include "util/Text.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace fxlens::cli {

namespace {

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
    auto cost = exec::measuringCostModel(original, execOptions(a, a.positional[0]), {a.iters, a.warmup, a.freeze}, note);
    if (!cost) {
        err = a.positional[0] + ": " + cost.error().toString();
        return nullptr;
    }
    return std::move(cost.value());
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
