// SPDX-License-Identifier: MIT
// The state behind exec::Runner (weights, inputs, compiled plans, a captured CUDA graph), shared by
// Runner.cpp and Verify.cpp. Internal to core/exec.
#pragma once

#include "exec/CudaGraph.h"
#include "exec/Executor.h"
#include "exec/Plan.h"

#include <memory>

namespace fxlens::exec {

class Outputs {
public:
    std::vector<at::Tensor> tensors;
    std::vector<std::string> nodes; ///< the node each tensor came from (names it in errors)
};

struct Runner::Impl {
    using Interp = detail::Interp;
    using Plan = detail::Plan;
    using Slot = detail::Slot;
    using IValue = c10::IValue;
    using Node = ir::Node;

    at::Device device = at::kCPU;
    std::unordered_map<const Node *, Slot> slots;
    std::unordered_map<std::string, at::Tensor> params;
    std::vector<std::string> randomized; ///< params made up from seeded random values
    std::vector<at::Tensor> inputs;
    /// Compiled versions, most recently used first (a verification alternates two graphs; the
    /// debugger runs each new version once).
    std::vector<std::unique_ptr<Plan>> plans;
    /// A captured run (captureCudaGraph), replayed for its graph at its revision; destroyed before
    /// the weights and plans it reads (declared last).
    struct Captured {
        std::unique_ptr<CudaGraph> graph;
        const ir::Graph *of = nullptr;
        uint64_t revision = 0;
        std::shared_ptr<Outputs> outputs;
    };
    std::optional<Captured> captured;

    Interp interp(const ir::Graph &g, std::vector<IValue> &env) { return Interp{g, params, inputs, env, slots}; }

    /// The plan of `g` as it is now, compiled on first use and after every edit.
    Plan &planFor(const ir::Graph &g)
    {
        for (size_t i = 0; i < plans.size(); ++i) {
            if (plans[i]->graph != &g)
                continue;
            std::rotate(plans.begin(), plans.begin() + long(i), plans.begin() + long(i) + 1);
            if (plans[0]->revision != g.revision())
                compile(*plans[0], g);
            return *plans[0];
        }
        constexpr size_t kKeep = 4;
        if (plans.size() == kKeep)
            plans.pop_back();
        plans.insert(plans.begin(), std::make_unique<Plan>());
        compile(*plans[0], g);
        return *plans[0];
    }
    void compile(Plan &p, const ir::Graph &g)
    {
        Interp it = interp(g, p.env);
        detail::compilePlan(p, g, it);
    }
};

} // namespace fxlens::exec
