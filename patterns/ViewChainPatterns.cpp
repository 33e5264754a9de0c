// SPDX-License-Identifier: MIT
// fold_view_chain: a chain of reshapes and permutations (reshape, view, flatten, unflatten, squeeze,
// unsqueeze, permute, movedim, transpose, t) collapsed to the shortest equivalent form: one reshape,
// or one reshape and one permute. The chain is simulated as a strided view of its input's row-major
// order (sizes and strides, as torch computes a view's strides); a chain that no single strided view
// can express (a reshape that would copy mid-chain) is left alone.
#include "PatternUtil.h"

#include <algorithm>
#include <numeric>

namespace fxlens::patterns {

namespace {

struct Layout {
    std::vector<int64_t> sizes, strides;
};

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape)
{
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;)
        st[i - 1] = st[i] * std::max<int64_t>(shape[i], 1);
    return st;
}

/// torch's view stride computation (computeStride): the strides of `to` as a view of `from`, or
/// nothing when the view would need a copy.
std::optional<std::vector<int64_t>> viewStrides(const Layout &from, const std::vector<int64_t> &to)
{
    const int64_t numel = std::accumulate(to.begin(), to.end(), int64_t(1), std::multiplies<>());
    if (numel == 0)
        return contiguousStrides(to);
    std::vector<int64_t> out(to.size(), 0);
    int64_t viewD = int64_t(to.size()) - 1;
    int64_t chunkBase = from.strides.empty() ? 1 : from.strides.back();
    int64_t tensorNumel = 1, viewNumel = 1;
    for (int64_t d = int64_t(from.sizes.size()) - 1; d >= 0; --d) {
        tensorNumel *= from.sizes[size_t(d)];
        if (d == 0 || (from.sizes[size_t(d - 1)] != 1 && from.strides[size_t(d - 1)] != tensorNumel * chunkBase)) {
            while (viewD >= 0 && (viewNumel < tensorNumel || to[size_t(viewD)] == 1)) {
                out[size_t(viewD)] = viewNumel * chunkBase;
                viewNumel *= to[size_t(viewD)];
                --viewD;
            }
            if (viewNumel != tensorNumel)
                return std::nullopt;
            if (d > 0) {
                chunkBase = from.strides[size_t(d - 1)];
                tensorNumel = 1;
                viewNumel = 1;
            }
        }
    }
    if (viewD != -1)
        return std::nullopt;
    return out;
}

std::optional<std::vector<int64_t>> intsFrom(const Node *n, size_t i, const char *key, bool varargs = false)
{
    const Argument *a = n->arg(i, key);
    if (!a)
        return std::nullopt;
    std::vector<int64_t> v;
    if (a->isSequence()) {
        for (const auto &x : a->items()) {
            if (!x.isInt())
                return std::nullopt;
            v.push_back(x.toInt());
        }
        return v;
    }
    for (size_t j = i; j < n->args().size(); ++j) { // varargs: x.permute(0, 2, 1)
        if (!n->args()[j].isInt())
            return std::nullopt;
        v.push_back(n->args()[j].toInt());
        if (!varargs || n->op() != OpKind::CallMethod)
            break;
    }
    return v.empty() ? std::nullopt : std::optional(v);
}

std::string opName(const Node *n)
{
    std::string t = n->target();
    if (n->op() == OpKind::CallFunction) {
        if (t.rfind("aten.", 0) == 0) {
            t = t.substr(5);
            t = t.substr(0, t.find('.'));
        } else if (t.rfind("torch.", 0) == 0 && t.find('.', 6) == std::string::npos) {
            t = t.substr(6);
        } else if (t.rfind("torch.Tensor.", 0) == 0) {
            t = t.substr(13);
        } else {
            return {};
        }
    } else if (n->op() != OpKind::CallMethod) {
        return {};
    }
    return t;
}

/// The permutation a permute-like node applies (output dim i reads input dim p[i]).
std::optional<std::vector<int64_t>> permutationOf(const Node *n, int rank)
{
    const std::string op = opName(n);
    std::vector<int64_t> p(size_t(std::max(rank, 0)));
    std::iota(p.begin(), p.end(), 0);
    auto norm = [&](int64_t d) { return normalizeDim(d, rank); };
    if (op == "permute") {
        auto dims = intsFrom(n, 1, "dims", true);
        if (!dims || dims->size() != size_t(rank))
            return std::nullopt;
        for (size_t i = 0; i < dims->size(); ++i) {
            auto d = norm((*dims)[i]);
            if (!d)
                return std::nullopt;
            p[i] = *d;
        }
        std::vector<int64_t> seen = p;
        std::sort(seen.begin(), seen.end());
        for (size_t i = 0; i < seen.size(); ++i)
            if (seen[i] != int64_t(i))
                return std::nullopt;
        return p;
    }
    if (op == "transpose" || op == "swapaxes" || op == "swapdims" || op == "t") {
        int64_t a = 0, b = rank - 1;
        if (op != "t") {
            const Argument *x = n->arg(1, op == "transpose" ? "dim0" : "axis0"), *y = n->arg(2, op == "transpose" ? "dim1" : "axis1");
            if (!x || !y || !x->isInt() || !y->isInt())
                return std::nullopt;
            auto da = norm(x->toInt()), db = norm(y->toInt());
            if (!da || !db)
                return std::nullopt;
            a = *da;
            b = *db;
        } else if (rank > 2) {
            return std::nullopt;
        }
        if (rank >= 1)
            std::swap(p[size_t(a)], p[size_t(b)]);
        return p;
    }
    if (op == "movedim" || op == "moveaxis") {
        auto src = intsFrom(n, 1, "source"), dst = intsFrom(n, 2, "destination");
        if (!src || !dst || src->size() != dst->size())
            return std::nullopt;
        std::vector<int64_t> out(size_t(rank), -1);
        std::vector<bool> used(size_t(rank), false);
        for (size_t i = 0; i < src->size(); ++i) {
            auto s = norm((*src)[i]), d = norm((*dst)[i]);
            if (!s || !d || out[size_t(*d)] != -1 || used[size_t(*s)])
                return std::nullopt;
            out[size_t(*d)] = *s;
            used[size_t(*s)] = true;
        }
        int64_t next = 0;
        for (auto &o : out) {
            if (o != -1)
                continue;
            while (used[size_t(next)])
                ++next;
            o = next;
            used[size_t(next)] = true;
        }
        return out;
    }
    return std::nullopt;
}

bool isReshapeLike(const Node *n)
{
    static const char *const ops[] = {"reshape", "view", "_unsafe_view", "flatten", "unflatten", "squeeze", "unsqueeze", "contiguous"};
    const std::string op = opName(n);
    if (std::find(std::begin(ops), std::end(ops), op) == std::end(ops))
        return false;
    Node *in = firstInput(n);
    if (!in || !n->meta().val.isTensor() || !in->meta().val.isTensor() || n->meta().val.tensor.dtype != in->meta().val.tensor.dtype)
        return false; // x.view(dtype) reinterprets bytes
    auto a = staticShape(n), b = staticShape(in);
    if (!a || !b)
        return false;
    auto numel = [](const std::vector<int64_t> &s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>()); };
    return numel(*a) == numel(*b);
}

bool isChainOp(const Node *n)
{
    if (n->op() != OpKind::CallFunction && n->op() != OpKind::CallMethod)
        return false;
    if (isReshapeLike(n))
        return true;
    Node *in = firstInput(n);
    return in && staticShape(n) && staticShape(in) && permutationOf(n, rankOf(in)).has_value();
}

class FoldViewChain : public Pattern {
public:
    FoldViewChain()
    {
        name = "fold_view_chain";
        for (const char *t : {"torch.reshape", "torch.flatten", "torch.unflatten", "torch.squeeze", "torch.unsqueeze", "torch.permute",
                              "torch.movedim", "torch.moveaxis", "torch.transpose", "torch.swapaxes", "torch.swapdims", "torch.t",
                              "aten.view.default", "aten.reshape.default", "aten._unsafe_view.default", "aten.permute.default",
                              "aten.transpose.int", "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
                              "aten.squeeze.default", "aten.t.default", "aten.flatten.using_ints", "aten.unflatten.int"})
            anchors.push_back({OpKind::CallFunction, t});
        for (const char *t : {"reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "movedim", "moveaxis",
                              "transpose", "swapaxes", "swapdims", "t", "contiguous"})
            anchors.push_back({OpKind::CallMethod, t});
        benefit = 35;
        labels = {"vertical"};
        description = "a chain of reshapes and permutes of x (any of reshape/view/flatten/unflatten/squeeze/unsqueeze/"
                      "permute/movedim/transpose) -> reshape(x, s) or permute(reshape(x, s), p)";
    }
    struct Plan {
        Node *x = nullptr;
        std::vector<Node *> chain; ///< from x's user to the anchor
        std::vector<int64_t> shape; ///< reshape target
        std::vector<int64_t> perm;  ///< empty: no permute
    };
    bool plan(Node *n, Plan &p, MatchFailure &why) const
    {
        if (!isChainOp(n))
            return fail(why, n, "op", "a reshape or permute with static shapes", n->target());
        if (n->users().size() == 1 && isChainOp(n->users()[0]))
            return fail(why, n, "chain end", "the last reshape/permute of the chain", "its user " + n->users()[0]->name());
        p.chain = {n};
        Node *cur = firstInput(n);
        while (cur && cur->users().size() == 1 && isChainOp(cur)) {
            p.chain.push_back(cur);
            cur = firstInput(cur);
        }
        std::reverse(p.chain.begin(), p.chain.end());
        p.x = cur;
        auto xs = cur ? staticShape(cur) : std::nullopt;
        if (!xs || p.chain.size() < 2)
            return fail(why, n, "chain", "two or more reshapes/permutes in a row", std::to_string(p.chain.size()));
        Layout l{*xs, contiguousStrides(*xs)};
        for (size_t k = 0; k < p.chain.size(); ++k) {
            Node *c = p.chain[k];
            auto out = *staticShape(c);
            if (isReshapeLike(c)) {
                auto st = viewStrides(l, out);
                if (!st) {
                    // A reshape that copies: what follows it is a view chain of its fresh result.
                    if (p.chain.size() - k - 1 < 2)
                        return fail(why, c, "reshape", "a view of the chain so far", "a copy");
                    p.x = c;
                    p.chain.erase(p.chain.begin(), p.chain.begin() + std::ptrdiff_t(k) + 1);
                    xs = out;
                    l = {out, contiguousStrides(out)};
                    k = size_t(-1);
                    continue;
                }
                l = {out, *st};
            } else {
                auto perm = *permutationOf(c, int(l.sizes.size()));
                Layout m;
                for (auto d : perm) {
                    m.sizes.push_back(l.sizes[size_t(d)]);
                    m.strides.push_back(l.strides[size_t(d)]);
                }
                l = m;
            }
        }
        // Order the dims by stride (size-1 dims keep their place among equals at the end); the chain is
        // reshape(x, sizes in that order) permuted back when that order is contiguous.
        std::vector<int64_t> order(l.sizes.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            const bool ua = l.sizes[size_t(a)] == 1, ub = l.sizes[size_t(b)] == 1;
            if (ua != ub)
                return ub;
            return !ua && l.strides[size_t(a)] > l.strides[size_t(b)];
        });
        p.shape.clear();
        for (auto d : order)
            p.shape.push_back(l.sizes[size_t(d)]);
        auto want = contiguousStrides(p.shape);
        for (size_t i = 0; i < order.size(); ++i)
            if (p.shape[i] != 1 && l.strides[size_t(order[i])] != want[i])
                return fail(why, n, "chain", "one reshape and one permute of its input", "a strided view");
        p.perm.assign(order.size(), 0);
        bool identity = true;
        for (size_t i = 0; i < order.size(); ++i) {
            p.perm[size_t(order[i])] = int64_t(i);
            identity = identity && order[i] == int64_t(i);
        }
        if (identity)
            p.perm.clear();
        const size_t cost = (p.shape != *xs) + !p.perm.empty();
        if (cost >= p.chain.size())
            return fail(why, n, "node count", "fewer nodes than the chain's " + std::to_string(p.chain.size()), std::to_string(cost));
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Plan p;
        if (!plan(n, p, why))
            return false;
        m.nodes = p.chain;
        m.removes = {n};
        m.summary = std::to_string(p.chain.size()) + " reshapes/permutes of " + p.x->name() + " -> " +
                    (p.perm.empty() ? "one reshape" : "a reshape and a permute");
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Plan p;
        MatchFailure why;
        if (!plan(m.anchor, p, why))
            return;
        const bool aten = p.x->meta().val.isTensor() && isAten(m.anchor);
        std::vector<std::string> replaced;
        for (Node *c : p.chain)
            replaced.push_back(c->name());
        Emit e = emitAt(rw, m.anchor, m.anchor, aten, replaced);
        Node *y = e.reshape(p.x, p.shape);
        if (!p.perm.empty()) {
            ir::ValueMeta val = m.anchor->meta().val;
            const auto st = contiguousStrides(p.shape);
            val.tensor.stride.clear();
            for (auto d : p.perm)
                val.tensor.stride.push_back(st[size_t(d)]);
            y = e.call(aten ? "aten.permute.default" : "torch.permute", {Argument::node(y), Argument::list(intList(p.perm))}, {}, "permute",
                       val);
        } else if (y->meta().val.isTensor() && y != p.x) {
            y->meta().val.tensor.shape = m.anchor->meta().val.tensor.shape;
        }
        rw.replaceAllUsesWith(m.anchor, y);
        for (auto it = p.chain.rbegin(); it != p.chain.rend(); ++it)
            rw.eraseIfDead(*it);
    }
};

} // namespace

std::string registerViewChainPatterns(PatternRegistry &r) { return r.add(std::make_unique<FoldViewChain>()); }

} // namespace fxlens::patterns
