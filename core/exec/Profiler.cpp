// SPDX-License-Identifier: MIT
// The only file that talks to LibTorch's profiler. It records raw events and leaves attribution,
// statistics and export to core/profile (torch-free, tested on recorded events).
#include "exec/Profiler.h"

#include "ir/GraphInfo.h"

#include <ATen/DeviceAccelerator.h>
#include <ATen/record_function.h>
#include <c10/core/Event.h>
#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#if FXLENS_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

namespace fxlens::exec {

using prof::RawEvent;

bool nvtxCompiledIn() { return FXLENS_HAVE_NVTX != 0; }

namespace {

constexpr const char *kNodePrefix = "fxlens.node:";
constexpr const char *kIterPrefix = "fxlens.iter:";

#if FXLENS_HAVE_NVTX
nvtxDomainHandle_t nvtxDomain()
{
    static nvtxDomainHandle_t d = nvtxDomainCreateA("fxlens");
    return d;
}
#endif

/// NVTX and record-function ranges around every node of one iteration.
class RangeObserver final : public NodeObserver {
public:
    RangeObserver(const ir::Graph &g, int versionId, bool nvtx) : m_versionId(versionId), m_nvtx(nvtx)
    {
#if FXLENS_HAVE_NVTX
        if (m_nvtx)
            for (ir::Node *n = g.first(); n; n = n->next())
                m_names.push_back(nvtxDomainRegisterStringA(nvtxDomain(), n->name().c_str()));
#else
        (void)g;
#endif
    }
    void setIteration(int i) { m_iteration = i; }
    void setRecord(bool on) { m_record = on; }

    void before(size_t index, const ir::Node &) override
    {
#if FXLENS_HAVE_NVTX
        if (m_nvtx) {
            nvtxEventAttributes_t a{};
            a.version = NVTX_VERSION;
            a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
            a.category = uint32_t(m_iteration + 1);
            a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
            a.message.registered = m_names[index];
            a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
            a.payload.ullValue = nvtxNodePayload(m_versionId, index);
            nvtxDomainRangePushEx(nvtxDomain(), &a);
        }
#endif
        if (m_record) {
            m_range.emplace(at::RecordScope::USER_SCOPE);
            if (m_range->isActive())
                m_range->before(kNodePrefix + std::to_string(m_iteration) + ":" + std::to_string(index));
        }
    }
    void after(size_t, const ir::Node &) override
    {
        m_range.reset();
#if FXLENS_HAVE_NVTX
        if (m_nvtx)
            nvtxDomainRangePop(nvtxDomain());
#endif
    }

private:
    int m_versionId;
    bool m_nvtx;
    bool m_record = false;
    int m_iteration = 0;
    std::optional<at::RecordFunction> m_range;
#if FXLENS_HAVE_NVTX
    std::vector<nvtxStringHandle_t> m_names;
#endif
};

/// An iteration's own NVTX range (payload: version << 32 | iteration).
struct IterationRange {
    IterationRange(bool nvtx, int versionId, int iteration, bool warmup) : m_nvtx(nvtx)
    {
#if FXLENS_HAVE_NVTX
        if (m_nvtx) {
            const std::string msg = std::string(warmup ? "warm-up " : "iteration ") + std::to_string(iteration);
            nvtxEventAttributes_t a{};
            a.version = NVTX_VERSION;
            a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
            a.messageType = NVTX_MESSAGE_TYPE_ASCII;
            a.message.ascii = msg.c_str();
            a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
            a.payload.ullValue = (uint64_t(uint32_t(versionId)) << 32) | uint32_t(iteration);
            nvtxDomainRangePushEx(nvtxDomain(), &a);
        }
#else
        (void)versionId, (void)iteration, (void)warmup;
#endif
    }
    ~IterationRange()
    {
#if FXLENS_HAVE_NVTX
        if (m_nvtx)
            nvtxDomainRangePop(nvtxDomain());
#endif
    }
    bool m_nvtx;
};

/// "fxlens.node:<iteration>:<index>" -> (iteration, index).
bool parseRangeName(const std::string &s, const char *prefix, int &a, int &b)
{
    const size_t n = std::char_traits<char>::length(prefix);
    if (s.compare(0, n, prefix) != 0)
        return false;
    char *end = nullptr;
    a = int(std::strtol(s.c_str() + n, &end, 10));
    if (*end == ':')
        b = int(std::strtol(end + 1, &end, 10));
    return *end == '\0';
}

/// "grid": [x, y, z] from a Kineto metadata string.
void parseDim(const std::string &meta, const char *key, std::array<int, 3> &out)
{
    size_t p = meta.find(key);
    if (p == std::string::npos)
        return;
    p = meta.find('[', p);
    if (p == std::string::npos)
        return;
    const char *c = meta.c_str() + p + 1;
    for (int i = 0; i < 3; ++i) {
        char *end = nullptr;
        out[size_t(i)] = int(std::strtol(c, &end, 10));
        c = end;
        while (*c == ',' || *c == ' ')
            ++c;
    }
}

std::string hostCpuName()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            auto p = line.find(':');
            return p == std::string::npos ? std::string() : line.substr(p + 2);
        }
    return {};
}

/// The GPU's model as the NVIDIA driver reports it ("NVIDIA H200"), without CUDA headers: the
/// driver's /proc entries in PCI order (CUDA's default order on one-GPU machines).
std::string nvidiaModelName(int index)
{
    std::vector<std::string> dirs;
    std::error_code ec;
    for (const auto &d : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec))
        dirs.push_back(d.path().string());
    std::sort(dirs.begin(), dirs.end());
    if (index < 0 || size_t(index) >= dirs.size())
        return {};
    std::ifstream f(dirs[size_t(index)] + "/information");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("Model:", 0) == 0) {
            size_t p = line.find_first_not_of(" \t", 6);
            return p == std::string::npos ? std::string() : line.substr(p);
        }
    return {};
}

std::string firstLine(const std::string &s) { return s.substr(0, s.find('\n')); }

/// Kineto events -> raw events. The executor runs on this thread, so every host event shares one
/// thread id (Kineto reports its own ops and CUPTI's runtime calls with different thread ids).
/// `memPeak`: the CPU allocation peak from memory events (CPU profiles).
std::vector<RawEvent> rawEvents(const torch::autograd::profiler::ProfilerResult &result, bool cuda, int64_t &memPeak)
{
    std::vector<RawEvent> raw;
    int64_t memNow = 0;
    raw.reserve(result.events().size());
    for (const auto &e : result.events()) {
        RawEvent r;
        r.name = e.name();
        r.startNs = e.startNs();
        r.endNs = e.endNs();
        r.tid = 1;
        r.correlation = e.correlationId();
        r.linked = e.linkedCorrelationId();
        if (!cuda && e.name() == "[memory]" && e.deviceType() == c10::DeviceType::CPU) {
            memNow += e.nBytes();
            memPeak = std::max(memPeak, memNow);
            continue;
        }
        const auto type = libkineto::ActivityType(e.activityType());
        int a = 0, b = 0;
        switch (type) {
        case libkineto::ActivityType::CONCURRENT_KERNEL:
        case libkineto::ActivityType::GPU_MEMCPY:
        case libkineto::ActivityType::GPU_MEMSET: {
            r.kind = type == libkineto::ActivityType::CONCURRENT_KERNEL ? RawEvent::Kind::Kernel
                : type == libkineto::ActivityType::GPU_MEMCPY           ? RawEvent::Kind::Memcpy
                                                                        : RawEvent::Kind::Memset;
            r.device = e.deviceIndex();
            r.stream = e.deviceResourceId();
            const std::string meta = e.metadataJson();
            parseDim(meta, "\"grid\"", r.grid);
            parseDim(meta, "\"block\"", r.block);
            break;
        }
        case libkineto::ActivityType::CUDA_RUNTIME:
        case libkineto::ActivityType::CUDA_DRIVER: r.kind = RawEvent::Kind::Launch; break;
        case libkineto::ActivityType::CPU_OP:
        case libkineto::ActivityType::USER_ANNOTATION:
            if (parseRangeName(r.name, kNodePrefix, a, b)) {
                r.kind = RawEvent::Kind::NodeRange;
                r.iteration = a;
                r.node = b;
            } else if (parseRangeName(r.name, kIterPrefix, a, b)) {
                r.kind = RawEvent::Kind::IterRange;
                r.iteration = a;
            } else {
                r.kind = RawEvent::Kind::CpuOp;
            }
            break;
        default: continue;
        }
        raw.push_back(std::move(r));
    }
    return raw;
}

/// The timed iterations under the Kineto profiler; `wallUs` gets each iteration's wall time (CUDA
/// events on a GPU).
Result<std::unique_ptr<torch::autograd::profiler::ProfilerResult>> recordIterations(Runner &runner, const ir::Graph &g,
                                                                                    const ProfileOptions &opts, RangeObserver &observer,
                                                                                    c10::DeviceIndex dev, std::vector<double> &wallUs)
{
    namespace tp = torch::profiler::impl;
    namespace ap = torch::autograd::profiler;
    const bool cuda = dev >= 0;
    auto fail = [](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, {}, 0, 0, {}, m}; };
    auto sync = [&]() {
        if (cuda)
            at::accelerator::synchronizeDevice(dev);
    };
    try {
        tp::ExperimentalConfig exp;
        exp.expose_kineto_event_metadata = true;
        // Memory events give the CPU profile its peak (the CUDA allocator keeps its own statistics).
        tp::ProfilerConfig config(tp::ProfilerState::KINETO, false, /*profile_memory=*/!cuda, false, false, false, exp);
        std::set<tp::ActivityType> activities{tp::ActivityType::CPU};
        if (cuda)
            activities.insert(tp::ActivityType::CUDA);
        // On CUDA only the executor's ranges are recorded on the host (the runtime launches and the
        // device activity come from CUPTI); on CPU the ATen ops are the measured work.
        std::unordered_set<at::RecordScope> scopes{at::RecordScope::USER_SCOPE};
        if (!cuda || opts.hostOps)
            scopes.insert(at::RecordScope::FUNCTION);
        // Kineto reports a missing GPU as an error even for a CPU profile; keep a CPU profile quiet.
        if (!cuda)
            ::setenv("KINETO_LOG_LEVEL", "5", 0);
        ap::prepareProfiler(config, activities);
        ap::enableProfiler(config, activities, scopes);
        observer.setRecord(true);
        std::optional<c10::Event> begin, end;
        if (cuda) {
            begin.emplace(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
            end.emplace(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
        }
        for (int i = 0; i < opts.iterations; ++i) {
            observer.setIteration(i);
            const auto t0 = std::chrono::steady_clock::now();
            {
                IterationRange nvtxIter(opts.nvtx, opts.versionId, i, false);
                at::RecordFunction iter(at::RecordScope::USER_SCOPE);
                if (iter.isActive())
                    iter.before(kIterPrefix + std::to_string(i));
                if (cuda)
                    begin->record(at::accelerator::getCurrentStream(dev));
                auto out = runner.run(g, &observer);
                if (cuda)
                    end->record(at::accelerator::getCurrentStream(dev));
                if (!out) {
                    observer.setRecord(false);
                    iter.end();
                    (void)ap::disableProfiler();
                    return out.error();
                }
            }
            sync();
            if (cuda)
                wallUs.push_back(begin->elapsedTime(*end) * 1000.0);
            else
                wallUs.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        observer.setRecord(false);
        return ap::disableProfiler();
    } catch (const std::exception &e) {
        observer.setRecord(false);
        if (ap::profilerEnabled())
            (void)ap::disableProfiler();
        return fail("the profiler failed: " + firstLine(e.what()));
    }
}

} // namespace

Result<prof::Profile> profileGraph(Runner &runner, const ir::Graph &g, const ProfileOptions &opts)
{
    namespace tp = torch::profiler::impl;
    namespace ap = torch::autograd::profiler;
    const at::Device device(runner.device());
    const bool cuda = device.is_cuda();
    auto fail = [](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, {}, 0, 0, {}, m}; };
    if (opts.iterations < 1)
        return fail("--iters must be at least 1");
    if (ap::profilerEnabled())
        return fail("another profiler is already running in this process");

    std::vector<prof::NodeInfo> nodes;
    for (ir::Node *n = g.first(); n; n = n->next())
        nodes.push_back({n->name(), ir::opKindName(n->op()), n->target(), n->meta().modulePath()});
    RangeObserver observer(g, opts.versionId, opts.nvtx && nvtxCompiledIn());
    const c10::DeviceIndex dev = cuda ? device.index() < 0 ? at::accelerator::getDeviceIndex() : device.index() : -1;
    auto sync = [&]() {
        if (cuda)
            at::accelerator::synchronizeDevice(dev);
    };

    size_t foldedNodes = 0;
    if (opts.freezeWeights) {
        auto f = runner.freeze(g);
        if (!f)
            return f.error();
        foldedNodes = f.value();
    }
    struct Unfreeze {
        Runner &r;
        bool on;
        ~Unfreeze()
        {
            r.releaseCudaGraph();
            if (on)
                r.unfreeze();
        }
    } unfreeze{runner, opts.freezeWeights};
    if (opts.cudaGraph)
        if (auto c = runner.captureCudaGraph(g); !c)
            return c.error();

    // Warm-up: caches, allocator pools, cuBLAS handles; not recorded.
    for (int i = 0; i < opts.warmup; ++i) {
        IterationRange r(opts.nvtx, opts.versionId, i, true);
        auto out = runner.run(g, &observer);
        if (!out)
            return out.error();
    }
    sync();
    if (cuda)
        at::accelerator::resetPeakStats(dev);

    std::vector<double> wallUs;
    auto recorded = recordIterations(runner, g, opts, observer, dev, wallUs);
    if (!recorded)
        return recorded.error();
    std::unique_ptr<ap::ProfilerResult> result = std::move(recorded.value());

    int64_t memPeak = 0;
    std::vector<RawEvent> raw = rawEvents(*result, cuda, memPeak);
    if (!opts.rawEventsPath.empty())
        if (auto w = prof::writeRawEvents(raw, nodes, opts.rawEventsPath); !w)
            return w.error();

    prof::Profile p = prof::buildProfile(raw, std::move(nodes), cuda ? "cuda" : "cpu", wallUs);
    p.graph = opts.graph;
    p.version = opts.version;
    p.versionId = opts.versionId;
    p.graphHash = ir::fingerprintHex(g);
    p.device = device.str();
    p.warmup = opts.warmup;
    p.iterations = opts.iterations;
    p.frozenNodes = opts.freezeWeights ? int64_t(foldedNodes) : -1;
    if (cuda) {
        p.deviceName = nvidiaModelName(dev);
        // allocated_bytes[0]: the aggregate over all pools.
        p.peakMemBytes = int64_t(at::accelerator::getDeviceStats(dev).allocated_bytes[0].peak);
    } else {
        p.deviceName = hostCpuName();
        p.peakMemBytes = memPeak; // above what was live when the timed iterations began
    }
    p.finish();
    return p;
}

} // namespace fxlens::exec
