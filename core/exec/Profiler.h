// SPDX-License-Identifier: MIT
// Profiler: runs one graph version on the Runner's device with warm-up and K timed iterations,
// emitting NVTX v3 ranges (domain "fxlens") per iteration and per FX node and capturing every
// kernel, copy and fill with LibTorch's own profiler (Kineto/CUPTI). On a CPU runner the ATen ops
// stand for kernels. No LibTorch type appears in this header.
#pragma once

#include "exec/Executor.h"
#include "profile/Profile.h"

namespace fxlens::exec {

struct ProfileOptions {
    int warmup = 3;
    int iterations = 10;
    std::string graph;   ///< shown in tables and traces (file name)
    std::string version; ///< "original", "optimized", "step 12", ...
    int versionId = 0;   ///< carried in NVTX payloads
    bool nvtx = true;
    /// Fold weight-only nodes before timing (Runner::freeze): inference with frozen weights.
    bool freezeWeights = false;
    /// Capture one run as a CUDA graph and time its replays (Runner::captureCudaGraph): no per-node
    /// host work, so no node ranges either (kernels count per iteration, not per node).
    bool cudaGraph = false;
    /// Also record the ATen ops on the host when profiling CUDA (CPU profiles always do): the
    /// executor-overhead benchmark subtracts their time from each iteration.
    bool hostOps = false;
    /// When set, the raw events are written there as well (recorded profiles for tests).
    std::string rawEventsPath;
};

/// Profiles `g` on `runner`'s device. Errors name the node that failed.
Result<prof::Profile> profileGraph(Runner &runner, const ir::Graph &g, const ProfileOptions &opts);

/// One graph version to profile.
struct VersionJob {
    const ir::Graph *graph = nullptr;
    std::string label; ///< Profile::version ("original", "step 12", ...)
    int versionId = 0; ///< Profile::versionId and the NVTX payloads'
};

struct VersionsResult {
    std::vector<prof::Profile> profiles; ///< one per version profiled, in order
    std::string device;                  ///< where they ran ("cuda:0", "cpu")
    std::string note;                    ///< why not on the GPU, when the device was chosen and is the CPU
    bool cancelled = false;              ///< `progress` asked to stop: the profiles so far
};

/// Profiles graph versions one after another on one Runner (inputs and weights prepared from the
/// first version, so every version sees the same data): what `fxlens-cli profile` and the app's
/// Profile actions both run. `exec.device` "" picks CUDA when it is available, else the CPU (with
/// `note` saying so). `opts` applies to every version (its label and id come from the job; raw
/// events are written for the first only). `progress(done, total)` is called before each version
/// and after the last; returning false stops after the version in progress.
Result<VersionsResult> profileVersions(const std::vector<VersionJob> &versions, ExecOptions exec, const ProfileOptions &opts,
                                       const std::function<bool(size_t done, size_t total)> &progress = {});

/// Whether this build emits NVTX ranges (the NVTX v3 headers were found at configure time).
bool nvtxCompiledIn();

/// NVTX payload of a node range: graph version in the high 32 bits, node index in the low 32 bits.
inline uint64_t nvtxNodePayload(int versionId, size_t nodeIndex)
{
    return (uint64_t(uint32_t(versionId)) << 32) | uint64_t(uint32_t(nodeIndex));
}

} // namespace fxlens::exec
