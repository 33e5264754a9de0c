// SPDX-License-Identifier: MIT
// Instances of a pattern file: small random graphs its pattern matches (the "test" command and the
// fuzzer's seeds).
#include "lang/LangInternal.h"
#include "rewrite/OpUtil.h"
#include "rewrite/ShapeRules.h"

#include <functional>
#include <random>

namespace fxlens::lang {

using namespace detail;

namespace {
/// Placeholder dims an instance must have for its splits to fit: (param, dim) -> size.
using ShapeFixes = std::map<std::pair<std::string, int64_t>, int64_t>;
std::unique_ptr<ir::Graph> instantiateWith(const FilePattern &p, uint64_t seed, const ShapeFixes &fixes, std::string &why,
                                           std::string &desc);
} // namespace

std::unique_ptr<ir::Graph> instantiate(const FilePattern &p, uint64_t seed, std::string &why, std::string &desc)
{
    // Draw once; where a split of a parameter asks for sections that do not sum to the drawn size,
    // draw again with that size fixed (the same seed draws the same values otherwise).
    auto g = instantiateWith(p, seed, {}, why, desc);
    if (!g)
        return g;
    ShapeFixes fixes;
    for (Node *n = g->first(); n; n = n->next()) {
        const std::string op = baseOp(n);
        if ((op != "split" && op != "split_with_sizes") || n->args().empty() || !n->args()[0].isNode())
            continue;
        Node *x = n->args()[0].toNode();
        auto sizes = intsArg(n->arg(1, "split_size_or_sections"));
        if (!sizes)
            sizes = intsArg(n->arg(1, "split_sizes"));
        const Argument *d = n->arg(2, "dim");
        auto shape = rewrite::staticShape(x);
        if (x->op() != OpKind::Placeholder || !sizes || sizes->size() < 1 || !shape || (d && !d->isInt()))
            continue;
        int64_t k = d ? d->toInt() : 0;
        k = k < 0 ? k + int64_t(shape->size()) : k;
        if (k < 0 || size_t(k) >= shape->size() || (n->target() == "aten.split.Tensor") ||
            (sizes->size() == 1 && n->arg(1, "split_size_or_sections")->isInt()))
            continue;
        int64_t total = 0;
        for (auto v : *sizes)
            total += v;
        fixes[{x->name(), k}] = total;
    }
    if (fixes.empty())
        return g;
    return instantiateWith(p, seed, fixes, why, desc);
}

namespace {
std::unique_ptr<ir::Graph> instantiateWith(const FilePattern &p, uint64_t seed, const ShapeFixes &fixes, std::string &why,
                                           std::string &desc)
{
    std::mt19937_64 rng(seed);
    auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    // Sizes come from a small pool plus the integer constants of the pattern's asserts and their
    // neighbours (boundary values: "M >= 10240" needs 10240 to be drawn). Each instance favours two
    // sizes and one rank, so that shapes agree often enough for the ops to accept them.
    std::vector<int64_t> pool = {1, 2, 3, 4};
    std::function<void(const Expr &)> lits = [&](const Expr &e) {
        if (e.kind == Expr::Kind::Int && e.ival > 4 && e.ival <= (1 << 16))
            for (int64_t d : {e.ival - 1, e.ival, e.ival + 1})
                pool.push_back(d);
        for (const auto &x : e.a)
            if (x)
                lits(*x);
    };
    for (const auto &st : p.program->asserts)
        lits(*st.e);
    auto pick = [&]() { return pool[size_t(uni(0, int64_t(pool.size()) - 1))]; };
    const int64_t fav1 = uni(1, 4), fav2 = pick(), favRank = uni(1, 4);
    auto dim = [&]() {
        const int64_t r = uni(0, 9);
        return r < 4 ? fav1 : r < 7 ? fav2 : pick();
    };
    auto g = std::make_unique<ir::Graph>();
    g->name = p.name + "_instance";
    g->irLevel = p.level == IrLevel::Aten ? "aten" : "torch";
    const Func *pat = nullptr;
    for (const auto &f : p.module.funcs)
        if (f.name == "pattern")
            pat = &f;
    if (!pat) {
        why = "no pattern function";
        return nullptr;
    }
    Rewriter rw(*g);
    Evaluator ev;
    ev.rw = &rw;
    desc.clear();
    for (const auto &prm : pat->params) {
        const std::string t = prm.type ? typeName(*prm.type) : "Any";
        Value v;
        if (t == "Tensor" || t == "torch.Tensor") {
            const int64_t rank = uni(0, 9) < 7 ? favRank : uni(1, 4);
            std::vector<int64_t> shape;
            int64_t numel = 1;
            for (int64_t k = 0; k < rank; ++k) {
                int64_t d = dim();
                if (numel * d > (int64_t(1) << 20))
                    d = uni(1, 4); // keep instances small
                shape.push_back(d);
                numel *= d;
            }
            for (auto &[key, size] : fixes)
                if (key.first == prm.name && size_t(key.second) < shape.size())
                    shape[size_t(key.second)] = size;
            Node *n = g->create(OpKind::Placeholder, prm.name, {}, {}, prm.name);
            ir::TensorMeta tm;
            for (auto d : shape)
                tm.shape.push_back({d, {}});
            tm.dtype = "float32";
            int64_t stride = 1;
            tm.stride.assign(shape.size(), 1);
            for (size_t k = shape.size(); k-- > 0;) {
                tm.stride[k] = stride;
                stride *= shape[k];
            }
            n->meta().val = ir::ValueMeta::ofTensor(tm);
            v = Value::ofNode(n);
            desc += (desc.empty() ? "" : ", ") + prm.name + ": " + n->meta().val.toString();
            ev.vars[prm.name] = v;
            continue;
        }
        if (t == "int" || t == "Any")
            v = Value::integer(uni(0, 9) < 8 ? uni(0, 3) : pick());
        else if (t == "bool")
            v = Value::boolean(uni(0, 1) != 0);
        else if (t == "float") {
            v.k = Value::K::Float;
            v.f = double(uni(1, 4)) / 2;
        } else if (t == "list" || t == "List") {
            v.k = Value::K::List;
            const int64_t n = uni(1, 4);
            for (int64_t k = 0; k < n; ++k)
                v.list.push_back(Value::integer(uni(0, 1) ? fav1 : uni(1, 3)));
        } else {
            why = "parameter '" + prm.name + "' of type " + t + " cannot be sampled";
            return nullptr;
        }
        ev.vars[prm.name] = v;
        desc += (desc.empty() ? "" : ", ") + prm.name + " = " + v.str();
    }
    try {
        for (const auto &st : pat->body) {
            if (st.kind == Stmt::Kind::Assign) {
                if (st.e->kind == Expr::Kind::Name && st.e->s == "_")
                    throw EvalError{st.e->loc, "'_' cannot be spelled out"};
                ev.vars[st.target] = ev.eval(st.e);
            } else if (st.kind == Stmt::Kind::Return) {
                Value v = ev.eval(st.e);
                if (v.k != Value::K::Node || !v.node) {
                    why = "the pattern's return is not a node";
                    return nullptr;
                }
                g->create(OpKind::Output, "output", {Argument::tuple({Argument::node(v.node)})}, {}, "output");
                return g;
            }
        }
    } catch (const EvalError &e) {
        why = "line " + std::to_string(e.loc.line) + ": " + e.message;
        return nullptr;
    }
    why = "the pattern has no return";
    return nullptr;
}
} // namespace

} // namespace fxlens::lang
