// SPDX-License-Identifier: MIT
// The kernel timeline's tracks and their busy time (see TimelineTracks.h).
#include "TimelineTracks.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace fxlens::views {

namespace {

QString trackText(const char *text) { return QCoreApplication::translate("KernelTimeline", text); }

} // namespace

QString formatUs(double v)
{
    const double a = std::fabs(v);
    if (a >= 1e6)
        return QStringLiteral("%1 s").arg(v / 1e6, 0, 'f', 3);
    if (a >= 1e3)
        return QStringLiteral("%1 ms").arg(v / 1e3, 0, 'f', 3);
    return QStringLiteral("%1 µs").arg(v, 0, 'f', a >= 100 ? 1 : 2);
}

Intervals mergeIntervals(Intervals spans)
{
    std::sort(spans.begin(), spans.end());
    Intervals out;
    for (const auto &[s, e] : spans) {
        if (e <= s)
            continue;
        if (!out.empty() && s <= out.back().second)
            out.back().second = std::max(out.back().second, e);
        else
            out.emplace_back(s, e);
    }
    return out;
}

double coveredIn(const Intervals &busy, double from, double to)
{
    if (to <= from)
        return 0;
    auto it = std::lower_bound(busy.begin(), busy.end(), from, [](const auto &iv, double v) { return iv.second <= v; });
    double sum = 0;
    for (; it != busy.end() && it->first < to; ++it)
        sum += std::min(it->second, to) - std::max(it->first, from);
    return sum;
}

std::vector<float> columnCoverage(const Intervals &busy, double t0, double scale, int columns)
{
    std::vector<double> acc(size_t(std::max(0, columns)), 0.0);
    if (columns <= 0 || scale <= 0)
        return {};
    const double t1 = t0 + columns * scale;
    auto it = std::lower_bound(busy.begin(), busy.end(), t0, [](const auto &iv, double v) { return iv.second <= v; });
    for (; it != busy.end() && it->first < t1; ++it) {
        const double s = std::max(it->first, t0), e = std::min(it->second, t1);
        const int c0 = std::clamp(int((s - t0) / scale), 0, columns - 1), c1 = std::clamp(int((e - t0) / scale), 0, columns - 1);
        for (int c = c0; c <= c1; ++c) {
            const double a = t0 + c * scale;
            acc[size_t(c)] += std::max(0.0, std::min(e, a + scale) - std::max(s, a));
        }
    }
    std::vector<float> out(acc.size());
    for (size_t c = 0; c < acc.size(); ++c)
        out[c] = float(std::clamp(acc[c] / scale, 0.0, 1.0));
    return out;
}

std::pair<double, double> eventSpan(const prof::Profile &p, TimelineTrack::Kind kind, uint32_t i)
{
    switch (kind) {
    case TimelineTrack::Kind::Iterations: return {p.iters[i].startUs, std::max(p.iters[i].cpuUs, p.iters[i].wallUs)};
    case TimelineTrack::Kind::NodeRanges: return {p.ranges[i].startUs, p.ranges[i].durUs};
    case TimelineTrack::Kind::Launches: return {p.kernels[i].launchUs, 0.0};
    case TimelineTrack::Kind::Device: return {p.kernels[i].startUs, p.kernels[i].durUs};
    case TimelineTrack::Kind::Header: break;
    }
    return {0, 0};
}

Intervals launchBoundGaps(const prof::Profile &p, double offsetUs)
{
    std::map<int, std::vector<uint32_t>> byDevice;
    for (uint32_t i = 0; i < p.kernels.size(); ++i)
        byDevice[p.kernels[i].device].push_back(i);
    Intervals gaps;
    for (auto &[device, ks] : byDevice) {
        std::sort(ks.begin(), ks.end(), [&](uint32_t a, uint32_t b) { return p.kernels[a].startUs < p.kernels[b].startUs; });
        double idleFrom = -std::numeric_limits<double>::infinity();
        for (uint32_t i : ks) {
            const auto &k = p.kernels[i];
            // Idle before k, and k was queued only after the device went idle: the host was late.
            if (k.startUs > idleFrom && std::isfinite(idleFrom) && k.launchUs >= 0 && k.launchUs > idleFrom)
                gaps.emplace_back(idleFrom - offsetUs, k.startUs - offsetUs);
            idleFrom = std::max(idleFrom, k.startUs + k.durUs);
        }
    }
    return mergeIntervals(std::move(gaps));
}

namespace {

void finishTrack(const prof::Profile &p, TimelineTrack &t)
{
    std::sort(t.events.begin(), t.events.end(),
              [&](uint32_t a, uint32_t b) { return eventSpan(p, t.kind, a).first < eventSpan(p, t.kind, b).first; });
    Intervals spans;
    for (uint32_t i : t.events) {
        const auto [s, d] = eventSpan(p, t.kind, i);
        t.maxDurUs = std::max(t.maxDurUs, d);
        if (t.kind != TimelineTrack::Kind::Launches)
            spans.emplace_back(s - t.offsetUs, s + d - t.offsetUs);
    }
    if (t.kind == TimelineTrack::Kind::Launches)
        t.busy = launchBoundGaps(p, t.offsetUs);
    else
        t.busy = mergeIntervals(std::move(spans));
}

} // namespace

std::vector<TimelineTrack> buildTracks(const prof::Profile &p, int group, double offsetUs)
{
    std::vector<TimelineTrack> tracks;
    auto make = [&](TimelineTrack::Kind kind) {
        TimelineTrack t;
        t.kind = kind;
        t.group = group;
        t.offsetUs = offsetUs;
        return t;
    };
    TimelineTrack iters = make(TimelineTrack::Kind::Iterations);
    iters.name = trackText("iterations (host)");
    for (uint32_t i = 0; i < p.iters.size(); ++i)
        iters.events.push_back(i);
    tracks.push_back(std::move(iters));
    // FX-node ranges, a track per host thread, nested under the iterations.
    std::map<uint64_t, TimelineTrack> byThread;
    for (uint32_t i = 0; i < p.ranges.size(); ++i) {
        auto [it, added] = byThread.try_emplace(p.ranges[i].tid, make(TimelineTrack::Kind::NodeRanges));
        it->second.tid = p.ranges[i].tid;
        it->second.depth = 1;
        it->second.events.push_back(i);
    }
    for (auto &[tid, t] : byThread) {
        t.name = byThread.size() == 1 ? trackText("FX nodes (NVTX)") : trackText("FX nodes, thread %1").arg(tid);
        tracks.push_back(std::move(t));
    }
    // The host's launch calls (a GPU profile that recorded them).
    TimelineTrack launches = make(TimelineTrack::Kind::Launches);
    launches.name = trackText("host launches");
    launches.depth = 1;
    for (uint32_t i = 0; i < p.kernels.size(); ++i)
        if (p.mode != "cpu" && p.kernels[i].launchUs >= 0)
            launches.events.push_back(i);
    if (!launches.events.empty())
        tracks.push_back(std::move(launches));
    // Device activity, a track per (device, stream); a CPU profile's ATen ops on one track.
    std::map<std::pair<int, int64_t>, TimelineTrack> byStream;
    for (uint32_t i = 0; i < p.kernels.size(); ++i) {
        const auto &k = p.kernels[i];
        auto [it, added] = byStream.try_emplace({k.device, k.stream}, make(TimelineTrack::Kind::Device));
        it->second.device = k.device;
        it->second.stream = k.stream;
        it->second.events.push_back(i);
    }
    for (auto &[key, t] : byStream) {
        t.name = p.compiled() && p.mode == "cpu" ? trackText("%1 kernels (host)").arg(QString::fromStdString(p.backend))
            : p.mode == "cpu"                    ? trackText("ATen ops (host)")
                                                 : trackText("cuda:%1 stream %2").arg(key.first).arg(key.second);
        tracks.push_back(std::move(t));
    }
    for (auto &t : tracks)
        finishTrack(p, t);
    return tracks;
}

} // namespace fxlens::views
