// SPDX-License-Identifier: MIT
// call_function nodes: operator.*, aten.* overloads, prims, builtins and torch-level functions
// whose Python signature differs from their ATen op.
#include "exec/Interpreter.h"
#include "ir/Target.h"

#include <cmath>
#include <limits>

namespace fxlens::exec::detail {

IValue Interp::callFunction(const Node *n) const
{
    const std::string &t = n->target();
    if (t == "operator.getitem") {
        if (n->args().size() < 2)
            throw CallError{"getitem needs a container and an index"};
        return getitem(natural(n->args()[0]), indexArg(n->args()[1]));
    }
    if (t.rfind("operator.", 0) == 0)
        return callOperator(n, t.substr(9));
    if (t.rfind("aten.", 0) == 0)
        return callAtenOverload(n);
    if (auto v = callCustomOperator(n))
        return *v;
    if (t.rfind("prims.", 0) == 0)
        return callPrims(n);
    if (auto v = callBuiltin(n))
        return *v;
    // torch-level functions: strip the module prefix and call the ATen op of the same name, with
    // the Python signatures that differ from ATen's handled first.
    const std::string base = ir::Target::parse(t).base();
    auto pos = positional(n);
    auto kw = keywords(n);
    const bool inplace = takeInplace(n, base, pos);
    if (auto v = callPythonSignature(t, base, pos, kw))
        return *v;
    if (t.rfind("torch.", 0) != 0 && t.rfind("math.", 0) != 0)
        throw CallError{unknownTargetMessage(n)};
    if (inplace)
        return callInPlace(base, pos, kw);
    try {
        return callPacked("aten::" + base, pos, kw, 0);
    } catch (const CallError &) {
        // Python-only knobs at their defaults (None / False) that the ATen op does not take.
        std::vector<std::pair<std::string, IValue>> kept;
        for (const auto &kv : kw)
            if (!(kv.second.isNone() || (kv.second.isBool() && !kv.second.toBool())))
                kept.push_back(kv);
        if (kept.size() == kw.size())
            throw;
        return callPacked("aten::" + base, pos, kept, 0);
    }
}

/// `ns.op.overload` of a namespace other than torch's own (a custom operator, torch.library):
/// the dispatcher's operator when a loaded library registered it in C++; nullopt for other targets.
std::optional<IValue> Interp::callCustomOperator(const Node *n) const
{
    const std::string &t = n->target();
    const size_t a = t.find('.');
    if (a == std::string::npos)
        return std::nullopt;
    const std::string ns = t.substr(0, a);
    if (ns == "torch" || ns == "math" || ns == "operator" || ns == "_operator" || ns == "builtins" || ns == "prims")
        return std::nullopt;
    const size_t b = t.find('.', a + 1);
    const std::string op = t.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    std::string overload = b == std::string::npos ? "" : t.substr(b + 1);
    if (overload == "default")
        overload.clear();
    auto h = c10::Dispatcher::singleton().findSchema({ns + "::" + op, overload});
    if (!h)
        return std::nullopt;
    t_slot = nullptr;
    auto pos = positional(n);
    auto kw = keywords(n);
    std::vector<IValue> stack;
    std::string why;
    if (!bindSchema(h->schema(), pos, kw, false, stack, why, nullptr) && !bindSchema(h->schema(), pos, kw, true, stack, why, nullptr))
        throw CallError{"arguments do not fit " + ns + "::" + op + ": " + why};
    return finish(*h, stack);
}

/// Why a target outside torch does not run: a custom operator no loaded library registered in C++
/// (the graph came through torch.export or torch.compile, so re-exporting is no answer), or a
/// Python function outside torch.
std::string Interp::unknownTargetMessage(const Node *n) const
{
    const std::string &t = n->target();
    const std::string ns = t.substr(0, t.find('.'));
    const std::string rest = t.substr(std::min(t.size(), ns.size() + 1));
    const std::string op = ns + "::" + rest.substr(0, rest.find('.'));
    const std::string inPython = "fxlens.load_graph(path, allow_namespaces=['" + ns + "'])";
    const std::string load = "load it with --load-library FILE.so (torchvision: site-packages/torchvision/_C.so)";
    if (n->meta().customOp == "python")
        return "custom operator " + op +
            " has only a Python kernel (torch.library), which fxlens-cli cannot run; run the graph in Python: " + inPython;
    if (n->meta().customOp == "cpp")
        return "custom operator " + op + " has a C++ kernel in a library that is not loaded: " + load;
    if (std::count(t.begin(), t.end(), '.') == 2 || g.irLevel == "aten")
        return "custom operator " + op + " is not registered in this process: when its library has a C++ kernel, " + load +
            "; an operator defined in Python runs only in Python: " + inPython;
    return "no executor for " + t +
        ": a Python function outside torch; export the model with torch.export or "
        "torch.compile (fxlens.export_program / fxlens.compile_backend), which trace through it";
}

/// operator.<op>: unary and binary operators, and setitem on a tensor.
IValue Interp::callOperator(const Node *n, const std::string &op) const
{
    if (op == "neg")
        return callAten("aten::neg", positional(n));
    if (op == "pos")
        return natural(n->args().at(0));
    if (op == "not_")
        return IValue(!natural(n->args().at(0)).toBool());
    if (op == "setitem" && n->args().size() == 3) {
        // x[idx] = v on a tensor: an in-place write (the value of the call is None).
        IValue x = natural(n->args()[0]), v = natural(n->args()[2]);
        if (!x.isTensor())
            throw CallError{"operator.setitem on a " + std::string(x.tagKind())};
        at::Tensor self = x.toTensor();
        auto idx = tensorIndices(indexArg(n->args()[1]));
        if (v.isTensor())
            self.index_put_(idx, v.toTensor());
        else
            self.index_put_(idx, v.toScalar());
        return IValue();
    }
    if (n->args().size() != 2)
        throw CallError{"operator." + op + " with " + std::to_string(n->args().size()) + " arguments"};
    return binary(op, natural(n->args()[0]), natural(n->args()[1]));
}

/// aten.name.overload: exactly that overload (resolved once per node).
IValue Interp::callAtenOverload(const Node *n) const
{
    const std::string &t = n->target();
    Slot *slot = t_slot;
    t_slot = nullptr;
    auto pos = positional(n);
    auto kw = keywords(n);
    if (slot && slot->op) {
        std::vector<IValue> stack;
        if (slot->bind(pos, kw, stack))
            return finish(*slot->op, stack);
    }
    const ir::Target target = ir::Target::parse(t);
    if (auto v = cpuOnlyTwin(target.base(), pos, kw))
        return *v;
    const std::string name = "aten::" + target.base();
    std::string overload(target.overload);
    if (overload == "default")
        overload.clear();
    auto h = c10::Dispatcher::singleton().findSchema({name, overload});
    if (!h)
        throw CallError{"no ATen operator " + name + (overload.empty() ? "" : "." + overload)};
    std::vector<IValue> stack;
    std::string why;
    std::vector<int> plan;
    bool lenient = false;
    if (!bindSchema(h->schema(), pos, kw, false, stack, why, &plan)) {
        lenient = true;
        if (!bindSchema(h->schema(), pos, kw, true, stack, why, &plan))
            throw CallError{"arguments do not fit " + t + ": " + why};
    }
    if (slot)
        slot->remember(*h, lenient, std::move(plan), pos, kw);
    return finish(*h, stack);
}

/// prims.*: iota and the low-memory max pool; the others share their name with an ATen op.
IValue Interp::callPrims(const Node *n) const
{
    const std::string &t = n->target();
    auto pos = positional(n);
    auto kw = keywords(n);
    if (t.rfind("prims.iota", 0) == 0) {
        // iota(length, *, start, step, dtype, device, requires_grad) = arange(start, start + length * step, step)
        int64_t len = take(pos, kw, 0, {"length"}).toInt();
        IValue s0 = take(pos, kw, 1, {"start"}), st = take(pos, kw, 2, {"step"}), dt = take(pos, kw, 3, {"dtype"}),
               dev = take(pos, kw, 4, {"device"});
        int64_t start = s0.isInt() ? s0.toInt() : 0, step = st.isInt() ? st.toInt() : 1;
        auto opts = at::TensorOptions().dtype(dtypeOf(dt).value_or(at::kLong));
        (void)dev; // created on the run's device
        if (t_runDevice)
            opts = opts.device(*t_runDevice);
        return IValue(at::arange(start, start + len * step, step, opts));
    }
    if (t.find("_low_memory_max_pool") != std::string::npos)
        return lowMemoryMaxPool(t, pos);
    // Other prims share their name with an ATen op (prims.convert_element_type is to(dtype)).
    const std::string base = ir::Target::parse(t).base();
    if (base == "convert_element_type")
        return IValue(pos.at(0).toTensor().to(dtypeOf(pos.at(1)).value_or(pos.at(0).toTensor().scalar_type())));
    return callAten("aten::" + base, pos, kw);
}

/// Python builtins and calls that only check or log (getattr, len, torch._assert, ...); nullopt for
/// any other target.
std::optional<IValue> Interp::callBuiltin(const Node *n) const
{
    const std::string &t = n->target();
    if (t == "builtins.getattr" || t == "getattr") {
        if (n->args().size() < 2 || !n->args()[1].isString())
            throw CallError{"getattr needs an object and an attribute name"};
        auto v = natural(n->args()[0]);
        const std::string &attr = n->args()[1].text();
        if (v.isTensor())
            return tensorAttr(v.toTensor(), attr);
        throw CallError{"getattr '" + attr + "' on a " + std::string(v.tagKind())};
    }
    // Calls that only check or log: evaluated for their checks, valued None.
    if (t == "torch._assert" || t == "torch._check" || t == "torch._assert_async") {
        auto pos = positional(n);
        IValue c = pos.empty() ? IValue(true) : pos[0];
        bool ok = c.isBool() ? c.toBool() : c.isInt() ? c.toInt() != 0 : c.isTensor() ? c.toTensor().item<bool>() : true;
        if (!ok)
            throw CallError{"assertion failed" + (pos.size() > 1 && pos[1].isString() ? ": " + pos[1].toStringRef() : std::string())};
        return IValue();
    }
    if (t.find("_log_api_usage_once") != std::string::npos || t == "torch.autograd.profiler.record_function")
        return IValue();
    if (t == "builtins.len" || t == "len") {
        IValue v = natural(n->args().at(0));
        if (v.isTensor())
            return IValue(v.toTensor().size(0));
        return IValue(int64_t(items(v).size()));
    }
    return std::nullopt;
}

/// torch-level functions whose Python signature differs from their ATen op; nullopt for the others.
std::optional<IValue> Interp::callPythonSignature(const std::string &t, const std::string &base, std::vector<IValue> &pos,
                                                  std::vector<std::pair<std::string, IValue>> &kw) const
{
    if (base == "split" && (t == "torch.split" || t == "torch.functional.split")) {
        IValue x = take(pos, kw, 0, {"tensor", "input"});
        IValue sizes = take(pos, kw, 1, {"split_size_or_sections", "split_size"});
        IValue dim = take(pos, kw, 2, {"dim"});
        if (!x.isTensor() || sizes.isNone())
            throw CallError{"torch.split needs a tensor and split sizes"};
        std::vector<IValue> p = {x, sizes};
        if (!dim.isNone())
            p.push_back(dim);
        return callAten(sizes.isInt() ? "aten::split" : "aten::split_with_sizes", p, {});
    }
    if (t == "torch.nn.functional.batch_norm") {
        static const char *names[] = {"input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"};
        for (size_t i = 0; i < pos.size() && i < 8; ++i)
            kw.emplace_back(names[i], pos[i]);
        bool hasTraining = false;
        for (const auto &kv : kw)
            hasTraining = hasTraining || kv.first == "training";
        if (!hasTraining)
            kw.emplace_back("training", IValue(false));
        kw.emplace_back("cudnn_enabled", IValue(true));
        return callAten("aten::batch_norm", {}, kw);
    }
    if (t == "torch.nn.functional.embedding") {
        IValue input = take(pos, kw, 0, {"input"}), weight = take(pos, kw, 1, {"weight"});
        IValue padding = take(pos, kw, 2, {"padding_idx"});
        if (!input.isTensor() || !weight.isTensor())
            throw CallError{"embedding needs input and weight tensors"};
        return callAten("aten::embedding", {weight, input, padding.isNone() ? IValue(int64_t(-1)) : padding});
    }
    if (base.find("dropout") != std::string::npos && t.rfind("torch.nn.functional.", 0) == 0) {
        IValue x = take(pos, kw, 0, {"input"});
        IValue p = take(pos, kw, 1, {"p"}), training = take(pos, kw, 2, {"training"});
        if (training.isNone() ? true : training.toBool())
            if (!(p.isDouble() && p.toDouble() == 0.0))
                throw CallError{"dropout in training mode is not deterministic; export the model in eval mode"};
        return x;
    }
    if (base == "stochastic_depth") { // torchvision.ops.stochastic_depth: identity in eval mode
        IValue x = take(pos, kw, 0, {"input"}), p = take(pos, kw, 1, {"p"}), training = take(pos, kw, 3, {"training"});
        if ((training.isNone() || training.toBool()) && !(p.isDouble() && p.toDouble() == 0.0))
            throw CallError{"stochastic_depth in training mode is not deterministic; export the model in eval mode"};
        return x;
    }
    if (base.find("max_pool") != std::string::npos && t.rfind("torch.nn.functional.", 0) == 0) {
        // F.max_pool2d(x, k, stride, padding, dilation, ceil_mode, return_indices): the last one picks the op.
        IValue ri = take(pos, kw, 6, {"return_indices"});
        if (pos.size() > 6)
            pos.resize(6);
        if (ri.isBool() && ri.toBool())
            return callAten("aten::" + base + "_with_indices", pos, kw);
    }
    if (base == "einsum") {
        c10::impl::GenericList ops(c10::AnyType::get());
        for (size_t i = 1; i < pos.size(); ++i)
            for (const auto &x : items(pos[i]))
                ops.push_back(x);
        return callAten("aten::einsum", {pos.at(0), IValue(ops)});
    }
    if (t == "torch.nn.functional.multi_head_attention_forward")
        return multiHeadAttentionForward(pos, kw);
    if (t == "torch.tensor" || t == "torch.as_tensor" || t == "torch.scalar_tensor")
        return tensorFrom(take(pos, kw, 0, {"data", "s"}), take(pos, kw, 1, {"dtype"}), take(pos, kw, 2, {"device"}));
    if (base == "scaled_dot_product_attention") {
        // Python's keyword `scale` and `enable_gqa` map to ATen's names as they are.
        return callAten("aten::scaled_dot_product_attention", pos, kw);
    }
    return std::nullopt;
}

namespace {

/// (output, logsumexp) of attention as aten::_scaled_dot_product_flash_attention_for_cpu returns them:
/// output (B, H, L, E) in q's dtype, logsumexp (B, H, L) of the scaled scores in float. The fused
/// memory-efficient kernel gives both where it applies; the math form (scores materialized) else.
std::pair<at::Tensor, at::Tensor> attentionWithLogsumexp(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                                                         const std::optional<at::Tensor> &mask, double dropout, bool causal,
                                                         std::optional<double> scale)
{
    const double inf = std::numeric_limits<double>::infinity();
    // the CPU operator takes an additive mask of the query's dtype only
    const std::optional<at::Tensor> bias = mask ? std::optional<at::Tensor>(mask->to(q.scalar_type())) : std::nullopt;
    try {
        std::optional<at::Tensor> b;
        if (bias)
            b = bias->expand({q.size(0), q.size(1), q.size(-2), k.size(-2)});
        auto r = at::_scaled_dot_product_efficient_attention(q, k, v, b, true, dropout, causal, scale);
        at::Tensor lse = std::get<1>(r).narrow(-1, 0, q.size(-2)).to(at::kFloat);
        return {std::get<0>(r), lse};
    } catch (const c10::Error &) {
        // the fused kernel does not apply (dtype, head size, device): the math form below
    }
    const double s = scale.value_or(1.0 / std::sqrt(double(q.size(-1))));
    at::Tensor scores = at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-2, -1)).mul(s);
    if (causal)
        scores = scores.masked_fill(at::ones({q.size(-2), k.size(-2)}, q.options().dtype(at::kBool)).tril().logical_not(), -inf);
    if (bias)
        scores = scores.add(bias->to(at::kFloat));
    at::Tensor lse = at::logsumexp(scores, {-1});
    at::Tensor attn = at::softmax(scores, -1);
    if (dropout > 0)
        attn = at::dropout(attn, dropout, true);
    return {at::matmul(attn, v.to(at::kFloat)).to(q.scalar_type()), lse};
}

} // namespace

std::optional<IValue> Interp::cpuOnlyTwin(const std::string &base, std::vector<IValue> pos, std::vector<std::pair<std::string, IValue>> kw)
{
    // Inductor's post-grad graphs traced on the CPU name the CPU's flash attention.
    if (!t_runDevice || t_runDevice->is_cpu() || base != "_scaled_dot_product_flash_attention_for_cpu")
        return std::nullopt;
    const IValue q = take(pos, kw, 0, {"query"}), k = take(pos, kw, 1, {"key"}), v = take(pos, kw, 2, {"value"});
    const IValue dropout = take(pos, kw, 3, {"dropout_p"}), causal = take(pos, kw, 4, {"is_causal"});
    const IValue mask = take(pos, kw, 5, {"attn_mask"}), scale = take(pos, kw, 6, {"scale"});
    if (!q.isTensor() || !k.isTensor() || !v.isTensor())
        throw CallError{base + ": query, key and value must be tensors"};
    const double p = dropout.isDouble() ? dropout.toDouble() : dropout.isInt() ? double(dropout.toInt()) : 0.0;
    const auto m = mask.isTensor() ? std::optional<at::Tensor>(mask.toTensor()) : std::nullopt;
    const auto sc = scale.isDouble() ? std::optional<double>(scale.toDouble()) : std::nullopt;
    auto [out, lse] = attentionWithLogsumexp(q.toTensor(), k.toTensor(), v.toTensor(), m, p, causal.isBool() && causal.toBool(), sc);
    return IValue(c10::ivalue::Tuple::create({IValue(out), IValue(lse)}));
}

/// prims._low_memory_max_pool_with_offsets and ..._offsets_to_indices (Inductor's post-grad max
/// pooling): Python-defined prims that LibTorch lacks, computed here as Inductor's reference does.
IValue Interp::lowMemoryMaxPool(const std::string &t, const std::vector<IValue> &pos)
{
    if (pos.size() < 6)
        throw CallError{"expects 6 arguments"};
    auto ks = ints(pos[1]);
    const size_t dim = ks.size();
    auto base = [&](const at::Tensor &like, size_t d, int64_t stride, int64_t pad) {
        std::vector<int64_t> shape(size_t(like.dim()), 1);
        shape[size_t(like.dim()) - dim + d] = -1;
        return at::arange(like.size(like.dim() - int64_t(dim) + int64_t(d)), like.options().dtype(at::kLong)).view(shape) * stride - pad;
    };
    // A flat index into a window of `widths` as per-dim indices, and back (Inductor's
    // _flattened_index_to_nd / _flatten_index).
    auto toNd = [&](at::Tensor flat, const std::vector<int64_t> &widths) {
        std::vector<at::Tensor> nd(dim);
        for (size_t d = dim; d-- > 0;) {
            nd[d] = d == 0 ? flat : at::remainder(flat, widths[d]);
            flat = at::floor_divide(flat, widths[d]);
        }
        return nd;
    };
    auto flatten = [&](const std::vector<at::Tensor> &nd, const std::vector<int64_t> &widths) {
        at::Tensor out = nd[0];
        for (size_t d = 1; d < dim; ++d)
            out = out * widths[d] + nd[d];
        return out;
    };
    if (t.find("offsets_to_indices") != std::string::npos) {
        at::Tensor off = pos[0].toTensor().to(at::kLong);
        auto insz = ints(pos[2]), st = ints(pos[3]), pad = ints(pos[4]), dil = ints(pos[5]);
        auto inc = toNd(off, ks);
        for (size_t d = 0; d < dim; ++d)
            inc[d] = base(off, d, st[d], pad[d]) + inc[d] * dil[d];
        return IValue(flatten(inc, insz));
    }
    const at::Tensor &x = pos[0].toTensor();
    auto st = ints(pos[2]), pad = ints(pos[3]), dil = ints(pos[4]);
    const bool ceil = pos[5].toBool();
    if (st.empty())
        st = ks;
    auto r = dim == 2 ? at::max_pool2d_with_indices(x, ks, st, pad, dil, ceil) : at::max_pool3d_with_indices(x, ks, st, pad, dil, ceil);
    at::Tensor vals = std::get<0>(r), indices = std::get<1>(r);
    std::vector<int64_t> width(x.sizes().end() - long(dim), x.sizes().end());
    auto inc = toNd(indices, width);
    for (size_t d = 0; d < dim; ++d)
        inc[d] = at::floor_divide(inc[d] - base(indices, d, st[d], pad[d]), dil[d]);
    return c10::ivalue::Tuple::create({IValue(vals), IValue(flatten(inc, ks).to(at::kChar))});
}

/// torch.tensor(data, dtype, device): Python numbers (nested lists of them) with Python's dtype
/// rules (ints int64, floats the default float32, bools bool), or a tensor (copied).
IValue Interp::tensorFrom(const IValue &data, const IValue &dtype, const IValue &device)
{
    at::Tensor t;
    if (data.isTensor()) {
        t = data.toTensor().clone();
    } else {
        std::vector<double> flat;
        std::vector<int64_t> shape;
        bool anyFloat = false, allBool = true;
        std::function<void(const IValue &, size_t)> walk = [&](const IValue &v, size_t depth) {
            if (v.isList() || v.isTuple()) {
                auto xs = items(v);
                if (shape.size() <= depth)
                    shape.push_back(int64_t(xs.size()));
                else if (shape[depth] != int64_t(xs.size()))
                    throw CallError{"torch.tensor of a ragged list"};
                for (const auto &x : xs)
                    walk(x, depth + 1);
                return;
            }
            if (v.isDouble()) {
                anyFloat = true;
                allBool = false;
                flat.push_back(v.toDouble());
            } else if (v.isInt()) {
                allBool = false;
                flat.push_back(double(v.toInt()));
            } else if (v.isBool()) {
                flat.push_back(v.toBool() ? 1.0 : 0.0);
            } else {
                throw CallError{"torch.tensor of a " + std::string(v.tagKind())};
            }
        };
        walk(data, 0);
        t = at::tensor(flat, at::TensorOptions().dtype(at::kDouble)).reshape(shape);
        t = t.to(anyFloat ? at::kFloat : allBool && !flat.empty() ? at::kBool : at::kLong);
        if (!data.isList() && !data.isTuple())
            t = t.reshape({});
    }
    if (!dtype.isNone())
        if (auto st = dtypeOf(dtype))
            t = t.to(*st);
    (void)device; // the run's device is chosen for the whole graph
    return IValue(t_runDevice ? t.to(*t_runDevice) : t);
}

} // namespace fxlens::exec::detail
