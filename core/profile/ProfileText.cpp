// SPDX-License-Identifier: MIT
// Profiles as text (the CLI's tables and comparisons) and as a Chrome trace (Perfetto).
#include "io/AtomicFile.h"
#include "profile/Profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace fxlens::prof {

using json = nlohmann::json;
using Kind = RawEvent::Kind;

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
        (p.compiled()          ? "; compiled by " + p.backend + ": its kernels and extern calls, attributed to FX nodes by provenance"
             : p.mode == "cpu" ? "; CPU profile: ATen ops stand for kernels"
                               : "") +
        (p.frozenNodes >= 0 ? "; weights frozen (" + std::to_string(p.frozenNodes) + " weight-only nodes folded)" : "") + "\n";
    return s;
}

} // namespace

std::string formatProfile(const Profile &p, size_t topNodes)
{
    std::ostringstream o;
    o << header(p);
    const bool cpu = p.mode == "cpu" && !p.compiled();
    o << pad(cpu ? "ATen ops per iteration" : "kernels per iteration", 28) << countStr(p.summary.kernelsPerIter) << "\n";
    o << pad(cpu                   ? "op time per iteration"
                 : p.mode == "cpu" ? "kernel time per iteration"
                                   : "GPU busy per iteration",
             28)
      << timeStr(p.summary.gpuBusyUs) << "\n";
    o << pad(cpu ? "wall per iteration" : "wall per iteration (events)", 28) << timeStr(p.summary.wallUs) << "\n";
    o << pad("CPU launch per iteration", 28) << timeStr(p.summary.cpuUs) << "\n";
    o << pad(cpu ? "peak memory (iterations)" : "peak memory", 28) << bytesStr(p.summary.peakMemBytes) << "\n";
    if (p.summary.unattributed)
        o << pad("unattributed kernels", 28) << p.summary.unattributed
          << (p.compiled() ? " (provenance names no FX node)\n" : " (launched outside any FX node range)\n");
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
    // On the CPU an eager profile counts ATen ops, a compiled one kernels; both are host time.
    const bool host = a.mode == "cpu" && b.mode == "cpu", cpu = host && !a.compiled() && !b.compiled();
    const bool mixed = host && a.compiled() != b.compiled();
    row(cpu         ? "ATen ops"
            : mixed ? "ops / kernels"
                    : "kernels",
        s.kernelsPerIter, t.kernelsPerIter, countStr(s.kernelsPerIter), countStr(t.kernelsPerIter));
    row(cpu ? "op time" : host ? "busy (host)" : "GPU busy", s.gpuBusyUs, t.gpuBusyUs, timeStr(s.gpuBusyUs), timeStr(t.gpuBusyUs));
    row("wall", s.wallUs, t.wallUs, timeStr(s.wallUs), timeStr(t.wallUs));
    row("CPU launch", s.cpuUs, t.cpuUs, timeStr(s.cpuUs), timeStr(t.cpuUs));
    row("peak memory", double(s.peakMemBytes), double(t.peakMemBytes), bytesStr(s.peakMemBytes), bytesStr(t.peakMemBytes));
    if (t.kernelsPerIter > 0)
        o << "\nB runs " << fmt("%.1f", s.kernelsPerIter / t.kernelsPerIter) << "x fewer "
          << (cpu         ? "ATen ops"
                  : mixed ? "ops / kernels"
                          : "kernels")
          << " than A\n";
    return o.str();
}

std::string formatVersionTable(const std::vector<const Profile *> &profiles)
{
    std::ostringstream o;
    const bool cpu = !profiles.empty() && std::all_of(profiles.begin(), profiles.end(), [](const Profile *p) { return p->mode == "cpu"; });
    o << pad("version", 34) << pad("nodes", 7, true) << pad(cpu ? "ATen ops" : "kernels", 10, true)
      << pad(cpu ? "op time" : "GPU busy", 12, true) << pad("wall", 12, true) << pad("CPU launch", 12, true) << pad("peak mem", 12, true)
      << "\n";
    for (const Profile *p : profiles) {
        const auto &s = p->summary;
        std::string label = p->version.empty() ? std::string("-") : p->version;
        if (label.size() > 33)
            label = label.substr(0, 30) + "...";
        o << pad(label, 34) << pad(std::to_string(p->nodes.size()), 7, true) << pad(countStr(s.kernelsPerIter), 10, true)
          << pad(timeStr(s.gpuBusyUs), 12, true) << pad(timeStr(s.wallUs), 12, true) << pad(timeStr(s.cpuUs), 12, true)
          << pad(bytesStr(s.peakMemBytes), 12, true) << "\n";
    }
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

namespace {

/// The tracks of one version in the trace: a host process (its threads by raw id) and a process
/// per device, streams as threads.
struct VersionTracks {
    std::string label;
    int hostPid = 0;
    int64_t mainTid = 1;
    std::map<uint64_t, int64_t> hostTid;
    int devicePid(int d) const { return hostPid + 1 + std::max(d, 0); }
};

/// A Chrome trace (the JSON Perfetto and chrome://tracing read), written event by event.
class TraceWriter {
public:
    TraceWriter()
    {
        m_out.reserve(1 << 20);
        m_out += "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"fxlens\"},\"traceEvents\":[\n";
    }
    void version(const Profile &p, size_t v)
    {
        const VersionTracks t = tracks(p, v);
        hostEvents(p, t);
        for (const auto &k : p.kernels)
            kernel(p, t, k);
    }
    std::string finish() { return m_out + "\n]}\n"; }

private:
    std::string m_out;
    bool m_first = true;
    uint64_t m_flowId = 1;

    void begin()
    {
        if (!m_first)
            m_out += ",\n";
        m_first = false;
    }
    void meta(const char *what, int pid, int64_t tid, const std::string &key, const std::string &value, bool numeric)
    {
        begin();
        m_out += "{\"ph\":\"M\",\"name\":\"";
        m_out += what;
        m_out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{";
        jsonString(m_out, key);
        m_out += ':';
        if (numeric)
            m_out += value;
        else
            jsonString(m_out, value);
        m_out += "}}";
    }

    /// Process and thread names of version `v`: host threads become tids 1, 2, ... in order of
    /// appearance; each device a process, each stream a thread.
    VersionTracks tracks(const Profile &p, size_t v)
    {
        VersionTracks t;
        t.hostPid = int(v) * 16 + 1;
        t.label = "v" + std::to_string(p.versionId) + (p.version.empty() ? "" : " " + p.version);
        meta("process_name", t.hostPid, 0, "name", t.label + " host", false);
        meta("process_sort_index", t.hostPid, 0, "sort_index", std::to_string(t.hostPid), true);
        for (const auto &r : p.ranges)
            t.hostTid.emplace(r.tid, int64_t(t.hostTid.size()) + 1);
        if (t.hostTid.empty())
            t.hostTid.emplace(0, 1);
        t.mainTid = t.hostTid.begin()->second;
        for (const auto &[raw, tid] : t.hostTid)
            meta("thread_name", t.hostPid, tid, "name", "host thread " + std::to_string(tid), false);
        std::map<std::pair<int, int64_t>, bool> streams;
        for (const auto &k : p.kernels)
            if (k.kind != "cpu_op")
                streams[{k.device, k.stream}] = true;
        std::map<int, bool> devices;
        for (const auto &[ds, _] : streams)
            devices[ds.first] = true;
        for (const auto &[d, _] : devices) {
            meta("process_name", t.devicePid(d), 0, "name",
                 t.label + " GPU" + std::to_string(std::max(d, 0)) + (p.deviceName.empty() ? "" : " " + p.deviceName), false);
            meta("process_sort_index", t.devicePid(d), 0, "sort_index", std::to_string(t.devicePid(d)), true);
        }
        for (const auto &[ds, _] : streams)
            meta("thread_name", t.devicePid(ds.first), ds.second, "name", "stream " + std::to_string(ds.second), false);
        return t;
    }

    static std::string commonArgs(const Profile &p, const VersionTracks &t, int node, int iteration)
    {
        std::string a = "\"graph_version\":";
        jsonString(a, t.label);
        a += ",\"iteration\":" + std::to_string(iteration);
        if (node >= 0 && size_t(node) < p.nodes.size()) {
            a += ",\"fx_node\":";
            jsonString(a, p.nodes[size_t(node)].name);
            a += ",\"node_index\":" + std::to_string(node) + ",\"target\":";
            jsonString(a, p.nodes[size_t(node)].target);
        }
        return a;
    }

    /// The version marker, the iterations and the FX-node ranges on the host.
    void hostEvents(const Profile &p, const VersionTracks &t)
    {
        const std::string pid = std::to_string(t.hostPid), mainTid = std::to_string(t.mainTid);
        begin();
        m_out += "{\"ph\":\"i\",\"s\":\"p\",\"name\":";
        jsonString(m_out, "graph version " + t.label);
        m_out += ",\"cat\":\"version\",\"ts\":0.000,\"pid\":" + pid + ",\"tid\":" + mainTid + ",\"args\":{\"graph\":";
        jsonString(m_out, p.graph);
        m_out += "}}";
        for (const auto &it : p.iters) {
            begin();
            m_out += "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":\"iteration " + std::to_string(it.index) +
                "\",\"ts\":" + num(it.startUs) + ",\"dur\":" + num(it.cpuUs) + ",\"pid\":" + pid + ",\"tid\":" + mainTid + ",\"args\":{" +
                commonArgs(p, t, -1, it.index) + ",\"wall_us\":" + num(it.wallUs) + ",\"kernels\":" + std::to_string(it.kernels) + "}}";
        }
        for (const auto &r : p.ranges) {
            begin();
            m_out += "{\"ph\":\"X\",\"cat\":\"fx_node\",\"name\":";
            jsonString(m_out, p.nodes[size_t(r.node)].name);
            m_out += ",\"ts\":" + num(r.startUs) + ",\"dur\":" + num(r.durUs) + ",\"pid\":" + pid +
                ",\"tid\":" + std::to_string(t.hostTid.at(r.tid)) + ",\"args\":{" + commonArgs(p, t, r.node, r.iteration) + "}}";
        }
    }

    /// A kernel (or a CPU op standing for one) and the flow arrow from its node's range.
    void kernel(const Profile &p, const VersionTracks &t, const KernelRec &k)
    {
        const bool cpu = k.kind == "cpu_op";
        const int pid = cpu ? t.hostPid : t.devicePid(k.device);
        const int64_t tid = cpu ? t.mainTid : k.stream;
        begin();
        m_out += "{\"ph\":\"X\",\"cat\":";
        jsonString(m_out, k.kind);
        m_out += ",\"name\":";
        jsonString(m_out, k.name);
        m_out += ",\"ts\":" + num(k.startUs) + ",\"dur\":" + num(k.durUs) + ",\"pid\":" + std::to_string(pid) +
            ",\"tid\":" + std::to_string(tid) + ",\"args\":{" + commonArgs(p, t, k.node, k.iteration) + ",\"kernel\":";
        jsonString(m_out, k.name);
        if (!cpu) {
            m_out += ",\"stream\":" + std::to_string(k.stream) + ",\"correlation\":" + std::to_string(k.correlation);
            if (k.grid[0])
                m_out += ",\"grid\":[" + std::to_string(k.grid[0]) + "," + std::to_string(k.grid[1]) + "," + std::to_string(k.grid[2]) +
                    "],\"block\":[" + std::to_string(k.block[0]) + "," + std::to_string(k.block[1]) + "," + std::to_string(k.block[2]) +
                    "]";
        }
        m_out += "}}";
        if (cpu || k.node < 0 || k.launchUs < 0)
            return;
        // Arrow from the node's range (at the launch) to the kernel.
        const std::string id = std::to_string(m_flowId++);
        begin();
        m_out += "{\"ph\":\"s\",\"cat\":\"fx_launch\",\"name\":\"launch\",\"id\":" + id + ",\"ts\":" + num(k.launchUs) +
            ",\"pid\":" + std::to_string(t.hostPid) + ",\"tid\":" + std::to_string(t.mainTid) + "}";
        begin();
        m_out += "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"fx_launch\",\"name\":\"launch\",\"id\":" + id + ",\"ts\":" + num(k.startUs) +
            ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + "}";
    }
};

} // namespace

Status writeChromeTrace(const std::vector<const Profile *> &profiles, const std::string &path)
{
    TraceWriter w;
    for (size_t v = 0; v < profiles.size(); ++v)
        w.version(*profiles[v], v);
    if (Status st = io::writeFileAtomic(path, w.finish()); !st)
        return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot write the trace: " + st.error().message};
    return {};
}

} // namespace fxlens::prof
