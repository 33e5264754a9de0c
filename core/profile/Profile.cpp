// SPDX-License-Identifier: MIT
#include "profile/Profile.h"
#include "io/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <sstream>
#include <unordered_map>

namespace fxlens::prof {

using json = nlohmann::json;

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

using json = nlohmann::json;

namespace {

using Kind = RawEvent::Kind;

bool isDevice(Kind k) { return k == Kind::Kernel || k == Kind::Memcpy || k == Kind::Memset; }

const char *deviceKindName(Kind k) { return k == Kind::Memcpy ? "memcpy" : k == Kind::Memset ? "memset" : "kernel"; }


double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double unionLength(std::vector<std::pair<double, double>> iv)
{
    std::sort(iv.begin(), iv.end());
    double total = 0, curS = 0, curE = -1;
    bool open = false;
    for (const auto &[s, e] : iv) {
        if (!open || s > curE) {
            if (open)
                total += curE - curS;
            curS = s;
            curE = e;
            open = true;
        } else {
            curE = std::max(curE, e);
        }
    }
    if (open)
        total += curE - curS;
    return total;
}

} // namespace

Profile buildProfile(const std::vector<RawEvent> &events, std::vector<NodeInfo> nodes, const std::string &mode,
                     const std::vector<double> &iterWallUs)
{
    Profile p;
    p.mode = mode;
    p.nodes = std::move(nodes);
    uint64_t base = UINT64_MAX;
    for (const auto &e : events)
        if (e.startNs)
            base = std::min(base, e.startNs);
    if (base == UINT64_MAX)
        base = 0;
    p.baseTimeNs = base;
    auto rel = [&](uint64_t ns) { return ns >= base ? double(ns - base) / 1000.0 : -double(base - ns) / 1000.0; };
    auto dur = [](const RawEvent &e) { return e.endNs > e.startNs ? double(e.endNs - e.startNs) / 1000.0 : 0.0; };

    // Ranges and iterations.
    // Node ranges per host thread (indices into p.ranges), sorted by start: they never overlap (the
    // executor runs one node at a time), so the range holding a time is a binary search away.
    std::unordered_map<uint64_t, std::vector<size_t>> byThread;
    std::unordered_map<uint64_t, size_t> rangeByCorrelation;
    int maxIter = -1;
    for (const auto &e : events) {
        if (e.kind == Kind::NodeRange) {
            if (e.node < 0 || size_t(e.node) >= p.nodes.size())
                continue;
            p.ranges.push_back({e.node, e.iteration, rel(e.startNs), dur(e), e.tid});
            byThread[e.tid].push_back(p.ranges.size() - 1);
            if (e.correlation)
                rangeByCorrelation[e.correlation] = p.ranges.size() - 1;
            maxIter = std::max(maxIter, e.iteration);
        } else if (e.kind == Kind::IterRange) {
            IterationRec it;
            it.index = e.iteration;
            it.startUs = rel(e.startNs);
            it.cpuUs = dur(e);
            p.iters.push_back(it);
            maxIter = std::max(maxIter, e.iteration);
        }
    }
    std::sort(p.iters.begin(), p.iters.end(), [](const auto &a, const auto &b) { return a.index < b.index; });
    for (auto &it : p.iters)
        it.wallUs = it.index >= 0 && size_t(it.index) < iterWallUs.size() ? iterWallUs[size_t(it.index)] : it.cpuUs;
    p.iterations = maxIter + 1;
    for (auto &[tid, idx] : byThread)
        std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p.ranges[a].startUs < p.ranges[b].startUs; });

    auto rangeAt = [&](uint64_t tid, double t) -> const RangeRec * {
        auto it = byThread.find(tid);
        if (it == byThread.end())
            return nullptr;
        const auto &v = it->second;
        auto pos = std::upper_bound(v.begin(), v.end(), t, [&](double x, size_t i) { return x < p.ranges[i].startUs; });
        if (pos == v.begin())
            return nullptr;
        const RangeRec &r = p.ranges[*(pos - 1)];
        return t <= r.startUs + r.durUs ? &r : nullptr;
    };
    auto iterationAt = [&](double t) {
        int found = -1;
        for (const auto &it : p.iters)
            if (t >= it.startUs && t <= it.startUs + it.cpuUs)
                found = it.index;
        return found;
    };

    // Host events that device activity can point back to.
    struct HostRef {
        uint64_t startNs, tid;
    };
    std::unordered_map<uint64_t, HostRef> launches, cpuOps;
    bool anyDevice = false;
    for (const auto &e : events) {
        if (e.kind == Kind::Launch && e.correlation)
            launches[e.correlation] = {e.startNs, e.tid};
        else if (e.kind == Kind::CpuOp && e.correlation)
            cpuOps[e.correlation] = {e.startNs, e.tid};
        anyDevice = anyDevice || isDevice(e.kind);
    }

    for (const auto &e : events) {
        if (!isDevice(e.kind))
            continue;
        KernelRec k;
        k.name = e.name;
        k.kind = deviceKindName(e.kind);
        k.device = e.device;
        k.stream = e.stream;
        k.startUs = rel(e.startNs);
        k.durUs = dur(e);
        k.correlation = e.correlation;
        k.grid = e.grid;
        k.block = e.block;
        const RangeRec *r = nullptr;
        if (auto l = launches.find(e.correlation); e.correlation && l != launches.end()) {
            k.launchUs = rel(l->second.startNs);
            r = rangeAt(l->second.tid, k.launchUs);
        }
        if (!r && e.linked) {
            if (auto rr = rangeByCorrelation.find(e.linked); rr != rangeByCorrelation.end()) {
                r = &p.ranges[rr->second];
            } else if (auto c = cpuOps.find(e.linked); c != cpuOps.end()) {
                r = rangeAt(c->second.tid, rel(c->second.startNs));
                if (k.launchUs < 0)
                    k.launchUs = rel(c->second.startNs);
            }
        }
        if (r) {
            k.node = r->node;
            k.iteration = r->iteration;
            if (k.launchUs < 0)
                k.launchUs = r->startUs;
        } else {
            k.iteration = iterationAt(k.launchUs >= 0 ? k.launchUs : k.startUs);
        }
        p.kernels.push_back(std::move(k));
    }

    if (!anyDevice) {
        // CPU profile: the outermost CPU ops inside node ranges stand for kernels.
        std::vector<const RawEvent *> ops;
        for (const auto &e : events)
            if (e.kind == Kind::CpuOp)
                ops.push_back(&e);
        std::sort(ops.begin(), ops.end(), [](const RawEvent *a, const RawEvent *b) {
            if (a->tid != b->tid)
                return a->tid < b->tid;
            if (a->startNs != b->startNs)
                return a->startNs < b->startNs;
            return a->endNs > b->endNs;
        });
        uint64_t openTid = 0, openEnd = 0;
        bool open = false;
        for (const RawEvent *e : ops) {
            if (open && e->tid == openTid && e->startNs < openEnd)
                continue; // nested inside the op that called it
            open = true;
            openTid = e->tid;
            openEnd = e->endNs;
            const RangeRec *r = rangeAt(e->tid, rel(e->startNs));
            if (!r)
                continue; // the profiler's own work between nodes
            KernelRec k;
            k.name = e->name;
            k.kind = "cpu_op";
            k.stream = -1;
            k.startUs = rel(e->startNs);
            k.durUs = dur(*e);
            k.launchUs = k.startUs;
            k.correlation = e->correlation;
            k.node = r->node;
            k.iteration = r->iteration;
            p.kernels.push_back(std::move(k));
        }
    }
    std::sort(p.kernels.begin(), p.kernels.end(), [](const KernelRec &a, const KernelRec &b) { return a.startUs < b.startUs; });
    p.finish();
    return p;
}

void Profile::finish()
{
    const int n = std::max(iterations, 1);
    std::vector<std::vector<std::pair<double, double>>> busy(iters.size());
    std::unordered_map<int, size_t> iterPos;
    for (size_t i = 0; i < iters.size(); ++i) {
        iterPos[iters[i].index] = i;
        iters[i].kernels = 0;
    }
    nodeStats.assign(nodes.size(), {});
    summary = {};
    size_t counted = 0;
    for (const auto &k : kernels) {
        if (k.node < 0)
            ++summary.unattributed;
        else if (size_t(k.node) < nodeStats.size()) {
            nodeStats[size_t(k.node)].kernels += 1.0 / n;
            nodeStats[size_t(k.node)].gpuUs += k.durUs / n;
        }
        if (auto it = iterPos.find(k.iteration); it != iterPos.end()) {
            ++iters[it->second].kernels;
            busy[it->second].push_back({k.startUs, k.startUs + k.durUs});
            ++counted;
        }
    }
    for (const auto &r : ranges)
        if (r.node >= 0 && size_t(r.node) < nodeStats.size())
            nodeStats[size_t(r.node)].cpuUs += r.durUs / n;
    std::vector<double> g, w, c;
    for (size_t i = 0; i < iters.size(); ++i) {
        iters[i].gpuBusyUs = unionLength(busy[i]);
        g.push_back(iters[i].gpuBusyUs);
        w.push_back(iters[i].wallUs);
        c.push_back(iters[i].cpuUs);
    }
    summary.kernelsPerIter = double(counted) / n;
    summary.gpuBusyUs = median(g);
    summary.wallUs = median(w);
    summary.cpuUs = median(c);
    summary.peakMemBytes = peakMemBytes;
}

// --- file format ------------------------------------------------------------------------------------

static const char *kFormatName = "fxlens-profile";

static json kernelColumns()
{
    return json::array({"name", "kind", "device", "stream", "start_us", "dur_us", "launch_us", "iteration", "node",
                        "correlation", "grid", "block"});
}

Result<bool> writeProfile(const Profile &p, const std::string &path)
{
    json j;
    j["format"] = kFormatName;
    j["format_version"] = Profile::kFormatVersion;
    j["graph"] = p.graph;
    j["version"] = p.version;
    j["version_id"] = p.versionId;
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
        ks.push_back({k.name, k.kind, k.device, k.stream, k.startUs, k.durUs, k.launchUs, k.iteration, k.node, k.correlation,
                      k.grid, k.block});
    j["kernel_columns"] = kernelColumns();
    j["kernels"] = std::move(ks);
    // Derived figures, for readers that do not recompute them (fxlens itself does on load).
    j["summary"] = {{"kernels_per_iteration", p.summary.kernelsPerIter}, {"gpu_busy_us", p.summary.gpuBusyUs},
                    {"wall_us", p.summary.wallUs}, {"cpu_launch_us", p.summary.cpuUs},
                    {"unattributed_kernels", p.summary.unattributed}};
    if (auto e = io::writeFileAtomic(path, j.dump() + "\n"); !e.empty())
        return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot write the profile: " + e};
    return true;
}

bool isProfileFile(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    char buf[256] = {};
    f.read(buf, sizeof buf - 1);
    return std::string(buf, size_t(f.gcount())).find("\"fxlens-profile\"") != std::string::npos;
}

Result<Profile> readProfile(const std::string &path)
{
    auto fail = [&](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, m}; };
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return fail("cannot open the profile");
    json j;
    try {
        j = json::parse(f);
    } catch (const json::exception &e) { // syntax errors, and numbers out of range (1e400)
        return fail(std::string("not valid JSON: ") + e.what());
    }
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
            p.nodes.push_back({n.at(0).get<std::string>(), n.at(1).get<std::string>(), n.at(2).get<std::string>(),
                               n.at(3).get<std::string>()});
        for (const auto &r : j.at("ranges")) {
            p.ranges.push_back({integer<int>(r.at(0)), integer<int>(r.at(1)), r.at(2).get<double>(), r.at(3).get<double>(),
                                integer<uint64_t>(r.at(4))});
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
        p.finish();
        return p;
    } catch (const json::exception &e) {
        return fail(std::string("malformed profile: ") + e.what());
    } catch (const BadField &e) {
        return fail(std::string("malformed profile: ") + e.what());
    }
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

Result<bool> writeRawEvents(const std::vector<RawEvent> &events, const std::vector<NodeInfo> &nodes, const std::string &path)
{
    json j;
    j["format"] = "fxlens-raw-events";
    json ns = json::array();
    for (const auto &n : nodes)
        ns.push_back({n.name, n.op, n.target, n.module});
    j["nodes"] = std::move(ns);
    json es = json::array();
    for (const auto &e : events)
        es.push_back({kindName(e.kind), e.name, e.startNs, e.endNs, e.tid, e.correlation, e.linked, e.device, e.stream, e.node,
                      e.iteration, e.grid, e.block});
    j["events"] = std::move(es);
    if (auto e = io::writeFileAtomic(path, j.dump() + "\n"); !e.empty())
        return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot write raw events: " + e};
    return true;
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
            out.second.push_back({n.at(0).get<std::string>(), n.at(1).get<std::string>(), n.at(2).get<std::string>(),
                                  n.at(3).get<std::string>()});
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

// --- text ---------------------------------------------------------------------------------------------

namespace {

std::string fmt(const char *f, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string timeStr(double us)
{
    if (us >= 1e6)
        return fmt("%.3f s", us / 1e6);
    if (us >= 1e3)
        return fmt("%.3f ms", us / 1e3);
    return fmt("%.1f us", us);
}

std::string bytesStr(int64_t b)
{
    if (b < 0)
        return "n/a";
    if (b >= (int64_t(1) << 30))
        return fmt("%.2f GiB", double(b) / double(int64_t(1) << 30));
    if (b >= (int64_t(1) << 20))
        return fmt("%.2f MiB", double(b) / double(int64_t(1) << 20));
    return fmt("%.1f KiB", double(b) / 1024.0);
}

std::string countStr(double v) { return std::fabs(v - std::round(v)) < 1e-9 ? fmt("%.0f", v) : fmt("%.1f", v); }

std::string pad(std::string s, size_t w, bool right = false)
{
    if (s.size() >= w)
        return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string header(const Profile &p)
{
    std::string s = "graph " + p.graph;
    if (!p.version.empty())
        s += " (" + p.version + ")";
    s += "\ndevice " + p.device + (p.deviceName.empty() ? "" : " " + p.deviceName) + ", " + std::to_string(p.iterations) +
         " timed iterations after " + std::to_string(p.warmup) + " warm-up" +
         (p.mode == "cpu" ? "; CPU profile: ATen ops stand for kernels" : "") +
         (p.frozenNodes >= 0 ? "; weights frozen (" + std::to_string(p.frozenNodes) + " weight-only nodes folded)" : "") + "\n";
    return s;
}

} // namespace

std::string formatProfile(const Profile &p, size_t topNodes)
{
    std::ostringstream o;
    o << header(p);
    const bool cpu = p.mode == "cpu";
    o << pad(cpu ? "ATen ops per iteration" : "kernels per iteration", 28) << countStr(p.summary.kernelsPerIter) << "\n";
    o << pad(cpu ? "op time per iteration" : "GPU busy per iteration", 28) << timeStr(p.summary.gpuBusyUs) << "\n";
    o << pad(cpu ? "wall per iteration" : "wall per iteration (events)", 28) << timeStr(p.summary.wallUs) << "\n";
    o << pad("CPU launch per iteration", 28) << timeStr(p.summary.cpuUs) << "\n";
    o << pad(cpu ? "peak memory (iterations)" : "peak memory", 28) << bytesStr(p.summary.peakMemBytes) << "\n";
    if (p.summary.unattributed)
        o << pad("unattributed kernels", 28) << p.summary.unattributed << " (launched outside any FX node range)\n";
    std::vector<size_t> order;
    for (size_t i = 0; i < p.nodeStats.size(); ++i)
        if (p.nodeStats[i].kernels > 0)
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p.nodeStats[a].gpuUs > p.nodeStats[b].gpuUs; });
    if (order.size() > topNodes)
        order.resize(topNodes);
    if (!order.empty()) {
        o << "\ntop nodes by " << (cpu ? "op" : "GPU") << " time (per iteration)\n";
        o << pad("node", 28) << pad("target", 36) << pad("kernels", 9, true) << pad(cpu ? "op time" : "GPU time", 12, true)
          << pad("CPU time", 12, true) << "\n";
        for (size_t i : order) {
            const auto &n = p.nodes[i];
            const auto &s = p.nodeStats[i];
            o << pad(n.name, 28) << pad(n.target, 36) << pad(countStr(s.kernels), 9, true) << pad(timeStr(s.gpuUs), 12, true)
              << pad(timeStr(s.cpuUs), 12, true) << "\n";
        }
    }
    return o.str();
}

std::string formatComparison(const Profile &a, const Profile &b)
{
    std::ostringstream o;
    o << "A: " << header(a) << "B: " << header(b) << "\n";
    o << pad("per iteration", 26) << pad("A", 14, true) << pad("B", 14, true) << pad("B/A", 10, true) << "\n";
    auto row = [&](const std::string &label, double x, double y, const std::string &xs, const std::string &ys) {
        o << pad(label, 26) << pad(xs, 14, true) << pad(ys, 14, true)
          << pad(x > 0 && y >= 0 ? fmt("%.3fx", y / x) : std::string("-"), 10, true) << "\n";
    };
    const auto &s = a.summary, &t = b.summary;
    const bool cpu = a.mode == "cpu" && b.mode == "cpu";
    row(cpu ? "ATen ops" : "kernels", s.kernelsPerIter, t.kernelsPerIter, countStr(s.kernelsPerIter), countStr(t.kernelsPerIter));
    row(cpu ? "op time" : "GPU busy", s.gpuBusyUs, t.gpuBusyUs, timeStr(s.gpuBusyUs), timeStr(t.gpuBusyUs));
    row("wall", s.wallUs, t.wallUs, timeStr(s.wallUs), timeStr(t.wallUs));
    row("CPU launch", s.cpuUs, t.cpuUs, timeStr(s.cpuUs), timeStr(t.cpuUs));
    row("peak memory", double(s.peakMemBytes), double(t.peakMemBytes), bytesStr(s.peakMemBytes), bytesStr(t.peakMemBytes));
    if (t.kernelsPerIter > 0)
        o << "\nB runs " << fmt("%.1f", s.kernelsPerIter / t.kernelsPerIter) << "x fewer " << (cpu ? "ATen ops" : "kernels")
          << " than A\n";
    return o.str();
}

// --- Chrome trace -----------------------------------------------------------------------------------

namespace {

void jsonString(std::string &out, const std::string &s)
{
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                out += b;
            } else {
                out += char(c);
            }
        }
    }
    out += '"';
}

std::string num(double v)
{
    char b[40];
    std::snprintf(b, sizeof b, "%.3f", v < 0 ? 0.0 : v);
    return b;
}

} // namespace

Result<bool> writeChromeTrace(const std::vector<const Profile *> &profiles, const std::string &path)
{
    std::string out;
    out.reserve(1 << 20);
    out += "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"fxlens\"},\"traceEvents\":[\n";
    bool first = true;
    auto begin = [&]() {
        if (!first)
            out += ",\n";
        first = false;
    };
    auto meta = [&](const char *what, int pid, int64_t tid, const std::string &key, const std::string &value, bool numeric) {
        begin();
        out += "{\"ph\":\"M\",\"name\":\"";
        out += what;
        out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{";
        jsonString(out, key);
        out += ':';
        if (numeric)
            out += value;
        else
            jsonString(out, value);
        out += "}}";
    };
    uint64_t flowId = 1;
    for (size_t v = 0; v < profiles.size(); ++v) {
        const Profile &p = *profiles[v];
        const int hostPid = int(v) * 16 + 1;
        auto devicePid = [&](int d) { return hostPid + 1 + std::max(d, 0); };
        const std::string label = "v" + std::to_string(p.versionId) + (p.version.empty() ? "" : " " + p.version);
        meta("process_name", hostPid, 0, "name", label + " host", false);
        meta("process_sort_index", hostPid, 0, "sort_index", std::to_string(hostPid), true);
        // Host threads become tids 1, 2, ... in order of appearance.
        std::map<uint64_t, int64_t> hostTid;
        for (const auto &r : p.ranges)
            hostTid.emplace(r.tid, int64_t(hostTid.size()) + 1);
        if (hostTid.empty())
            hostTid.emplace(0, 1);
        const int64_t mainTid = hostTid.begin()->second;
        for (const auto &[raw, t] : hostTid)
            meta("thread_name", hostPid, t, "name", "host thread " + std::to_string(t), false);
        std::map<std::pair<int, int64_t>, bool> streams;
        for (const auto &k : p.kernels)
            if (k.kind != "cpu_op")
                streams[{k.device, k.stream}] = true;
        std::map<int, bool> devices;
        for (const auto &[ds, _] : streams)
            devices[ds.first] = true;
        for (const auto &[d, _] : devices) {
            meta("process_name", devicePid(d), 0, "name",
                 label + " GPU" + std::to_string(std::max(d, 0)) + (p.deviceName.empty() ? "" : " " + p.deviceName), false);
            meta("process_sort_index", devicePid(d), 0, "sort_index", std::to_string(devicePid(d)), true);
        }
        for (const auto &[ds, _] : streams)
            meta("thread_name", devicePid(ds.first), ds.second, "name", "stream " + std::to_string(ds.second), false);

        auto commonArgs = [&](int node, int iteration) {
            std::string a = "\"graph_version\":";
            jsonString(a, label);
            a += ",\"iteration\":" + std::to_string(iteration);
            if (node >= 0 && size_t(node) < p.nodes.size()) {
                a += ",\"fx_node\":";
                jsonString(a, p.nodes[size_t(node)].name);
                a += ",\"node_index\":" + std::to_string(node) + ",\"target\":";
                jsonString(a, p.nodes[size_t(node)].target);
            }
            return a;
        };
        begin();
        out += "{\"ph\":\"i\",\"s\":\"p\",\"name\":";
        jsonString(out, "graph version " + label);
        out += ",\"cat\":\"version\",\"ts\":0.000,\"pid\":" + std::to_string(hostPid) + ",\"tid\":" + std::to_string(mainTid) +
               ",\"args\":{\"graph\":";
        jsonString(out, p.graph);
        out += "}}";
        for (const auto &it : p.iters) {
            begin();
            out += "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":\"iteration " + std::to_string(it.index) + "\",\"ts\":" +
                   num(it.startUs) + ",\"dur\":" + num(it.cpuUs) + ",\"pid\":" + std::to_string(hostPid) +
                   ",\"tid\":" + std::to_string(mainTid) + ",\"args\":{" + commonArgs(-1, it.index) +
                   ",\"wall_us\":" + num(it.wallUs) + ",\"kernels\":" + std::to_string(it.kernels) + "}}";
        }
        for (const auto &r : p.ranges) {
            begin();
            out += "{\"ph\":\"X\",\"cat\":\"fx_node\",\"name\":";
            jsonString(out, p.nodes[size_t(r.node)].name);
            out += ",\"ts\":" + num(r.startUs) + ",\"dur\":" + num(r.durUs) + ",\"pid\":" + std::to_string(hostPid) +
                   ",\"tid\":" + std::to_string(hostTid[r.tid]) + ",\"args\":{" + commonArgs(r.node, r.iteration) + "}}";
        }
        for (const auto &k : p.kernels) {
            const bool cpu = k.kind == "cpu_op";
            const int pid = cpu ? hostPid : devicePid(k.device);
            const int64_t tid = cpu ? mainTid : k.stream;
            begin();
            out += "{\"ph\":\"X\",\"cat\":";
            jsonString(out, k.kind);
            out += ",\"name\":";
            jsonString(out, k.name);
            out += ",\"ts\":" + num(k.startUs) + ",\"dur\":" + num(k.durUs) + ",\"pid\":" + std::to_string(pid) +
                   ",\"tid\":" + std::to_string(tid) + ",\"args\":{" + commonArgs(k.node, k.iteration) + ",\"kernel\":";
            jsonString(out, k.name);
            if (!cpu) {
                out += ",\"stream\":" + std::to_string(k.stream) + ",\"correlation\":" + std::to_string(k.correlation);
                if (k.grid[0])
                    out += ",\"grid\":[" + std::to_string(k.grid[0]) + "," + std::to_string(k.grid[1]) + "," +
                           std::to_string(k.grid[2]) + "],\"block\":[" + std::to_string(k.block[0]) + "," +
                           std::to_string(k.block[1]) + "," + std::to_string(k.block[2]) + "]";
            }
            out += "}}";
            if (!cpu && k.node >= 0 && k.launchUs >= 0) {
                // Arrow from the node's range (at the launch) to the kernel.
                const std::string id = std::to_string(flowId++);
                begin();
                out += "{\"ph\":\"s\",\"cat\":\"fx_launch\",\"name\":\"launch\",\"id\":" + id + ",\"ts\":" + num(k.launchUs) +
                       ",\"pid\":" + std::to_string(hostPid) + ",\"tid\":" + std::to_string(mainTid) + "}";
                begin();
                out += "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"fx_launch\",\"name\":\"launch\",\"id\":" + id + ",\"ts\":" +
                       num(k.startUs) + ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + "}";
            }
        }
    }
    out += "\n]}\n";
    if (auto e = io::writeFileAtomic(path, out); !e.empty())
        return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot write the trace: " + e};
    return true;
}

} // namespace fxlens::prof
