// SPDX-License-Identifier: MIT
// An NVTX v3 injection library for tests: a stand-in for Nsight Systems that records what the
// profiler emits. Load it with NVTX_INJECTION64_PATH=<this .so>; at exit it writes one line per
// domain range push to $FXLENS_NVTX_LOG:
//   push <domain> <category> <payload> <message>
//   pop <domain>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Domain {
    std::string name;
};
struct Str {
    std::string text;
};

std::mutex g_mutex;
std::vector<std::string> g_lines;
std::vector<Domain *> g_domains;

void flush()
{
    const char *path = std::getenv("FXLENS_NVTX_LOG");
    if (!path)
        return;
    if (FILE *f = std::fopen(path, "w")) {
        for (const auto &l : g_lines)
            std::fprintf(f, "%s\n", l.c_str());
        std::fclose(f);
    }
}

nvtxDomainHandle_t NVTX_API domainCreateA(const char *name)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_domains.push_back(new Domain{name ? name : ""});
    return reinterpret_cast<nvtxDomainHandle_t>(g_domains.back());
}

nvtxStringHandle_t NVTX_API registerStringA(nvtxDomainHandle_t, const char *s)
{
    return reinterpret_cast<nvtxStringHandle_t>(new Str{s ? s : ""});
}

std::string domainName(nvtxDomainHandle_t d) { return d ? reinterpret_cast<Domain *>(d)->name : std::string("<default>"); }

int NVTX_API rangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    std::string msg;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii)
        msg = a->message.ascii;
    else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
        msg = reinterpret_cast<const Str *>(a->message.registered)->text;
    unsigned long long payload = a->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 ? a->payload.ullValue : 0;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_lines.push_back("push " + domainName(d) + " " + std::to_string(a->category) + " " + std::to_string(payload) + " " + msg);
    return 0;
}

int NVTX_API rangePop(nvtxDomainHandle_t d)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_lines.push_back("pop " + domainName(d));
    return 0;
}

} // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    auto *callbacks = static_cast<const NvtxExportTableCallbacks *>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!callbacks)
        return 0;
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table)
        return 0;
    auto set = [&](unsigned id, NvtxFunctionPointer fn) {
        if (id < size && table[id])
            *table[id] = fn;
    };
    set(NVTX_CBID_CORE2_DomainCreateA, reinterpret_cast<NvtxFunctionPointer>(&domainCreateA));
    set(NVTX_CBID_CORE2_DomainRegisterStringA, reinterpret_cast<NvtxFunctionPointer>(&registerStringA));
    set(NVTX_CBID_CORE2_DomainRangePushEx, reinterpret_cast<NvtxFunctionPointer>(&rangePushEx));
    set(NVTX_CBID_CORE2_DomainRangePop, reinterpret_cast<NvtxFunctionPointer>(&rangePop));
    std::atexit(flush);
    return 1;
}
