// SPDX-License-Identifier: MIT
// Profile files (saved profiles, raw events): JSON, validated field by field.
#include "io/AtomicFile.h"
#include "io/GraphJson.h"
#include "profile/Profile.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace fxlens::prof {

using json = nlohmann::json;
using Kind = RawEvent::Kind;

namespace {

/// A field that is not an integer of the expected range (a float, a huge value): refused rather than
/// converted (a float out of an int's range is undefined behaviour in a cast).
struct BadField : std::runtime_error {
    using std::runtime_error::runtime_error;
};

template <class T> T integer(const json &v)
{
    using L = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > uint64_t(L::max()))
            throw BadField("integer " + std::to_string(u) + " out of range");
        return T(u);
    }
    if (v.is_number_integer()) {
        const int64_t i = v.get<int64_t>();
        if ((L::is_signed && i < int64_t(L::min())) || (!L::is_signed && i < 0) || (i > 0 && uint64_t(i) > uint64_t(L::max())))
            throw BadField("integer " + std::to_string(i) + " out of range");
        return T(i);
    }
    throw BadField(std::string("expected an integer, found ") + (v.is_number_float() ? "a fraction" : v.type_name()));
}

template <class T> T integerOr(const json &j, const char *key, T dflt)
{
    auto it = j.find(key);
    return it == j.end() ? dflt : integer<T>(*it);
}

std::array<int, 3> int3(const json &v)
{
    if (!v.is_array() || v.size() != 3)
        throw BadField("expected 3 integers");
    return {integer<int>(v[0]), integer<int>(v[1]), integer<int>(v[2])};
}

} // namespace

// --- file format ------------------------------------------------------------------------------------

static const char *kFormatName = "fxlens-profile";

static json kernelColumns()
{
    return json::array(
        {"name", "kind", "device", "stream", "start_us", "dur_us", "launch_us", "iteration", "node", "correlation", "grid", "block"});
}

/// A path as a file in `dir` names it: relative to `dir` (the directory of the profile file).
static std::string relativeTo(const std::string &path, const std::string &dir)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path abs = fs::absolute(path, ec), base = fs::absolute(dir.empty() ? "." : dir, ec);
    const fs::path rel = abs.lexically_normal().lexically_relative(base.lexically_normal());
    return rel.empty() ? path : rel.generic_string();
}

/// A path a file in `dir` names, as this process opens it.
static std::string resolvedIn(const std::string &path, const std::string &dir)
{
    namespace fs = std::filesystem;
    const fs::path p(path);
    return p.is_absolute() || dir.empty() ? path : (fs::path(dir) / p).lexically_normal().string();
}

static std::string directoryOf(const std::string &file) { return std::filesystem::path(file).parent_path().string(); }

/// The post-grad graph and its nodes' FX nodes, into the provenance section.
static void postGradJson(const Profile &p, const std::string &dir, json &out)
{
    if (!p.postGradGraph.empty())
        out["post_grad_graph"] = relativeTo(p.postGradGraph, dir);
    if (!p.postGradNodes.empty())
        out["post_grad_nodes"] = p.postGradNodes;
}

/// Reads the post-grad graph's file (resolved against `dir`) and mapping; "" or what is wrong.
static std::string readPostGrad(const json &c, Profile &p, const std::string &dir)
{
    if (const auto g = c.find("post_grad_graph"); g != c.end()) {
        if (!g->is_string() || g->get<std::string>().empty())
            return "provenance: post_grad_graph is not a file name";
        p.postGradGraph = resolvedIn(g->get<std::string>(), dir);
    }
    const auto m = c.find("post_grad_nodes");
    if (m == c.end())
        return "";
    if (!m->is_object())
        return "provenance: post_grad_nodes is not an object (post-grad node -> FX node indices)";
    for (const auto &[name, nodes] : m->items()) {
        auto &out = p.postGradNodes[name];
        for (const auto &n : nodes) {
            const int node = integer<int>(n);
            if (node < 0 || size_t(node) >= p.nodes.size())
                return "provenance: post-grad node '" + name + "' comes from node " + std::to_string(node) + ", but the profile has " +
                    std::to_string(p.nodes.size()) + " nodes";
            out.push_back(node);
        }
    }
    return "";
}

/// The provenance section of a compiled profile: the backend and, per kernel row, the nodes it
/// covers; the post-grad graph (relative to `dir`, the profile file's directory). Its key sorts
/// after "format", so a file's first bytes still say it is a profile.
static json compiledJson(const Profile &p, const std::string &dir)
{
    json prov = json::array();
    for (const auto &k : p.kernels) {
        json one = {{"nodes", k.nodes}, {"post_grad", k.postGrad}};
        if (!k.reason.empty())
            one["reason"] = k.reason;
        prov.push_back(std::move(one));
    }
    json out = {{"backend", p.backend}, {"kernels", std::move(prov)}};
    postGradJson(p, dir, out);
    return out;
}

/// Reads the provenance section into `p` (its kernels read already); "" or what is wrong.
static std::string readCompiled(const json &c, Profile &p, const std::string &dir)
{
    p.backend = c.at("backend").get<std::string>();
    if (p.backend.empty())
        return "provenance: empty backend";
    const auto &prov = c.at("kernels");
    if (!prov.is_array() || prov.size() != p.kernels.size())
        return "provenance: " + std::to_string(prov.size()) + " entries for " + std::to_string(p.kernels.size()) + " kernels";
    for (size_t i = 0; i < prov.size(); ++i) {
        auto &k = p.kernels[i];
        for (const auto &n : prov[i].at("nodes")) {
            const int node = integer<int>(n);
            if (node < 0 || size_t(node) >= p.nodes.size())
                return "provenance: kernel '" + k.name + "' covers node " + std::to_string(node) + ", but the profile has " +
                    std::to_string(p.nodes.size()) + " nodes";
            k.nodes.push_back(node);
        }
        k.postGrad = prov[i].value("post_grad", std::vector<std::string>{});
        k.reason = prov[i].value("reason", "");
    }
    return readPostGrad(c, p, dir);
}

static json profileJson(const Profile &p, const std::string &dir)
{
    json j;
    j["format"] = kFormatName;
    j["format_version"] = Profile::kFormatVersion;
    j["graph"] = p.graph;
    j["version"] = p.version;
    j["version_id"] = p.versionId;
    if (!p.graphHash.empty())
        j["graph_hash"] = p.graphHash;
    j["mode"] = p.mode;
    j["device"] = p.device;
    j["device_name"] = p.deviceName;
    j["warmup"] = p.warmup;
    j["iterations"] = p.iterations;
    j["base_time_ns"] = p.baseTimeNs;
    j["peak_memory_bytes"] = p.peakMemBytes;
    j["frozen_nodes"] = p.frozenNodes;
    json nodes = json::array();
    for (const auto &n : p.nodes)
        nodes.push_back({n.name, n.op, n.target, n.module});
    j["node_columns"] = json::array({"name", "op", "target", "module"});
    j["nodes"] = std::move(nodes);
    json ranges = json::array();
    for (const auto &r : p.ranges)
        ranges.push_back({r.node, r.iteration, r.startUs, r.durUs, r.tid});
    j["range_columns"] = json::array({"node", "iteration", "start_us", "dur_us", "tid"});
    j["ranges"] = std::move(ranges);
    json iters = json::array();
    for (const auto &i : p.iters)
        iters.push_back({{"index", i.index}, {"start_us", i.startUs}, {"cpu_us", i.cpuUs}, {"wall_us", i.wallUs}});
    j["iteration_records"] = std::move(iters);
    json ks = json::array();
    for (const auto &k : p.kernels)
        ks.push_back(
            {k.name, k.kind, k.device, k.stream, k.startUs, k.durUs, k.launchUs, k.iteration, k.node, k.correlation, k.grid, k.block});
    j["kernel_columns"] = kernelColumns();
    j["kernels"] = std::move(ks);
    if (p.compiled())
        j["provenance"] = compiledJson(p, dir);
    // Derived figures, for readers that do not recompute them (fxlens itself does on load).
    j["summary"] = {{"kernels_per_iteration", p.summary.kernelsPerIter},
                    {"gpu_busy_us", p.summary.gpuBusyUs},
                    {"wall_us", p.summary.wallUs},
                    {"cpu_launch_us", p.summary.cpuUs},
                    {"unattributed_kernels", p.summary.unattributed}};
    return j;
}

static const char *kSetFormatName = "fxlens-profile-set";

Status writeProfiles(const std::vector<const Profile *> &profiles, const std::string &path)
{
    json j;
    if (profiles.size() == 1) {
        j = profileJson(*profiles.front(), directoryOf(path));
    } else {
        j["format"] = kSetFormatName;
        j["format_version"] = Profile::kFormatVersion;
        j["profiles"] = json::array();
        for (const Profile *p : profiles)
            j["profiles"].push_back(profileJson(*p, directoryOf(path)));
    }
    if (Status st = io::writeTextFile(path, j.dump() + "\n"); !st)
        return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot write the profile: " + st.error().message};
    return {};
}

Status writeProfile(const Profile &p, const std::string &path) { return writeProfiles({&p}, path); }

bool isProfileFile(const std::string &path)
{
    std::string head;
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
        // Only the first bytes are inflated: a large compressed graph is not read to be told apart.
        gzFile f = gzopen(path.c_str(), "rb");
        if (!f)
            return false;
        char buf[256] = {};
        const int n = gzread(f, buf, sizeof buf - 1);
        gzclose(f);
        head.assign(buf, size_t(std::max(n, 0)));
    } else {
        std::ifstream f(path, std::ios::binary);
        char buf[256] = {};
        f.read(buf, sizeof buf - 1);
        head.assign(buf, size_t(f.gcount()));
    }
    return head.find("\"fxlens-profile\"") != std::string::npos || head.find("\"fxlens-profile-set\"") != std::string::npos;
}

/// One profile from its JSON object; errors name the file (and the profile of a set).
static Result<Profile> profileFromJson(const json &j, const std::string &path)
{
    auto fail = [&](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, m}; };
    try {
        if (j.value("format", "") != kFormatName)
            return fail("not an fxlens profile (no \"format\": \"fxlens-profile\")");
        if (integer<int64_t>(j.at("format_version")) > Profile::kFormatVersion)
            return fail("profile format version " + std::to_string(integer<int64_t>(j.at("format_version"))) +
                        " is newer than this fxlens reads (" + std::to_string(Profile::kFormatVersion) + ")");
        Profile p;
        p.graph = j.value("graph", "");
        p.version = j.value("version", "");
        p.versionId = integerOr<int>(j, "version_id", 0);
        p.graphHash = j.value("graph_hash", "");
        p.mode = j.at("mode").get<std::string>();
        p.device = j.value("device", "");
        p.deviceName = j.value("device_name", "");
        p.warmup = integerOr<int>(j, "warmup", 0);
        p.iterations = integer<int>(j.at("iterations"));
        if (p.iterations < 1 || p.iterations > 10'000'000 || p.warmup < 0)
            return fail("iterations " + std::to_string(p.iterations) + " and warmup " + std::to_string(p.warmup) +
                        ": expected 1 to 10000000 iterations and a warmup of 0 or more");
        p.baseTimeNs = integerOr<uint64_t>(j, "base_time_ns", 0);
        p.peakMemBytes = integerOr<int64_t>(j, "peak_memory_bytes", -1);
        p.frozenNodes = integerOr<int64_t>(j, "frozen_nodes", -1);
        for (const auto &n : j.at("nodes"))
            p.nodes.push_back(
                {n.at(0).get<std::string>(), n.at(1).get<std::string>(), n.at(2).get<std::string>(), n.at(3).get<std::string>()});
        for (const auto &r : j.at("ranges")) {
            p.ranges.push_back(
                {integer<int>(r.at(0)), integer<int>(r.at(1)), r.at(2).get<double>(), r.at(3).get<double>(), integer<uint64_t>(r.at(4))});
            const auto &x = p.ranges.back();
            if (x.node < 0 || size_t(x.node) >= p.nodes.size() || x.iteration < 0 || x.iteration >= p.iterations)
                return fail("range " + std::to_string(p.ranges.size() - 1) + " names node " + std::to_string(x.node) + " and iteration " +
                            std::to_string(x.iteration) + ", but the profile has " + std::to_string(p.nodes.size()) + " nodes and " +
                            std::to_string(p.iterations) + " iterations");
        }
        for (const auto &i : j.at("iteration_records")) {
            IterationRec it;
            it.index = integer<int>(i.at("index"));
            it.startUs = i.at("start_us").get<double>();
            it.cpuUs = i.at("cpu_us").get<double>();
            it.wallUs = i.at("wall_us").get<double>();
            p.iters.push_back(it);
        }
        if (j.at("kernel_columns") != kernelColumns())
            return fail("unexpected kernel_columns (written by another format revision)");
        for (const auto &k : j.at("kernels")) {
            KernelRec r;
            r.name = k.at(0).get<std::string>();
            r.kind = k.at(1).get<std::string>();
            r.device = integer<int>(k.at(2));
            r.stream = integer<int64_t>(k.at(3));
            r.startUs = k.at(4).get<double>();
            r.durUs = k.at(5).get<double>();
            r.launchUs = k.at(6).get<double>();
            r.iteration = integer<int>(k.at(7));
            r.node = integer<int>(k.at(8));
            r.correlation = integer<uint64_t>(k.at(9));
            r.grid = int3(k.at(10));
            r.block = int3(k.at(11));
            if (r.node < -1 || r.node >= int(p.nodes.size()))
                return fail("kernel '" + r.name + "' names node " + std::to_string(r.node) + ", but the profile has " +
                            std::to_string(p.nodes.size()) + " nodes");
            if (r.device < -1 || r.device > 65535 || r.iteration < -1 || r.iteration >= p.iterations || r.stream < -1 ||
                r.stream > (int64_t(1) << 40))
                return fail("kernel '" + r.name + "': device " + std::to_string(r.device) + ", stream " + std::to_string(r.stream) +
                            ", iteration " + std::to_string(r.iteration) + " out of range");
            p.kernels.push_back(std::move(r));
        }
        if (const auto c = j.find("provenance"); c != j.end())
            if (auto err = readCompiled(*c, p, directoryOf(path)); !err.empty())
                return fail(err);
        p.finish();
        return p;
    } catch (const json::exception &e) {
        return fail(std::string("malformed profile: ") + e.what());
    } catch (const BadField &e) {
        return fail(std::string("malformed profile: ") + e.what());
    }
}

Result<std::vector<Profile>> readProfiles(const std::string &path)
{
    auto fail = [&](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, m}; };
    auto text = io::readTextFile(path);
    if (!text)
        return fail("cannot open the profile: " + text.error().message);
    json j;
    try {
        j = json::parse(text.value());
    } catch (const json::exception &e) { // syntax errors, and numbers out of range (1e400)
        return fail(std::string("not valid JSON: ") + e.what());
    }
    std::vector<Profile> out;
    if (j.is_object() && j.value("format", "") == kSetFormatName) {
        const auto it = j.find("profiles");
        if (it == j.end() || !it->is_array() || it->empty())
            return fail("a profile set with no \"profiles\"");
        for (size_t i = 0; i < it->size(); ++i) {
            auto p = profileFromJson((*it)[i], path);
            if (!p) {
                Diagnostic d = p.error();
                d.message = "profile " + std::to_string(i) + ": " + d.message;
                return d;
            }
            out.push_back(std::move(p.value()));
        }
        return out;
    }
    if (!j.is_object())
        return fail("not an fxlens profile (no \"format\": \"fxlens-profile\")");
    auto p = profileFromJson(j, path);
    if (!p)
        return p.error();
    out.push_back(std::move(p.value()));
    return out;
}

Result<Profile> readProfile(const std::string &path)
{
    auto r = readProfiles(path);
    if (!r)
        return r.error();
    return std::move(r.value().front());
}

// --- raw events ---------------------------------------------------------------------------------------

static const char *kindName(Kind k)
{
    switch (k) {
    case Kind::NodeRange: return "node_range";
    case Kind::IterRange: return "iter_range";
    case Kind::CpuOp: return "cpu_op";
    case Kind::Launch: return "launch";
    case Kind::Kernel: return "kernel";
    case Kind::Memcpy: return "memcpy";
    case Kind::Memset: return "memset";
    }
    return "?";
}

Status writeRawEvents(const std::vector<RawEvent> &events, const std::vector<NodeInfo> &nodes, const std::string &path)
{
    json j;
    j["format"] = "fxlens-raw-events";
    json ns = json::array();
    for (const auto &n : nodes)
        ns.push_back({n.name, n.op, n.target, n.module});
    j["nodes"] = std::move(ns);
    json es = json::array();
    for (const auto &e : events)
        es.push_back({kindName(e.kind), e.name, e.startNs, e.endNs, e.tid, e.correlation, e.linked, e.device, e.stream, e.node, e.iteration,
                      e.grid, e.block});
    j["events"] = std::move(es);
    if (Status st = io::writeFileAtomic(path, j.dump() + "\n"); !st)
        return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot write raw events: " + st.error().message};
    return {};
}

Result<std::pair<std::vector<RawEvent>, std::vector<NodeInfo>>> readRawEvents(const std::string &path)
{
    auto fail = [&](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, m}; };
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return fail("cannot open raw events");
    try {
        json j = json::parse(f);
        std::pair<std::vector<RawEvent>, std::vector<NodeInfo>> out;
        for (const auto &n : j.at("nodes"))
            out.second.push_back(
                {n.at(0).get<std::string>(), n.at(1).get<std::string>(), n.at(2).get<std::string>(), n.at(3).get<std::string>()});
        static const std::map<std::string, Kind> kinds = {
            {"node_range", Kind::NodeRange}, {"iter_range", Kind::IterRange}, {"cpu_op", Kind::CpuOp}, {"launch", Kind::Launch},
            {"kernel", Kind::Kernel},        {"memcpy", Kind::Memcpy},        {"memset", Kind::Memset}};
        for (const auto &e : j.at("events")) {
            RawEvent r;
            auto k = kinds.find(e.at(0).get<std::string>());
            if (k == kinds.end())
                return fail("unknown event kind '" + e.at(0).get<std::string>() + "'");
            r.kind = k->second;
            r.name = e.at(1).get<std::string>();
            r.startNs = integer<uint64_t>(e.at(2));
            r.endNs = integer<uint64_t>(e.at(3));
            r.tid = integer<uint64_t>(e.at(4));
            r.correlation = integer<uint64_t>(e.at(5));
            r.linked = integer<uint64_t>(e.at(6));
            r.device = integer<int>(e.at(7));
            r.stream = integer<int64_t>(e.at(8));
            r.node = integer<int>(e.at(9));
            r.iteration = integer<int>(e.at(10));
            r.grid = int3(e.at(11));
            r.block = int3(e.at(12));
            if (r.device < -1 || r.device > 65535 || r.iteration < -1 || r.node < -1 || r.endNs < r.startNs)
                return fail("event " + std::to_string(out.first.size()) + " ('" + r.name + "'): device " + std::to_string(r.device) +
                            ", node " + std::to_string(r.node) + ", iteration " + std::to_string(r.iteration) +
                            " or its time span out of range");
            out.first.push_back(std::move(r));
        }
        return out;
    } catch (const json::exception &e) {
        return fail(std::string("malformed raw events: ") + e.what());
    } catch (const BadField &e) {
        return fail(std::string("malformed raw events: ") + e.what());
    }
}

} // namespace fxlens::prof
