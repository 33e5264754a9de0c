// SPDX-License-Identifier: MIT
// Tune: chooses the patterns, the order of their families and which matches to apply per graph by
// measured cost, next to the greedy driver (Session). It starts from the greedy result and keeps a
// step only when leaving it out does not save time beyond the noise band: a plan (TunePlan) says
// which families run in which order and which patterns and match groups are left out; every plan is
// replayed on a copy of the original through Session with its `decide` seam, and the whole version
// is measured by an injected cost model (the executor on a device, or a model in tests). Matches of
// the same structure (the same pattern over subgraphs with the same fingerprint: 50 identical blocks)
// form one group and are decided together, so the number of measurements grows with the distinct
// structure of the graph, not with its size.
#pragma once

#include "rewrite/History.h"
#include "rewrite/Pattern.h"
#include "util/Diagnostic.h"

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace fxlens::rewrite {

/// One measurement of a whole graph version: the median of repeated runs and the half-width of the
/// spread around it (what the cost model saw in its own samples).
struct Measurement {
    double seconds = 0;
    double spread = 0;
    size_t runs = 0;
    std::string note; ///< e.g. "cuda:0, CUDA graph replay"
};

/// Measures graph versions. measure() gets independent versions at once so that a model can spread
/// them over devices (one worker per GPU); the results come back in the same order.
class CostModel {
public:
    virtual ~CostModel() = default;
    virtual std::vector<Result<Measurement>> measure(const std::vector<const ir::Graph *> &versions) = 0;
    /// How many versions are worth handing to measure() at once (the number of workers).
    virtual size_t parallelism() const { return 1; }
};

/// What a tuned version is: its families in order (each stage runs to its fixpoint with the
/// patterns of its family and of the stages before it; one stage "" = every pattern, the greedy
/// driver's own phase order), patterns left out, and match groups left out.
struct TunePlan {
    std::vector<std::string> order{""};
    std::set<std::string> droppedPatterns;
    std::set<std::string> droppedGroups; ///< "<pattern>#<fingerprint>"
    bool applyNothing = false;           ///< the original graph itself
    std::string describe() const;
};

/// A step of a replayed plan with the group it belongs to.
struct TunedStep {
    std::string pattern;
    std::string anchor;
    std::string group; ///< "<pattern>#<fingerprint>"
    std::string diff;  ///< the step's diff (rewrite::diffStep), when the replay was asked for diffs
};

/// A plan applied to a copy of the original.
struct Replay {
    std::unique_ptr<ir::Graph> graph;
    std::vector<TunedStep> steps;
};

/// The family a pattern belongs to for the order search: its first label ("vertical",
/// "horizontal", "normalization", "user"), "other" when it has none.
std::string patternFamily(const Pattern &p);
/// The structure of a match (the pattern's name aside): op, target and value of each matched node
/// and how they connect, as 16 hex digits. Identical blocks give identical fingerprints.
std::string matchFingerprint(const Match &m);
/// Applies `plan` to a copy of `original` with `patterns` (checked steps as `checked` says; each
/// step's diff recorded when `diffs`).
Replay replayPlan(const ir::Graph &original, const std::vector<const Pattern *> &patterns, const TunePlan &plan, bool checked = false,
                  bool diffs = false);

/// One measurement in the search, as the trace records it.
struct TuneTrial {
    size_t index = 0;
    std::string kind;     ///< "original", "greedy", "noise", "order", "pattern", "group", "combined"
    std::string decision; ///< what this version changes against the best so far
    TunePlan plan;
    double seconds = 0, spread = 0;
    size_t nodes = 0, steps = 0;
    std::string dropped;    ///< the pattern or group ("<pattern>#<fingerprint>") this version leaves out
    double baseSeconds = 0; ///< the best time when this version was measured (its Δ is against it)
    bool accepted = false;  ///< the search moved to this version
    std::string error;      ///< the version could not be measured
};

/// A step (or group of steps) the tuned version leaves out, with what keeping it would cost.
struct LeftOut {
    std::string what; ///< "pattern batch_linear" or "group split_cat#1a2b... (50 steps)"
    std::string pattern;
    size_t steps = 0;
    double deltaSeconds = 0; ///< measured time with it minus without it (> 0: it cost time)
};

struct TuneConfig {
    double budgetSeconds = 600;    ///< the search stops starting new measurements after this
    size_t noiseRepeats = 3;       ///< the greedy version measured this many times for the band
    double minBandFraction = 0.01; ///< the noise band is at least this share of the time
    size_t maxOrders = 6;          ///< family orders tried (permutations, in a fixed order)
    size_t maxGroups = 64;         ///< match groups tried, the ones with most steps first
    bool checked = false;          ///< replays run the engine's checked mode
    const std::atomic<bool> *stop = nullptr;
    std::function<void(const TuneTrial &)> onTrial; ///< after every measurement
};

struct TuneResult {
    TunePlan best;
    Measurement original, greedy, tuned;
    double band = 0; ///< seconds: differences smaller than this are noise
    std::vector<TuneTrial> trials;
    std::vector<LeftOut> leftOut;
    std::unique_ptr<ir::Graph> graph; ///< the tuned version
    std::vector<TunedStep> steps;     ///< its steps
    size_t greedySteps = 0;
    double seconds = 0;
    bool budgetReached = false, stopped = false;
    std::string error; ///< the original or the greedy version could not be measured
};

/// The search: original, greedy (repeated for the noise band), family orders, each applied pattern
/// left out, each match group left out (largest first); a change is taken only when it is faster
/// than the best so far by more than the band. The result is never slower than the original or the
/// greedy version as measured.
TuneResult tune(const ir::Graph &original, const std::vector<const Pattern *> &patterns, CostModel &cost, const TuneConfig &cfg = {});

} // namespace fxlens::rewrite
