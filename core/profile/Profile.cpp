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
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace fxlens::prof {

using json = nlohmann::json;

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

namespace {

/// One buildProfile: times relative to the first event, and the node ranges by host thread (sorted
/// by start: they never overlap, as the executor runs one node at a time, so the range holding a
/// time is a binary search away).
struct ProfileBuilder {
    Profile &p;
    uint64_t base = 0;
    std::unordered_map<uint64_t, std::vector<size_t>> byThread;
    std::unordered_map<uint64_t, size_t> rangeByCorrelation;

    double rel(uint64_t ns) const { return ns >= base ? double(ns - base) / 1000.0 : -double(base - ns) / 1000.0; }
    static double dur(const RawEvent &e) { return e.endNs > e.startNs ? double(e.endNs - e.startNs) / 1000.0 : 0.0; }

    /// Node ranges and iterations.
    void readRanges(const std::vector<RawEvent> &events, const std::vector<double> &iterWallUs)
    {
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
    }

    const RangeRec *rangeAt(uint64_t tid, double t) const
    {
        auto it = byThread.find(tid);
        if (it == byThread.end())
            return nullptr;
        const auto &v = it->second;
        auto pos = std::upper_bound(v.begin(), v.end(), t, [&](double x, size_t i) { return x < p.ranges[i].startUs; });
        if (pos == v.begin())
            return nullptr;
        const RangeRec &r = p.ranges[*(pos - 1)];
        return t <= r.startUs + r.durUs ? &r : nullptr;
    }

    int iterationAt(double t) const
    {
        int found = -1;
        for (const auto &it : p.iters)
            if (t >= it.startUs && t <= it.startUs + it.cpuUs)
                found = it.index;
        return found;
    }

    /// Kernels, copies and sets, each attributed to the node range that launched it (through the
    /// launch's correlation id, or the CPU op it is linked to); false when there is no device activity.
    bool readDeviceEvents(const std::vector<RawEvent> &events)
    {
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
        return anyDevice;
    }

    /// CPU profile: the outermost CPU ops inside node ranges stand for kernels.
    void cpuOpsAsKernels(const std::vector<RawEvent> &events)
    {
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
};

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
    ProfileBuilder b{p, base, {}, {}};
    b.readRanges(events, iterWallUs);
    if (!b.readDeviceEvents(events))
        b.cpuOpsAsKernels(events);
    std::sort(p.kernels.begin(), p.kernels.end(), [](const KernelRec &a, const KernelRec &b) { return a.startUs < b.startUs; });
    p.finish();
    return p;
}

std::string kernelNodeNames(const Profile &p, const KernelRec &k)
{
    std::string out;
    const std::vector<int> one{k.node};
    for (const int n : k.nodes.empty() ? one : k.nodes)
        if (n >= 0 && size_t(n) < p.nodes.size())
            out += (out.empty() ? "" : ", ") + p.nodes[size_t(n)].name;
    return out;
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
    // Per node and iteration, so that a node's figure is the median over iterations as the
    // iteration totals are: a mean would let one slow iteration (a first call that initializes a
    // library) make a node look slower than a whole typical iteration.
    const size_t m = iters.size();
    std::vector<double> kernelsAt(nodes.size() * m, 0), deviceAt(nodes.size() * m, 0), hostAt(nodes.size() * m, 0);
    std::vector<NodeStat> outside(nodes.size()); // kernels and ranges of no known iteration: averaged
    for (const auto &k : kernels) {
        const auto it = iterPos.find(k.iteration);
        if (k.node < 0)
            ++summary.unattributed;
        // A compiled kernel counts for each node it covers, its time shared evenly among them.
        const std::vector<int> one{k.node};
        const auto &covered = k.nodes.empty() ? one : k.nodes;
        const double share = k.durUs / double(covered.size());
        for (const int node : covered) {
            if (node < 0 || size_t(node) >= nodeStats.size())
                continue;
            if (it != iterPos.end()) {
                kernelsAt[size_t(node) * m + it->second] += 1;
                deviceAt[size_t(node) * m + it->second] += share;
            } else {
                outside[size_t(node)].kernels += 1.0 / n;
                outside[size_t(node)].gpuUs += share / n;
            }
        }
        if (it != iterPos.end()) {
            ++iters[it->second].kernels;
            busy[it->second].push_back({k.startUs, k.startUs + k.durUs});
            ++counted;
        }
    }
    for (const auto &r : ranges) {
        if (r.node < 0 || size_t(r.node) >= nodeStats.size())
            continue;
        if (const auto it = iterPos.find(r.iteration); it != iterPos.end())
            hostAt[size_t(r.node) * m + it->second] += r.durUs;
        else
            outside[size_t(r.node)].cpuUs += r.durUs / n;
    }
    auto medianOf = [m](const std::vector<double> &v, size_t node) {
        return m ? median(std::vector<double>(v.begin() + long(node * m), v.begin() + long((node + 1) * m))) : 0.0;
    };
    for (size_t i = 0; i < nodeStats.size(); ++i) {
        nodeStats[i].kernels = medianOf(kernelsAt, i) + outside[i].kernels;
        nodeStats[i].gpuUs = medianOf(deviceAt, i) + outside[i].gpuUs;
        nodeStats[i].cpuUs = medianOf(hostAt, i) + outside[i].cpuUs;
    }
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

} // namespace fxlens::prof
