// SPDX-License-Identifier: MIT
// The built-in schema table (torch functions, Tensor methods, ATen overloads used by patterns).
#include "rewrite/Schema.h"

#include "ir/Target.h"

#include <map>

namespace fxlens::rewrite {

using ir::Argument;
using ir::OpKind;

namespace {

ParamSpec req(std::string n) { return {std::move(n), std::nullopt}; }
ParamSpec opt(std::string n, Argument d) { return {std::move(n), std::move(d)}; }
Argument I(int64_t v) { return Argument::integer(v); }
Argument F(double v) { return Argument::real(v); }
Argument N() { return Argument::none(); }
Argument B(bool v) { return Argument::boolean(v); }

using Key = std::pair<OpKind, std::string>;

/// numpy's keyword spellings that torch functions accept, and the torch names they stand for.
const std::pair<const char *, const char *> kNumpyKeywords[] = {{"axis", "dim"}, {"keepdims", "keepdim"}, {"x", "input"},
                                                                {"a", "input"},  {"x1", "input"},         {"x2", "other"}};

std::map<Key, OpSchema> build()
{
    std::map<Key, OpSchema> t;
    auto fn = [&](std::initializer_list<const char *> names, OpSchema s) {
        for (const char *n : names)
            t[{OpKind::CallFunction, n}] = s;
    };
    auto method = [&](std::initializer_list<const char *> names, OpSchema s) {
        for (const char *n : names)
            t[{OpKind::CallMethod, n}] = s;
    };
    const std::vector<std::pair<std::string, std::string>> axis = {{"axis", "dim"}};
    std::vector<std::pair<std::string, std::string>> np;
    for (const auto &[from, to] : kNumpyKeywords)
        np.emplace_back(from, to);

    // split family
    fn({"torch.split", "torch.functional.split"}, {{req("tensor"), req("split_size_or_sections"), opt("dim", I(0))}, -1, axis});
    method({"split"}, {{req("self"), req("split_size"), opt("dim", I(0))}, -1, axis});
    fn({"aten.split.Tensor"}, {{req("self"), req("split_size"), opt("dim", I(0))}});
    fn({"aten.split_with_sizes.default"}, {{req("self"), req("split_sizes"), opt("dim", I(0))}});
    fn({"torch.unbind"}, {{req("input"), opt("dim", I(0))}, -1, axis});
    method({"unbind"}, {{req("self"), opt("dim", I(0))}, -1, axis});
    fn({"aten.unbind.int"}, {{req("self"), opt("dim", I(0))}});
    fn({"torch.chunk"}, {{req("input"), req("chunks"), opt("dim", I(0))}, -1, axis});
    // cat / stack
    fn({"torch.cat", "torch.concat", "torch.concatenate"}, {{req("tensors"), opt("dim", I(0))}, -1, axis});
    fn({"aten.cat.default"}, {{req("tensors"), opt("dim", I(0))}});
    fn({"torch.stack"}, {{req("tensors"), opt("dim", I(0))}, -1, axis});
    fn({"aten.stack.default"}, {{req("tensors"), opt("dim", I(0))}});
    // views
    fn({"torch.squeeze"}, {{req("input"), opt("dim", N())}, -1, axis});
    method({"squeeze"}, {{req("self"), opt("dim", N())}, -1, axis});
    fn({"aten.squeeze.dim"}, {{req("self"), req("dim")}});
    fn({"aten.squeeze.dims"}, {{req("self"), req("dim")}});
    fn({"aten.squeeze.default"}, {{req("self")}});
    fn({"torch.unsqueeze"}, {{req("input"), req("dim")}});
    method({"unsqueeze"}, {{req("self"), req("dim")}});
    fn({"aten.unsqueeze.default"}, {{req("self"), req("dim")}});
    fn({"torch.reshape"}, {{req("input"), req("shape")}});
    method({"reshape", "view"}, {{req("self"), req("shape")}, 1});
    fn({"aten.view.default", "aten._unsafe_view.default"}, {{req("self"), req("size")}});
    fn({"aten.reshape.default"}, {{req("self"), req("shape")}});
    fn({"torch.permute"}, {{req("input"), req("dims")}});
    method({"permute"}, {{req("self"), req("dims")}, 1});
    fn({"aten.permute.default"}, {{req("self"), req("dims")}});
    fn({"torch.movedim"}, {{req("input"), req("source"), req("destination")}});
    fn({"torch.flatten"}, {{req("input"), opt("start_dim", I(0)), opt("end_dim", I(-1))}});
    fn({"aten.select.int"}, {{req("self"), req("dim"), req("index")}});
    fn({"aten.slice.Tensor"}, {{req("self"), opt("dim", I(0)), opt("start", N()), opt("end", N()), opt("step", I(1))}});
    fn({"torch.detach"}, {{req("input")}});
    method({"detach"}, {{req("self")}});
    fn({"aten.detach.default"}, {{req("self")}});
    fn({"torch.clamp", "torch.clip"}, {{req("input"), opt("min", N()), opt("max", N())}});
    method({"clamp", "clip"}, {{req("self"), opt("min", N()), opt("max", N())}});
    // pointwise
    for (const char *op : {"tanh", "relu", "sigmoid", "exp", "neg", "abs"}) {
        std::string f = std::string("torch.") + op, a = std::string("aten.") + op + ".default";
        t[{OpKind::CallFunction, f}] = {{req("input")}, -1, np};
        t[{OpKind::CallMethod, op}] = {{req("self")}};
        t[{OpKind::CallFunction, a}] = {{req("self")}};
    }
    fn({"torch.nn.functional.relu"}, {{req("input"), opt("inplace", B(false))}});
    fn({"torch.add", "torch.sub"}, {{req("input"), req("other"), opt("alpha", I(1))}, -1, np});
    fn({"torch.mul", "torch.div"}, {{req("input"), req("other")}, -1, np});
    fn({"operator.add", "operator.sub", "operator.mul", "operator.truediv"}, {{req("a"), req("b")}});
    fn({"aten.add.Tensor", "aten.sub.Tensor"}, {{req("self"), req("other"), opt("alpha", I(1))}});
    fn({"aten.mul.Tensor", "aten.div.Tensor"}, {{req("self"), req("other")}});
    fn({"aten.sum.dim_IntList"}, {{req("self"), req("dim"), opt("keepdim", B(false)), opt("dtype", N())}});
    // matmul family
    fn({"aten.mm.default", "aten.bmm.default"}, {{req("self"), req("mat2")}});
    fn({"aten.addmm.default"}, {{req("self"), req("mat1"), req("mat2"), opt("beta", I(1)), opt("alpha", I(1))}});
    fn({"torch.nn.functional.linear"}, {{req("input"), req("weight"), opt("bias", N())}});
    fn({"torch.nn.functional.embedding"},
       {{req("input"), req("weight"), opt("padding_idx", N()), opt("max_norm", N()), opt("norm_type", Argument::real(2.0)),
         opt("scale_grad_by_freq", B(false)), opt("sparse", B(false))}});
    fn({"torch.nn.functional.layer_norm"},
       {{req("input"), req("normalized_shape"), opt("weight", N()), opt("bias", N()), opt("eps", F(1e-5))}});
    fn({"aten.native_layer_norm.default"}, {{req("self"), req("normalized_shape"), req("weight"), req("bias"), req("eps")}});
    fn({"aten.layer_norm.default"},
       {{req("input"), req("normalized_shape"), opt("weight", N()), opt("bias", N()), opt("eps", F(1e-5)), opt("cudnn_enable", B(true))}});
    fn({"aten.sigmoid.default", "aten.detach.default"}, {{req("self")}});
    fn({"aten.stack.default"}, {{req("tensors"), opt("dim", I(0))}});
    fn({"torch.functional.einsum", "torch.einsum"}, {{req("equation"), req("operands")}, 1});
    fn({"operator.getitem"}, {{req("a"), req("b")}});
    return t;
}

} // namespace

const char *numpyKeyword(const std::string &name)
{
    for (const auto &[from, to] : kNumpyKeywords)
        if (name == from)
            return to;
    return nullptr;
}

bool writesInPlace(const std::string &t)
{
    if (t.rfind("operator.i", 0) == 0) // Python's augmented assignments (operator.iadd, ...)
        return ir::augmentedAssign(t) != nullptr;
    if (t.find("_.") != std::string::npos)
        return true;             // an overload of an in-place op, in any namespace: aten.add_.Tensor, mylib.foo_.default
    return ir::isInplaceName(t); // x.add_, torch.Tensor.add_
}

const OpSchema *schemaFor(OpKind op, const std::string &target)
{
    static const std::map<Key, OpSchema> table = build();
    auto it = table.find({op, target});
    return it == table.end() ? nullptr : &it->second;
}

bool normalizedArgs(const ir::Node *n, const OpSchema &s, std::vector<Argument> &out, std::string *error)
{
    const size_t np = s.params.size();
    out.assign(np, Argument::none());
    std::vector<bool> given(np, false);
    const auto &args = n->args();
    for (size_t i = 0; i < args.size(); ++i) {
        if (s.varargs >= 0 && i >= size_t(s.varargs)) {
            // x.view(2, 3) and x.view([2, 3]) mean the same.
            size_t v = size_t(s.varargs);
            if (i == v && args.size() == v + 1 && args[i].isSequence())
                out[v] = args[i];
            else {
                if (!given[v])
                    out[v] = Argument::list({});
                out[v].items().push_back(args[i]);
            }
            given[v] = true;
            continue;
        }
        if (i >= np) {
            if (error)
                *error = std::to_string(args.size()) + " positional arguments, the schema takes " + std::to_string(np);
            return false;
        }
        out[i] = args[i];
        given[i] = true;
    }
    for (const auto &kv : n->kwargs()) {
        std::string key = kv.first;
        for (const auto &al : s.aliases)
            if (al.first == key)
                key = al.second;
        size_t k = 0;
        while (k < np && s.params[k].name != key)
            ++k;
        if (k == np) {
            if (error)
                *error = "unknown keyword '" + kv.first + "'";
            return false;
        }
        if (given[k]) {
            if (error)
                *error = "argument '" + key + "' given twice";
            return false;
        }
        out[k] = kv.second;
        given[k] = true;
    }
    for (size_t k = 0; k < np; ++k) {
        if (given[k])
            continue;
        if (!s.params[k].dflt) {
            if (error)
                *error = "missing argument '" + s.params[k].name + "'";
            return false;
        }
        out[k] = *s.params[k].dflt;
    }
    return true;
}

} // namespace fxlens::rewrite
