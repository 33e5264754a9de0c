// SPDX-License-Identifier: MIT
// Split patterns (catalog §2.B): remove split detours — a split with one section, splits of splits,
// split + squeeze, and the split -> cat family (full runs, regrouped runs, slices, thresholds).
#include "PatternUtil.h"

#include <algorithm>
#include <numeric>

namespace fxlens::patterns {

namespace {

/// #13 remove_split_with_size_one
class RemoveSplitWithSizeOne : public Pattern {
public:
    RemoveSplitWithSizeOne()
    {
        name = "remove_split_with_size_one";
        anchors = kSplitKeys;
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
            u = rw.create(OpKind::CallFunction, "torch.unbind", {Argument::node(s.input)}, {{"dim", Argument::integer(s.dim)}}, "unbind",
                          m.anchor, m.anchor, {m.anchor->name()});
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
                            .call("aten.select.int", {Argument::node(s.input), Argument::integer(s.dim), Argument::integer(int64_t(i))}, {},
                                  "select", tensorLike(s.input, pieceShape));
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

enum class RunKind { Full, Regroup, SliceOnly, Threshold };

/// One class, four catalog patterns: which runs of split pieces inside a cat it rewrites, and how.
class SplitCatFamily : public Pattern {
public:
    RunKind kind;
    SplitCatFamily(RunKind k, std::string n, IrLevel lvl, std::string desc) : kind(k)
    {
        name = std::move(n);
        level = lvl;
        anchors = kCatKeys;
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
            return run.full() ? ""
                              : "pieces " + std::to_string(run.firstIndex) + ".." + std::to_string(run.firstIndex + int64_t(run.len) - 1) +
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
            fail(why, c.node, "cat inputs", "a run of >= " + std::to_string(kThresholdToCat) + " consecutive pieces among other inputs",
                 seen);
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

} // namespace

void registerSplitPatterns(Registrar &r)
{
    r.add(std::make_unique<RemoveSplitWithSizeOne>());
    r.add(std::make_unique<MergeSplits>());
    r.add(std::make_unique<MergeSplitSqueeze>());
    r.add(std::make_unique<SplitCatFamily>(
        RunKind::Full, "split_cat", IrLevel::Both,
        "y = cat([s[0], ..., s[n-1]], d) with s = split(x, ..., d) -> y = x (also as a run inside a longer cat)"));
    r.add(std::make_unique<SplitCatFamily>(
        RunKind::Regroup, "merge_getitem_cat", IrLevel::Both,
        "s = split(x, [2, 3, 4, 5], 1); y = cat([s[1], s[2]], 1) -> s' = split(x, [2, 7, 5], 1); y = s'[1] "
        "(pieces used only by the cat)"));
    r.add(
        std::make_unique<SplitCatFamily>(RunKind::SliceOnly, "mutate_cat", IrLevel::Both,
                                         "y = cat([s[i], ..., s[j]], d) -> y = narrow(x, d, offset, width) (pieces may have other users)"));
    r.add(std::make_unique<SplitCatFamily>(RunKind::Threshold, "split_cat_to_slices", IrLevel::Torch,
                                           "runs of >= 10 consecutive pieces of one split inside a cat -> one slice each"));
    r.add(std::make_unique<SplitCatFamily>(RunKind::Threshold, "merge_split_cat_aten", IrLevel::Aten,
                                           "aten.cat with runs of >= 10 consecutive pieces of one split -> aten.slice per run"));
}

} // namespace fxlens::patterns
