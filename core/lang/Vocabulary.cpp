// SPDX-License-Identifier: MIT
// The vocabulary of pattern files: the ops, methods and builtins they may call, and "did you mean".
#include "lang/LangInternal.h"

#include "ir/Target.h"

namespace fxlens::lang::detail {

const std::vector<std::string> &knownFunctions()
{
    static const std::vector<std::string> v = [] {
        std::vector<std::string> out;
        for (const char *f : {"split",        "cat",         "concat",    "concatenate", "stack",   "unbind",
                              "chunk",        "squeeze",     "unsqueeze", "reshape",     "flatten", "unflatten",
                              "movedim",      "permute",     "transpose", "narrow",      "select",  "index_select",
                              "tanh",         "sigmoid",     "relu",      "gelu",        "exp",     "log",
                              "abs",          "neg",         "sqrt",      "rsqrt",       "sum",     "mean",
                              "amax",         "amin",        "max",       "min",         "mul",     "add",
                              "sub",          "div",         "matmul",    "mm",          "bmm",     "addmm",
                              "baddbmm",      "einsum",      "clamp",     "clip",        "detach",  "nan_to_num",
                              "where",        "zeros_like",  "ones_like", "flip",        "roll",    "t",
                              "softmax",      "log_softmax", "dropout",   "layer_norm",  "linear",  "split_with_sizes",
                              "tensor_split", "hstack",      "vstack",    "full_like",   "pow",     "square",
                              "erf",          "maximum",     "minimum",   "cumsum",      "prod",    "norm",
                              "clone",        "contiguous",  "expand",    "repeat",      "tile",    "gather",
                              "scatter",      "embedding",   "conv2d",    "batch_norm",  "silu",    "sin",
                              "cos"})
            out.push_back(std::string("torch.") + f);
        for (const char *f : {"relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "layer_norm", "linear",
                              "embedding", "conv2d", "batch_norm", "normalize", "pad", "leaky_relu", "elu"})
            out.push_back(std::string("torch.nn.functional.") + f);
        out.emplace_back("torch.functional.einsum");
        out.emplace_back("torch.functional.split");
        for (const char *f : {"getitem", "add", "sub", "mul", "truediv", "floordiv", "neg", "matmul", "mod", "pow"})
            out.push_back(std::string("operator.") + f);
        for (const char *f : {"split.Tensor",
                              "split_with_sizes.default",
                              "cat.default",
                              "stack.default",
                              "unbind.int",
                              "select.int",
                              "unsqueeze.default",
                              "squeeze.dim",
                              "squeeze.dims",
                              "squeeze.default",
                              "view.default",
                              "_unsafe_view.default",
                              "reshape.default",
                              "permute.default",
                              "slice.Tensor",
                              "mm.default",
                              "addmm.default",
                              "bmm.default",
                              "baddbmm.default",
                              "mul.Tensor",
                              "add.Tensor",
                              "sub.Tensor",
                              "div.Tensor",
                              "sum.dim_IntList",
                              "sum.default",
                              "mean.dim",
                              "tanh.default",
                              "sigmoid.default",
                              "relu.default",
                              "clone.default",
                              "expand.default",
                              "transpose.int",
                              "t.default",
                              "narrow.default",
                              "movedim.int",
                              "native_layer_norm.default",
                              "layer_norm.default",
                              "detach.default",
                              "clamp.default",
                              "exp.default",
                              "neg.default",
                              "abs.default",
                              "flatten.using_ints",
                              "unflatten.int",
                              "alias.default",
                              "copy.default",
                              "where.self",
                              "gelu.default",
                              "silu.default",
                              "_softmax.default",
                              "split_with_sizes_copy.default",
                              "cat.out"})
            out.push_back(std::string("aten.") + f);
        return out;
    }();
    return v;
}

const std::vector<std::string> &knownMethods()
{
    // clang-format off
    static const std::vector<std::string> v = {
        "split", "unbind", "chunk", "squeeze", "unsqueeze", "reshape", "view", "flatten", "unflatten", "movedim",
        "permute", "transpose", "narrow", "select", "tanh", "sigmoid", "relu", "exp", "log", "abs", "neg", "sum",
        "mean", "mul", "add", "sub", "div", "matmul", "clamp", "detach", "contiguous", "expand", "repeat", "t",
        "size", "dim", "float", "half", "to", "softmax", "flip", "clone", "masked_fill", "index_select", "gather",
        "nan_to_num", "sqrt", "pow", "max", "min", "amax", "type_as", "expand_as", "view_as", "reshape_as", "replace"};
    // clang-format on
    return v;
}

const std::vector<std::string> &builtins()
{
    // clang-format off
    static const std::vector<std::string> v = {"len",   "sum",   "min",   "max",   "abs",      "range", "list",
                                               "int",   "float", "bool",  "shape", "dtype",    "ndim",  "rank",
                                               "users", "numel", "all_equal", "all_distinct", "norm_dim", "all_users_getitem", "is_node"};
    // clang-format on
    return v;
}

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string closest(const std::string &name, const std::vector<std::string> &options)
{
    std::string best;
    size_t bestD = std::max<size_t>(2, name.size() / 4) + 1;
    for (const auto &o : options) {
        size_t d = editDistance(name, o);
        if (d < bestD) {
            bestD = d;
            best = o;
        }
    }
    return best;
}

std::string didYouMean(const std::string &s) { return s.empty() ? std::string() : "; did you mean '" + s + "'?"; }

[[noreturn]] void error(Loc loc, std::string msg) { throw CompileError{loc, std::move(msg)}; }

std::string dotted(const Expr &e)
{
    if (e.kind == Expr::Kind::Name)
        return e.s == "F" ? "torch.nn.functional" : e.s;
    if (e.kind == Expr::Kind::Attr) {
        std::string base = dotted(*e.a[0]);
        return base.empty() ? std::string() : base + "." + e.s;
    }
    return {};
}

bool isTargetRoot(const std::string &d)
{
    const ir::Target t = ir::Target::parse(d);
    return t.inNamespace("torch") || t.isAten() || t.inNamespace("operator");
}

void checkTarget(const std::string &t, Loc loc)
{
    const auto &k = knownFunctions();
    if (std::find(k.begin(), k.end(), t) != k.end())
        return;
    error(loc, "unknown op '" + t + "'" + didYouMean(closest(t, k)));
}

std::string typeName(const Expr &t)
{
    if (t.kind == Expr::Kind::Name)
        return t.s;
    if (t.kind == Expr::Kind::Subscript && t.a[0]->kind == Expr::Kind::Name)
        return t.a[0]->s;
    if (t.kind == Expr::Kind::Attr)
        return dotted(t);
    return unparse(t);
}

const std::vector<std::string> kTypes = {"Tensor", "torch.Tensor", "int", "float", "bool", "str", "list", "List", "Any"};

} // namespace fxlens::lang::detail

namespace fxlens::lang {

std::string suggestOp(const std::string &name) { return detail::closest(name, detail::knownFunctions()); }
std::string closestName(const std::string &name, const std::vector<std::string> &options) { return detail::closest(name, options); }

} // namespace fxlens::lang
