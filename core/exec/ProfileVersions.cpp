// SPDX-License-Identifier: MIT
// Profiling several graph versions on one runner (see Profiler.h): the CLI's and the app's path.
#include "exec/Profiler.h"
#include "exec/TorchRuntime.h"

namespace fxlens::exec {

Result<VersionsResult> profileVersions(const std::vector<VersionJob> &versions, ExecOptions exec, const ProfileOptions &opts,
                                       const std::function<bool(size_t, size_t)> &progress)
{
    VersionsResult out;
    if (versions.empty() || !versions.front().graph)
        return Diagnostic{Diagnostic::Severity::Error, {}, 0, 0, {}, "no graph version to profile"};
    if (exec.device.empty()) {
        if (probeRuntime().cudaAvailable) {
            exec.device = "cuda";
        } else {
            exec.device = "cpu";
            out.note = "CUDA is not available on this machine (no GPU or no driver): profiled on the CPU, where ATen ops "
                       "stand for kernels, timed on the host";
        }
    }
    auto runner = Runner::create(*versions.front().graph, exec);
    if (!runner)
        return runner.error();
    out.device = runner.value()->device();
    for (size_t i = 0; i < versions.size(); ++i) {
        if (progress && !progress(i, versions.size())) {
            out.cancelled = true;
            return out;
        }
        ProfileOptions o = opts;
        o.version = versions[i].label;
        o.versionId = versions[i].versionId;
        if (i > 0)
            o.rawEventsPath.clear();
        auto p = profileGraph(*runner.value(), *versions[i].graph, o);
        if (!p) {
            Diagnostic d = p.error();
            d.message = (versions[i].label.empty() ? "" : versions[i].label + ": ") + d.message;
            return d;
        }
        out.profiles.push_back(std::move(p.value()));
    }
    if (progress)
        progress(versions.size(), versions.size());
    return out;
}

} // namespace fxlens::exec
