// SPDX-License-Identifier: MIT
// call_module nodes: the leaf modules of torch.nn, and multi-head attention.
#include "exec/Interpreter.h"
#include "ir/Target.h"

#include <cmath>

namespace fxlens::exec::detail {

/// Multi-head attention as torch.nn.functional.multi_head_attention_forward computes it in eval
/// mode (inputs sequence-first [L, B, E] unless batchFirst); returns (output, weights or None).
IValue Interp::attention(at::Tensor q, at::Tensor k, at::Tensor v, int64_t heads, const at::Tensor &inW, const IValue &inB,
                         const at::Tensor &qW, const at::Tensor &kW, const at::Tensor &vW, const at::Tensor &outW, const IValue &outB,
                         const IValue &keyPadding, bool needWeights, const IValue &attnMask, bool average, bool batchFirst, bool causal)
{
    if (!batchFirst) {
        q = q.transpose(0, 1);
        k = k.transpose(0, 1);
        v = v.transpose(0, 1);
    }
    const int64_t B = q.size(0), L = q.size(1), S = k.size(1), E = q.size(2);
    if (heads <= 0 || E % heads != 0)
        throw CallError{"embed_dim " + std::to_string(E) + " is not divisible by num_heads " + std::to_string(heads)};
    const int64_t D = E / heads;
    at::Tensor bias = inB.isTensor() ? inB.toTensor() : at::Tensor();
    auto proj = [&](const at::Tensor &x, const at::Tensor &sepW, int64_t part) {
        at::Tensor w = sepW.defined() ? sepW : inW.narrow(0, part * E, E);
        std::optional<at::Tensor> b;
        if (bias.defined())
            b = bias.narrow(0, part * E, E);
        return at::linear(x, w, b).view({x.size(0), x.size(1), heads, D}).transpose(1, 2); // [B, H, T, D]
    };
    at::Tensor qh = proj(q, qW, 0), kh = proj(k, kW, 1), vh = proj(v, vW, 2);
    at::Tensor scores = at::matmul(qh, kh.transpose(-2, -1)) / std::sqrt(double(D)); // [B, H, L, S]
    auto additive = [&](at::Tensor m) {
        return m.scalar_type() == at::kBool ? at::zeros_like(m, scores.options()).masked_fill(m, -INFINITY) : m.to(scores.scalar_type());
    };
    if (attnMask.isTensor()) {
        at::Tensor m = additive(attnMask.toTensor());
        scores = scores + (m.dim() == 3 ? m.view({B, heads, L, S}) : m);
    } else if (causal) {
        scores = scores + additive(at::ones({L, S}, scores.options().dtype(at::kBool)).triu(1));
    }
    if (keyPadding.isTensor())
        scores = scores + additive(keyPadding.toTensor()).view({B, 1, 1, S});
    at::Tensor probs = at::softmax(scores, -1);
    at::Tensor out = at::matmul(probs, vh).transpose(1, 2).reshape({B, L, E});
    std::optional<at::Tensor> ob;
    if (outB.isTensor())
        ob = outB.toTensor();
    out = at::linear(out, outW, ob);
    if (!batchFirst)
        out = out.transpose(0, 1);
    IValue weights;
    if (needWeights)
        weights = IValue(average ? probs.mean(1) : probs);
    return c10::ivalue::Tuple::create({IValue(out), weights});
}

/// torch.nn.functional.multi_head_attention_forward, by its Python signature.
IValue Interp::multiHeadAttentionForward(std::vector<IValue> pos, std::vector<std::pair<std::string, IValue>> kw) const
{
    // clang-format off
    static const char *names[] = {"query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight", "in_proj_bias",
                                  "bias_k", "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight", "out_proj_bias",
                                  "training", "key_padding_mask", "need_weights", "attn_mask", "use_separate_proj_weight",
                                  "q_proj_weight", "k_proj_weight", "v_proj_weight", "static_k", "static_v",
                                  "average_attn_weights", "is_causal"};
    // clang-format on
    std::unordered_map<std::string, IValue> a;
    for (size_t i = 0; i < pos.size() && i < std::size(names); ++i)
        a[names[i]] = pos[i];
    for (auto &[k, v] : kw)
        a[k] = v;
    auto get = [&](const char *k) { return a.count(k) ? a[k] : IValue(); };
    auto flag = [&](const char *k, bool d) {
        IValue v = get(k);
        return v.isBool() ? v.toBool() : d;
    };
    if (get("bias_k").isTensor() || get("static_k").isTensor() || flag("add_zero_attn", false))
        throw CallError{"multi_head_attention_forward with bias_k/static_k/add_zero_attn is not supported"};
    if (flag("training", true) && get("dropout_p").isDouble() && get("dropout_p").toDouble() > 0)
        throw CallError{"attention dropout in training mode is not deterministic; export the model in eval mode"};
    auto t = [&](const char *k) {
        IValue v = get(k);
        return v.isTensor() ? v.toTensor() : at::Tensor();
    };
    const bool separate = flag("use_separate_proj_weight", false);
    return attention(t("query"), t("key"), t("value"), get("num_heads").toInt(), separate ? at::Tensor() : t("in_proj_weight"),
                     get("in_proj_bias"), separate ? t("q_proj_weight") : at::Tensor(), separate ? t("k_proj_weight") : at::Tensor(),
                     separate ? t("v_proj_weight") : at::Tensor(), t("out_proj_weight"), get("out_proj_bias"), get("key_padding_mask"),
                     flag("need_weights", true), get("attn_mask"), flag("average_attn_weights", true), false, flag("is_causal", false));
}

std::string Interp::lower(std::string s)
{
    for (auto &c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// A leaf module built with inplace=True writes its result into its input.
IValue Interp::inplaceModule(const ir::ModuleInfo *m, const IValue &x, IValue r)
{
    const Argument *a = m->attr("inplace");
    if (a && a->isBool() && a->toBool() && x.isTensor() && r.isTensor()) {
        at::Tensor self = x.toTensor();
        self.copy_(r.toTensor());
        return IValue(self);
    }
    return r;
}

/// nn.MultiheadAttention(query, key, value, key_padding_mask, need_weights, attn_mask, ...).
IValue Interp::callAttentionModule(const Node *n, const ir::ModuleInfo *m, const std::vector<IValue> &in) const
{
    const std::string &p = n->target();
    const IValue &x = in[0];
    auto attr = [&](const char *k, IValue dflt) {
        const Argument *a = m->attr(k);
        return a ? natural(*a) : dflt;
    };
    IValue kp, am, needW = IValue(true), avg = IValue(true), causal = IValue(false);
    for (const auto &[k, v] : keywords(n)) {
        if (k == "key_padding_mask")
            kp = v;
        else if (k == "attn_mask")
            am = v;
        else if (k == "need_weights")
            needW = v;
        else if (k == "average_attn_weights")
            avg = v;
        else if (k == "is_causal")
            causal = v;
    }
    if (in.size() > 3)
        kp = in[3];
    if (in.size() > 4)
        needW = in[4];
    if (in.size() > 5)
        am = in[5];
    const IValue &key = in.size() > 1 ? in[1] : x, &value = in.size() > 2 ? in[2] : x;
    auto opt = [&](const std::string &k) {
        auto v = optParam(p + "." + k);
        return v.isTensor() ? v.toTensor() : at::Tensor();
    };
    return attention(x.toTensor(), key.toTensor(), value.toTensor(), attr("num_heads", IValue(int64_t(1))).toInt(), opt("in_proj_weight"),
                     optParam(p + ".in_proj_bias"), opt("q_proj_weight"), opt("k_proj_weight"), opt("v_proj_weight"),
                     param(p + ".out_proj.weight"), optParam(p + ".out_proj.bias"), kp, needW.isBool() && needW.toBool(), am,
                     !avg.isBool() || avg.toBool(), attr("batch_first", IValue(false)).toBool(), causal.isBool() && causal.toBool());
}

IValue Interp::callModule(const Node *n) const
{
    const ir::ModuleInfo *m = g.module(n->target());
    if (!m)
        throw CallError{"module '" + n->target() + "' is not in the graph's module list"};
    const std::string type(ir::lastComponent(m->type));
    auto in = positional(n);
    if (in.empty())
        throw CallError{"call_module without input"};
    const std::string &p = n->target();
    auto attr = [&](const char *k, IValue dflt) {
        const Argument *a = m->attr(k);
        return a ? natural(*a) : dflt;
    };
    const IValue &x = in[0];
    if (type == "Linear")
        return callAten("aten::linear", {x, IValue(param(p + ".weight")), optParam(p + ".bias")});
    if (type == "LayerNorm") {
        auto w = optParam(p + ".weight");
        IValue shape = attr("normalized_shape", IValue());
        if (shape.isNone())
            shape = IValue(c10::List<int64_t>(param(p + ".weight").sizes().vec()));
        return callAten("aten::layer_norm", {x, shape, w, optParam(p + ".bias"), attr("eps", IValue(1e-5))});
    }
    if (type == "Conv1d" || type == "Conv2d" || type == "Conv3d") {
        std::string name = "aten::conv" + type.substr(4, 2);
        return callAten(name,
                        {x, IValue(param(p + ".weight")), optParam(p + ".bias"), attr("stride", IValue(int64_t(1))),
                         attr("padding", IValue(int64_t(0))), attr("dilation", IValue(int64_t(1))), attr("groups", IValue(int64_t(1)))});
    }
    if (type == "BatchNorm1d" || type == "BatchNorm2d" || type == "BatchNorm3d")
        return callAten("aten::batch_norm",
                        {x, optParam(p + ".weight"), optParam(p + ".bias"), optParam(p + ".running_mean"), optParam(p + ".running_var"),
                         IValue(false), attr("momentum", IValue(0.1)), attr("eps", IValue(1e-5)), IValue(true)});
    if (type == "Embedding") {
        IValue pad = attr("padding_idx", IValue(int64_t(-1)));
        return callAten("aten::embedding", {IValue(param(p + ".weight")), x, pad.isNone() ? IValue(int64_t(-1)) : pad});
    }
    if (type == "ReLU")
        return inplaceModule(m, x, callAten("aten::relu", {x}));
    if (type == "Tanh")
        return callAten("aten::tanh", {x});
    if (type == "Sigmoid")
        return callAten("aten::sigmoid", {x});
    if (type == "SiLU")
        return inplaceModule(m, x, callAten("aten::silu", {x}));
    if (type == "GELU")
        return callAten("aten::gelu", {x}, {{"approximate", attr("approximate", IValue(std::string("none")))}});
    if (type == "Softmax")
        return callAten("aten::softmax", {x, attr("dim", IValue(int64_t(-1)))});
    if (type == "Hardswish" || type == "Hardsigmoid" || type == "ReLU6" || type == "Mish" || type == "SELU")
        return inplaceModule(m, x,
                             callAten(type == "ReLU6" ? "aten::hardtanh" : "aten::" + lower(type),
                                      type == "ReLU6" ? std::vector<IValue>{x, IValue(0.0), IValue(6.0)} : std::vector<IValue>{x}));
    if (type == "LeakyReLU")
        return inplaceModule(m, x, callAten("aten::leaky_relu", {x, attr("negative_slope", IValue(0.01))}));
    if (type == "ELU" || type == "CELU")
        return inplaceModule(m, x, callAten(type == "ELU" ? "aten::elu" : "aten::celu", {x, attr("alpha", IValue(1.0))}));
    if (type == "Hardtanh")
        return inplaceModule(m, x, callAten("aten::hardtanh", {x, attr("min_val", IValue(-1.0)), attr("max_val", IValue(1.0))}));
    if (type == "Softplus")
        return callAten("aten::softplus", {x, attr("beta", IValue(1.0)), attr("threshold", IValue(20.0))});
    if (type == "LogSoftmax")
        return callAten("aten::log_softmax", {x, attr("dim", IValue(int64_t(-1)))});
    if (type == "GroupNorm")
        return callAten(
            "aten::group_norm",
            {x, attr("num_groups", IValue(int64_t(1))), optParam(p + ".weight"), optParam(p + ".bias"), attr("eps", IValue(1e-5))});
    if (type == "AvgPool2d" || type == "AvgPool1d")
        return callAten(type == "AvgPool2d" ? "aten::avg_pool2d" : "aten::avg_pool1d",
                        {x, attr("kernel_size", IValue()), attr("stride", IValue(c10::List<int64_t>())),
                         attr("padding", IValue(int64_t(0))), attr("ceil_mode", IValue(false)), attr("count_include_pad", IValue(true))});
    if (type == "AdaptiveAvgPool1d")
        return callAten("aten::adaptive_avg_pool1d", {x, attr("output_size", IValue())});
    if (type == "MultiheadAttention")
        return callAttentionModule(n, m, in);
    if (type == "Dropout" || type == "Identity" || type == "Dropout1d" || type == "Dropout2d" || type == "AlphaDropout") {
        if (type != "Identity" && attr("training", IValue(false)).toBool() && attr("p", IValue(0.5)).toDouble() > 0)
            throw CallError{"dropout in training mode is not deterministic; export the model in eval mode"};
        return x;
    }
    if (type == "Flatten")
        return callAten("aten::flatten", {x, attr("start_dim", IValue(int64_t(1))), attr("end_dim", IValue(int64_t(-1)))});
    if (type == "MaxPool2d")
        return callAten("aten::max_pool2d",
                        {x, attr("kernel_size", IValue()), attr("stride", IValue(c10::List<int64_t>())),
                         attr("padding", IValue(int64_t(0))), attr("dilation", IValue(int64_t(1))), attr("ceil_mode", IValue(false))});
    if (type == "AdaptiveAvgPool2d")
        return callAten("aten::adaptive_avg_pool2d", {x, attr("output_size", IValue())});
    throw CallError{"no executor for module type " + m->type};
}

} // namespace fxlens::exec::detail
