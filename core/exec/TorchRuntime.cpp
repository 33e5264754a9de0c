// SPDX-License-Identifier: MIT
// LibTorch probing. The only place (for now) that includes ATen headers.
#include "exec/TorchRuntime.h"

#include <ATen/Context.h>
#include <c10/core/DeviceType.h>
#include <torch/version.h>

namespace fxlens::exec {

RuntimeInfo probeRuntime()
{
    RuntimeInfo info;
    info.torchVersion = TORCH_VERSION;
    try {
        info.cudaAvailable = at::hasCUDA() && at::getNumGPUs() > 0;
        info.cudaDevices = info.cudaAvailable ? int(at::getNumGPUs()) : 0;
    } catch (...) {
        // No driver, or a driver/runtime mismatch: report "no CUDA" rather than failing.
        info.cudaAvailable = false;
    }
    return info;
}

std::string RuntimeInfo::toString() const
{
    std::string s = "LibTorch " + torchVersion + "\n";
    s += cudaAvailable ? "CUDA: " + std::to_string(cudaDevices) + " device(s)\n" : "CUDA: not available\n";
    return s;
}

} // namespace fxlens::exec
