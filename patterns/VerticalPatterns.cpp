// SPDX-License-Identifier: MIT
// Vertical patterns (catalog §2.B, #13-#26): remove split/cat/stack/unbind detours, in Torch IR and,
// where the ops exist there, in ATen IR. Plus patterns Optimus lacks that the tangle model needs.
#include "PatternUtil.h"
#include "VerticalPatterns.h"
#include "lang/PatternLang.h"

#include <cstdlib>
#include <filesystem>

#include <algorithm>
#include <numeric>

namespace fxlens::patterns {

namespace {

const std::vector<AnchorKey> kSplitKeys = {{OpKind::CallFunction, "torch.split"},
                                           {OpKind::CallMethod, "split"},
                                           {OpKind::CallFunction, "aten.split.Tensor"},
                                           {OpKind::CallFunction, "aten.split_with_sizes.default"}};
const std::vector<AnchorKey> kCatKeys = {{OpKind::CallFunction, "torch.cat"},
                                         {OpKind::CallFunction, "torch.concat"},
                                         {OpKind::CallFunction, "aten.cat.default"}};
const std::vector<AnchorKey> kStackKeys = {{OpKind::CallFunction, "torch.stack"}, {OpKind::CallFunction, "aten.stack.default"}};

bool sameSizes(const SplitView &s, size_t first, size_t len)
{
    for (size_t i = first; i < first + len; ++i)
        if (s.sizes[i] != s.sizes[first])
            return false;
    return true;
}

// ------------------------------------------------------------------------------------------------

/// #13 remove_split_with_size_one
class RemoveSplitWithSizeOne : public Pattern {
public:
    RemoveSplitWithSizeOne()
    {
        name = "remove_split_with_size_one";
        anchors = kSplitKeys;
        benefit = 50;
        labels = {"vertical"};
        description = "s = split(x, [n], d); y = f(s[0]) -> y = f(x)";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto s = asSplit(n, &why);
        if (!s)
            return false;
        if (s->sizes.size() != 1)
            return fail(why, n, "split sections", "exactly one section", std::to_string(s->sizes.size()));
        std::vector<std::vector<Node *>> items;
        if (n->users().empty() || !getItemUsers(n, items, 1))
            return fail(why, n, "split users", "getitem(split, 0) users", "other users or none");
        m.nodes = {n};
        m.nodes.insert(m.nodes.end(), items[0].begin(), items[0].end());
        m.removes = m.nodes;
        m.summary = "replace " + n->name() + "[0] by " + s->input->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto s = *asSplit(m.anchor);
        for (Node *g : std::vector<Node *>(m.anchor->users()))
            rw.replaceAllUsesWith(g, s.input);
        for (Node *g : std::vector<Node *>(m.anchor->users()))
            rw.erase(g);
        rw.eraseIfDead(m.anchor);
    }
};

/// #14 merge_splits
class MergeSplits : public Pattern {
public:
    MergeSplits()
    {
        name = "merge_splits";
        anchors = kSplitKeys;
        benefit = 40;
        labels = {"vertical"};
        description = "s = split(x, [2, 6], 1); t = split(s[1], [3, 3], 1) -> split(x, [2, 3, 3], 1), getitems re-indexed";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto inner = asSplit(n, &why);
        if (!inner)
            return false;
        Node *src = nullptr;
        int64_t i = getItemIndex(inner->input, &src);
        if (i < 0)
            return fail(why, inner->input, "inner split input", "getitem(split, i)", inner->input->target());
        auto outer = asSplit(src, &why);
        if (!outer)
            return false;
        if (outer->dim != inner->dim)
            return fail(why, n, "split dim", "outer split dim " + std::to_string(outer->dim), std::to_string(inner->dim));
        if (inner->input->users().size() != 1)
            return fail(why, inner->input, "piece users", "only the inner split", std::to_string(inner->input->users().size()) + " users");
        std::vector<std::vector<Node *>> outerItems, innerItems;
        if (!getItemUsers(src, outerItems, outer->sizes.size()))
            return fail(why, src, "outer split users", "only int getitems", "another user");
        if (!getItemUsers(n, innerItems, inner->sizes.size()))
            return fail(why, n, "inner split users", "only int getitems", "another user");
        m.nodes = {src, inner->input, n};
        m.removes = {src, inner->input, n};
        m.captured = {src};
        m.ints = {i};
        m.summary = "merge " + n->name() + " into " + src->name() + " (" + std::to_string(outer->sizes.size()) + " + " +
                    std::to_string(inner->sizes.size()) + " - 1 pieces)";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto inner = *asSplit(m.anchor);
        Node *src = m.captured[0];
        auto outer = *asSplit(src);
        size_t i = size_t(m.ints[0]);
        std::vector<int64_t> sizes(outer.sizes.begin(), outer.sizes.begin() + long(i));
        sizes.insert(sizes.end(), inner.sizes.begin(), inner.sizes.end());
        sizes.insert(sizes.end(), outer.sizes.begin() + long(i) + 1, outer.sizes.end());
        std::vector<std::vector<Node *>> outerItems, innerItems;
        getItemUsers(src, outerItems, outer.sizes.size());
        getItemUsers(m.anchor, innerItems, inner.sizes.size());
        // The new split goes where the outer one was, so every piece dominates all old uses.
        auto pieces = emitSplit(rw, outer, outer.input, sizes, outer.dim, src, {src->name(), m.anchor->name()});
        for (size_t j = 0; j < outer.sizes.size(); ++j) {
            if (j == i)
                continue;
            size_t to = j < i ? j : j + inner.sizes.size() - 1;
            for (Node *g : outerItems[j])
                rw.replaceAllUsesWith(g, pieces[to]);
        }
        for (size_t k = 0; k < inner.sizes.size(); ++k)
            for (Node *g : innerItems[k])
                rw.replaceAllUsesWith(g, pieces[i + k]);
        for (auto &v : innerItems)
            for (Node *g : v)
                rw.eraseIfDead(g);
        for (auto &v : outerItems)
            for (Node *g : v)
                rw.eraseIfDead(g);
        for (Node *p : pieces)
            rw.eraseIfDead(p);
    }
};

/// #15 merge_split_squeeze: a split into size-1 pieces whose pieces are all squeezed on the split dim
/// is an unbind (Torch IR) or a select per piece (ATen IR).
class MergeSplitSqueeze : public Pattern {
public:
    MergeSplitSqueeze()
    {
        name = "merge_split_squeeze";
        anchors = kSplitKeys;
        benefit = 45;
        labels = {"vertical"};
        description = "s = split(x, [1, 1, 1], d); y_i = squeeze(s[i], d) -> u = unbind(x, d); y_i = u[i] "
                      "(ATen: y_i = select(x, d, i))";
    }
    static bool squeezesDim(Node *q, Node *piece, int64_t d)
    {
        const Argument *dim = nullptr;
        if (q->is(OpKind::CallFunction, "torch.squeeze") || q->is(OpKind::CallMethod, "squeeze") ||
            q->is(OpKind::CallFunction, "aten.squeeze.dim") || q->is(OpKind::CallFunction, "aten.squeeze.dims"))
            dim = q->arg(1, "dim");
        else
            return false;
        if (firstInput(q) != piece || !dim)
            return false;
        const Argument *one = dim;
        if (dim->isSequence()) {
            if (dim->items().size() != 1)
                return false;
            one = &dim->items()[0];
        }
        return one->isInt() && normalizeDim(one->toInt(), rankOf(piece)) == d;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto s = asSplit(n, &why);
        if (!s)
            return false;
        for (auto sz : s->sizes)
            if (sz != 1)
                return fail(why, n, "split sections", "all of size 1", joinInts(s->sizes));
        std::vector<std::vector<Node *>> items;
        if (!getItemUsers(n, items, s->sizes.size()))
            return fail(why, n, "split users", "only int getitems", "another user");
        bool any = false;
        for (auto &v : items)
            for (Node *g : v)
                for (Node *q : g->users()) {
                    if (!squeezesDim(q, g, s->dim))
                        return fail(why, q, "piece user", "squeeze on dim " + std::to_string(s->dim), q->target());
                    any = true;
                }
        if (!any)
            return fail(why, n, "piece users", "squeezes", "none");
        m.nodes = {n};
        m.removes = {n};
        m.summary = "turn " + n->name() + " and its squeezes into " + (s->aten ? "selects" : "an unbind") + " of " + s->input->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto s = *asSplit(m.anchor);
        std::vector<std::vector<Node *>> items;
        getItemUsers(m.anchor, items, s.sizes.size());
        auto inShape = *staticShape(s.input);
        std::vector<int64_t> pieceShape = inShape;
        pieceShape.erase(pieceShape.begin() + s.dim);
        Node *u = nullptr;
        if (!s.aten) {
            u = rw.create(OpKind::CallFunction, "torch.unbind", {Argument::node(s.input)}, {{"dim", Argument::integer(s.dim)}},
                          "unbind", m.anchor, m.anchor, {m.anchor->name()});
            u->meta().val.kind = ir::ValueMeta::Kind::Sequence;
            for (size_t i = 0; i < s.sizes.size(); ++i)
                u->meta().val.items.push_back(tensorLike(s.input, pieceShape));
        }
        for (size_t i = 0; i < items.size(); ++i) {
            if (items[i].empty())
                continue;
            Node *piece;
            if (u) {
                piece = rw.create(OpKind::CallFunction, "operator.getitem", {Argument::node(u), Argument::integer(int64_t(i))}, {},
                                  "getitem", m.anchor, m.anchor);
                piece->meta().val = u->meta().val.items[i];
            } else {
                piece = emitAt(rw, m.anchor, m.anchor, true, {m.anchor->name()})
                            .call("aten.select.int", {Argument::node(s.input), Argument::integer(s.dim), Argument::integer(int64_t(i))},
                                  {}, "select", tensorLike(s.input, pieceShape));
            }
            for (Node *g : items[i])
                for (Node *q : std::vector<Node *>(g->users())) {
                    rw.replaceAllUsesWith(q, piece);
                    rw.erase(q);
                }
        }
        for (auto &v : items)
            for (Node *g : v)
                rw.eraseIfDead(g);
        rw.eraseIfDead(m.anchor);
    }
};

// --- split -> cat family: #16, #18, #19, #21, #28 ------------------------------------------------

/// Replaces cat inputs [start, start+len) by `with` (nullptr: drop them) and erases dead pieces.
void replaceRun(Rewriter &rw, Node *cat, const std::vector<Node *> &inputs, size_t start, size_t len, Node *with)
{
    std::vector<Node *> next(inputs.begin(), inputs.begin() + long(start));
    if (with)
        next.push_back(with);
    next.insert(next.end(), inputs.begin() + long(start + len), inputs.end());
    setCatInputs(rw, cat, next);
    for (size_t j = start; j < start + len; ++j)
        rw.eraseIfDead(inputs[j]);
}

enum class RunKind { Full, Regroup, SliceOnly, Threshold };

/// One class, four catalog patterns: which runs of split pieces inside a cat it rewrites, and how.
class SplitCatFamily : public Pattern {
public:
    RunKind kind;
    SplitCatFamily(RunKind k, std::string n, IrLevel lvl, int ben, std::string desc) : kind(k)
    {
        name = std::move(n);
        level = lvl;
        anchors = kCatKeys;
        benefit = ben;
        labels = {"vertical"};
        description = std::move(desc);
    }
    /// The first run this pattern rewrites (index into runs), or -1 with a reason.
    /// Why `run` is not one this pattern rewrites ("" when it is).
    std::string reject(const CatView &c, const PieceRun &run) const
    {
        const bool single = run.len < 2;
        switch (kind) {
        case RunKind::Full:
            return run.full() ? "" : "pieces " + std::to_string(run.firstIndex) + ".." + std::to_string(run.firstIndex + int64_t(run.len) - 1) +
                                         " of " + std::to_string(run.split.sizes.size()) + ", not all of them";
        case RunKind::Regroup:
            if (run.full())
                return "every piece of the split (split_cat's case)";
            if (single)
                return "a single piece";
            for (size_t j = run.start; j < run.start + run.len; ++j)
                if (c.inputs[j]->users().size() != 1)
                    return "piece " + c.inputs[j]->name() + " is also used elsewhere";
            return "";
        case RunKind::SliceOnly:
            if (run.full())
                return "every piece of the split (split_cat's case)";
            if (single)
                return "a single piece";
            return run.len == c.inputs.size() ? "" : "the cat has " + std::to_string(c.inputs.size() - run.len) + " other input(s)";
        case RunKind::Threshold:
            if (run.full())
                return "every piece of the split (split_cat's case)";
            if (run.len < kThresholdToCat)
                return "shorter than " + std::to_string(kThresholdToCat) + " pieces";
            return run.len < c.inputs.size() ? "" : "the cat holds nothing else (mutate_cat's case)";
        }
        return "?";
    }
    /// The first run this pattern rewrites (index into runs), or -1 with a reason naming every run.
    int pick(const CatView &c, const std::vector<PieceRun> &runs, MatchFailure &why) const
    {
        std::string seen = std::to_string(runs.size()) + " run(s) of split pieces";
        for (size_t r = 0; r < runs.size(); ++r) {
            std::string no = reject(c, runs[r]);
            if (no.empty())
                return int(r);
            const PieceRun &run = runs[r];
            seen += (r ? "; " : ": ") + std::string("run ") + std::to_string(r + 1) + " (" + run.split.node->name() + "[" +
                    std::to_string(run.firstIndex) + ".." + std::to_string(run.firstIndex + int64_t(run.len) - 1) + "] at cat inputs " +
                    std::to_string(run.start) + ".." + std::to_string(run.start + run.len - 1) + "): " + no;
        }
        switch (kind) {
        case RunKind::Full: fail(why, c.node, "cat inputs", "every piece of one split, in order, along its dim", seen); break;
        case RunKind::Regroup: fail(why, c.node, "cat inputs", "a run of >= 2 consecutive pieces used only by this cat", seen); break;
        case RunKind::SliceOnly: fail(why, c.node, "cat inputs", "only a consecutive sub-range (>= 2) of one split's pieces", seen); break;
        case RunKind::Threshold:
            fail(why, c.node, "cat inputs", "a run of >= " + std::to_string(kThresholdToCat) + " consecutive pieces among other inputs", seen);
            break;
        }
        return -1;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto c = asCat(n, &why);
        if (!c)
            return false;
        auto runs = pieceRuns(c->inputs, c->dim);
        int r = pick(*c, runs, why);
        if (r < 0)
            return false;
        const PieceRun &run = runs[size_t(r)];
        m.nodes = {n, run.split.node};
        for (size_t j = run.start; j < run.start + run.len; ++j)
            m.nodes.push_back(c->inputs[j]);
        m.removes = {n};
        std::string pieces = run.split.node->name() + "[" + std::to_string(run.firstIndex) + ".." +
                             std::to_string(run.firstIndex + int64_t(run.len) - 1) + "]";
        switch (kind) {
        case RunKind::Full: m.summary = "replace " + pieces + " in " + n->name() + " by " + run.split.input->name(); break;
        case RunKind::Regroup: m.summary = "merge " + pieces + " used by " + n->name() + " into one piece"; break;
        default: m.summary = "replace " + pieces + " in " + n->name() + " by a slice of " + run.split.input->name(); break;
        }
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto c = *asCat(m.anchor);
        auto runs = pieceRuns(c.inputs, c.dim);
        MatchFailure why;
        int r = pick(c, runs, why);
        if (r < 0)
            return;
        const PieceRun run = runs[size_t(r)];
        const SplitView &s = run.split;
        Node *with = nullptr;
        if (kind == RunKind::Full) {
            with = s.input;
        } else if (kind == RunKind::Regroup) {
            std::vector<int64_t> sizes(s.sizes.begin(), s.sizes.begin() + run.firstIndex);
            sizes.push_back(run.width);
            sizes.insert(sizes.end(), s.sizes.begin() + run.firstIndex + long(run.len), s.sizes.end());
            std::vector<std::vector<Node *>> items;
            getItemUsers(s.node, items, s.sizes.size());
            auto pieces = emitSplit(rw, s, s.input, sizes, s.dim, s.node, {s.node->name()});
            for (size_t j = 0; j < s.sizes.size(); ++j) {
                if (j >= size_t(run.firstIndex) && j < size_t(run.firstIndex) + run.len)
                    continue;
                size_t to = j < size_t(run.firstIndex) ? j : j - run.len + 1;
                for (Node *g : items[j])
                    rw.replaceAllUsesWith(g, pieces[to]);
            }
            with = pieces[size_t(run.firstIndex)];
            for (Node *p : pieces)
                if (p != with)
                    rw.eraseIfDead(p);
            for (size_t j = 0; j < s.sizes.size(); ++j)
                if (j < size_t(run.firstIndex) || j >= size_t(run.firstIndex) + run.len)
                    for (Node *g : items[j])
                        rw.eraseIfDead(g);
        } else {
            with = emitAt(rw, m.anchor, m.anchor, s.aten, {m.anchor->name()}).narrow(s.input, s.dim, run.offset, run.width);
        }
        // Regrouping replaced other pieces of the split, which this cat may also hold (a second run):
        // read its list again (positions are unchanged).
        replaceRun(rw, m.anchor, asCat(m.anchor)->inputs, run.start, run.len, with);
        rw.eraseIfDead(s.node);
    }
};

/// stack_unbind: u = unbind(stack(ts, d), d); u[i] -> ts[i]. Any subset of u's items may be used.
class StackUnbind : public Pattern {
public:
    StackUnbind()
    {
        name = "stack_unbind";
        anchors = {{OpKind::CallFunction, "torch.unbind"}, {OpKind::CallMethod, "unbind"}, {OpKind::CallFunction, "aten.unbind.int"}};
        benefit = 45;
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
        benefit = full ? 44 : 43;
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
        m.summary = "replace " + n->name() + " by movedim(" + r.src->name() + ", " + std::to_string(r.dim) + ", " + std::to_string(sv->dim) + ")";
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
        benefit = 46;
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
        m.summary = "apply tanh to one slice of " + p.run.split.input->name() + " instead of stacking " +
                    std::to_string(p.run.len) + " pieces";
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
        benefit = 33;
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
        benefit = 32;
        labels = {"vertical"};
        description = "s = split(x, [w]*n, d); y = stack([s[i..j]], e) -> y = movedim(unflatten(narrow(x, d, off, len*w), d, (len, w)), d, e)";
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
        benefit = 34;
        labels = {"vertical"};
        description = "r_i = reshape(s[i], shp); y = stack(r, k) -> y = movedim(reshape(movedim(unflatten(x, d, (n, w)), d, 0), [n, *shp]), 0, k)";
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
        m.summary = "replace " + n->name() + " and " + std::to_string(sv.inputs.size()) + " reshapes by one reshape of " + run.split.input->name();
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

// --- Beyond Optimus ------------------------------------------------------------------------------

/// fold_view: reshape/view chains that cancel. view(x, shape(x)) -> x; view(view(x, a), b) -> view(x, b).
class FoldView : public Pattern {
public:
    FoldView()
    {
        name = "fold_view";
        anchors = {{OpKind::CallFunction, "torch.reshape"}, {OpKind::CallMethod, "reshape"}, {OpKind::CallMethod, "view"},
                   {OpKind::CallFunction, "aten.view.default"}, {OpKind::CallFunction, "aten.reshape.default"},
                   {OpKind::CallFunction, "aten._unsafe_view.default"}};
        benefit = 36;
        labels = {"vertical"};
        description = "view(x, shape(x)) -> x; view(view(x, a), b) -> view(x, b) (reshape/view, both IRs)";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Node *in = firstInput(n);
        auto shape = staticShape(n);
        if (!in || !shape)
            return fail(why, n, "view", "a static output shape and a tensor input", "none");
        if (staticShape(in) == shape) {
            m.nodes = {n};
            m.removes = {n};
            m.summary = "drop " + n->name() + " (same shape as " + in->name() + ")";
            return true;
        }
        if (isViewLike(in) && firstInput(in) && staticShape(firstInput(in))) {
            m.nodes = {n, in};
            m.summary = "view " + firstInput(in)->name() + " directly in " + n->name();
            return true;
        }
        return fail(why, n, "view input", "a view of the same shape or another view", in->target());
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Node *n = m.anchor, *in = firstInput(n);
        if (staticShape(in) == staticShape(n)) {
            rw.replaceAllUsesWith(n, in);
            rw.eraseIfDead(n);
            return;
        }
        Node *src = firstInput(in);
        bool aten = isAten(n);
        // view(view(x)) stays a view; any reshape in the chain makes it a reshape (which never fails).
        bool bothView = n->target() == in->target() && n->op() == in->op() && n->target() != "reshape" &&
                        n->target() != "torch.reshape" && n->target() != "aten.reshape.default";
        std::string target = aten ? (bothView ? n->target() : "aten.reshape.default") : "torch.reshape";
        if (!aten && bothView && n->op() == OpKind::CallMethod) {
            auto args = n->args();
            args[0] = Argument::node(src);
            rw.setInputs(n, args, n->kwargs());
        } else {
            Node *v = emitAt(rw, n, n, aten, {n->name()})
                          .call(target, {Argument::node(src), Argument::list(intList(*staticShape(n)))}, {},
                                aten ? "view" : "reshape", n->meta().val);
            rw.replaceAllUsesWith(n, v);
            rw.eraseIfDead(n);
        }
        rw.eraseIfDead(in);
    }
};

/// remove_dead_views: split/getitem/view-like nodes nobody uses (left behind by partial use).
class RemoveDeadViews : public Pattern {
public:
    RemoveDeadViews()
    {
        name = "remove_dead_views";
        anchors = {{OpKind::CallFunction, ""}, {OpKind::CallMethod, ""}};
        benefit = 1;
        labels = {"vertical"};
        description = "an unused getitem, split, unbind, cat, stack, view, slice, squeeze or unsqueeze is erased";
    }
    static bool pure(const Node *n)
    {
        static const char *fns[] = {"operator.getitem", "torch.split", "torch.unbind", "torch.cat", "torch.stack", "torch.reshape",
                                    "torch.narrow", "torch.squeeze", "torch.unsqueeze", "torch.movedim", "torch.permute",
                                    "torch.flatten", "aten.split_with_sizes.default", "aten.split.Tensor", "aten.unbind.int",
                                    "aten.cat.default", "aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
                                    "aten.slice.Tensor", "aten.select.int", "aten.squeeze.dims", "aten.squeeze.dim",
                                    "aten.unsqueeze.default", "aten.permute.default"};
        static const char *methods[] = {"split", "unbind", "reshape", "view", "squeeze", "unsqueeze", "permute", "narrow"};
        if (n->op() == OpKind::CallMethod) {
            for (const char *m : methods)
                if (n->target() == m)
                    return true;
            return false;
        }
        for (const char *f : fns)
            if (n->target() == f)
                return true;
        return false;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        if (!n->users().empty())
            return fail(why, n, "users", "none", std::to_string(n->users().size()));
        if (!pure(n))
            return fail(why, n, "target", "a view-like op without side effects", n->target());
        m.nodes = {n};
        m.removes = {n};
        m.summary = "erase unused " + n->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override { rw.eraseIfDead(m.anchor); }
};

/// dedupe_views: two identical view-like calls on the same inputs are one (fusion and the vertical
/// patterns each view an input on their own; eager execution pays for every copy).
class DedupeViews : public Pattern {
public:
    DedupeViews()
    {
        name = "dedupe_views";
        anchors = {{OpKind::CallFunction, ""}, {OpKind::CallMethod, ""}};
        benefit = 2;
        labels = {"vertical"};
        description = "y1 = view_op(x, a); y2 = view_op(x, a) -> y2 := y1 (reshape, movedim, permute, slice, getitem, stack, ...)";
    }
    static Node *twin(Node *n)
    {
        // getitems of one tuple are distinct by construction; a wide fan-out (a split with thousands
        // of pieces) is not scanned, which keeps the pattern linear.
        if (!RemoveDeadViews::pure(n) || n->target() == "operator.getitem")
            return nullptr;
        auto ins = n->inputNodes();
        if (ins.empty() || ins[0]->users().size() > 64)
            return nullptr;
        Graph &g = *n->graph();
        for (Node *m : ins[0]->users())
            if (m != n && m->op() == n->op() && m->target() == n->target() && m->args() == n->args() && m->kwargs() == n->kwargs() &&
                g.before(m, n))
                return m;
        return nullptr;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        if (!RemoveDeadViews::pure(n))
            return fail(why, n, "target", "a view-like op without side effects", n->target());
        Node *t = twin(n);
        if (!t)
            return fail(why, n, "twin", "an earlier identical call on the same inputs", "none");
        m.nodes = {n, t};
        m.removes = {n};
        m.summary = "replace " + n->name() + " by its twin " + t->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        if (Node *t = twin(m.anchor)) {
            rw.replaceAllUsesWith(m.anchor, t);
            rw.eraseIfDead(m.anchor);
        }
    }
};

} // namespace

std::string registerSplitCatPatterns(PatternRegistry &r)
{
    std::string err;
    auto add = [&](std::unique_ptr<Pattern> p) {
        if (err.empty())
            err = r.add(std::move(p));
    };
    add(std::make_unique<RemoveSplitWithSizeOne>());
    add(std::make_unique<MergeSplits>());
    add(std::make_unique<MergeSplitSqueeze>());
    add(std::make_unique<SplitCatFamily>(RunKind::Full, "split_cat", IrLevel::Both, 31,
                                         "y = cat([s[0], ..., s[n-1]], d) with s = split(x, ..., d) -> y = x (also as a run inside a longer cat)"));
    add(std::make_unique<UnbindStack>(true));
    add(std::make_unique<SplitCatFamily>(RunKind::Regroup, "merge_getitem_cat", IrLevel::Both, 30,
                                         "s = split(x, [2, 3, 4, 5], 1); y = cat([s[1], s[2]], 1) -> s' = split(x, [2, 7, 5], 1); y = s'[1] "
                                         "(pieces used only by the cat)"));
    add(std::make_unique<SplitCatFamily>(RunKind::SliceOnly, "mutate_cat", IrLevel::Both, 29,
                                         "y = cat([s[i], ..., s[j]], d) -> y = narrow(x, d, offset, width) (pieces may have other users)"));
    add(std::make_unique<MergeStackTanhUnbind>());
    add(std::make_unique<SplitCatFamily>(RunKind::Threshold, "split_cat_to_slices", IrLevel::Torch, 28,
                                         "runs of >= 10 consecutive pieces of one split inside a cat -> one slice each"));
    add(std::make_unique<UnbindCatToView>());
    add(std::make_unique<SplitStackToCats>());
    add(std::make_unique<UnbindStack>(false));
    add(std::make_unique<MoveReshapeOutOfSplitStack>());
    add(std::make_unique<SplitCatFamily>(RunKind::Threshold, "merge_split_cat_aten", IrLevel::Aten, 28,
                                         "aten.cat with runs of >= 10 consecutive pieces of one split -> aten.slice per run"));
    add(std::make_unique<StackUnbind>());
    add(std::make_unique<FoldView>());
    add(std::make_unique<RemoveDeadViews>());
    add(std::make_unique<DedupeViews>());
    return err;
}

std::string builtinPatternDir()
{
    if (const char *env = std::getenv("FXLENS_PATTERN_DIR"); env && *env)
        return env;
    std::error_code ec;
    if (std::filesystem::is_directory(FXLENS_SOURCE_PATTERN_DIR, ec))
        return FXLENS_SOURCE_PATTERN_DIR;
    // Installed: <prefix>/bin/fxlens-cli -> <prefix>/share/fxlens/patterns
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return (exe.parent_path().parent_path() / "share" / "fxlens" / "patterns").string();
}

std::string registerVerticalPatterns(PatternRegistry &r)
{
    std::string err = registerNormalizations(r);
    if (err.empty())
        err = registerCleanupPatterns(r);
    if (err.empty())
        err = registerSplitCatPatterns(r);
    if (err.empty())
        err = registerAtenPatterns(r);
    if (err.empty())
        err = registerHorizontalPatterns(r);
    if (err.empty())
        err = registerLinearPatterns(r);
    if (err.empty())
        err = registerEmbeddingPatterns(r);
    if (err.empty())
        err = registerViewChainPatterns(r);
    if (err.empty()) {
        // Patterns written in the pattern language (patterns/*.fxpat) join the built-in ones.
        lang::PatternLibrary lib;
        const std::string dir = builtinPatternDir();
        if (lib.loadDirectory(dir, r) > 0)
            err = "built-in pattern files do not compile:\n" + lib.diagnostics();
        else if (lib.files().empty())
            err = "no pattern files (*.fxpat) in " + dir + "; set FXLENS_PATTERN_DIR to the fxlens patterns directory";
    }
    return err;
}

} // namespace fxlens::patterns
