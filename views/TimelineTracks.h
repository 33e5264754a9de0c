// SPDX-License-Identifier: MIT
// TimelineTracks: the rows the kernel timeline draws for one profile, and the busy time they hold.
// Each track keeps its events sorted by start and its busy time as disjoint intervals (overlapping
// events merged first, so overlap is never counted twice): the timeline shades a pixel column by
// the share of its time these intervals cover, and a measured range reads its busy time from them.
// Times are display times: the profile's own minus an offset (its first iteration's start), so
// that two profiles line up on one axis.
#pragma once

#include "profile/Profile.h"

#include <QString>

#include <cstdint>
#include <utility>
#include <vector>

namespace fxlens::views {

/// Disjoint intervals [start, end), sorted by start.
using Intervals = std::vector<std::pair<double, double>>;

/// "12.34 µs", "4.567 ms", "1.200 s": a time on the timeline.
QString formatUs(double us);

/// The union of `spans` ([start, end) each, in any order).
Intervals mergeIntervals(Intervals spans);
/// How much of [from, to) `busy` covers.
double coveredIn(const Intervals &busy, double from, double to);
/// The share (0..1) of each of `columns` pixel columns that `busy` covers, the first column
/// starting at `t0`, each `scale` long.
std::vector<float> columnCoverage(const Intervals &busy, double t0, double scale, int columns);

struct TimelineTrack {
    enum class Kind {
        Header,     ///< the name of a profile in A/B mode ("A · original")
        Iterations, ///< the timed iterations (host)
        NodeRanges, ///< the FX-node ranges (NVTX) of one host thread
        Launches,   ///< the host's launch calls, over the GPU's idle time spent waiting for them
        Device,     ///< the kernels, copies and fills of one (device, stream)
    };
    Kind kind = Kind::Device;
    QString name;  ///< "iterations (host)", "FX nodes (NVTX)", "host launches", "cuda:0 stream 7"
    int group = 0; ///< 0: profile A, 1: profile B
    int depth = 0; ///< nesting under the host process (node ranges and launches: 1)
    uint64_t tid = 0;
    int device = -1;
    int64_t stream = -1;
    double offsetUs = 0; ///< display time = the profile's time - offsetUs
    /// Events sorted by start: indices into the profile's iters / ranges / kernels (launches: the
    /// kernel each launch queued, sorted by launch time).
    std::vector<uint32_t> events;
    double maxDurUs = 0;
    /// The busy time the track is shaded by (display times): the union of its events; for the
    /// launch track, the launch-bound gaps (the device idle until a kernel launched after it went
    /// idle).
    Intervals busy;
};

/// Start and duration of event `i` of a track of kind `kind` (profile times; launches: duration 0).
std::pair<double, double> eventSpan(const prof::Profile &p, TimelineTrack::Kind kind, uint32_t i);

/// The tracks of one profile (group 0: A, 1: B), with times shifted by -`offsetUs`: its
/// iterations, its node ranges per host thread, its launches (when the profile records them) and a
/// track per (device, stream) (a CPU profile: one track of ATen ops).
std::vector<TimelineTrack> buildTracks(const prof::Profile &p, int group, double offsetUs);

/// The device's idle gaps that end with a kernel launched only after the device went idle (the
/// GPU waited for the host), shifted by -`offsetUs`; the device is idle when no stream runs.
Intervals launchBoundGaps(const prof::Profile &p, double offsetUs);

} // namespace fxlens::views
