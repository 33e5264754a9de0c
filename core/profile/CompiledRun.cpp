// SPDX-License-Identifier: MIT
// A compiled run (python -m fxlens.compiled: Inductor's kernels under torch.profiler, with the FX
// nodes its provenance records name) as a profile of the graph version it ran.
#include "io/GraphJson.h"
#include "profile/Profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace fxlens::prof {

using json = nlohmann::json;

namespace {

/// One kernel row of the run; `index` maps node names onto the profile's nodes.
KernelRec compiledKernel(const json &k, const std::unordered_map<std::string, int> &index, int iterations)
{
    KernelRec r;
    r.name = k.at("name").get<std::string>();
    r.kind = k.value("kind", "kernel");
    r.startUs = k.at("start_us").get<double>();
    r.durUs = std::max(0.0, k.at("dur_us").get<double>());
    r.iteration = k.at("iteration").get<int>();
    if (r.iteration < 0 || r.iteration >= iterations)
        r.iteration = -1;
    r.postGrad = k.value("post_grad", std::vector<std::string>{});
    r.reason = k.value("reason", "");
    std::vector<std::string> missing;
    for (const auto &n : k.value("nodes", std::vector<std::string>{})) {
        const auto it = index.find(n);
        if (it == index.end())
            missing.push_back(n);
        else
            r.nodes.push_back(it->second);
    }
    std::sort(r.nodes.begin(), r.nodes.end());
    r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
    if (!r.nodes.empty())
        r.node = r.nodes.back();
    else if (!missing.empty())
        r.reason = "names node '" + missing.front() + "', which the graph file lacks";
    else if (r.reason.empty())
        r.reason = "no provenance record";
    return r;
}

/// The run's post-grad graph (a file beside the run) and its nodes' FX nodes, by name onto `p.nodes`.
void readPostGrad(const json &j, const std::string &path, const std::unordered_map<std::string, int> &index, Profile &p)
{
    if (const auto g = j.find("post_grad_graph"); g != j.end() && g->is_string() && !g->get<std::string>().empty())
        p.postGradGraph = (std::filesystem::path(path).parent_path() / g->get<std::string>()).lexically_normal().string();
    const auto m = j.find("post_grad_nodes");
    if (m == j.end() || !m->is_object())
        return;
    for (const auto &[post, pre] : m->items()) {
        std::vector<int> nodes;
        for (const auto &n : pre)
            if (const auto it = index.find(n.get<std::string>()); it != index.end())
                nodes.push_back(it->second);
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        if (!nodes.empty())
            p.postGradNodes[post] = std::move(nodes);
    }
}

} // namespace

Result<Profile> readCompiledRun(const std::string &path, std::vector<NodeInfo> nodes)
{
    auto fail = [&](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, m}; };
    auto text = io::readTextFile(path);
    if (!text)
        return fail("cannot open the compiled run: " + text.error().message);
    try {
        const json j = json::parse(text.value());
        if (j.value("format", "") != "fxlens-compiled-run")
            return fail("not a compiled run (no \"format\": \"fxlens-compiled-run\")");
        Profile p;
        p.backend = j.value("backend", "inductor");
        p.device = j.value("device", "cpu");
        p.mode = p.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
        p.deviceName = j.value("device_name", "");
        p.warmup = j.value("warmup", 0);
        for (const auto &i : j.at("iterations")) {
            IterationRec it;
            it.index = i.at("index").get<int>();
            it.startUs = i.at("start_us").get<double>();
            it.wallUs = i.at("wall_us").get<double>();
            it.cpuUs = it.wallUs;
            p.iters.push_back(it);
        }
        p.iterations = int(p.iters.size());
        if (p.iterations < 1)
            return fail("the compiled run timed no iteration");
        std::unordered_map<std::string, int> index;
        for (size_t i = 0; i < nodes.size(); ++i)
            index.emplace(nodes[i].name, int(i));
        p.nodes = std::move(nodes);
        readPostGrad(j, path, index, p);
        for (const auto &k : j.at("kernels"))
            p.kernels.push_back(compiledKernel(k, index, p.iterations));
        std::stable_sort(p.kernels.begin(), p.kernels.end(), [](const KernelRec &a, const KernelRec &b) { return a.startUs < b.startUs; });
        p.finish();
        return p;
    } catch (const json::exception &e) {
        return fail(std::string("malformed compiled run: ") + e.what());
    }
}

} // namespace fxlens::prof
