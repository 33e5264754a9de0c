// SPDX-License-Identifier: MIT
// Stack / unbind patterns (catalog §2.B): stack of an unbind and back, unbind -> cat views, split ->
// stack regrouping, and moving a reshape out of a split -> stack.
#include "PatternUtil.h"

#include <algorithm>
#include <numeric>

namespace fxlens::patterns {

namespace {

/// stack_unbind: u = unbind(stack(ts, d), d); u[i] -> ts[i]. Any subset of u's items may be used.
class StackUnbind : public Pattern {
public:
    StackUnbind()
    {
        name = "stack_unbind";
        anchors = {{OpKind::CallFunction, "torch.unbind"}, {OpKind::CallMethod, "unbind"}, {OpKind::CallFunction, "aten.unbind.int"}};
        labels = {"vertical"};
        description = "u = unbind(stack([t0..tn], d), d); y = u[i] -> y = ti";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Node *st = firstInput(n);
        if (!st)
            return fail(why, n, "unbind input", "a node", "none");
        auto sv = asStack(st, why);
        if (!sv)
            return false;
        const Argument *d = n->arg(1, "dim");
        if (d && !d->isInt())
            return fail(why, n, "unbind dim", "an int", d->toString());
        auto du = normalizeDim(d ? d->toInt() : 0, rankOf(st));
        if (!du || *du != sv->dim)
            return fail(why, n, "unbind dim", "the stack dim " + std::to_string(sv->dim), d ? d->toString() : "0");
        std::vector<std::vector<Node *>> items;
        if (!getItemUsers(n, items, sv->inputs.size()))
            return fail(why, n, "unbind users", "only int getitems", "another user");
        m.nodes = {n, st};
        m.removes = {n};
        m.summary = "replace getitems of " + n->name() + " by the inputs of " + st->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        MatchFailure why;
        Node *st = firstInput(m.anchor);
        auto sv = *asStack(st, why);
        std::vector<std::vector<Node *>> items;
        getItemUsers(m.anchor, items, sv.inputs.size());
        for (size_t i = 0; i < items.size(); ++i)
            for (Node *g : items[i])
                rw.replaceAllUsesWith(g, sv.inputs[i]);
        for (auto &v : items)
            for (Node *g : v)
                rw.eraseIfDead(g);
        rw.eraseIfDead(m.anchor);
    }
};

/// #17 unbind_stack (full run) and #24 unbind_stack_to_slices (a consecutive sub-range):
/// stack(u[i..j], e) with u = unbind(x, d) -> movedim(narrow(x, d, i, j-i+1), d, e).
class UnbindStack : public Pattern {
public:
    bool full;
    UnbindStack(bool wantFull) : full(wantFull)
    {
        name = full ? "unbind_stack" : "unbind_stack_to_slices";
        anchors = kStackKeys;
        labels = {"vertical"};
        description = full ? "u = unbind(x, d); y = stack([u[0], ..., u[n-1]], e) -> y = movedim(x, d, e)"
                           : "u = unbind(x, d); y = stack([u[i], ..., u[j]], e) -> y = movedim(narrow(x, d, i, j-i+1), d, e)";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto sv = asStack(n, why);
        if (!sv)
            return false;
        auto runs = unbindRuns(sv->inputs);
        if (runs.size() != 1 || runs[0].len != sv->inputs.size())
            return fail(why, n, "stack inputs", "consecutive outputs of one unbind", std::to_string(runs.size()) + " run(s)");
        const UnbindRun &r = runs[0];
        if (full != r.full())
            return fail(why, n, "stack inputs", full ? "every output of the unbind" : "a strict sub-range of the unbind's outputs",
                        full ? "a sub-range" : "all outputs");
        if (!full && r.len < 2)
            return fail(why, n, "stack inputs", ">= 2 outputs", "1");
        m.nodes = {n};
        m.nodes.insert(m.nodes.end(), sv->inputs.begin(), sv->inputs.end());
        m.removes = {n};
        m.summary =
            "replace " + n->name() + " by movedim(" + r.src->name() + ", " + std::to_string(r.dim) + ", " + std::to_string(sv->dim) + ")";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        MatchFailure why;
        auto sv = *asStack(m.anchor, why);
        auto r = unbindRuns(sv.inputs)[0];
        Emit e = emitAt(rw, m.anchor, m.anchor, isAten(m.anchor), {m.anchor->name()});
        Node *t = e.narrow(r.src, r.dim, r.firstIndex, int64_t(r.len));
        Node *y = e.movedim(t, r.dim, sv.dim);
        rw.replaceAllUsesWith(m.anchor, y);
        rw.eraseIfDead(m.anchor);
    }
};

/// #20 merge_stack_tanh_unbind: u = unbind(tanh(stack(s[i..j], k)), k) -> tanh of one slice of x,
/// split back into the pieces. Negative dims are normalized first (pytorch #121227); an unbind is
/// required (#121185 crashed without one).
class MergeStackTanhUnbind : public Pattern {
public:
    MergeStackTanhUnbind()
    {
        name = "merge_stack_tanh_unbind";
        level = IrLevel::Torch;
        anchors = {{OpKind::CallFunction, "torch.unbind"}, {OpKind::CallMethod, "unbind"}};
        labels = {"vertical"};
        description = "t = tanh(stack([s[i..j]], k)); u = unbind(t, k) -> t = tanh(narrow(x, d, off, w)); u = split(t, sizes, d)";
    }
    struct Parts {
        Node *tanh, *stack;
        StackView sv;
        PieceRun run;
    };
    bool parts(Node *n, Parts &p, MatchFailure &why) const
    {
        p.tanh = firstInput(n);
        if (!p.tanh)
            return fail(why, n, "unbind input", "a node", "none");
        if (!p.tanh->is(OpKind::CallFunction, "torch.tanh") && !p.tanh->is(OpKind::CallMethod, "tanh"))
            return fail(why, p.tanh, "unbind input", "torch.tanh", p.tanh->target());
        if (p.tanh->users().size() != 1)
            return fail(why, p.tanh, "tanh users", "only the unbind", std::to_string(p.tanh->users().size()));
        p.stack = firstInput(p.tanh);
        if (!p.stack)
            return fail(why, p.tanh, "tanh input", "a node", "none");
        auto sv = asStack(p.stack, why);
        if (!sv)
            return false;
        p.sv = *sv;
        if (p.stack->users().size() != 1)
            return fail(why, p.stack, "stack users", "only the tanh", std::to_string(p.stack->users().size()));
        const Argument *d = n->arg(1, "dim");
        auto du = normalizeDim(d && d->isInt() ? d->toInt() : 0, rankOf(p.tanh));
        if ((d && !d->isInt()) || !du || *du != sv->dim)
            return fail(why, n, "unbind dim", "the stack dim " + std::to_string(sv->dim), d ? d->toString() : "0");
        auto runs = pieceRuns(sv->inputs, -1, false);
        if (runs.size() != 1 || runs[0].len != sv->inputs.size())
            return fail(why, p.stack, "stack inputs", "consecutive pieces of one split", std::to_string(runs.size()) + " run(s)");
        p.run = runs[0];
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Parts p;
        if (!parts(n, p, why))
            return false;
        m.nodes = {n, p.tanh, p.stack};
        m.removes = {n, p.tanh, p.stack};
        m.summary =
            "apply tanh to one slice of " + p.run.split.input->name() + " instead of stacking " + std::to_string(p.run.len) + " pieces";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Parts p;
        MatchFailure why;
        parts(m.anchor, p, why);
        const SplitView &s = p.run.split;
        Emit e = emitAt(rw, m.anchor, m.anchor, false, {p.stack->name(), p.tanh->name(), m.anchor->name()});
        Node *slice = e.narrow(s.input, s.dim, p.run.offset, p.run.width);
        Node *t = e.call("torch.tanh", {Argument::node(slice)}, {}, "tanh", tensorLike(slice, *staticShape(slice)));
        std::vector<int64_t> sizes(s.sizes.begin() + p.run.firstIndex, s.sizes.begin() + p.run.firstIndex + long(p.run.len));
        SplitView like = s;
        like.node = m.anchor;
        auto pieces = emitSplit(rw, like, t, sizes, s.dim, m.anchor, {m.anchor->name()});
        std::vector<std::vector<Node *>> items;
        getItemUsers(m.anchor, items, p.sv.inputs.size());
        for (size_t i = 0; i < items.size(); ++i)
            for (Node *g : items[i])
                rw.replaceAllUsesWith(g, pieces[i]);
        for (auto &v : items)
            for (Node *g : v)
                rw.eraseIfDead(g);
        for (Node *q : pieces)
            rw.eraseIfDead(q);
        rw.eraseIfDead(m.anchor);
    }
};

/// #22 unbind_cat_to_view: cat of consecutive unbind outputs (every output, or a run of at least the
/// threshold) -> narrow, movedim, reshape of the unbind input. Both IRs (ATen unbinds are selects or
/// squeeze(slice)).
class UnbindCatToView : public Pattern {
public:
    UnbindCatToView()
    {
        name = "unbind_cat_to_view";
        anchors = kCatKeys;
        labels = {"vertical"};
        description = "u = unbind(x, d); y = cat([u[0], ..., u[n-1]], e) -> y = reshape(movedim(x, d, e), cat shape); "
                      "runs of >= 10 outputs inside a longer cat -> a slice of x the same way";
    }
    static int pick(const CatView &c, const std::vector<UnbindRun> &runs)
    {
        for (size_t r = 0; r < runs.size(); ++r)
            if (runs[r].full() || runs[r].len >= kThresholdToCat)
                return int(r);
        return -1;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto c = asCat(n, &why);
        if (!c)
            return false;
        auto runs = unbindRuns(c->inputs);
        int r = pick(*c, runs);
        if (r < 0)
            return fail(why, n, "cat inputs", "every output of one unbind in order, or a run of >= " + std::to_string(kThresholdToCat),
                        std::to_string(runs.size()) + " shorter run(s)");
        const UnbindRun &run = runs[size_t(r)];
        m.nodes = {n};
        for (size_t j = run.start; j < run.start + run.len; ++j)
            m.nodes.push_back(c->inputs[j]);
        m.removes = {n};
        m.summary = "replace " + std::to_string(run.len) + " unbind outputs of " + run.src->name() + " in " + n->name() + " by a view";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto c = *asCat(m.anchor);
        auto runs = unbindRuns(c.inputs);
        int r = pick(c, runs);
        if (r < 0)
            return;
        const UnbindRun run = runs[size_t(r)];
        Emit e = emitAt(rw, m.anchor, m.anchor, c.aten, {m.anchor->name()});
        Node *t = e.narrow(run.src, run.dim, run.firstIndex, int64_t(run.len));
        Node *mv = e.movedim(t, run.dim, c.dim);
        auto shape = *staticShape(mv);
        shape[size_t(c.dim)] *= shape[size_t(c.dim) + 1];
        shape.erase(shape.begin() + c.dim + 1);
        Node *y = e.reshape(mv, shape);
        replaceRun(rw, m.anchor, c.inputs, run.start, run.len, y);
    }
};

/// #23 split_stack_to_cats: stack of consecutive equal-size pieces of one split -> a slice of x,
/// unflattened and moved to the stack dim.
class SplitStackToCats : public Pattern {
public:
    SplitStackToCats()
    {
        name = "split_stack_to_cats";
        anchors = kStackKeys;
        labels = {"vertical"};
        description =
            "s = split(x, [w]*n, d); y = stack([s[i..j]], e) -> y = movedim(unflatten(narrow(x, d, off, len*w), d, (len, w)), d, e)";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto sv = asStack(n, why);
        if (!sv)
            return false;
        auto runs = pieceRuns(sv->inputs, -1, false);
        if (runs.size() != 1 || runs[0].len != sv->inputs.size())
            return fail(why, n, "stack inputs", "consecutive pieces of one split", std::to_string(runs.size()) + " run(s)");
        if (!sameSizes(runs[0].split, size_t(runs[0].firstIndex), runs[0].len))
            return fail(why, n, "stacked pieces", "equal sizes", joinInts(runs[0].split.sizes));
        m.nodes = {n, runs[0].split.node};
        m.removes = {n};
        m.summary = "replace " + n->name() + " by a view of " + runs[0].split.input->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        MatchFailure why;
        auto sv = *asStack(m.anchor, why);
        PieceRun run = pieceRuns(sv.inputs, -1, false)[0];
        const SplitView &s = run.split;
        Emit e = emitAt(rw, m.anchor, m.anchor, isAten(m.anchor), {m.anchor->name()});
        Node *y = e.movedim(unflattenRun(e, run), s.dim, sv.dim);
        rw.replaceAllUsesWith(m.anchor, y);
        rw.eraseIfDead(m.anchor);
        for (Node *p : sv.inputs)
            rw.eraseIfDead(p);
    }
};

/// #25 move_reshape_out_of_split_stack: stack(reshape(s[i], shp) for consecutive equal pieces) ->
/// one reshape of a view of x.
class MoveReshapeOutOfSplitStack : public Pattern {
public:
    MoveReshapeOutOfSplitStack()
    {
        name = "move_reshape_out_of_split_stack";
        level = IrLevel::Torch;
        anchors = kStackKeys;
        labels = {"vertical"};
        description =
            "r_i = reshape(s[i], shp); y = stack(r, k) -> y = movedim(reshape(movedim(unflatten(x, d, (n, w)), d, 0), [n, *shp]), 0, k)";
    }
    static Node *reshapeInput(Node *r, std::vector<int64_t> &shape)
    {
        Node *in = isViewLike(r) && !isAten(r) ? firstInput(r) : nullptr;
        auto s = staticShape(r);
        if (!in || !s)
            return nullptr;
        shape = *s;
        return in;
    }
    bool parts(Node *n, StackView &sv, PieceRun &run, std::vector<int64_t> &shp, MatchFailure &why) const
    {
        auto v = asStack(n, why);
        if (!v)
            return false;
        sv = *v;
        std::vector<Node *> pieces;
        for (Node *r : sv.inputs) {
            std::vector<int64_t> s;
            Node *p = reshapeInput(r, s);
            if (!p)
                return fail(why, r, "stack input", "reshape/view of a split piece", r->target());
            if (!pieces.empty() && s != shp)
                return fail(why, r, "reshape shape", joinInts(shp), joinInts(s));
            shp = s;
            pieces.push_back(p);
        }
        auto runs = pieceRuns(pieces, -1, false);
        if (runs.size() != 1 || runs[0].len != pieces.size())
            return fail(why, n, "reshaped pieces", "consecutive pieces of one split", std::to_string(runs.size()) + " run(s)");
        run = runs[0];
        if (!sameSizes(run.split, size_t(run.firstIndex), run.len))
            return fail(why, n, "pieces", "equal sizes", joinInts(run.split.sizes));
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        StackView sv;
        PieceRun run;
        std::vector<int64_t> shp;
        if (!parts(n, sv, run, shp, why))
            return false;
        m.nodes = {n};
        m.nodes.insert(m.nodes.end(), sv.inputs.begin(), sv.inputs.end());
        m.removes = {n};
        m.summary =
            "replace " + n->name() + " and " + std::to_string(sv.inputs.size()) + " reshapes by one reshape of " + run.split.input->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        StackView sv;
        PieceRun run;
        std::vector<int64_t> shp;
        MatchFailure why;
        parts(m.anchor, sv, run, shp, why);
        const SplitView &s = run.split;
        Emit e = emitAt(rw, m.anchor, m.anchor, false, {m.anchor->name()});
        Node *front = e.movedim(unflattenRun(e, run), s.dim, 0);
        std::vector<int64_t> target = shp;
        target.insert(target.begin(), int64_t(run.len));
        Node *r = e.reshape(front, target);
        Node *y = e.movedim(r, 0, sv.dim);
        rw.replaceAllUsesWith(m.anchor, y);
        rw.eraseIfDead(m.anchor);
        for (Node *x : sv.inputs)
            rw.eraseIfDead(x);
    }
};

} // namespace

void registerStackPatterns(Registrar &r)
{
    r.add(std::make_unique<UnbindStack>(true));
    r.add(std::make_unique<MergeStackTanhUnbind>());
    r.add(std::make_unique<UnbindCatToView>());
    r.add(std::make_unique<SplitStackToCats>());
    r.add(std::make_unique<UnbindStack>(false));
    r.add(std::make_unique<MoveReshapeOutOfSplitStack>());
    r.add(std::make_unique<StackUnbind>());
}

} // namespace fxlens::patterns
