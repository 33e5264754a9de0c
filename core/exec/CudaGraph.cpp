// SPDX-License-Identifier: MIT
#include "exec/CudaGraph.h"

#if FXLENS_HAVE_CUDA_GRAPH
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace fxlens::exec {

#if FXLENS_HAVE_CUDA_GRAPH

namespace {

std::string firstLine(const std::string &s) { return s.substr(0, s.find('\n')); }

class TorchCudaGraph final : public CudaGraph {
public:
    at::cuda::CUDAGraph graph;
    void replay() override { graph.replay(); }
};

} // namespace

bool cudaGraphsCompiledIn() { return true; }

std::unique_ptr<CudaGraph> captureCudaGraph(int device, int warmups, const std::function<std::string()> &body, std::string &error)
{
    try {
        const auto index = c10::DeviceIndex(device);
        c10::cuda::CUDAGuard deviceGuard(index);
        c10::cuda::device_synchronize();
        // Capture needs a stream other than the legacy default one.
        c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, index);
        c10::cuda::CUDAStreamGuard streamGuard(side);
        for (int i = 0; i < warmups; ++i)
            if (std::string e = body(); !e.empty()) {
                error = e;
                return nullptr;
            }
        side.synchronize();
        auto g = std::make_unique<TorchCudaGraph>();
        g->graph.capture_begin();
        std::string e;
        try {
            e = body();
        } catch (const std::exception &ex) {
            e = firstLine(ex.what());
        }
        if (!e.empty()) {
            try {
                g->graph.capture_end();
            } catch (const std::exception &) {
            }
            (void)cudaGetLastError(); // clear the capture's sticky-free error state
            error = "cannot capture a CUDA graph: " + e;
            return nullptr;
        }
        g->graph.capture_end();
        side.synchronize();
        return g;
    } catch (const std::exception &ex) {
        (void)cudaGetLastError();
        error = "cannot capture a CUDA graph: " + firstLine(ex.what());
        return nullptr;
    }
}

#else

bool cudaGraphsCompiledIn() { return false; }

std::unique_ptr<CudaGraph> captureCudaGraph(int, int, const std::function<std::string()> &, std::string &error)
{
    error = "this build has no CUDA graph support (LibTorch's CUDA libraries were not found when it was configured)";
    return nullptr;
}

#endif

} // namespace fxlens::exec
