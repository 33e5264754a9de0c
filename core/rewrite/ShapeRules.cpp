// SPDX-License-Identifier: MIT
// Shape rules for the nodes a replacement creates (pattern files, built-in rewrites): unknown ops
// keep no meta, never a wrong one.
#include "rewrite/ShapeRules.h"

#include "ir/Target.h"
#include "rewrite/OpUtil.h"

#include <set>

namespace fxlens::rewrite {

using ir::Argument;
using ir::Node;

namespace {

using Shape = std::vector<int64_t>;

std::optional<Shape> shapeArg(const Argument &a)
{
    if (a.isNode())
        return rewrite::staticShape(a.toNode());
    return std::nullopt;
}

/// A dim made non-negative; -1 when it is outside [-rank, rank) (the callers check the range).
int64_t nd(int64_t d, size_t rank) { return normalizeDim(d, int(rank)).value_or(-1); }

std::optional<Shape> broadcast(Shape a, Shape b)
{
    if (a.size() < b.size())
        std::swap(a, b);
    Shape out = a;
    for (size_t i = 0; i < b.size(); ++i) {
        int64_t &x = out[a.size() - b.size() + i];
        const int64_t y = b[i];
        if (x == 1)
            x = y;
        else if (y != 1 && y != x)
            return std::nullopt;
    }
    return out;
}

/// getitem of a sequence, cat / concat / stack.
void inferSequence(Node *n, const std::string &op)
{
    const auto &args = n->args();
    auto arg = [&](size_t i, const char *kw) { return n->arg(i, kw); };
    auto set = [&](const Shape &shape, const Node *l) {
        if (l)
            n->meta().val = rewrite::tensorLike(l, shape);
    };
    const Node *like = args[0].isNode() ? args[0].toNode() : nullptr;
    if (op == "getitem" && like) {
        const auto &v = like->meta().val;
        if (v.kind == ir::ValueMeta::Kind::Sequence && args.size() > 1 && args[1].isInt()) {
            int64_t i = nd(args[1].toInt(), v.items.size());
            if (i >= 0 && size_t(i) < v.items.size())
                n->meta().val = v.items[size_t(i)];
        }
        return;
    }
    if (op == "cat" || op == "concat" || op == "stack") {
        if (!args[0].isSequence() || args[0].items().empty())
            return;
        std::vector<Shape> parts;
        for (const auto &x : args[0].items()) {
            auto s = shapeArg(x);
            if (!s)
                return;
            parts.push_back(*s);
        }
        const Argument *dA = arg(1, "dim");
        int64_t d = dA && dA->isInt() ? dA->toInt() : 0;
        Shape out = parts[0];
        if (op == "stack") {
            d = nd(d, out.size() + 1);
            if (d < 0 || size_t(d) > out.size())
                return;
            out.insert(out.begin() + d, int64_t(parts.size()));
        } else {
            d = nd(d, out.size());
            if (d < 0 || size_t(d) >= out.size())
                return;
            out[size_t(d)] = 0;
            for (const auto &p : parts)
                out[size_t(d)] += p.size() == out.size() ? p[size_t(d)] : 0;
        }
        set(out, args[0].items()[0].toNode());
        return;
    }
}

/// Elementwise ops and ops that insert, drop, move or resize dims; false for other ops.
/// flatten, unflatten, narrow, select; false for other ops.
bool inferResize(Node *n, const std::string &op, Shape s, const Node *like)
{
    auto arg = [&](size_t i, const char *kw) { return n->arg(i, kw); };
    auto set = [&](const Shape &shape, const Node *l) {
        if (l)
            n->meta().val = rewrite::tensorLike(l, shape);
    };
    if (op == "flatten") {
        const Argument *a = arg(1, "start_dim"), *b = arg(2, "end_dim");
        int64_t lo = nd(a && a->isInt() ? a->toInt() : 0, s.size()), hi = nd(b && b->isInt() ? b->toInt() : -1, s.size());
        if (lo < 0 || hi < lo || size_t(hi) >= s.size())
            return true;
        int64_t p = 1;
        for (int64_t i = lo; i <= hi; ++i)
            p *= s[size_t(i)];
        s.erase(s.begin() + lo, s.begin() + hi + 1);
        s.insert(s.begin() + lo, p);
        set(s, like);
    } else if (op == "unflatten") {
        const Argument *a = arg(1, "dim");
        auto sizes = intsArg(arg(2, "sizes"));
        if (!a || !a->isInt() || !sizes)
            return true;
        int64_t d = nd(a->toInt(), s.size());
        if (d < 0 || size_t(d) >= s.size())
            return true;
        s.erase(s.begin() + d);
        s.insert(s.begin() + d, sizes->begin(), sizes->end());
        set(s, like);
    } else if (op == "narrow") {
        const Argument *d = arg(1, "dim"), *len = arg(3, "length");
        if (!d || !len || !d->isInt() || !len->isInt())
            return true;
        const int64_t k = nd(d->toInt(), s.size());
        if (k < 0 || size_t(k) >= s.size())
            return true;
        s[size_t(k)] = len->toInt();
        set(s, like);
    } else if (op == "select") {
        const Argument *d = arg(1, "dim");
        if (!d || !d->isInt())
            return true;
        const int64_t k = nd(d->toInt(), s.size());
        if (k < 0 || size_t(k) >= s.size())
            return true;
        s.erase(s.begin() + k);
        set(s, like);
    } else {
        return false;
    }
    return true;
}

bool inferLayout(Node *n, const std::string &op, Shape s, const Node *like)
{
    auto arg = [&](size_t i, const char *kw) { return n->arg(i, kw); };
    auto set = [&](const Shape &shape, const Node *l) {
        if (l)
            n->meta().val = rewrite::tensorLike(l, shape);
    };
    static const std::set<std::string> same = {"tanh",       "sigmoid", "relu", "neg",  "abs",  "exp",   "log",        "clone", "detach",
                                               "contiguous", "alias",   "gelu", "silu", "sqrt", "rsqrt", "nan_to_num", "clamp"};
    if (same.count(op)) {
        set(s, like);
    } else if (op == "unsqueeze") {
        const Argument *d = arg(1, "dim");
        if (!d || !d->isInt())
            return true;
        int64_t k = nd(d->toInt(), s.size() + 1);
        if (k < 0 || size_t(k) > s.size())
            return true;
        s.insert(s.begin() + k, 1);
        set(s, like);
    } else if (op == "squeeze") {
        auto d = intsArg(arg(1, "dim"));
        Shape out;
        for (size_t i = 0; i < s.size(); ++i) {
            bool named = !d;
            if (d)
                for (auto k : *d)
                    named = named || nd(k, s.size()) == int64_t(i);
            if (!(named && s[i] == 1))
                out.push_back(s[i]);
        }
        set(out, like);
    } else if (op == "view" || op == "reshape" || op == "_unsafe_view") {
        auto shp = intsArg(arg(1, op == "view" ? "size" : "shape"));
        if (!shp)
            return true;
        int64_t numel = 1, known = 1;
        int neg = -1;
        for (auto x : s)
            numel *= x;
        for (size_t i = 0; i < shp->size(); ++i) {
            if ((*shp)[i] == -1)
                neg = int(i);
            else
                known *= (*shp)[i];
        }
        if (neg >= 0 && known > 0)
            (*shp)[size_t(neg)] = numel / known;
        set(*shp, like);
    } else if (op == "movedim") {
        const Argument *a = arg(1, "source"), *b = arg(2, "destination");
        if (!a || !b || !a->isInt() || !b->isInt())
            return true;
        int64_t from = nd(a->toInt(), s.size()), to = nd(b->toInt(), s.size());
        if (from < 0 || to < 0 || size_t(from) >= s.size() || size_t(to) >= s.size())
            return true;
        int64_t v = s[size_t(from)];
        s.erase(s.begin() + from);
        s.insert(s.begin() + to, v);
        set(s, like);
    } else if (op == "permute") {
        auto p = intsArg(arg(1, "dims"));
        if (!p || p->size() != s.size())
            return true;
        Shape out;
        for (auto k : *p) {
            const int64_t kk = nd(k, s.size());
            if (kk < 0 || size_t(kk) >= s.size())
                return true;
            out.push_back(s[size_t(kk)]);
        }
        set(out, like);
    } else if (op == "transpose") {
        const Argument *a = arg(1, "dim0"), *b = arg(2, "dim1");
        if (!a || !b || !a->isInt() || !b->isInt())
            return true;
        const int64_t x = nd(a->toInt(), s.size()), y = nd(b->toInt(), s.size());
        if (x < 0 || y < 0 || size_t(x) >= s.size() || size_t(y) >= s.size())
            return true;
        std::swap(s[size_t(x)], s[size_t(y)]);
        set(s, like);
    } else {
        return inferResize(n, op, s, like);
    }
    return true;
}

/// Broadcasting binary ops, reductions, split and unbind.
void inferComputed(Node *n, const std::string &op, Shape s, const Node *like)
{
    const auto &args = n->args();
    auto arg = [&](size_t i, const char *kw) { return n->arg(i, kw); };
    auto set = [&](const Shape &shape, const Node *l) {
        if (l)
            n->meta().val = rewrite::tensorLike(l, shape);
    };
    if (op == "mul" || op == "add" || op == "sub" || op == "div" || op == "truediv") {
        std::optional<Shape> other = args.size() > 1 ? shapeArg(args[1]) : std::nullopt;
        auto out = other ? broadcast(s, *other) : std::optional<Shape>(s);
        if (out)
            set(*out, like);
    } else if (op == "sum" || op == "mean" || op == "amax") {
        auto d = intsArg(arg(1, "dim"));
        const Argument *keep = arg(2, "keepdim");
        if (!d)
            return;
        const bool k = keep && keep->isBool() && keep->toBool();
        std::set<int64_t> drop;
        for (auto x : *d)
            drop.insert(nd(x, s.size()));
        Shape out;
        for (size_t i = 0; i < s.size(); ++i)
            if (!drop.count(int64_t(i)))
                out.push_back(s[i]);
            else if (k)
                out.push_back(1);
        set(out, like);
    } else if (op == "split" || op == "split_with_sizes") {
        const Argument *sz =
            arg(1, op == "split" && ir::Target::parse(n->target()).inNamespace("torch") ? "split_size_or_sections" : "split_size");
        if (!sz)
            sz = arg(1, "split_sizes");
        const Argument *dA = arg(2, "dim");
        int64_t d = nd(dA && dA->isInt() ? dA->toInt() : 0, s.size());
        if (!sz || d < 0 || size_t(d) >= s.size())
            return;
        std::vector<int64_t> sizes;
        if (sz->isInt()) {
            for (int64_t off = 0; off < s[size_t(d)]; off += sz->toInt())
                sizes.push_back(std::min(sz->toInt(), s[size_t(d)] - off));
        } else if (auto v = intsArg(sz)) {
            sizes = *v;
        } else {
            return;
        }
        ir::ValueMeta seq;
        seq.kind = ir::ValueMeta::Kind::Sequence;
        for (auto x : sizes) {
            Shape p = s;
            p[size_t(d)] = x;
            seq.items.push_back(rewrite::tensorLike(like, p));
        }
        n->meta().val = seq;
    } else if (op == "unbind") {
        const Argument *dA = arg(1, "dim");
        int64_t d = nd(dA && dA->isInt() ? dA->toInt() : 0, s.size());
        if (d < 0 || size_t(d) >= s.size())
            return;
        Shape p = s;
        p.erase(p.begin() + d);
        ir::ValueMeta seq;
        seq.kind = ir::ValueMeta::Kind::Sequence;
        for (int64_t i = 0; i < s[size_t(d)]; ++i)
            seq.items.push_back(rewrite::tensorLike(like, p));
        n->meta().val = seq;
    }
}

} // namespace

std::optional<std::vector<int64_t>> intsArg(const Argument *a)
{
    if (!a)
        return std::nullopt;
    if (a->isInt())
        return std::vector<int64_t>{a->toInt()};
    if (!a->isSequence())
        return std::nullopt;
    std::vector<int64_t> v;
    for (const auto &x : a->items()) {
        if (!x.isInt())
            return std::nullopt;
        v.push_back(x.toInt());
    }
    return v;
}

std::string baseOp(const Node *n) { return ir::Target::parse(n->target()).base(); }

void inferMeta(Node *n)
{
    if (n->args().empty())
        return;
    const std::string op = baseOp(n);
    if (op == "getitem" || op == "cat" || op == "concat" || op == "stack") {
        inferSequence(n, op);
        return;
    }
    const auto in = shapeArg(n->args()[0]);
    if (!in)
        return;
    const Node *like = n->args()[0].isNode() ? n->args()[0].toNode() : nullptr;
    if (!inferLayout(n, op, *in, like))
        inferComputed(n, op, *in, like);
}

} // namespace fxlens::rewrite
