// SPDX-License-Identifier: MIT
// fold_view_chain: a chain of reshapes and permutations (reshape, view, flatten, unflatten, squeeze,
// unsqueeze, permute, movedim, transpose, t) collapsed to the shortest equivalent form: one reshape,
// or one reshape and one permute. The chain is simulated as a strided view of its input's row-major
// order (sizes and strides, as torch computes a view's strides); a chain that no single strided view
// can express (a reshape that would copy mid-chain) is left alone.
#include "PatternUtil.h"

#include "ir/Target.h"

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
        // aten.<op>.<overload>, torch.<op> and torch.Tensor.<op>; not torch.nn.functional.* etc.
        const ir::Target target = ir::Target::parse(t);
        if (!target.isAten() && target.ns != "torch" && target.ns != "torch.Tensor")
            return {};
        t = target.base();
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

/// The layout as permute(reshape(x, shape), perm) of x's row-major order (size-1 dims ordered last
/// among equals); false when no single reshape and permute give it. `perm` empty: no permute.
bool asReshapePermute(const Layout &l, std::vector<int64_t> &shape, std::vector<int64_t> &perm)
{
    std::vector<int64_t> order(l.sizes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const bool ua = l.sizes[size_t(a)] == 1, ub = l.sizes[size_t(b)] == 1;
        if (ua != ub)
            return ub;
        return !ua && l.strides[size_t(a)] > l.strides[size_t(b)];
    });
    shape.clear();
    for (auto d : order)
        shape.push_back(l.sizes[size_t(d)]);
    auto want = contiguousStrides(shape);
    for (size_t i = 0; i < order.size(); ++i)
        if (shape[i] != 1 && l.strides[size_t(order[i])] != want[i])
            return false;
    perm.assign(order.size(), 0);
    bool identity = true;
    for (size_t i = 0; i < order.size(); ++i) {
        perm[size_t(order[i])] = int64_t(i);
        identity = identity && order[i] == int64_t(i);
    }
    if (identity)
        perm.clear();
    return true;
}

/// Applies one reshape-like or permute-like node to a layout; false when a reshape would copy.
bool step(Layout &l, const Node *c)
{
    auto out = *staticShape(c);
    if (isReshapeLike(c)) {
        auto st = viewStrides(l, out);
        if (!st)
            return false;
        l = {out, *st};
        return true;
    }
    auto perm = permutationOf(c, int(l.sizes.size()));
    if (!perm)
        return false;
    Layout m;
    for (auto d : *perm) {
        m.sizes.push_back(l.sizes[size_t(d)]);
        m.strides.push_back(l.strides[size_t(d)]);
    }
    l = m;
    return true;
}

/// permute(reshape(x, shape), perm) (no permute for an empty perm), with the permuted strides in its meta.
Node *reshapePermute(Emit &e, Node *x, const std::vector<int64_t> &shape, const std::vector<int64_t> &perm)
{
    Node *y = e.reshape(x, shape);
    if (perm.empty())
        return y;
    std::vector<int64_t> outShape;
    outShape.reserve(perm.size());
    for (auto d : perm)
        outShape.push_back(shape[size_t(d)]);
    ir::ValueMeta val = tensorLike(x, outShape);
    const auto st = contiguousStrides(shape);
    val.tensor.stride.clear();
    for (auto d : perm)
        val.tensor.stride.push_back(st[size_t(d)]);
    return e.call(e.aten ? "aten.permute.default" : "torch.permute", {Argument::node(y), Argument::list(intList(perm))}, {}, "permute",
                  val);
}

class FoldViewChain : public Pattern {
public:
    FoldViewChain()
    {
        name = "fold_view_chain";
        for (const char *t : {"torch.reshape",        "torch.flatten",           "torch.unflatten",
                              "torch.squeeze",        "torch.unsqueeze",         "torch.permute",
                              "torch.movedim",        "torch.moveaxis",          "torch.transpose",
                              "torch.swapaxes",       "torch.swapdims",          "torch.t",
                              "aten.view.default",    "aten.reshape.default",    "aten._unsafe_view.default",
                              "aten.permute.default", "aten.transpose.int",      "aten.unsqueeze.default",
                              "aten.squeeze.dim",     "aten.squeeze.dims",       "aten.squeeze.default",
                              "aten.t.default",       "aten.flatten.using_ints", "aten.unflatten.int"})
            anchors.push_back({OpKind::CallFunction, t});
        for (const char *t : {"reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "movedim", "moveaxis",
                              "transpose", "swapaxes", "swapdims", "t", "contiguous"})
            anchors.push_back({OpKind::CallMethod, t});
        labels = {"vertical"};
        description = "a chain of reshapes and permutes of x (any of reshape/view/flatten/unflatten/squeeze/unsqueeze/"
                      "permute/movedim/transpose) -> reshape(x, s) or permute(reshape(x, s), p)";
    }
    struct Plan {
        Node *x = nullptr;
        std::vector<Node *> chain;  ///< from x's user to the anchor
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
        // The chain is reshape(x, sizes in stride order), permuted back, when that order is contiguous.
        if (!asReshapePermute(l, p.shape, p.perm))
            return fail(why, n, "chain", "one reshape and one permute of its input", "a strided view");
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
        Node *y = reshapePermute(e, p.x, p.shape, p.perm);
        rw.replaceAllUsesWith(m.anchor, y);
        for (auto it = p.chain.rbegin(); it != p.chain.rend(); ++it)
            rw.eraseIfDead(*it);
    }
};

/// split_view_chains: every piece of an equal split followed by the same chain of reshapes and
/// permutes (the heads view of fused Q/K/V projections: view(B, L, H, D).transpose(1, 2) per piece)
/// -> one reshape and permute of the split's input with the pieces on a new leading dim, and an
/// unbind. The pieces' results are strided views of the input with offsets k * w along the split dim,
/// so together they are one view with an extra dim of stride w; it is taken only where that view is
/// a reshape and a permute of the input.
class SplitViewChains : public Pattern {
public:
    SplitViewChains()
    {
        name = "split_view_chains";
        anchors = {{OpKind::CallFunction, "torch.split"},
                   {OpKind::CallMethod, "split"},
                   {OpKind::CallFunction, "torch.functional.split"},
                   {OpKind::CallFunction, "aten.split.Tensor"},
                   {OpKind::CallFunction, "aten.split_with_sizes.default"},
                   {OpKind::CallFunction, "torch.chunk"},
                   {OpKind::CallMethod, "chunk"}};
        labels = {"vertical"};
        description = "[c(s[i]) for s in split(x, w, d)] with one reshape/permute chain c -> unbind(permute(reshape(x, S), P), 0)";
    }
    struct Plan {
        SplitView split;
        std::vector<Node *> getitems;
        std::vector<std::vector<Node *>> chains; ///< per piece, from its first op to its last
        std::vector<int64_t> shape, perm;
    };
    bool plan(Node *n, Plan &p, MatchFailure &why) const
    {
        auto sv = asSplit(n, &why);
        if (!sv)
            return false;
        p.split = *sv;
        const size_t pieces = sv->sizes.size();
        auto xs = staticShape(sv->input);
        if (pieces < 2 || !xs || !equalSections(*sv))
            return fail(why, n, "split", "2 or more equal pieces of a static shape", "other");
        std::vector<std::vector<Node *>> byIndex;
        if (!getItemUsers(n, byIndex, pieces))
            return fail(why, n, "split users", "getitems only", "another user");
        p.getitems.clear();
        p.chains.assign(pieces, {});
        for (size_t i = 0; i < pieces; ++i) {
            if (byIndex[i].size() != 1 || byIndex[i][0]->users().size() != 1)
                return fail(why, n, "piece " + std::to_string(i), "one getitem with one user", "other");
            p.getitems.push_back(byIndex[i][0]);
        }
        // Each piece's chain of reshapes and permutes (each value used only by the next op), simulated
        // as a strided view of x; a reshape that would copy ends it.
        const int64_t d = sv->dim, w = sv->sizes[0];
        auto pieceShape = *xs;
        pieceShape[size_t(d)] = w;
        std::vector<std::vector<Layout>> layouts(pieces);
        for (size_t i = 0; i < pieces; ++i) {
            Layout l{pieceShape, contiguousStrides(*xs)};
            Node *prev = p.getitems[i];
            for (;;) {
                if (!p.chains[i].empty() && prev->users().size() != 1)
                    break;
                Node *u = prev->users().empty() ? nullptr : prev->users()[0];
                if (!u || !isChainOp(u) || firstInput(u) != prev || !step(l, u))
                    break;
                p.chains[i].push_back(u);
                layouts[i].push_back(l);
                prev = u;
            }
        }
        // The deepest layout every piece reaches (view(B, L, H, D) and reshape to the same shape are
        // one); each piece's chain ends there, what follows stays on its piece.
        auto same = [](const Layout &a, const Layout &b) {
            if (a.sizes != b.sizes)
                return false;
            for (size_t k = 0; k < a.sizes.size(); ++k)
                if (a.sizes[k] != 1 && a.strides[k] != b.strides[k])
                    return false;
            return true;
        };
        Layout l;
        bool found = false;
        std::vector<size_t> depth(pieces, 0);
        for (size_t j0 = layouts[0].size(); j0-- > 0 && !found;) {
            found = true;
            depth[0] = j0 + 1;
            for (size_t i = 1; i < pieces && found; ++i) {
                found = false;
                for (size_t j = 0; j < layouts[i].size() && !found; ++j)
                    if (same(layouts[i][j], layouts[0][j0])) {
                        depth[i] = j + 1;
                        found = true;
                    }
            }
            if (found)
                l = layouts[0][j0];
        }
        if (!found)
            return fail(why, n, "piece users", "reshapes or permutes that bring every piece to one layout", "none");
        size_t removed = 0;
        for (size_t i = 0; i < pieces; ++i) {
            p.chains[i].resize(depth[i]);
            removed += depth[i];
        }
        Layout all{l.sizes, l.strides};
        all.sizes.insert(all.sizes.begin(), int64_t(pieces));
        all.strides.insert(all.strides.begin(), w * contiguousStrides(*xs)[size_t(d)]);
        if (!asReshapePermute(all, p.shape, p.perm))
            return fail(why, n, "pieces", "one reshape and permute of the split's input", "a strided view");
        const size_t before = 1 + pieces + removed;
        const size_t after = (p.shape != *xs) + !p.perm.empty() + 1 + pieces;
        if (after >= before)
            return fail(why, n, "node count", "fewer nodes", std::to_string(after) + " against " + std::to_string(before));
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Plan p;
        if (!plan(n, p, why))
            return false;
        m.nodes = {n};
        for (size_t i = 0; i < p.getitems.size(); ++i) {
            m.nodes.push_back(p.getitems[i]);
            m.nodes.insert(m.nodes.end(), p.chains[i].begin(), p.chains[i].end());
        }
        m.removes = {n};
        m.summary = std::to_string(p.getitems.size()) + " pieces of " + n->name() + " viewed alike -> one view of " +
            p.split.input->name() + " and an unbind";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Plan p;
        MatchFailure why;
        if (!plan(m.anchor, p, why))
            return;
        const bool aten = p.split.aten;
        Emit e = emitAt(rw, m.anchor, m.anchor, aten, {m.anchor->name()});
        Node *y = reshapePermute(e, p.split.input, p.shape, p.perm);
        ir::ValueMeta seq;
        seq.kind = ir::ValueMeta::Kind::Sequence;
        for (const auto &c : p.chains)
            seq.items.push_back(c.back()->meta().val);
        Node *u = e.call(aten ? "aten.unbind.int" : "torch.unbind", {Argument::node(y), Argument::integer(0)}, {}, "unbind", seq);
        for (size_t i = 0; i < p.chains.size(); ++i) {
            Node *last = p.chains[i].back();
            Node *g = e.call("operator.getitem", {Argument::node(u), Argument::integer(int64_t(i))}, {}, "getitem", last->meta().val);
            rw.replaceAllUsesWith(last, g);
        }
        for (size_t i = 0; i < p.chains.size(); ++i) {
            for (auto it = p.chains[i].rbegin(); it != p.chains[i].rend(); ++it)
                rw.eraseIfDead(*it);
            rw.eraseIfDead(p.getitems[i]);
        }
        rw.eraseIfDead(m.anchor);
    }
};

} // namespace

void registerViewChainPatterns(Registrar &r)
{
    r.add(std::make_unique<FoldViewChain>());
    r.add(std::make_unique<SplitViewChains>());
}

} // namespace fxlens::patterns
