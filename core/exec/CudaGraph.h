// SPDX-License-Identifier: MIT
// CUDA graph capture for the executor (run/profile --cuda-graph), kept in its own source file so
// that only it includes the CUDA headers. Internal to fxlens_exec: no LibTorch or CUDA type here.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace fxlens::exec {

/// One captured sequence of device work, replayed on the current stream.
class CudaGraph {
public:
    virtual ~CudaGraph() = default;
    virtual void replay() = 0;
};

/// True when this build can capture CUDA graphs (LibTorch's CUDA libraries were found).
bool cudaGraphsCompiledIn();

/// Runs `body` `warmups` times on a side stream of `device` (lazy initialization, allocator and
/// library workspaces happen outside the capture), then once more under CUDA graph capture. `body`
/// returns "" or why it failed. nullptr with `error` when anything fails (an op that synchronizes
/// with the host cannot be captured); the device is left usable.
std::unique_ptr<CudaGraph> captureCudaGraph(int device, int warmups, const std::function<std::string()> &body, std::string &error);

} // namespace fxlens::exec
