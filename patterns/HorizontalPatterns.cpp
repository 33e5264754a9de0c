// SPDX-License-Identifier: MIT
// Horizontal fusion (catalog §1.5, §2.C): N identical, independent ops become one op on stacked
// operands, followed by an unbind; the vertical patterns then remove the stack/unbind detours.
//
// Independence without a search: nodes at the same longest-path depth from the graph's inputs never
// depend on each other (every edge increases depth by at least one), so candidates are grouped by
// (fusion key, depth) in one O(V + E) pass per graph version, instead of Inductor's depth-5 backwards
// BFS from every node plus a dependency DFS per candidate.
#include "PatternUtil.h"

#include "rewrite/Mutation.h"
#include "rewrite/Schema.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_set>

namespace fxlens::patterns {

namespace {

constexpr size_t kMinGroup = 5; // Inductor's min_fuse_set_size; no upper cap (see docs/DESIGN.md)

/// Longest-path depth of every node, cached per (engine, graph version).
const std::vector<uint32_t> &depths(const MatchContext *ctx, const Graph &g)
{
    // Edit counts come from one clock shared by all sessions: equal count, same graph version.
    thread_local uint64_t cachedEdits = ~uint64_t(0);
    thread_local std::vector<uint32_t> d;
    if (ctx && ctx->editCount() == cachedEdits && d.size() >= g.idBound())
        return d;
    d.assign(g.idBound(), 0);
    for (Node *n = g.first(); n; n = n->next()) {
        uint32_t m = 0;
        for (Node *in : n->inputNodes())
            m = std::max(m, d[in->id()] + 1);
        d[n->id()] = m;
    }
    cachedEdits = ctx ? ctx->editCount() : ~uint64_t(0);
    return d;
}

bool mutatedInPlace(const Node *n)
{
    for (const Node *u : n->users())
        if (mutatesInput(u))
            return true;
    return false;
}

std::string shapeKey(const Node *n)
{
    if (!n || !n->meta().val.isTensor())
        return "?";
    return n->meta().val.tensor.toString();
}

enum class Kind { Unary, Binary, LayerNorm, Linear };

/// One member of a group: the node and its tensor operands in kind order.
struct Member {
    Node *node = nullptr;
    std::vector<Node *> operands; // Unary: x; Binary: a, b; LayerNorm: x, w?, b?; Linear: x, W (or Wt), bias?
    Node *weightT = nullptr;      // ATen linear: the permute(W) node, when the weight is read through one
};

/// What one batching rewrite works on: the members, where new nodes go, and their names.
struct Batch {
    const std::vector<Member> &members;
    Emit &e;
    Rewriter &rw;
    Node *before;
    Node *n0;
    const std::vector<std::string> &replaced;
    int64_t N;
    /// Operand `k` of every member.
    std::vector<Node *> column(size_t k) const
    {
        std::vector<Node *> v;
        for (const auto &mm : members)
            v.push_back(mm.operands[k]);
        return v;
    }
    /// `like`'s shape with the member dim in front.
    std::vector<int64_t> outShape(const Node *like) const
    {
        auto s = *staticShape(like);
        s.insert(s.begin(), N);
        return s;
    }
};

class BatchFusion : public Pattern {
public:
    Kind kind;
    bool aten;
    BatchFusion(Kind k, bool isAten, std::string n, std::vector<AnchorKey> a, std::string desc) : kind(k), aten(isAten)
    {
        name = std::move(n);
        level = aten ? IrLevel::Aten : IrLevel::Torch;
        anchors = std::move(a);
        phase = 1;
        labels = {"horizontal"};
        description = std::move(desc);
    }

    /// Reads a candidate: its operands and fusion key; false with a reason.
    bool member(Node *n, Member &m, std::string &key, MatchFailure &why) const
    {
        m.node = n;
        const OpSchema *s = schemaFor(n->op(), n->target());
        std::vector<Argument> in;
        if (s) {
            std::string err;
            if (!normalizedArgs(n, *s, in, &err))
                return fail(why, n, "arguments", "a call that fits its schema", err);
        } else {
            in = n->args();
        }
        if (mutatedInPlace(n))
            return fail(why, n, "users", "no in-place use (batching would be unsafe)", "an in-place op");
        if (n->users().empty())
            return fail(why, n, "users", "a used value (dead members are never batched)", "none");
        auto tensor = [&](size_t i) -> Node * { return i < in.size() && in[i].isNode() ? in[i].toNode() : nullptr; };
        key = n->target() + "|" + std::to_string(int(n->op()));
        switch (kind) {
        case Kind::Unary: {
            Node *x = tensor(0);
            if (!x || !staticShape(x))
                return fail(why, n, "input", "a tensor with static shape", "other");
            m.operands = {x};
            key += "|" + shapeKey(x);
            for (size_t i = 1; i < in.size(); ++i)
                key += "|" + in[i].toString();
            for (const auto &kv : n->kwargs())
                if (kv.first != "input")
                    key += "|" + kv.first + "=" + kv.second.toString();
            return true;
        }
        case Kind::Binary: {
            Node *a = tensor(0), *b = tensor(1);
            if (!a || !b || !staticShape(a) || staticShape(a) != staticShape(b))
                return fail(why, n, "operands", "two tensors of one static shape", "a scalar or other shapes");
            m.operands = {a, b};
            key += "|" + shapeKey(a) + "|" + shapeKey(b);
            for (size_t i = 2; i < in.size(); ++i)
                key += "|" + in[i].toString();
            return true;
        }
        case Kind::LayerNorm: {
            Node *x = tensor(0), *w = tensor(2), *b = tensor(3);
            if (!s || in.size() < 5)
                return fail(why, n, "layer_norm", "a call with a known schema", n->target());
            if (!x || !staticShape(x) || !in[1].isSequence())
                return fail(why, n, "input", "a tensor with static shape and a normalized_shape", "other");
            if (aten)
                for (Node *u : n->users())
                    if (getItemIndex(u) != 0)
                        return fail(why, u, "users", "only getitem 0 (the normalized output)", u->target());
            m.operands = {x, w, b};
            key += "|" + shapeKey(x) + "|" + in[1].toString() + "|" + in[4].toString() + "|" + shapeKey(w) + "|" + shapeKey(b);
            return true;
        }
        case Kind::Linear: {
            if (!aten) {
                Node *x = tensor(0), *w = tensor(1), *b = tensor(2);
                if (!x || !w || rankOf(x) < 2 || rankOf(w) != 2 || !staticShape(x))
                    return fail(why, n, "linear", "an input of rank >= 2 with static shape and a 2-D weight", "other ranks");
                m.operands = {x, w, b};
                key += "|" + shapeKey(x) + "|" + shapeKey(w) + "|" + shapeKey(b);
                return true;
            }
            bool addmm = n->target() == "aten.addmm.default";
            Node *b = addmm ? tensor(0) : nullptr, *x = tensor(addmm ? 1 : 0), *wt = tensor(addmm ? 2 : 1);
            if (addmm && (in.size() < 5 || !in[3].isInt() || in[3].toInt() != 1 || !in[4].isInt() || in[4].toInt() != 1))
                return fail(why, n, "addmm", "beta = alpha = 1", "other");
            if (!x || !wt || rankOf(x) != 2 || rankOf(wt) != 2 || (addmm && (!b || rankOf(b) != 1)))
                return fail(why, n, "mm operands", "2-D input and weight, 1-D bias", "other");
            m.operands = {x, wt, b};
            key += "|" + shapeKey(x) + "|" + shapeKey(wt) + "|" + shapeKey(b);
            return true;
        }
        }
        return false;
    }

    struct Group {
        std::vector<Member> members;
        std::string failure;
    };
    /// Groups of candidates by (key, depth), built once per graph version (and thread: perThread).
    struct Groups {
        uint64_t edits = ~uint64_t(0);
        std::map<std::pair<std::string, uint32_t>, std::vector<Node *>> byKey;
    };

    const std::vector<Node *> &groupOf(Node *anchor, const std::string &key, const MatchContext *ctx) const
    {
        static const std::vector<Node *> none;
        const auto &d = depths(ctx, *anchor->graph());
        if (!ctx)
            return none;
        Groups &groups = perThread<Groups>(this);
        if (ctx->editCount() != groups.edits) {
            groups.byKey.clear();
            for (const auto &k : anchors)
                for (Node *c : ctx->nodesWithKey(k)) {
                    Member mm;
                    std::string ck;
                    MatchFailure w;
                    if (member(c, mm, ck, w))
                        groups.byKey[{ck, d[c->id()]}].push_back(c);
                }
            groups.edits = ctx->editCount();
        }
        auto it = groups.byKey.find({key, d[anchor->id()]});
        return it == groups.byKey.end() ? none : it->second;
    }

    bool collect(Node *anchor, const MatchContext *ctx, std::vector<Member> &out, Node *&before, std::vector<Node *> &toMove,
                 MatchFailure &why) const
    {
        Member m0;
        std::string key;
        if (!member(anchor, m0, key, why))
            return false;
        if (!ctx)
            return fail(why, anchor, "engine", "a session (the anchor index)", "none");
        std::vector<Node *> group = groupOf(anchor, key, ctx);
        Graph &g = *anchor->graph();
        std::sort(group.begin(), group.end(), [&](Node *a, Node *b) { return g.before(a, b); });
        if (group.size() < kMinGroup)
            return fail(why, anchor, "group", std::to_string(kMinGroup) + " or more independent " + anchor->target() + " of one shape",
                        std::to_string(group.size()));
        for (Node *n : group) {
            Member mm;
            std::string k;
            member(n, mm, k, why);
            out.push_back(mm);
        }
        // Linears that all read one input are batch_linear_lhs' case: one matmul against the
        // concatenated weights, without stacking copies of the input.
        auto source = [](Node *x) { return isViewLike(x) && firstInput(x) ? firstInput(x) : x; };
        if (kind == Kind::Linear &&
            std::all_of(out.begin(), out.end(), [&](const Member &mm) { return source(mm.operands[0]) == source(out[0].operands[0]); }))
            return fail(why, anchor, "inputs", "linears on two or more inputs (one input: batch_linear_lhs)", out[0].operands[0]->name());
        // The fused op goes before the first member. Operands defined after it (a block's own weight
        // view, say) move up with everything they read from there on: they sit at a smaller depth than
        // the members, so no member and no member's user is among them.
        Node *first = group.front();
        before = first;
        std::vector<Node *> operands;
        for (const auto &mm : out)
            operands.insert(operands.end(), mm.operands.begin(), mm.operands.end());
        Node *blocker = nullptr;
        auto moved = hoistBefore(first, operands, {}, blocker);
        if (!moved)
            return fail(why, blocker, "placement", "operands defined before the group's first member", "a graph input after it");
        toMove = std::move(*moved);
        return true;
    }

    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        std::vector<Member> members;
        Node *before = nullptr;
        std::vector<Node *> toMove;
        if (!collect(n, m.context, members, before, toMove, why))
            return false;
        for (const auto &mm : members)
            m.nodes.push_back(mm.node);
        m.removes = m.nodes;
        m.summary = "batch " + std::to_string(members.size()) + " × " + n->target() + " into one";
        return true;
    }

    Node *stack(Emit &e, const std::vector<Node *> &xs, const std::string &nm) const
    {
        auto shape = *staticShape(xs[0]);
        shape.insert(shape.begin(), int64_t(xs.size()));
        return e.call(aten ? "aten.stack.default" : "torch.stack", {Argument::list(nodeList(xs)), Argument::integer(0)}, {}, nm,
                      tensorLike(xs[0], shape));
    }

    /// Unary and binary members: the member's own call on stacked operands (same kwargs, target).
    Node *batchElementwise(Batch &c) const
    {
        const std::vector<Member> &members = c.members;
        Emit &e = c.e;
        Node *n0 = c.n0;
        const int64_t N = c.N;
        auto column = [&](size_t k) { return c.column(k); };
        (void)N;
        Rewriter &rw = c.rw;
        Node *before = c.before;
        const std::vector<std::string> &replaced = c.replaced;
        auto outShape = [&](const Node *like) { return c.outShape(like); };
        std::vector<Node *> stacks;
        for (size_t k = 0; k < members[0].operands.size(); ++k)
            stacks.push_back(stack(e, column(k), "stack"));
        // The member's own call with stacked operands (same kwargs, same target).
        auto args = n0->args();
        auto kwargs = n0->kwargs();
        size_t next = 0;
        for (auto &a : args)
            if (a.isNode() && next < stacks.size() && a.toNode() == members[0].operands[next])
                a = Argument::node(stacks[next++]);
        for (auto &kv : kwargs)
            if (kv.second.isNode() && next < stacks.size() && kv.second.toNode() == members[0].operands[next])
                kv.second = Argument::node(stacks[next++]);
        Node *batched = rw.create(n0->op(), n0->target(), args, kwargs, n0->op() == OpKind::CallMethod ? n0->target() : "batched", before,
                                  n0, replaced);
        batched->meta().val = tensorLike(n0, outShape(n0));
        return batched;
    }

    /// Layer norms: one norm over the members stacked before the normalized dims, then the stacked
    /// affine weights; `unbindDim` and `memberOut` say how to take the result apart.
    Node *batchLayerNorm(Batch &c, int64_t &unbindDim, const Node *&memberOut) const
    {
        const std::vector<Member> &members = c.members;
        Emit &e = c.e;
        Node *n0 = c.n0;
        const int64_t N = c.N;
        auto column = [&](size_t k) { return c.column(k); };
        (void)N;
        Node *y = nullptr;
        std::vector<Argument> in;
        const OpSchema *sch = schemaFor(n0->op(), n0->target());
        if (!sch || !normalizedArgs(n0, *sch, in) || in.size() < 5)
            return nullptr; // member() accepted it, so this does not happen
        const Node *x0 = members[0].operands[0];
        // Stacked just before the normalized dims ([*batch, N, *normalized]), so that the stacked
        // weights [N, *normalized] broadcast as they are: no reshape nodes.
        const size_t rank = staticShape(x0)->size(), k = in[1].items().size();
        unbindDim = int64_t(rank - k);
        auto st = *staticShape(x0);
        st.insert(st.begin() + unbindDim, N);
        Node *X = e.call(aten ? "aten.stack.default" : "torch.stack", {Argument::list(nodeList(column(0))), Argument::integer(unbindDim)},
                         {}, "stack", tensorLike(x0, st));
        Node *ln;
        if (aten) {
            Node *t = e.call("aten.native_layer_norm.default", {Argument::node(X), in[1], Argument::none(), Argument::none(), in[4]}, {},
                             "native_layer_norm", ir::ValueMeta());
            t->meta().val.kind = ir::ValueMeta::Kind::Sequence;
            std::vector<int64_t> stats = st;
            for (size_t i = size_t(unbindDim) + 1; i < stats.size(); ++i)
                stats[i] = 1;
            t->meta().val.items = {tensorLike(x0, st), tensorLike(x0, stats), tensorLike(x0, stats)};
            ln = e.call("operator.getitem", {Argument::node(t), Argument::integer(0)}, {}, "getitem", tensorLike(x0, st));
            memberOut = x0;
        } else {
            ln = e.call(n0->target(), {Argument::node(X), in[1], Argument::none(), Argument::none(), in[4]}, {}, "layer_norm",
                        tensorLike(x0, st));
        }
        auto affine = [&](size_t col, const char *op) {
            if (!members[0].operands[col])
                return;
            Node *W = stack(e, column(col), "stack"); // [N, *normalized]
            ln = e.call(aten ? std::string("aten.") + op + ".Tensor" : std::string("torch.") + op, {Argument::node(ln), Argument::node(W)},
                        {}, op, tensorLike(x0, st));
        };
        affine(1, "mul");
        affine(2, "add");
        y = ln;
        return y;
    }

    /// Linears: one (b)addbmm over stacked inputs and weights ([N, rows, K] x [N, K, M]).
    Node *batchLinear(Batch &c) const
    {
        const std::vector<Member> &members = c.members;
        Emit &e = c.e;
        Node *n0 = c.n0;
        const int64_t N = c.N;
        auto column = [&](size_t k) { return c.column(k); };
        (void)N;
        Node *y = nullptr;
        Node *X = stack(e, column(0), "stack");
        const Node *x0 = members[0].operands[0];
        // Inputs of rank > 2 ([B, T, K]: every transformer) go through bmm as [N, B*T, K].
        const auto xShape = *staticShape(x0);
        const int64_t rows = std::accumulate(xShape.begin(), xShape.end() - 1, int64_t(1), std::multiplies<int64_t>());
        if (xShape.size() > 2)
            X = e.reshape(X, {N, rows, xShape.back()});
        Node *Wt;
        auto mOut = *staticShape(n0);
        if (!aten) {
            Node *W = stack(e, column(1), "stack"); // [N, M, K]
            auto s = *staticShape(W);
            Wt = e.call("torch.transpose", {Argument::node(W), Argument::integer(1), Argument::integer(2)}, {}, "transpose",
                        tensorLike(W, {s[0], s[2], s[1]}));
        } else {
            // Read through permute(W, [1, 0]) so that the N permutes die: one permute of the stack.
            bool allPermuted = true;
            std::vector<Node *> ws;
            for (const auto &mm : members) {
                Node *p = mm.operands[1];
                const Argument *dims = p->arg(1, "dims");
                bool perm = p->is(OpKind::CallFunction, "aten.permute.default") && p->users().size() == 1 && dims && dims->isSequence() &&
                    dims->items().size() == 2 && dims->items()[0].toInt() == 1;
                allPermuted = allPermuted && perm && p->arg(0, "self") && p->arg(0, "self")->isNode();
                ws.push_back(perm ? p->arg(0, "self")->toNode() : nullptr);
            }
            if (allPermuted) {
                Node *W = stack(e, ws, "stack");
                auto s = *staticShape(W);
                Wt = e.call("aten.permute.default", {Argument::node(W), Argument::list(intList({0, 2, 1}))}, {}, "permute",
                            tensorLike(W, {s[0], s[2], s[1]}));
            } else {
                Wt = stack(e, column(1), "stack");
            }
        }
        mOut.insert(mOut.begin(), N);
        const std::vector<int64_t> flat = {N, rows, mOut.back()};
        if (members[0].operands[2]) {
            Node *Bs = stack(e, column(2), "stack"); // [N, M]
            Node *Bu = e.unsqueeze(Bs, 1);
            y = e.call(aten ? "aten.baddbmm.default" : "torch.baddbmm", {Argument::node(Bu), Argument::node(X), Argument::node(Wt)}, {},
                       "baddbmm", tensorLike(x0, flat));
        } else {
            y = e.call(aten ? "aten.bmm.default" : "torch.bmm", {Argument::node(X), Argument::node(Wt)}, {}, "bmm", tensorLike(x0, flat));
        }
        y = e.reshape(y, mOut);
        return y;
    }

    /// Unbinds `y` into the members' values and replaces each member by its piece.
    void unbindInto(Batch &c, Node *y, int64_t unbindDim, const Node *memberOut) const
    {
        const std::vector<Member> &members = c.members;
        Emit &e = c.e;
        Rewriter &rw = c.rw;
        const int64_t N = c.N;
        // Unbind into the members' values.
        Node *u = e.call(aten ? "aten.unbind.int" : "torch.unbind", {Argument::node(y), Argument::integer(unbindDim)}, {}, "unbind",
                         ir::ValueMeta());
        u->meta().val.kind = ir::ValueMeta::Kind::Sequence;
        for (int64_t i = 0; i < N; ++i)
            u->meta().val.items.push_back(tensorLike(memberOut, *staticShape(memberOut)));
        // All new nodes first: `before` may be a member, erased below.
        std::vector<Node *> pieces;
        for (int64_t i = 0; i < N; ++i) {
            e.replaced = {members[size_t(i)].node->name()}; // each piece stands for one member
            pieces.push_back(
                e.call("operator.getitem", {Argument::node(u), Argument::integer(i)}, {}, "getitem", u->meta().val.items[size_t(i)]));
        }
        std::vector<std::pair<Node *, Node *>> replace;
        for (int64_t i = 0; i < N; ++i) {
            Node *old = members[size_t(i)].node;
            if (kind == Kind::LayerNorm && aten)
                for (Node *gi : old->users())
                    replace.emplace_back(gi, pieces[size_t(i)]);
            else
                replace.emplace_back(old, pieces[size_t(i)]);
        }
        rw.replaceAllUsesWith(replace);
        for (const auto &[old, piece] : replace)
            rw.eraseIfDead(old);
        for (const auto &mm : members)
            rw.eraseIfDead(mm.node);
    }

    void rewrite(const Match &m, Rewriter &rw) const override
    {
        std::vector<Member> members;
        Node *before = nullptr;
        std::vector<Node *> toMove;
        MatchFailure why;
        if (!collect(m.anchor, m.context, members, before, toMove, why))
            return;
        for (Node *x : toMove)
            rw.moveBefore(x, before);
        Node *n0 = members[0].node;
        std::vector<std::string> replaced;
        replaced.reserve(members.size());
        for (const auto &mm : members)
            replaced.push_back(mm.node->name());
        Emit e = emitAt(rw, before, n0, aten, replaced);
        Batch c{members, e, rw, before, n0, replaced, int64_t(members.size())};
        Node *y = nullptr;
        int64_t unbindDim = 0;      // where the members are stacked in y
        const Node *memberOut = n0; // what each unbind piece stands for
        switch (kind) {
        case Kind::Unary:
        case Kind::Binary: y = batchElementwise(c); break;
        case Kind::LayerNorm: y = batchLayerNorm(c, unbindDim, memberOut); break;
        case Kind::Linear: y = batchLinear(c); break;
        }
        if (y)
            unbindInto(c, y, unbindDim, memberOut);
    }
};

} // namespace

void registerHorizontalPatterns(Registrar &r)
{
    auto add = [&](std::unique_ptr<Pattern> p) { r.add(std::move(p)); };
    using K = Kind;
    auto fn = [](std::initializer_list<const char *> ts) {
        std::vector<AnchorKey> v;
        for (const char *t : ts)
            v.push_back({std::string(t).rfind("method:", 0) == 0 ? OpKind::CallMethod : OpKind::CallFunction,
                         std::string(t).rfind("method:", 0) == 0 ? std::string(t).substr(7) : std::string(t)});
        return v;
    };
    add(std::make_unique<BatchFusion>(
        K::Linear, false, "batch_linear", fn({"torch.nn.functional.linear"}),
        "N × linear(x_i, W_i, b_i) -> baddbmm(stack(b)[:, None], stack(x), stack(W).transpose(1, 2)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::LayerNorm, false, "batch_layernorm", fn({"torch.nn.functional.layer_norm"}),
                                      "N × layer_norm(x_i, shape, w_i, b_i, eps) -> layer_norm(stack(x)) * stack(w) + stack(b) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_tanh", fn({"torch.tanh", "method:tanh"}),
                                      "N × tanh(x_i) -> tanh(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_sigmoid", fn({"torch.sigmoid", "method:sigmoid"}),
                                      "N × sigmoid(x_i) -> sigmoid(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_relu", fn({"torch.relu", "torch.nn.functional.relu", "method:relu"}),
                                      "N × relu(x_i) -> relu(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_detach", fn({"torch.detach", "method:detach"}),
                                      "N × detach(x_i) -> detach(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_nan_to_num", fn({"torch.nan_to_num", "method:nan_to_num"}),
                                      "N × nan_to_num(x_i, same kwargs) -> nan_to_num(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_clamp", fn({"torch.clamp", "method:clamp"}),
                                      "N × clamp(x_i, same bounds) -> clamp(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(K::Unary, false, "batch_dropout", fn({"torch.nn.functional.dropout"}),
                                      "N × dropout(x_i, same p/training) -> dropout(stack(x)) -> unbind"));
    add(std::make_unique<BatchFusion>(
        K::Binary, false, "batch_add", fn({"operator.add", "torch.add"}),
        "N × (a_i + b_i), equal shapes -> stack(a) + stack(b) -> unbind (Torch IR; Optimus only batches ATen adds)"));
    add(std::make_unique<BatchFusion>(K::Binary, false, "batch_mul", fn({"operator.mul", "torch.mul"}),
                                      "N × (a_i * b_i), equal shapes -> stack(a) * stack(b) -> unbind (Torch IR)"));
    add(std::make_unique<BatchFusion>(
        K::Linear, true, "batch_linear_post_grad", fn({"aten.addmm.default", "aten.mm.default"}),
        "N × addmm(b_i, x_i, W_i^T) -> baddbmm(stack(b)[:, None], stack(x), stack(W).permute(0, 2, 1)) -> unbind"));
    add(std::make_unique<BatchFusion>(
        K::LayerNorm, true, "batch_layernorm_aten", fn({"aten.native_layer_norm.default"}),
        "N × native_layer_norm(x_i, shape, w_i, b_i, eps)[0] -> native_layer_norm(stack(x))[0] * stack(w) + stack(b)"));
    add(std::make_unique<BatchFusion>(K::Unary, true, "batch_aten_tanh", fn({"aten.tanh.default"}), "N × aten.tanh -> one on stack(x)"));
    add(std::make_unique<BatchFusion>(K::Unary, true, "batch_aten_sigmoid", fn({"aten.sigmoid.default"}),
                                      "N × aten.sigmoid -> one on stack(x)"));
    add(std::make_unique<BatchFusion>(K::Unary, true, "batch_aten_relu", fn({"aten.relu.default"}), "N × aten.relu -> one on stack(x)"));
    add(std::make_unique<BatchFusion>(K::Binary, true, "batch_aten_add", fn({"aten.add.Tensor"}),
                                      "N × aten.add(a_i, b_i) -> one on stacks"));
    add(std::make_unique<BatchFusion>(K::Binary, true, "batch_aten_sub", fn({"aten.sub.Tensor"}),
                                      "N × aten.sub(a_i, b_i) -> one on stacks"));
    add(std::make_unique<BatchFusion>(K::Binary, true, "batch_aten_mul", fn({"aten.mul.Tensor"}),
                                      "N × aten.mul(a_i, b_i) -> one on stacks"));
    add(std::make_unique<BatchFusion>(K::Binary, true, "batch_aten_div", fn({"aten.div.Tensor"}),
                                      "N × aten.div(a_i, b_i) -> one on stacks"));
}

} // namespace fxlens::patterns
