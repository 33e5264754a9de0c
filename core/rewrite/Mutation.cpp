// SPDX-License-Identifier: MIT
#include "rewrite/Mutation.h"
#include "rewrite/Rewriter.h"

#include "ir/Target.h"
#include "rewrite/Schema.h"

#include <string_view>
#include <unordered_set>

namespace fxlens::rewrite {

using ir::Node;
using ir::OpKind;

namespace {

/// The op's base name: "aten.view.default" -> "view", "torch.nn.functional.relu" -> "relu", a method as is.
std::string_view baseName(const Node *n)
{
    if (n->op() == OpKind::CallMethod)
        return n->target();
    return ir::Target::parse(n->target()).name;
}

bool isTrue(const ir::Argument *a) { return a && a->isBool() && a->toBool(); }

const ir::ModuleInfo *moduleOf(const Node *n)
{
    if (n->op() != OpKind::CallModule || !n->graph())
        return nullptr;
    return n->graph()->module(n->target());
}

std::string_view shortType(const std::string &t) { return ir::lastComponent(t); }

/// Whether a tensor of `shape`/`stride` can be viewed as `to` without a copy (PyTorch's stride rule).
bool viewable(const std::vector<int64_t> &shape, const std::vector<int64_t> &stride, const std::vector<int64_t> &to)
{
    int64_t numel = 1;
    for (auto s : shape)
        numel *= s;
    if (numel == 0 || shape.empty())
        return true;
    int64_t viewD = int64_t(to.size()) - 1;
    int64_t chunkBase = stride.back(), tensorNumel = 1, viewNumel = 1;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        tensorNumel *= shape[size_t(d)];
        if (d == 0 || (shape[size_t(d - 1)] != 1 && stride[size_t(d - 1)] != tensorNumel * chunkBase)) {
            while (viewD >= 0 && (viewNumel < tensorNumel || to[size_t(viewD)] == 1)) {
                viewNumel *= to[size_t(viewD)];
                --viewD;
            }
            if (viewNumel != tensorNumel)
                return false;
            if (d > 0) {
                chunkBase = stride[size_t(d - 1)];
                tensorNumel = 1;
                viewNumel = 1;
            }
        }
    }
    return viewD == -1;
}

/// A reshape that must copy (its input's strides, from meta, admit no view of the new shape).
bool reshapeCopies(const Node *n)
{
    const Node *in = nullptr;
    for (const auto &a : n->args())
        if (a.isNode()) {
            in = a.toNode();
            break;
        }
    if (!in || !in->meta().val.isTensor() || !n->meta().val.isTensor())
        return false;
    const auto &t = in->meta().val.tensor;
    std::vector<int64_t> shape = t.sizes(), to = n->meta().val.tensor.sizes();
    for (auto s : shape)
        if (s < 0)
            return false;
    for (auto s : to)
        if (s < 0)
            return false;
    if (t.stride.size() != shape.size())
        return false;
    return !viewable(shape, t.stride, to);
}

} // namespace

bool mutatesInput(const Node *n)
{
    if (n->op() != OpKind::CallFunction && n->op() != OpKind::CallMethod && n->op() != OpKind::CallModule)
        return false;
    if (n->op() == OpKind::CallModule) {
        const ir::ModuleInfo *m = moduleOf(n);
        return m && isTrue(m->attr("inplace"));
    }
    if (writesInPlace(n->target()))
        return true;
    // x[i] = v
    if ((n->op() == OpKind::CallFunction && n->target() == "operator.setitem") ||
        (n->op() == OpKind::CallMethod && n->target() == "__setitem__"))
        return true;
    if (isTrue(n->kwarg("inplace")))
        return true;
    if (const ir::Argument *out = n->kwarg("out"); out && !out->isNone())
        return true;
    // F.relu(x, True), F.dropout(x, p, training, True): inplace given by position.
    // clang-format off
    static const std::unordered_set<std::string_view> inplaceAt1 = {"relu", "relu6", "elu", "selu", "celu", "silu",
                                                                    "hardswish", "hardsigmoid", "mish", "leaky_relu",
                                                                    "hardtanh", "rrelu", "threshold", "dropout"};
    // clang-format on
    if (n->op() == OpKind::CallFunction && ir::Target::parse(n->target()).isNnFunctional()) {
        std::string_view b = baseName(n);
        if (inplaceAt1.count(b)) {
            // The inplace parameter's position: relu/silu/... (input, inplace); leaky_relu (input, slope,
            // inplace); elu/celu (input, alpha, inplace); hardtanh (input, min, max, inplace);
            // threshold (input, threshold, value, inplace); dropout (input, p, training, inplace).
            size_t pos = 1;
            if (b == "leaky_relu" || b == "elu" || b == "celu")
                pos = 2;
            else if (b == "hardtanh" || b == "threshold" || b == "dropout")
                pos = 3;
            else if (b == "rrelu")
                pos = 4;
            if (n->args().size() > pos && isTrue(&n->args()[pos]))
                return true;
        }
    }
    return false;
}

bool observesLayout(const Node *n)
{
    if (n->op() != OpKind::CallFunction && n->op() != OpKind::CallMethod)
        return false;
    // clang-format off
    static const std::unordered_set<std::string_view> observers = {
        "as_strided", "as_strided_", "as_strided_copy", "as_strided_scatter", "stride", "storage_offset", "data_ptr",
        "is_contiguous", "untyped_storage", "storage", "_storage", "is_non_overlapping_and_dense", "set_"};
    // clang-format on
    return observers.count(baseName(n)) > 0;
}

bool isStrictView(const Node *n)
{
    if (n->op() == OpKind::CallFunction)
        return n->target() == "aten.view.default" || n->target() == "aten._unsafe_view.default" || n->target() == "torch.Tensor.view";
    return n->op() == OpKind::CallMethod && n->target() == "view";
}

namespace {
/// A strict view of `n` (its first input) as a reshape; the reshape, or nullptr when `u` stays.
Node *relaxView(Rewriter &rw, Node *n, Node *u)
{
    const bool sameDtype = u->meta().val.isTensor() && n->meta().val.isTensor() &&
        u->meta().val.tensor.dtype == n->meta().val.tensor.dtype; // not x.view(dtype)
    std::vector<Argument> shape;
    bool fixed = u->meta().val.isTensor();
    if (fixed)
        for (const auto &d : u->meta().val.tensor.shape) {
            fixed = fixed && d.isStatic();
            shape.push_back(Argument::integer(d.value));
        }
    if (!isStrictView(u) || !sameDtype || !fixed)
        return nullptr;
    const bool aten = ir::Target::parse(u->target()).isAten();
    Node *r = rw.create(OpKind::CallFunction, aten ? "aten.reshape.default" : "torch.reshape", {Argument::node(n), Argument::list(shape)},
                        {}, "reshape", u, u, {u->name()});
    r->meta().val = u->meta().val;
    rw.replaceAllUsesWith(u, r);
    rw.erase(u);
    return r;
}
} // namespace

size_t relaxViewsAfterStep(Rewriter &rw, const std::vector<Edit> &edits)
{
    size_t changed = 0;
    std::vector<Node *> readers;
    for (const auto &e : edits) {
        if (e.kind != Edit::Kind::SetInputs || e.node->isErased() || e.oldArgs.empty() || e.newArgs.empty())
            continue;
        const Argument &a = e.oldArgs[0], &b = e.newArgs[0];
        if (a.isNode() && b.isNode() && a.toNode() != b.toNode())
            readers.push_back(e.node);
    }
    for (Node *u : readers) {
        if (u->isErased() || u->args().empty() || !u->args()[0].isNode())
            continue;
        Node *n = u->args()[0].toNode();
        if (Node *r = relaxView(rw, n, u)) {
            ++changed;
            changed += relaxViewsOf(rw, r);
        } else if (mayAliasInput(u) && !mutatesInput(u)) {
            changed += relaxViewsOf(rw, u);
        }
    }
    return changed;
}

size_t relaxViewsOf(Rewriter &rw, Node *value)
{
    size_t changed = 0;
    std::vector<Node *> work = {value};
    std::unordered_set<Node *> seen;
    while (!work.empty()) {
        Node *n = work.back();
        work.pop_back();
        if (!seen.insert(n).second)
            continue;
        for (Node *u : std::vector<Node *>(n->users())) {
            const auto &in = u->args();
            const bool reads = !in.empty() && in[0].isNode() && in[0].toNode() == n;
            Node *r = reads ? relaxView(rw, n, u) : nullptr;
            if (r) {
                ++changed;
                work.push_back(r);
            } else if (reads && mayAliasInput(u) && !mutatesInput(u)) {
                work.push_back(u); // its value is a view of n: its strides may have changed too
            } else if (u->op() == OpKind::CallFunction && u->target() == "operator.getitem") {
                work.push_back(u);
            }
        }
    }
    return changed;
}

bool hasSideEffects(const Node *n)
{
    switch (n->op()) {
    case OpKind::Placeholder:
    case OpKind::Output: return true;
    case OpKind::GetAttr: return false;
    case OpKind::CallModule: {
        if (mutatesInput(n))
            return true;
        const ir::ModuleInfo *m = moduleOf(n);
        if (!m)
            return true;
        // clang-format off
        static const std::unordered_set<std::string_view> pure = {
            "Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "LayerNorm", "GroupNorm",
            "Embedding", "ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Hardswish", "Hardsigmoid", "Softmax",
            "LogSoftmax", "Dropout", "Identity", "Flatten", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
            "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "LeakyReLU", "ELU", "Mish", "Softplus", "Hardtanh"};
        // clang-format on
        // Batch norm in training mode updates its running statistics.
        return !pure.count(shortType(m->type));
    }
    case OpKind::CallFunction:
    case OpKind::CallMethod: break;
    }
    if (mutatesInput(n))
        return true;
    const std::string &t = n->target();
    // clang-format off
    static const std::unordered_set<std::string> effectful = {
        "torch._assert", "torch._assert_async", "torch._check", "torch._check_is_size", "builtins.print", "print",
        "torch.manual_seed", "torch.seed", "torch.cuda.synchronize", "torch._C._log_api_usage_once",
        "torch.autograd.profiler.record_function", "torch.ops.profiler._record_function_enter",
        "torch.ops.profiler._record_function_exit", "torch._functorch.predispatch._add_batch_dim",
        "torch.cuda.nvtx.range_push", "torch.cuda.nvtx.range_pop", "torch._C._set_grad_enabled",
        "torch.amp.autocast_mode._enter_autocast", "torch.amp.autocast_mode._exit_autocast"};
    // clang-format on
    if (effectful.count(t))
        return true;
    if (t.find("_log_api_usage_once") != std::string::npos)
        return true;
    // aten._assert_async, aten._assert_scalar, aten.sym_constrain_range, profiler and RNG-state ops.
    // _assert_tensor_metadata only restates the dtype/device the exporter recorded (fixed by
    // construction, as Inductor treats it): not an effect worth keeping a value alive for.
    std::string_view b = baseName(n);
    if (b == "_assert_tensor_metadata")
        return false;
    if (b.rfind("_assert", 0) == 0 || b.rfind("sym_constrain_range", 0) == 0 || b == "_record_function_enter" ||
        b == "_record_function_exit" || b == "_record_function_enter_new" || b == "run_and_save_rng_state" || b == "set_" ||
        b == "resize_" || b == "print")
        return true;
    return t.rfind("torch.ops.profiler", 0) == 0 || t.rfind("torch.distributed", 0) == 0 || t.rfind("higher_order.", 0) == 0;
}

bool mayAliasInput(const Node *n)
{
    if (n->op() == OpKind::CallModule)
        return mutatesInput(n) || shortType(moduleOf(n) ? moduleOf(n)->type : std::string()) == "Identity" ||
            shortType(moduleOf(n) ? moduleOf(n)->type : std::string()) == "Flatten" ||
            (shortType(moduleOf(n) ? moduleOf(n)->type : std::string()) == "Dropout");
    if (n->op() != OpKind::CallFunction && n->op() != OpKind::CallMethod)
        return false;
    if (mutatesInput(n))
        return true;
    // clang-format off
    static const std::unordered_set<std::string_view> views = {
        "view", "_unsafe_view", "reshape", "view_as", "reshape_as", "split", "split_with_sizes", "tensor_split", "chunk",
        "unbind", "narrow", "slice", "select", "index_select_view", "transpose", "t", "T", "mT", "permute", "movedim",
        "moveaxis", "swapaxes", "swapdims", "squeeze", "unsqueeze", "expand", "expand_as", "flatten", "unflatten",
        "as_strided", "contiguous", "detach", "alias", "diagonal", "unfold", "real", "imag", "view_as_real",
        "view_as_complex", "to", "type", "type_as", "float", "double", "half", "bfloat16", "long", "int", "bool",
        "clone_view", "getitem", "__getitem__", "align_as", "broadcast_to", "hsplit", "vsplit", "dsplit", "split_copy",
        "lift_fresh", "lift_fresh_copy", "dropout", "feature_dropout", "alpha_dropout", "identity", "getattr",
        "_reshape_alias", "unsafe_split", "unsafe_chunk", "cpu", "cuda"};
    // clang-format on
    std::string_view b = baseName(n);
    if (n->op() == OpKind::CallFunction && n->target() == "operator.getitem")
        return true;
    // reshape/flatten copy when the strides admit no view: the result is fresh storage.
    if ((b == "reshape" || b == "flatten") && reshapeCopies(n))
        return false;
    return views.count(b) > 0;
}

AliasInfo::AliasInfo(const ir::Graph &g)
{
    std::vector<const Node *> mutators, observers;
    for (Node *n = g.first(); n; n = n->next()) {
        if (mutatesInput(n))
            mutators.push_back(n);
        else if (observesLayout(n))
            observers.push_back(n);
    }
    m_any = !mutators.empty() || !observers.empty();
    if (!m_any)
        return;
    m_tainted.assign(g.idBound(), 0);
    // Alias classes: connected components over "may alias its input" edges, in both directions.
    // Writes are marked first, so a value both written and observed reads as written.
    for (const uint8_t reason : {kWrite, kLayout}) {
        std::vector<const Node *> work;
        auto mark = [&](const Node *n) {
            if (n && !m_tainted[n->id()]) {
                m_tainted[n->id()] = reason;
                work.push_back(n);
            }
        };
        for (const Node *m : reason == kWrite ? mutators : observers) {
            mark(m);
            for (const Node *in : m->inputNodes())
                mark(in); // conservatively every input: out= targets, index_put_ values
        }
        while (!work.empty()) {
            const Node *n = work.back();
            work.pop_back();
            if (mayAliasInput(n))
                for (const Node *in : n->inputNodes())
                    mark(in);
            for (const Node *u : n->users())
                if (mayAliasInput(u))
                    mark(u);
        }
    }
}

bool mutationSafe(const AliasInfo &alias, const std::vector<Node *> &matched, MatchFailure &why)
{
    if (!alias.any())
        return true;
    auto refuse = [&](const Node *n, const Node *at, bool reads) {
        if (alias.layoutOnly(at))
            why = {"layout", n->name(), "no as_strided or stride query on a matched value or a view of it",
                   reads ? "reads storage whose layout a later call observes" : "storage whose layout a later call observes"};
        else
            why = {"mutation", n->name(), "no in-place write to a matched value or a view of it",
                   reads ? "reads storage written in place" : "storage written in place"};
        return false;
    };
    for (Node *n : matched) {
        if (alias.tainted(n))
            return refuse(n, n, false);
        for (Node *in : n->inputNodes())
            if (alias.tainted(in))
                return refuse(n, in, true);
    }
    return true;
}

const Node *aliasedInput(const Node *n)
{
    for (int hops = 0; n && hops < 10000; ++hops) {
        if (n->op() == OpKind::Placeholder || n->op() == OpKind::GetAttr)
            return n;
        if (!mayAliasInput(n))
            return nullptr;
        // The aliased operand: the first node argument (self / input / a getitem's container).
        const Node *next = nullptr;
        for (const auto &a : n->args())
            if (a.isNode()) {
                next = a.toNode();
                break;
            }
        if (!next)
            for (const auto &kv : n->kwargs())
                if (kv.second.isNode()) {
                    next = kv.second.toNode();
                    break;
                }
        n = next;
    }
    return nullptr;
}

std::vector<const Node *> outputAliases(const ir::Graph &g)
{
    std::vector<const Node *> out;
    const Node *o = g.outputNode();
    if (!o)
        return out;
    std::vector<const Node *> values;
    for (const Node *v : o->inputNodes())
        values.push_back(v);
    for (const Node *v : values)
        out.push_back(aliasedInput(v));
    return out;
}

} // namespace fxlens::rewrite
