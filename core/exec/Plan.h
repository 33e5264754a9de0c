// SPDX-License-Identifier: MIT
// Compiled plans: a graph version resolved once for repeated runs (one step per node, specialized
// and unboxed where the arguments allow, and the release schedule). Internal to core/exec.
#pragma once

#include "exec/Interpreter.h"

namespace fxlens::exec::detail {

constexpr uint32_t kNoNode = UINT32_MAX;

/// One node of a compiled graph version: what to call and where its arguments come from, resolved
/// once instead of on every run (target strings, overloads, schema binding, constant arguments).
struct Step {
    enum class Kind : uint8_t {
        Generic, ///< the interpreter (Interp::evalNode): anything not specialized below
        Input,   ///< placeholder number `index`
        Value,   ///< a fixed value: a parameter (get_attr) or a frozen result
        Skip,    ///< folded by freezing and read by folded nodes only
        Getitem, ///< element `index` of the list or tuple in[0]
        Fast,    ///< an unboxed ATen call (Interp::Fast) on plain tensors
        Split,   ///< split(in[0], size `index` or sections `ints`, dim)
        Stack,   ///< stack(list, dim)
        Unbind,  ///< unbind(in[0], dim)
        Boxed,   ///< a resolved ATen overload called boxed, arguments by `args`
    };
    /// One schema argument of a Boxed step: a node's value, an argument evaluated on each run (a
    /// list holding nodes), or a constant coerced once.
    struct Arg {
        uint32_t node = kNoNode;
        const Argument *dynamic = nullptr;
        IValue constant;
        const c10::Argument *schema = nullptr;
        bool tensor = false; ///< the schema wants a Tensor (a tensor value passes as it is)
    };

    Kind kind = Kind::Generic;
    Interp::Fast fast = Interp::Fast::None;
    bool sections = false; ///< Split by a list of sizes
    bool boxable = false;  ///< Generic whose call binds the node's own arguments (may become Boxed)
    bool fresh = false;    ///< Input/Value written in place by the graph: each run gets its own copy
    const Node *node = nullptr;
    uint32_t id = 0;
    uint32_t in[3] = {kNoNode, kNoNode, kNoNode};
    int64_t index = 0, dim = 0;
    double eps = 0;
    std::vector<uint32_t> list;
    std::vector<int64_t> ints;
    IValue value;
    std::optional<c10::OperatorHandle> op;
    bool multipleReturns = false;
    bool lenient = false;
    std::vector<Arg> args;
    uint32_t releaseBegin = 0, releaseEnd = 0; ///< ids in Plan::release whose last reader is this step
};

/// A graph version compiled for repeated runs. Valid for one (graph, revision).
struct Plan {
    const ir::Graph *graph = nullptr;
    uint64_t revision = 0;
    std::vector<Step> steps;
    std::vector<uint32_t> release;
    std::vector<IValue> env; ///< by node id, reused across runs (only pinned values between runs)
    std::vector<IValue> stack;
    /// The steps a run executes, in order: not the pinned values nor what freezing skipped.
    std::vector<uint32_t> hot;
    /// By node id: a value set once and kept across runs (a weight read as it is, a frozen value).
    std::vector<char> pinned;
    bool frozen = false;
};

/// After compiling or freezing: weights that no call writes and frozen values stay in `env` across
/// runs (set once here, never released), so a run does no work at all for them; the other steps are
/// the hot list.
void settle(Plan &p);
/// Steps whose node computes something (worth a profiler range): not inputs, weights or getitem.
bool measured(const Step &s);
/// Turns a Generic step whose node already bound an overload (its Slot) into a Boxed one.
void makeBoxed(Step &s, const Slot &slot, const Interp &it);
/// Compiles `g`: one step per node in program order, and the release schedule (each value is
/// dropped right after its last reader, as a Python GraphModule does).
void compilePlan(Plan &p, const ir::Graph &g, const Interp &it);
/// Runs a specialized step; false when the values at hand do not fit it (e.g. a number where a
/// tensor was expected), and the interpreter takes the node instead.
bool runStep(Plan &p, const Step &s, const Interp &it);

} // namespace fxlens::exec::detail
