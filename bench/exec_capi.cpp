// SPDX-License-Identifier: MIT
// The LibTorch executor behind a C interface, loaded with ctypes by bench/exec_vs_python.py so that
// fxlens and Python's GraphModule.__call__ are timed in one process on alternating calls (same
// machine state for both; separate processes on shared hosts differ by up to 2x from run to run).
//
//   void *fxlens_bench_open(const char *graph, const char *device, char *error, size_t size);
//   int fxlens_bench_run(void *h);      // one run + device synchronize; 0 on success
//   void fxlens_bench_close(void *h);
#include "exec/Executor.h"
#include "io/GraphJson.h"

#include <cstdio>
#include <memory>

namespace {

struct Handle {
    std::unique_ptr<fxlens::ir::Graph> graph;
    std::unique_ptr<fxlens::exec::Runner> runner;
};

void setError(char *error, size_t size, const std::string &text)
{
    if (error && size)
        std::snprintf(error, size, "%s", text.c_str());
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) void *fxlens_bench_open(const char *graph, const char *device, char *error, size_t size)
{
    auto g = fxlens::io::readGraphFile(graph);
    if (!g) {
        setError(error, size, g.error().toString());
        return nullptr;
    }
    fxlens::exec::ExecOptions o;
    o.device = device ? device : "cpu";
    auto r = fxlens::exec::Runner::create(*g.value(), o);
    if (!r) {
        setError(error, size, r.error().toString());
        return nullptr;
    }
    auto *h = new Handle;
    h->graph = std::move(g.value());
    h->runner = std::move(r.value());
    return h;
}

__attribute__((visibility("default"))) int fxlens_bench_run(void *handle)
{
    auto *h = static_cast<Handle *>(handle);
    auto out = h->runner->run(*h->graph);
    if (!out) {
        std::fprintf(stderr, "%s\n", out.error().toString().c_str());
        return 1;
    }
    h->runner->synchronize();
    return 0;
}

__attribute__((visibility("default"))) void fxlens_bench_close(void *handle) { delete static_cast<Handle *>(handle); }
}
