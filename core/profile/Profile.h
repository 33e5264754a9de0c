// SPDX-License-Identifier: MIT
// Profile: what one graph version did on a device during K timed iterations, as a plain value that
// can be saved, reopened without a GPU, compared and exported as a Chrome/Perfetto trace.
//
// The executor's profiler (core/exec/Profiler.cpp) records raw events (node ranges, launches,
// kernels, CPU ops) and hands them to buildProfile(), which attributes every kernel to the FX node
// that launched it. Nothing here depends on LibTorch, so attribution, the file format and the trace
// export are tested without a GPU on recorded events.
#pragma once

#include "util/Diagnostic.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fxlens::prof {

/// One event as a profiler backend reports it, before attribution. Times are nanoseconds on one
/// clock (the backend's), absolute.
struct RawEvent {
    enum class Kind : uint8_t {
        NodeRange, ///< the executor's range around one FX node (node, iteration set)
        IterRange, ///< the executor's range around one iteration (iteration set)
        CpuOp,     ///< an operator on the host (ATen op)
        Launch,    ///< a runtime call that queues device work (cudaLaunchKernel, cudaMemcpyAsync, ...)
        Kernel,    ///< device activity: a kernel
        Memcpy,    ///< device activity: a copy
        Memset,    ///< device activity: a fill
    };
    Kind kind = Kind::CpuOp;
    std::string name;
    uint64_t startNs = 0, endNs = 0;
    uint64_t tid = 0;         ///< host thread (ranges, CPU ops, launches)
    uint64_t correlation = 0; ///< launch <-> device activity (CUPTI correlation id); CPU op id
    uint64_t linked = 0;      ///< device activity: id of the CPU op or range that was open at launch
    int device = -1;          ///< device index of device activity
    int64_t stream = -1;      ///< stream of device activity
    int node = -1;            ///< NodeRange: node index in program order
    int iteration = -1;       ///< NodeRange / IterRange
    std::array<int, 3> grid{0, 0, 0}, block{0, 0, 0};
};

/// A node of the profiled graph version (program order index = position in `Profile::nodes`).
struct NodeInfo {
    std::string name, op, target, module;
};

struct KernelRec {
    std::string name;
    std::string kind; ///< "kernel", "memcpy", "memset", or "cpu_op" in a CPU profile
    int device = -1;
    int64_t stream = -1;
    double startUs = 0, durUs = 0; ///< relative to Profile::baseTimeNs
    double launchUs = -1;          ///< host time of the launch (relative), -1 if unknown
    int iteration = -1;
    int node = -1; ///< attributed FX node, -1 when no node range encloses the launch
    uint64_t correlation = 0;
    std::array<int, 3> grid{0, 0, 0}, block{0, 0, 0};
    // A compiled profile's provenance (empty in an eager profile): every FX node the kernel covers,
    // in program order (`node` is the last of them), the compiler's post-grad nodes it computes, and
    // why it has no FX node when `nodes` is empty.
    std::vector<int> nodes;
    std::vector<std::string> postGrad;
    std::string reason;
};

struct RangeRec {
    int node = -1;
    int iteration = -1;
    double startUs = 0, durUs = 0;
    uint64_t tid = 0;
};

struct IterationRec {
    int index = 0;
    double startUs = 0;
    double cpuUs = 0;     ///< host time to queue the iteration (launch overhead)
    double wallUs = 0;    ///< device-measured time of the iteration (CUDA events), host time on CPU
    double gpuBusyUs = 0; ///< union of the device activities of the iteration
    int kernels = 0;
};

/// A node's figures per iteration: the median over the timed iterations, as Summary's are (so a
/// node never shows more than a typical iteration holds).
struct NodeStat {
    double kernels = 0; ///< per iteration
    double gpuUs = 0;   ///< device time per iteration (CPU op time in a CPU profile)
    double cpuUs = 0;   ///< host time of the node's range per iteration
};

struct Summary {
    double kernelsPerIter = 0;
    double gpuBusyUs = 0; ///< per iteration (median)
    double wallUs = 0;    ///< per iteration (median)
    double cpuUs = 0;     ///< host launch time per iteration (median)
    int64_t peakMemBytes = -1;
    size_t unattributed = 0; ///< kernels with no node
};

struct Profile {
    static constexpr int kFormatVersion = 1;
    std::string graph;      ///< graph file or name
    std::string version;    ///< graph version label ("original", "optimized", "step 12", ...)
    int versionId = 0;      ///< the number NVTX payloads carry
    std::string graphHash;  ///< ir::fingerprintHex of the version profiled ("" in older files)
    std::string mode;       ///< "cuda" or "cpu"
    std::string backend;    ///< "" eager (fxlens' executor, node by node); "inductor": compiled, kernels carry provenance
    std::string device;     ///< "cuda:0", "cpu"
    std::string deviceName; ///< "NVIDIA H200", host CPU model
    int warmup = 0;
    int iterations = 0;
    uint64_t baseTimeNs = 0; ///< absolute time of relative 0
    int64_t peakMemBytes = -1;
    int64_t frozenNodes = -1; ///< weight-only nodes folded before timing; -1: weights not frozen
    std::vector<NodeInfo> nodes;
    std::vector<RangeRec> ranges;
    std::vector<KernelRec> kernels;
    std::vector<IterationRec> iters;
    // A compiled profile's post-grad graph: the compiler's graph after its own passes, whose node
    // names the kernels' postGrad lists use. Its graph file ("" when none was kept; on disk relative
    // to the profile file, in memory as the reader resolved it) and, per post-grad node that came
    // from the profiled graph, the FX nodes (indices into `nodes`, in program order) it came from.
    std::string postGradGraph;
    std::map<std::string, std::vector<int>> postGradNodes;
    std::vector<NodeStat> nodeStats; ///< per node, filled by finish()
    Summary summary;                 ///< filled by finish()

    /// Recomputes per-iteration, per-node and summary figures from ranges and kernels. A compiled
    /// kernel's time is shared evenly by the nodes it covers, so node times still add up to the
    /// busy time.
    void finish();
    bool compiled() const { return !backend.empty(); }
};

/// True when kernel `k` stands for node `node`: its provenance covers the node (a compiled
/// profile), or the node's range launched it.
inline bool covers(const KernelRec &k, int node)
{
    return node >= 0 && (k.node == node || std::find(k.nodes.begin(), k.nodes.end(), node) != k.nodes.end());
}
/// The names of the FX nodes kernel `k` of `p` stands for, in program order, joined by ", "
/// ("" when none).
std::string kernelNodeNames(const Profile &p, const KernelRec &k);

/// Attribution: each device activity is matched to its launch by correlation id, and the launch to
/// the innermost node range open on the launching thread at that time; without a launch record, the
/// CPU op or range named by `linked` stands in. In a CPU profile (no device activity) the outermost
/// CPU ops inside each node range become the "kernels". `iterWallUs[i]` is iteration i's measured
/// time (empty: the host range's length).
Profile buildProfile(const std::vector<RawEvent> &events, std::vector<NodeInfo> nodes, const std::string &mode,
                     const std::vector<double> &iterWallUs = {});

Status writeProfile(const Profile &p, const std::string &path);
/// Several versions' profiles in one file (a profile set; gzip-compressed when the path ends in
/// .gz): what the app saves beside a graph and the per-version chart reads. One profile is written
/// as a plain profile file.
Status writeProfiles(const std::vector<const Profile *> &profiles, const std::string &path);
/// The first profile of a profile file or set.
Result<Profile> readProfile(const std::string &path);
/// Every profile of a profile file (one) or set (several), plain or gzip-compressed.
Result<std::vector<Profile>> readProfiles(const std::string &path);
/// True when `path` holds a saved profile or profile set (as opposed to a graph).
bool isProfileFile(const std::string &path);

/// A compiled run as `python -m fxlens.compiled` writes it (`format: "fxlens-compiled-run"`): its
/// kernels, attributed to the FX nodes of `nodes` (the graph file's, in program order) by name, as a
/// profile with backend "inductor". A kernel naming a node `nodes` lacks keeps no node, with the
/// reason.
Result<Profile> readCompiledRun(const std::string &path, std::vector<NodeInfo> nodes);

/// Raw events as JSON (recorded profiles for tests and bug reports).
Status writeRawEvents(const std::vector<RawEvent> &events, const std::vector<NodeInfo> &nodes, const std::string &path);
Result<std::pair<std::vector<RawEvent>, std::vector<NodeInfo>>> readRawEvents(const std::string &path);

/// The per-version table `fxlens-cli profile` prints; `topNodes` rows of nodes by device time.
std::string formatProfile(const Profile &p, size_t topNodes = 10);
/// One row per version ("what each step bought"): kernels per iteration, GPU busy, wall, CPU
/// launch time and peak memory, as the app's per-version chart shows them.
std::string formatVersionTable(const std::vector<const Profile *> &profiles);
/// Two versions side by side with the change.
std::string formatComparison(const Profile &a, const Profile &b);

/// Chrome Trace Event JSON (object form) that Perfetto opens: per version a host process (iteration
/// and node ranges) and a process per device (a track per stream), X events in microseconds relative
/// to each version's start, FX node / version / iteration in args, flow arrows from node ranges to
/// their kernels.
Status writeChromeTrace(const std::vector<const Profile *> &profiles, const std::string &path);

} // namespace fxlens::prof
