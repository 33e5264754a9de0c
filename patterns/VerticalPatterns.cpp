// SPDX-License-Identifier: MIT
// Vertical (split/cat/stack/unbind) patterns and the normalizations they rely on (catalog §2.A/§2.B).
#include "VerticalPatterns.h"

#include "rewrite/OpUtil.h"

namespace fxlens::patterns {

using namespace fxlens::rewrite;
using ir::OpKind;

namespace {

bool fail(MatchFailure &why, const Node *n, std::string element, std::string expected, std::string found)
{
    why = {std::move(element), n->name(), std::move(expected), std::move(found)};
    return false;
}

std::vector<Argument> intList(const std::vector<int64_t> &v)
{
    std::vector<Argument> out;
    for (auto x : v)
        out.push_back(Argument::integer(x));
    return out;
}

/// Creates `split(input, sizes, dim)` in the IR of `like` plus one getitem per piece, before `before`.
std::vector<Node *> emitSplit(Rewriter &rw, const SplitView &like, Node *input, const std::vector<int64_t> &sizes,
                              int64_t dim, Node *before, std::vector<std::string> replaced)
{
    Node *s;
    if (like.aten)
        s = rw.create(OpKind::CallFunction, "aten.split_with_sizes.default",
                      {Argument::node(input), Argument::list(intList(sizes)), Argument::integer(dim)}, {},
                      "split_with_sizes", before, like.node, replaced);
    else
        s = rw.create(OpKind::CallFunction, "torch.split", {Argument::node(input), Argument::list(intList(sizes))},
                      {{"dim", Argument::integer(dim)}}, "split", before, like.node, replaced);
    s->meta().val.kind = ir::ValueMeta::Kind::Sequence;
    for (auto sz : sizes)
        s->meta().val.items.push_back(pieceMeta(input, dim, sz));
    std::vector<Node *> pieces;
    for (size_t i = 0; i < sizes.size(); ++i) {
        Node *g = rw.create(OpKind::CallFunction, "operator.getitem", {Argument::node(s), Argument::integer(int64_t(i))},
                            {}, "getitem", before, like.node);
        g->meta().val = s->meta().val.items[i];
        pieces.push_back(g);
    }
    return pieces;
}

/// The node that comes first in program order among `nodes`.
Node *earliest(Graph &g, const std::vector<Node *> &nodes)
{
    Node *best = nullptr;
    for (Node *n : nodes)
        if (n && (!best || g.before(n, best)))
            best = n;
    return best;
}

// ------------------------------------------------------------------------------------------------

/// #1 normalize_split: any spelling of a Torch-IR split -> torch.split(x, [sizes], dim=D>=0).
class NormalizeSplit : public Pattern {
public:
    NormalizeSplit()
    {
        name = "normalize_split";
        level = IrLevel::Torch;
        anchors = {{OpKind::CallFunction, "torch.split"}, {OpKind::CallMethod, "split"},
                   {OpKind::CallFunction, "torch.functional.split"}};
        benefit = 100;
        labels = {"normalization"};
        description = "x.split(4, -1) / torch.split(x, 4, -1) -> torch.split(x, [4, 4, ...], dim=D>=0), sections from meta";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto s = asSplit(n, &why);
        if (!s)
            return false;
        bool canonical = n->op() == OpKind::CallFunction && n->target() == "torch.split" && n->args().size() == 2 &&
                         n->args()[1].isSequence() && n->kwargs().size() == 1 && n->kwargs()[0].first == "dim" &&
                         n->kwargs()[0].second.isInt() && n->kwargs()[0].second.toInt() == s->dim;
        if (canonical)
            return fail(why, n, "split", "a non-canonical spelling", "already torch.split(x, [sizes], dim=D)");
        m.nodes = {n};
        m.summary = "normalize " + n->name() + " to torch.split(" + s->input->name() + ", sections, dim=" + std::to_string(s->dim) + ")";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto s = *asSplit(m.anchor);
        rw.setInputs(m.anchor, {Argument::node(s.input), Argument::list(intList(s.sizes))}, {{"dim", Argument::integer(s.dim)}});
        if (m.anchor->op() == OpKind::CallMethod || m.anchor->target() != "torch.split") {
            // A method call or alias becomes the function: a new node takes its place.
            Node *c = rw.create(OpKind::CallFunction, "torch.split", m.anchor->args(), m.anchor->kwargs(), "split",
                                m.anchor, m.anchor, {m.anchor->name()});
            c->meta().val = m.anchor->meta().val;
            rw.replaceAllUsesWith(m.anchor, c);
            rw.erase(m.anchor);
        }
    }
};

/// #3 normalize_cat: torch.cat(ts, -1) / axis= / positional dim -> torch.cat(ts, dim=D>=0).
class NormalizeCat : public Pattern {
public:
    NormalizeCat()
    {
        name = "normalize_cat";
        level = IrLevel::Torch;
        anchors = {{OpKind::CallFunction, "torch.cat"}, {OpKind::CallFunction, "torch.concat"},
                   {OpKind::CallFunction, "torch.concatenate"}};
        benefit = 100;
        labels = {"normalization"};
        description = "torch.cat(ts, -1) / torch.concat(ts, axis=...) -> torch.cat(ts, dim=D>=0)";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto c = asCat(n, &why);
        if (!c)
            return false;
        bool canonical = n->target() == "torch.cat" && n->args().size() == 1 && n->args()[0].kind() == Argument::Kind::List &&
                         n->kwargs().size() == 1 && n->kwargs()[0].first == "dim" && n->kwargs()[0].second.isInt() &&
                         n->kwargs()[0].second.toInt() == c->dim;
        if (canonical)
            return fail(why, n, "cat", "a non-canonical spelling", "already torch.cat([...], dim=D)");
        m.nodes = {n};
        m.summary = "normalize " + n->name() + " to torch.cat([...], dim=" + std::to_string(c->dim) + ")";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto c = *asCat(m.anchor);
        std::vector<Argument> list;
        for (Node *x : c.inputs)
            list.push_back(Argument::node(x));
        if (m.anchor->target() == "torch.cat") {
            rw.setInputs(m.anchor, {Argument::list(list)}, {{"dim", Argument::integer(c.dim)}});
            return;
        }
        Node *n = rw.create(OpKind::CallFunction, "torch.cat", {Argument::list(list)}, {{"dim", Argument::integer(c.dim)}},
                            "cat", m.anchor, m.anchor, {m.anchor->name()});
        n->meta().val = m.anchor->meta().val;
        rw.replaceAllUsesWith(m.anchor, n);
        rw.erase(m.anchor);
    }
};

/// #13 remove_split_with_size_one: a split into one piece is its input.
class RemoveSplitWithSizeOne : public Pattern {
public:
    RemoveSplitWithSizeOne()
    {
        name = "remove_split_with_size_one";
        anchors = {{OpKind::CallFunction, "torch.split"}, {OpKind::CallMethod, "split"},
                   {OpKind::CallFunction, "aten.split.Tensor"}, {OpKind::CallFunction, "aten.split_with_sizes.default"}};
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

/// #14 merge_splits: split(getitem(split(x, S1, d), i), S2, d) -> split(x, S1[:i] + S2 + S1[i+1:], d).
class MergeSplits : public Pattern {
public:
    MergeSplits()
    {
        name = "merge_splits";
        anchors = {{OpKind::CallFunction, "torch.split"}, {OpKind::CallMethod, "split"},
                   {OpKind::CallFunction, "aten.split.Tensor"}, {OpKind::CallFunction, "aten.split_with_sizes.default"}};
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
        auto pieces = emitSplit(rw, outer, outer.input, sizes, outer.dim, src,
                                {src->name(), m.anchor->name()});
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

/// #16/#19 split_cat: cat of every piece of one split, in order, along the split dim -> the split input.
/// Consecutive runs inside a longer cat list collapse to one piece of a re-sectioned split.
class SplitCat : public Pattern {
public:
    SplitCat()
    {
        name = "split_cat";
        anchors = {{OpKind::CallFunction, "torch.cat"}, {OpKind::CallFunction, "torch.concat"},
                   {OpKind::CallFunction, "aten.cat.default"}};
        benefit = 30;
        labels = {"vertical"};
        description = "y = cat([s[0], s[1], ..., s[n-1]], d) with s = split(x, ..., d) -> y = x; a run s[i..j] "
                      "inside a longer cat -> one piece of split(x, [.., sum, ..], d)";
    }
    /// Finds the first run (length >= 2) of consecutive getitems of one split along the cat dim.
    static bool findRun(const CatView &c, size_t &start, size_t &len, SplitView &split)
    {
        for (size_t a = 0; a < c.inputs.size(); ++a) {
            Node *src = nullptr;
            int64_t k = getItemIndex(c.inputs[a], &src);
            if (k < 0)
                continue;
            auto s = asSplit(src);
            if (!s || s->dim != c.dim)
                continue;
            size_t b = a + 1;
            while (b < c.inputs.size()) {
                Node *src2 = nullptr;
                int64_t k2 = getItemIndex(c.inputs[b], &src2);
                if (src2 != src || k2 != k + int64_t(b - a))
                    break;
                ++b;
            }
            if (b - a >= 2 || (b - a == 1 && s->sizes.size() == 1)) {
                start = a;
                len = b - a;
                split = *s;
                return true;
            }
        }
        return false;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto c = asCat(n, &why);
        if (!c)
            return false;
        size_t start = 0, len = 0;
        SplitView s;
        if (!findRun(*c, start, len, s))
            return fail(why, n, "cat inputs", "two or more consecutive getitems of one split along dim " + std::to_string(c->dim),
                        std::to_string(c->inputs.size()) + " inputs without such a run");
        Node *src = nullptr;
        int64_t first = getItemIndex(c->inputs[start], &src);
        bool whole = first == 0 && len == s.sizes.size() && len == c->inputs.size();
        m.nodes = {n, s.node};
        m.captured = {s.node};
        m.ints = {int64_t(start), int64_t(len), first};
        if (whole)
            m.summary = "replace " + n->name() + " by " + s.input->name() + " (all " + std::to_string(len) + " pieces of " + s.node->name() + ")";
        else if (first == 0 && len == s.sizes.size())
            m.summary = "replace pieces of " + s.node->name() + " in " + n->name() + " by " + s.input->name();
        else {
            // Re-sectioning the split only pays off when every piece of the run is used only here.
            for (size_t j = start; j < start + len; ++j)
                if (c->inputs[j]->users().size() != 1)
                    return fail(why, c->inputs[j], "run piece users", "only the cat", std::to_string(c->inputs[j]->users().size()) + " users");
            std::vector<std::vector<Node *>> items;
            if (!getItemUsers(s.node, items, s.sizes.size()))
                return fail(why, s.node, "split users", "only int getitems", "another user");
            m.summary = "merge pieces " + std::to_string(first) + ".." + std::to_string(first + int64_t(len) - 1) + " of " +
                        s.node->name() + " used by " + n->name() + " into one";
        }
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto c = *asCat(m.anchor);
        size_t start = size_t(m.ints[0]), len = size_t(m.ints[1]);
        int64_t first = m.ints[2];
        auto s = *asSplit(m.captured[0]);
        std::vector<Node *> olds(c.inputs.begin() + long(start), c.inputs.begin() + long(start + len));
        Node *replacement;
        if (first == 0 && len == s.sizes.size()) {
            replacement = s.input;
        } else {
            std::vector<int64_t> sizes(s.sizes.begin(), s.sizes.begin() + first);
            int64_t sum = 0;
            for (size_t j = 0; j < len; ++j)
                sum += s.sizes[size_t(first) + j];
            sizes.push_back(sum);
            sizes.insert(sizes.end(), s.sizes.begin() + first + long(len), s.sizes.end());
            std::vector<std::vector<Node *>> items;
            getItemUsers(s.node, items, s.sizes.size());
            auto pieces = emitSplit(rw, s, s.input, sizes, s.dim, s.node, {s.node->name()});
            for (size_t j = 0; j < s.sizes.size(); ++j) {
                if (j >= size_t(first) && j < size_t(first) + len)
                    continue;
                size_t to = j < size_t(first) ? j : j - len + 1;
                for (Node *g : items[j])
                    rw.replaceAllUsesWith(g, pieces[to]);
            }
            replacement = pieces[size_t(first)];
            for (Node *p : pieces)
                if (p != replacement)
                    rw.eraseIfDead(p);
            for (size_t j = 0; j < s.sizes.size(); ++j)
                if (j < size_t(first) || j >= size_t(first) + len)
                    for (Node *g : items[j])
                        rw.eraseIfDead(g);
        }
        std::vector<Node *> inputs(c.inputs.begin(), c.inputs.begin() + long(start));
        inputs.push_back(replacement);
        inputs.insert(inputs.end(), c.inputs.begin() + long(start + len), c.inputs.end());
        if (inputs.size() == 1) {
            rw.replaceAllUsesWith(m.anchor, inputs[0]);
            rw.eraseIfDead(m.anchor);
        } else {
            std::vector<Argument> list;
            for (Node *x : inputs)
                list.push_back(Argument::node(x));
            auto args = m.anchor->args();
            auto kwargs = m.anchor->kwargs();
            if (!args.empty() && args[0].isSequence())
                args[0] = Argument::list(list);
            else
                for (auto &kv : kwargs)
                    if (kv.first == "tensors")
                        kv.second = Argument::list(list);
            rw.setInputs(m.anchor, args, kwargs);
        }
        for (Node *o : olds)
            rw.eraseIfDead(o);
    }
};

/// cat_single: a cat of one tensor is that tensor (left behind by other rewrites).
class CatSingle : public Pattern {
public:
    CatSingle()
    {
        name = "cat_single";
        anchors = {{OpKind::CallFunction, "torch.cat"}, {OpKind::CallFunction, "torch.concat"},
                   {OpKind::CallFunction, "aten.cat.default"}};
        benefit = 35;
        labels = {"vertical"};
        description = "cat([t], d) -> t";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        auto c = asCat(n, &why);
        if (!c)
            return false;
        if (c->inputs.size() != 1)
            return fail(why, n, "cat inputs", "exactly one tensor", std::to_string(c->inputs.size()));
        if (!(n->meta().val == c->inputs[0]->meta().val) && n->meta().val.isTensor() && c->inputs[0]->meta().val.isTensor() &&
            n->meta().val.tensor.shape != c->inputs[0]->meta().val.tensor.shape)
            return fail(why, n, "cat shape", "same as its input", n->meta().val.toString());
        m.nodes = {n};
        m.removes = {n};
        m.summary = "replace " + n->name() + " by " + c->inputs[0]->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto c = *asCat(m.anchor);
        rw.replaceAllUsesWith(m.anchor, c.inputs[0]);
        rw.eraseIfDead(m.anchor);
    }
};

/// #17 unbind_stack: u = unbind(stack(ts, d), d); u[i] -> ts[i]. Any subset of u's items may be used
/// (pytorch #121228 returned wrong shapes there); dims are normalized first.
class UnbindStack : public Pattern {
public:
    UnbindStack()
    {
        name = "unbind_stack";
        level = IrLevel::Torch;
        anchors = {{OpKind::CallFunction, "torch.unbind"}, {OpKind::CallMethod, "unbind"}};
        benefit = 45;
        labels = {"vertical"};
        description = "u = unbind(stack([t0..tn], d), d); y = u[i] -> y = ti";
    }
    static std::optional<int64_t> dimOf(const Node *n, size_t pos, int rank)
    {
        const Argument *d = n->arg(pos, "dim");
        if (d && !d->isInt())
            return std::nullopt;
        return normalizeDim(d ? d->toInt() : 0, rank);
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        const Argument *in = n->arg(0, "input");
        if (!in || !in->isNode())
            return fail(why, n, "unbind input", "a node", "none");
        Node *st = in->toNode();
        if (!st->is(OpKind::CallFunction, "torch.stack"))
            return fail(why, st, "unbind input", "torch.stack", st->target());
        const Argument *list = st->arg(0, "tensors");
        if (!list || !list->isSequence())
            return fail(why, st, "stack tensors", "a list", "other");
        int rank = rankOf(st);
        auto du = dimOf(n, 1, rank), ds = dimOf(st, 1, rank);
        if (!du || !ds)
            return fail(why, n, "dims", "static dims with known rank", "unknown");
        if (*du != *ds)
            return fail(why, n, "unbind dim", "the stack dim " + std::to_string(*ds), std::to_string(*du));
        std::vector<std::vector<Node *>> items;
        if (!getItemUsers(n, items, list->items().size()))
            return fail(why, n, "unbind users", "only int getitems", "another user");
        for (const auto &a : list->items())
            if (!a.isNode())
                return fail(why, st, "stack tensors", "node references", a.toString());
        m.nodes = {n, st};
        m.removes = {n};
        m.summary = "replace getitems of " + n->name() + " by the inputs of " + st->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Node *st = m.anchor->arg(0, "input")->toNode();
        const auto list = st->arg(0, "tensors")->items();
        std::vector<std::vector<Node *>> items;
        getItemUsers(m.anchor, items, list.size());
        for (size_t i = 0; i < items.size(); ++i)
            for (Node *g : items[i])
                rw.replaceAllUsesWith(g, list[i].toNode());
        for (auto &v : items)
            for (Node *g : v)
                rw.eraseIfDead(g);
        rw.eraseIfDead(m.anchor);
    }
};

} // namespace

std::string registerVerticalPatterns(PatternRegistry &r)
{
    std::string err;
    auto add = [&](std::unique_ptr<Pattern> p) {
        if (err.empty())
            err = r.add(std::move(p));
    };
    add(std::make_unique<NormalizeSplit>());
    add(std::make_unique<NormalizeCat>());
    add(std::make_unique<RemoveSplitWithSizeOne>());
    add(std::make_unique<MergeSplits>());
    add(std::make_unique<SplitCat>());
    add(std::make_unique<CatSingle>());
    add(std::make_unique<UnbindStack>());
    return err;
}

} // namespace fxlens::patterns
