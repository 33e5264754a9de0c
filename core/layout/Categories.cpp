// SPDX-License-Identifier: MIT
// Op categories for the canvas' colours and legend (see Layered.h).
#include "layout/Layered.h"

#include "ir/Target.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_set>

namespace fxlens::layout {

namespace {

bool hasAny(std::string_view s, std::initializer_list<std::string_view> words)
{
    return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return s.find(w) != std::string_view::npos; });
}

/// The op's own name: "aten.addmm.default" -> "addmm", "torch.nn.functional.linear" -> "linear",
/// "torch.nn.modules.conv.Conv2d" -> "conv2d".
std::string baseName(const ir::Node *n)
{
    std::string t = n->target();
    if (n->op() == ir::OpKind::CallModule) // the module's class, when the graph records it
        for (const auto &f : n->meta().moduleStack)
            if (f.path == t && !f.type.empty())
                t = f.type;
    // aten.<op>.<overload>: the op; otherwise the last component
    const ir::Target p = ir::Target::parse(t);
    std::string out(p.isAten() ? p.name : ir::lastComponent(t));
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    out.resize(ir::inplaceBase(out).size()); // in-place spellings: add_ -> add
    return out;
}

} // namespace

OpCategory opCategory(const ir::Node *n)
{
    switch (n->op()) {
    case ir::OpKind::Placeholder: return OpCategory::Input;
    case ir::OpKind::Output: return OpCategory::Output;
    case ir::OpKind::GetAttr: return OpCategory::Constant;
    default: break;
    }
    const std::string b = baseName(n);
    using Set = std::unordered_set<std::string>;
    static const Set matmul = {"linear",
                               "matmul",
                               "mm",
                               "addmm",
                               "bmm",
                               "baddbmm",
                               "einsum",
                               "convolution",
                               "_convolution",
                               "embedding",
                               "lstm",
                               "gru",
                               "addmv",
                               "mv",
                               "dot",
                               "scaled_dot_product_attention",
                               "multiheadattention"};
    static const Set movement = {"split",        "split_with_sizes", "tensor_split",   "cat",          "concat", "stack",
                                 "hstack",       "vstack",           "getitem",        "chunk",        "unbind", "index",
                                 "index_select", "gather",           "scatter",        "index_put",    "copy",   "clone",
                                 "where",        "narrow",           "roll",           "flip",         "repeat", "tile",
                                 "pad",          "constant_pad_nd",  "select_scatter", "slice_scatter"};
    static const Set views = {"view",    "reshape",   "permute", "transpose", "expand",         "expand_as",
                              "squeeze", "unsqueeze", "flatten", "unflatten", "contiguous",     "slice",
                              "select",  "alias",     "t",       "movedim",   "as_strided",     "_unsafe_view",
                              "view_as", "swapaxes",  "size",    "dim",       "_reshape_alias", "detach"};
    static const Set reductions = {"max",      "min",       "amax",   "amin", "prod", "argmax", "argmin", "var", "std",
                                   "var_mean", "logsumexp", "cumsum", "topk", "sort", "all",    "any",    "sum", "mean"};
    if (hasAny(b, {"norm"}) && b.find("normal") == std::string::npos)
        return OpCategory::Normalization;
    if (matmul.count(b) || hasAny(b, {"conv", "linear", "attention", "matmul"}))
        return OpCategory::MatMulConv;
    if (movement.count(b))
        return OpCategory::DataMovement;
    if (views.count(b))
        return OpCategory::ViewReshape;
    if (reductions.count(b) || hasAny(b, {"pool", "softmax", "sum", "mean"}))
        return OpCategory::Reduction;
    if (n->op() == ir::OpKind::CallModule)
        return OpCategory::Module;
    static const std::unordered_set<std::string> elementwise = {
        "add",        "sub",       "mul",         "div",         "truediv", "floordiv", "neg",     "pow",      "sqrt",        "rsqrt",
        "exp",        "log",       "abs",         "relu",        "gelu",    "silu",     "sigmoid", "tanh",     "hardtanh",    "hardswish",
        "leaky_relu", "elu",       "softplus",    "mish",        "dropout", "clamp",    "clip",    "eq",       "ne",          "lt",
        "le",         "gt",        "ge",          "to",          "type",    "float",    "half",    "bfloat16", "masked_fill", "fill",
        "zeros_like", "ones_like", "full_like",   "reciprocal",  "sin",     "cos",      "erf",     "iadd",     "imul",        "isub",
        "and_",       "or_",       "logical_not", "bitwise_not", "lerp",    "addcmul",  "addcdiv", "_to_copy", "sign",        "floor",
        "ceil",       "round",     "relu6",       "celu",        "selu",    "glu",      "triu",    "tril",     "mod",         "remainder"};
    if (elementwise.count(b) || hasAny(b, {"relu", "gelu", "silu", "sigmoid", "tanh", "dropout", "activation"}))
        return OpCategory::Elementwise;
    return OpCategory::Other;
}

const char *opCategoryName(OpCategory c)
{
    static constexpr std::array<const char *, kOpCategories> names = {"input",
                                                                      "output",
                                                                      "parameter / constant",
                                                                      "matmul / conv",
                                                                      "elementwise",
                                                                      "reduction",
                                                                      "view / reshape",
                                                                      "split / cat / stack (data movement)",
                                                                      "normalization",
                                                                      "module",
                                                                      "other"};
    return names[size_t(c)];
}

bool isConstant(const ir::Node *n, const ir::Graph &g)
{
    if (n->op() == ir::OpKind::GetAttr)
        return true;
    if (n->op() != ir::OpKind::Placeholder || g.params.empty())
        return false;
    // torch.export lifts parameters (p_), buffers (b_) and constants (c_) to inputs named after them.
    std::string name = n->name();
    for (const char *prefix : {"p_", "b_", "c_"})
        if (name.rfind(prefix, 0) == 0) {
            name = name.substr(2);
            break;
        }
    for (const auto &p : g.params) {
        if (p.name == n->target() || p.name == n->name())
            return true;
        std::string flat = p.name;
        std::replace(flat.begin(), flat.end(), '.', '_');
        if (flat == name)
            return true;
    }
    return false;
}

std::vector<uint8_t> constantNodes(const ir::Graph &g)
{
    std::vector<uint8_t> out(g.idBound(), 0);
    // Tensors made from nothing but shapes (arange, zeros, full: position ids, causal masks).
    static const std::unordered_set<std::string> factories = {"arange",        "zeros", "ones",     "full",  "empty",
                                                              "scalar_tensor", "eye",   "linspace", "tensor"};
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (isConstant(n, g)) {
            out[n->id()] = 1;
            continue;
        }
        if (n->op() != ir::OpKind::CallFunction && n->op() != ir::OpKind::CallMethod)
            continue;
        const auto inputs = n->inputNodes();
        if (inputs.empty())
            out[n->id()] = factories.count(baseName(n)) > 0;
        else
            out[n->id()] = std::all_of(inputs.begin(), inputs.end(), [&](const ir::Node *in) { return out[in->id()] != 0; });
    }
    return out;
}

} // namespace fxlens::layout
