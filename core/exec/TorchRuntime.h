// SPDX-License-Identifier: MIT
// TorchRuntime: what the LibTorch this build links can do (no LibTorch types in this header).
#pragma once

#include <string>

namespace fxlens::exec {

struct RuntimeInfo {
    std::string torchVersion;   ///< LibTorch version this build links
    bool cudaAvailable = false; ///< a CUDA device is usable now
    int cudaDevices = 0;
    std::string cudaDevice; ///< name of device 0, if any
    std::string toString() const;
};

/// Probes LibTorch (and the CUDA driver through it). Never throws.
RuntimeInfo probeRuntime();

} // namespace fxlens::exec
