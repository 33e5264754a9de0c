// SPDX-License-Identifier: MIT
#include "exec/Measure.h"

#include <algorithm>
#include <chrono>

namespace fxlens::exec {

namespace {

/// Times whole runs of each version: `warmup` runs, then the median of `iters` timed ones and half
/// their interquartile range. On CUDA one run is captured as a CUDA graph and replayed.
class RunnerCost : public rewrite::CostModel {
public:
    RunnerCost(std::unique_ptr<Runner> r, int iters, int warmup, bool freeze)
        : m_runner(std::move(r)), m_iters(std::max(1, iters)), m_warmup(warmup), m_freeze(freeze)
    {
    }

    std::vector<Result<rewrite::Measurement>> measure(const std::vector<const ir::Graph *> &versions) override
    {
        std::vector<Result<rewrite::Measurement>> out;
        for (const ir::Graph *g : versions)
            out.push_back(one(*g));
        return out;
    }

    std::string note() const
    {
        bool cuda = m_runner->device().rfind("cuda", 0) == 0;
        return m_runner->device() + (cuda ? ", CUDA graph replay" : ", host timer") + (m_freeze ? ", frozen weights" : "") +
            ", median of " + std::to_string(m_iters) + " after " + std::to_string(m_warmup) + " warm-up";
    }

private:
    Result<rewrite::Measurement> one(const ir::Graph &g)
    {
        struct Cleanup {
            Runner &r;
            ~Cleanup()
            {
                r.releaseCudaGraph();
                r.unfreeze();
            }
        } cleanup{*m_runner};
        if (m_freeze)
            if (auto f = m_runner->freeze(g); !f)
                return f.error();
        bool replay = m_runner->device().rfind("cuda", 0) == 0 && m_runner->captureCudaGraph(g).ok();
        std::vector<double> t;
        for (int k = 0; k < m_warmup + m_iters; ++k) {
            auto t0 = std::chrono::steady_clock::now();
            auto r = m_runner->run(g);
            if (!r)
                return r.error();
            m_runner->synchronize();
            if (k >= m_warmup)
                t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        auto q = [&](double f) { return t[std::min(t.size() - 1, size_t(f * double(t.size() - 1) + 0.5))]; };
        return rewrite::Measurement{q(0.5), (q(0.75) - q(0.25)) / 2, t.size(), replay ? "cuda graph" : "runs"};
    }

    std::unique_ptr<Runner> m_runner;
    int m_iters, m_warmup;
    bool m_freeze;
};

} // namespace

Result<std::unique_ptr<rewrite::CostModel>> measuringCostModel(const ir::Graph &reference, const ExecOptions &o, const MeasureOptions &m,
                                                               std::string &note)
{
    auto runner = Runner::create(reference, o);
    if (!runner)
        return runner.error();
    auto cost = std::make_unique<RunnerCost>(std::move(runner.value()), m.iters, m.warmup, m.freeze);
    note = cost->note();
    return std::unique_ptr<rewrite::CostModel>(std::move(cost));
}

} // namespace fxlens::exec
