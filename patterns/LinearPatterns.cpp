// SPDX-License-Identifier: MIT
// Patterns for the shapes transformer and CNN graphs have that the split/cat catalog does not cover:
//  - batch_linear_lhs: several linears reading one input (the Q/K/V projections of every attention
//    block) become one linear over the concatenated weights, split afterwards (Inductor's
//    batch_linear_lhs);
//  - split_cat_other_dim: cat of every piece of an equal split along another dim is a reshape;
//  - unbind_run_in_stack: a full run of unbind outputs inside a longer stack becomes the source itself
//    in a cat (the other stack inputs unsqueezed).
#include "PatternUtil.h"

#include "rewrite/Mutation.h"
#include "rewrite/Schema.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace fxlens::patterns {

namespace {

/// One linear of a batch_linear_lhs group: y = x @ W^T + b in one of its spellings.
struct LinearCall {
    Node *node = nullptr;
    Node *x = nullptr;
    Node *ownX = nullptr;       ///< the member's own input (an identical view of the group's x)
    Node *w = nullptr;          ///< [M, K] (nullptr for a call_module: its parameter)
    Node *wt = nullptr;         ///< ATen addmm/mm: the [K, M] operand
    Node *b = nullptr;          ///< [M] or nullptr
    std::string wParam, bParam; ///< call_module Linear: parameter names
    int64_t m = 0, k = 0;
    enum class Form { Functional, Module, AtenLinear, AtenMm } form = Form::Functional;
};

const ir::ParamInfo *paramNamed(const Graph &g, const std::string &name)
{
    for (const auto &p : g.params)
        if (p.name == name)
            return &p;
    return nullptr;
}

bool readLinear(Node *n, LinearCall &c)
{
    c = {};
    c.node = n;
    const Graph &g = *n->graph();
    auto nodeAt = [](const std::vector<Argument> &in, size_t i) { return i < in.size() && in[i].isNode() ? in[i].toNode() : nullptr; };
    if (n->op() == OpKind::CallModule) {
        const ir::ModuleInfo *mod = g.module(n->target());
        if (!mod || mod->type.substr(mod->type.rfind('.') + 1) != "Linear" || n->args().size() != 1 || !n->kwargs().empty() ||
            !n->args()[0].isNode())
            return false;
        const ir::ParamInfo *w = paramNamed(g, n->target() + ".weight");
        if (!w || w->shape.size() != 2)
            return false;
        c.form = LinearCall::Form::Module;
        c.x = n->args()[0].toNode();
        c.wParam = w->name;
        c.m = w->shape[0];
        c.k = w->shape[1];
        if (paramNamed(g, n->target() + ".bias"))
            c.bParam = n->target() + ".bias";
        return true;
    }
    if (n->op() != OpKind::CallFunction)
        return false;
    const std::string &t = n->target();
    if (t == "torch.nn.functional.linear" || t == "aten.linear.default") {
        const OpSchema *s = schemaFor(n->op(), t);
        std::vector<Argument> in;
        if (s) {
            if (!normalizedArgs(n, *s, in))
                return false;
        } else {
            in = n->args();
            if (!n->kwargs().empty())
                return false;
        }
        c.form = t == "aten.linear.default" ? LinearCall::Form::AtenLinear : LinearCall::Form::Functional;
        c.x = nodeAt(in, 0);
        c.w = nodeAt(in, 1);
        c.b = nodeAt(in, 2);
        if (in.size() > 2 && !in[2].isNone() && !c.b)
            return false;
        auto ws = c.w ? staticShape(c.w) : std::nullopt;
        if (!c.x || !ws || ws->size() != 2)
            return false;
        c.m = (*ws)[0];
        c.k = (*ws)[1];
        return true;
    }
    if (t == "aten.addmm.default" || t == "aten.mm.default") {
        const bool addmm = t == "aten.addmm.default";
        const auto &in = n->args();
        if (!n->kwargs().empty() || in.size() != (addmm ? 3u : 2u))
            return false;
        c.form = LinearCall::Form::AtenMm;
        c.b = addmm ? nodeAt(in, 0) : nullptr;
        c.x = nodeAt(in, addmm ? 1 : 0);
        c.wt = nodeAt(in, addmm ? 2 : 1);
        auto ws = c.wt ? staticShape(c.wt) : std::nullopt;
        if (!c.x || !ws || ws->size() != 2 || rankOf(c.x) != 2 || (addmm && (!c.b || rankOf(c.b) != 1)))
            return false;
        c.k = (*ws)[0];
        c.m = (*ws)[1];
        return true;
    }
    return false;
}

/// A parameter or buffer (get_attr), possibly read through views (ATen's permute of a weight).
bool isWeightOnly(const Node *n)
{
    for (int hops = 0; n && hops < 64; ++hops) {
        if (n->op() == OpKind::GetAttr)
            return true;
        if (n->op() == OpKind::Placeholder || n->inputNodes().size() != 1 ||
            !(isViewLike(n) || n->is(OpKind::CallFunction, "aten.permute.default") || n->is(OpKind::CallFunction, "aten.t.default")))
            return false;
        n = n->inputNodes()[0];
    }
    return false;
}

/// W of an ATen mm operand read through permute(W, [1, 0]) (used only there), else nullptr.
Node *permutedWeight(Node *wt)
{
    if (!wt->is(OpKind::CallFunction, "aten.permute.default") || wt->users().size() != 1)
        return nullptr;
    const Argument *dims = wt->arg(1, "dims");
    const Argument *self = wt->arg(0, "self");
    if (!dims || !dims->isSequence() || dims->items().size() != 2 || !dims->items()[0].isInt() || dims->items()[0].toInt() != 1 || !self ||
        !self->isNode())
        return nullptr;
    return self->toNode();
}

/// The names of the calls' nodes (what a batched replacement replaces).
std::vector<std::string> callNames(const std::vector<LinearCall> &calls)
{
    std::vector<std::string> names;
    names.reserve(calls.size());
    for (const auto &c : calls)
        names.push_back(c.node->name());
    return names;
}

class BatchLinearLhs : public Pattern {
public:
    BatchLinearLhs()
    {
        name = "batch_linear_lhs";
        anchors = {{OpKind::CallFunction, "torch.nn.functional.linear"},
                   {OpKind::CallModule, ""},
                   {OpKind::CallFunction, "aten.linear.default"},
                   {OpKind::CallFunction, "aten.addmm.default"},
                   {OpKind::CallFunction, "aten.mm.default"}};
        phase = 1;
        labels = {"horizontal"};
        description = "N >= 2 × linear(x, W_i, b_i) on one x -> split(linear(x, cat(W), cat(b)), [M_i], -1) "
                      "(the Q/K/V projections; also addmm/mm with W_i^T in ATen IR)";
    }

    /// The group of the anchor: linears of its form reading its input, bias alike, with weights
    /// defined before the first of them, in program order.
    bool group(Node *n, std::vector<LinearCall> &out, MatchFailure &why) const
    {
        LinearCall a;
        if (!readLinear(n, a))
            return fail(why, n, "linear", "a linear (F.linear, nn.Linear, aten.linear, addmm/mm) with a 2-D weight", n->target());
        if (n->users().empty())
            return fail(why, n, "users", "a used value", "none");
        Graph &g = *n->graph();
        // The input, or identical views of one tensor (ATen graphs view x once per projection).
        std::vector<Node *> inputs = {a.x};
        if (isViewLike(a.x) && !a.x->inputNodes().empty())
            for (Node *v : a.x->inputNodes()[0]->users())
                if (v != a.x && v->op() == a.x->op() && v->target() == a.x->target() && v->args() == a.x->args() &&
                    v->kwargs() == a.x->kwargs())
                    inputs.push_back(v);
        std::vector<Node *> readers;
        for (Node *x : inputs)
            readers.insert(readers.end(), x->users().begin(), x->users().end());
        for (Node *u : readers) {
            LinearCall c;
            if (!readLinear(u, c) || std::find(inputs.begin(), inputs.end(), c.x) == inputs.end() || c.form != a.form || c.k != a.k ||
                u->users().empty())
                continue;
            if ((c.b != nullptr) != (a.b != nullptr) || c.bParam.empty() != a.bParam.empty())
                continue;
            if (std::find_if(out.begin(), out.end(), [&](const LinearCall &o) { return o.node == u; }) != out.end())
                continue;
            out.push_back(c);
        }
        std::sort(out.begin(), out.end(), [&](const LinearCall &l, const LinearCall &r) { return g.before(l.node, r.node); });
        if (out.size() < 2)
            return fail(why, n, "group", "2 or more linears of one form reading " + a.x->name(), std::to_string(out.size()));
        // Weights that are graph inputs would be concatenated on every call (a copy of each); the
        // module's own parameters concatenate once, where weights are frozen or folded.
        for (const auto &c : out)
            for (Node *w : {c.w, c.wt, c.b})
                if (w && !isWeightOnly(w))
                    return fail(why, w, "weights", "the module's parameters (get_attr), not graph inputs", w->name());
        Node *first = out.front().node;
        for (auto &c : out) {
            c.ownX = c.x;
            c.x = out.front().x;
        }
        // What the fused call reads goes before the first member: operands defined later (a weight's
        // permute, say) move up with what they read, unless that is a graph input or a member.
        std::unordered_set<Node *> members;
        for (const auto &c : out)
            members.insert(c.node);
        Node *blocker = nullptr;
        auto moved = hoistBefore(first, operands(out), members, blocker);
        if (!moved)
            return fail(why, blocker, "weights", "defined before the group's first linear (or movable there)",
                        "a graph input or member after it");
        toMove() = std::move(*moved);
        return true;
    }

    /// The nodes the fused call reads: the input, weights (ATen: the permuted ones' sources), biases.
    static std::vector<Node *> operands(const std::vector<LinearCall> &calls)
    {
        std::vector<Node *> out = {calls[0].x};
        bool allPermuted = true;
        for (const auto &c : calls)
            allPermuted = allPermuted && c.wt && permutedWeight(c.wt);
        for (const auto &c : calls) {
            out.push_back(c.wt ? (allPermuted ? permutedWeight(c.wt) : c.wt) : c.w);
            out.push_back(c.b);
        }
        return out;
    }
    /// What the last group() must move before the group (the calling thread's: perThread).
    std::vector<Node *> &toMove() const { return perThread<std::vector<Node *>>(this); }

    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        std::vector<LinearCall> calls;
        if (!group(n, calls, why))
            return false;
        for (const auto &c : calls)
            m.nodes.push_back(c.node);
        m.removes = m.nodes;
        m.summary = "one linear for " + std::to_string(calls.size()) + " linears of " + calls[0].x->name();
        return true;
    }

    void rewrite(const Match &m, Rewriter &rw) const override
    {
        std::vector<LinearCall> calls;
        MatchFailure why;
        if (!group(m.anchor, calls, why))
            return;
        Graph &g = rw.graph();
        const LinearCall &c0 = calls[0];
        Node *first = c0.node;
        for (Node *x : std::vector<Node *>(toMove()))
            rw.moveBefore(x, first);
        const bool aten = c0.form == LinearCall::Form::AtenLinear || c0.form == LinearCall::Form::AtenMm;
        const std::vector<std::string> replaced = callNames(calls);
        Emit e = emitAt(rw, first, first, aten, replaced);
        const Node *likeX = c0.x;
        std::vector<int64_t> sizes;
        int64_t total = 0;
        for (const auto &c : calls) {
            sizes.push_back(c.m);
            total += c.m;
        }
        auto weightNode = [&](const LinearCall &c, bool bias) -> Node * {
            if (c.form != LinearCall::Form::Module)
                return bias ? c.b : c.w;
            const std::string &pname = bias ? c.bParam : c.wParam;
            const ir::ParamInfo *p = paramNamed(g, pname);
            Node *ga = rw.create(OpKind::GetAttr, pname, {}, {}, attrNodeName(pname), first, c.node);
            ir::TensorMeta tm;
            for (auto d : p->shape)
                tm.shape.push_back({d, {}});
            tm.dtype = p->dtype;
            ga->meta().val = ir::ValueMeta::ofTensor(tm);
            ga->meta().val = tensorLike(ga, p->shape);
            return ga;
        };
        auto cat = [&](const std::vector<Node *> &xs, int64_t dim, const std::vector<int64_t> &shape) {
            return e.call(aten ? "aten.cat.default" : "torch.cat", {Argument::list(nodeList(xs)), Argument::integer(dim)}, {}, "cat",
                          tensorLike(xs[0], shape));
        };
        std::vector<Node *> ws, bs;
        bool hasBias = c0.b || !c0.bParam.empty();
        Node *y = nullptr;
        auto outShape = *staticShape(first);
        outShape.back() = total;
        if (c0.form == LinearCall::Form::AtenMm) {
            std::vector<Node *> wsT, plain;
            bool allPermuted = true;
            for (const auto &c : calls) {
                wsT.push_back(c.wt);
                Node *w = permutedWeight(c.wt);
                allPermuted = allPermuted && w;
                plain.push_back(w);
                if (c.b)
                    bs.push_back(c.b);
            }
            Node *W;
            if (allPermuted) {
                Node *Wc = cat(plain, 0, {total, c0.k});
                W = e.call("aten.permute.default", {Argument::node(Wc), Argument::list(intList({1, 0}))}, {}, "permute",
                           tensorLike(Wc, {c0.k, total}));
                W->meta().val.tensor.stride = {1, c0.k};
            } else {
                W = cat(wsT, 1, {c0.k, total});
            }
            if (hasBias)
                y = e.call("aten.addmm.default", {Argument::node(cat(bs, 0, {total})), Argument::node(c0.x), Argument::node(W)}, {},
                           "addmm", tensorLike(likeX, outShape));
            else
                y = e.call("aten.mm.default", {Argument::node(c0.x), Argument::node(W)}, {}, "mm", tensorLike(likeX, outShape));
        } else {
            for (const auto &c : calls) {
                ws.push_back(weightNode(c, false));
                if (hasBias)
                    bs.push_back(weightNode(c, true));
            }
            Node *W = cat(ws, 0, {total, c0.k});
            std::vector<Argument> args = {Argument::node(c0.x), Argument::node(W)};
            if (hasBias)
                args.push_back(Argument::node(cat(bs, 0, {total})));
            y = e.call(aten ? "aten.linear.default" : "torch.nn.functional.linear", args, {}, "linear", tensorLike(likeX, outShape));
        }
        SplitView like;
        like.node = first;
        like.aten = aten;
        auto pieces = emitSplit(rw, like, y, sizes, int64_t(outShape.size()) - 1, first, replaced);
        for (size_t i = 0; i < calls.size(); ++i) {
            pieces[i]->meta().val = calls[i].node->meta().val;
            // A piece is a strided view of the fused output: the session turns strict views of it into
            // reshapes after the step (relaxViewsAfterStep).
            rw.replaceAllUsesWith(calls[i].node, pieces[i]);
        }
        for (const auto &c : calls) {
            Node *wt = c.wt;
            rw.eraseIfDead(c.node);
            if (wt)
                rw.eraseIfDead(wt);
            if (c.ownX && c.ownX != c.x)
                rw.eraseIfDead(c.ownX);
        }
    }
};

/// cat([s[0], ..., s[n-1]], e) with s = split(x, k, d), equal sizes, e != d -> one reshape chain.
class SplitCatOtherDim : public Pattern {
public:
    SplitCatOtherDim()
    {
        name = "split_cat_other_dim";
        anchors = {{OpKind::CallFunction, "torch.cat"}, {OpKind::CallFunction, "torch.concat"}, {OpKind::CallFunction, "aten.cat.default"}};
        labels = {"vertical"};
        description = "y = cat(split(x, k, d), e), equal pieces, e != d -> y = reshape(movedim(unflatten(x, d, [n, k]), d, e), y.shape)";
    }
    bool read(Node *n, CatView &c, SplitView &s, MatchFailure &why) const
    {
        auto cv = asCat(n, &why);
        if (!cv)
            return false;
        c = *cv;
        auto runs = pieceRuns(c.inputs, c.dim, false);
        if (runs.size() != 1 || runs[0].len != c.inputs.size() || !runs[0].full())
            return fail(why, n, "cat inputs", "every piece of one split, in order", std::to_string(runs.size()) + " run(s)");
        s = runs[0].split;
        if (s.dim == c.dim)
            return fail(why, n, "cat dim", "another dim than the split's (split_cat's case)", "the split's dim");
        if (!equalSections(s))
            return fail(why, s.node, "split sizes", "equal sections", "unequal");
        if (!staticShape(s.input) || !staticShape(n))
            return fail(why, n, "shapes", "static", "unknown");
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        CatView c;
        SplitView s;
        if (!read(n, c, s, why))
            return false;
        m.nodes = {n, s.node};
        m.nodes.insert(m.nodes.end(), c.inputs.begin(), c.inputs.end());
        m.removes = {n};
        m.summary = "cat of " + s.node->name() + " along dim " + std::to_string(c.dim) + " -> reshape of " + s.input->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        CatView c;
        SplitView s;
        MatchFailure why;
        if (!read(m.anchor, c, s, why))
            return;
        Emit e = emitAt(rw, m.anchor, m.anchor, s.aten, {m.anchor->name()});
        const auto catShape = *staticShape(m.anchor);
        Node *y = piecesAlong(e, s, c.dim, &catShape);
        if (y->meta().val.isTensor())
            y->meta().val = m.anchor->meta().val;
        rw.replaceAllUsesWith(m.anchor, y);
        rw.eraseIfDead(m.anchor);
        for (Node *p : c.inputs)
            rw.eraseIfDead(p);
        rw.eraseIfDead(s.node);
    }
};

/// stack([a, u[0], ..., u[n-1], b], d) with u = unbind(x, d) -> cat([a[d:None], x, b[d:None]], d).
class UnbindRunInStack : public Pattern {
public:
    UnbindRunInStack()
    {
        name = "unbind_run_in_stack";
        anchors = {{OpKind::CallFunction, "torch.stack"}, {OpKind::CallFunction, "aten.stack.default"}};
        labels = {"vertical"};
        description =
            "stack([a, u[0], ..., u[n-1], b], e) with u = unbind(x, d) -> cat([unsqueeze(a, e), movedim(x, d, e), unsqueeze(b, e)], e)";
    }
    bool read(Node *n, StackView &sv, UnbindRun &run, MatchFailure &why) const
    {
        auto v = asStack(n, why);
        if (!v)
            return false;
        sv = *v;
        for (const auto &r : unbindRuns(sv.inputs))
            if (r.full() && (r.dim != sv.dim || r.len < sv.inputs.size()) && r.len >= 2) {
                // Only where the graph gets smaller (unsqueezes and a movedim against the stack and
                // the unbind outputs that die).
                int added = int(sv.inputs.size() - r.len) + (r.dim != sv.dim) + 1, removed = 1;
                for (size_t j = r.start; j < r.start + r.len; ++j)
                    removed += sv.inputs[j]->users().size() == 1;
                if (added > removed)
                    continue;
                run = r;
                return true;
            }
        return fail(why, n, "stack inputs", "every output of one unbind, among other inputs or along another dim", "none");
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        StackView sv;
        UnbindRun run;
        if (!read(n, sv, run, why))
            return false;
        m.nodes = {n};
        m.nodes.insert(m.nodes.end(), sv.inputs.begin(), sv.inputs.end());
        m.removes = {n};
        m.summary = "stack " + n->name() + " holds all of unbind(" + run.src->name() + "): cat with it";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        StackView sv;
        UnbindRun run;
        MatchFailure why;
        if (!read(m.anchor, sv, run, why))
            return;
        const bool aten = isAten(m.anchor);
        Emit e = emitAt(rw, m.anchor, m.anchor, aten, {m.anchor->name()});
        std::vector<Node *> parts;
        for (size_t i = 0; i < sv.inputs.size(); ++i) {
            if (i == run.start) {
                parts.push_back(e.movedim(run.src, run.dim, sv.dim)); // the stacked outputs, in stack order
                i += run.len - 1;
                continue;
            }
            parts.push_back(e.unsqueeze(sv.inputs[i], sv.dim));
        }
        Node *c = e.call(aten ? "aten.cat.default" : "torch.cat", {Argument::list(nodeList(parts)), Argument::integer(sv.dim)}, {}, "cat",
                         m.anchor->meta().val);
        rw.replaceAllUsesWith(m.anchor, c);
        rw.eraseIfDead(m.anchor);
        for (size_t i = run.start; i < run.start + run.len; ++i)
            rw.eraseIfDead(sv.inputs[i]);
        for (Node *u : std::vector<Node *>{run.src->users().begin(), run.src->users().end()})
            if (u->users().empty() && u->op() == OpKind::CallFunction &&
                (u->target() == "torch.unbind" || u->target() == "aten.unbind.int"))
                rw.eraseIfDead(u);
    }
};

/// A full run of an equal split's pieces inside a stack (any dim) or a cat along another dim than the
/// split's, among other inputs: the run becomes one view of the split's input (unflatten, movedim,
/// reshape), and a stack becomes a cat of it and the other inputs unsqueezed.
class SplitRunInStackCat : public Pattern {
public:
    SplitRunInStackCat()
    {
        name = "split_run_in_stack_cat";
        anchors = {{OpKind::CallFunction, "torch.stack"},
                   {OpKind::CallFunction, "aten.stack.default"},
                   {OpKind::CallFunction, "torch.cat"},
                   {OpKind::CallFunction, "torch.concat"},
                   {OpKind::CallFunction, "aten.cat.default"}};
        labels = {"vertical"};
        description = "stack/cat([a, s[0], ..., s[n-1], b], e) with s = split(x, k, d) (equal pieces; a cat on another dim) -> "
                      "cat([a', view of x, b'], e); every such run of the list at once";
    }
    struct Read {
        bool stack = false;
        int64_t dim = 0;
        std::vector<Node *> inputs;
        std::vector<PieceRun> runs;
    };
    bool read(Node *n, Read &r, MatchFailure &why) const
    {
        if (auto sv = asStack(n, why)) {
            r.stack = true;
            r.dim = sv->dim;
            r.inputs = sv->inputs;
        } else if (auto c = asCat(n, &why)) {
            r.stack = false;
            r.dim = c->dim;
            r.inputs = c->inputs;
        } else {
            return false;
        }
        r.runs.clear();
        size_t inRuns = 0;
        for (const auto &run : pieceRuns(r.inputs, r.dim, false)) {
            if (!run.full() || run.len < 2 || !staticShape(run.split.input))
                continue;
            if (!equalSections(run.split) || (!r.stack && run.split.dim == r.dim))
                continue; // unequal pieces; a cat along the split's dim is split_cat's case
            r.runs.push_back(run);
            inRuns += run.len;
        }
        if (r.runs.empty() || (!r.stack && r.runs.size() == 1 && inRuns == r.inputs.size()))
            return fail(why, n, r.stack ? "stack inputs" : "cat inputs",
                        "every piece of an equal split (a cat: along another dim than the split's, among other inputs)", "none");
        // Only where the graph gets smaller: views and unsqueezes added against the list node, the
        // pieces and the splits that die.
        int added = 1 + (r.stack ? int(r.inputs.size() - inRuns) : 0), removed = 1;
        for (const auto &run : r.runs) {
            added += 1 + (run.split.dim != r.dim) + (!r.stack);
            for (size_t j = run.start; j < run.start + run.len; ++j)
                removed += r.inputs[j]->users().size() == 1;
            size_t pieceUsers = 0;
            for (Node *g : run.split.node->users())
                pieceUsers += g->users().size() == 1 && g->users()[0] == n;
            removed += pieceUsers == run.split.node->users().size();
        }
        if (added > removed)
            return fail(why, n, "node count", "fewer nodes after the rewrite",
                        std::to_string(added) + " added against " + std::to_string(removed) + " removed");
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Read r;
        if (!read(n, r, why))
            return false;
        m.nodes = {n};
        for (const auto &run : r.runs) {
            m.nodes.push_back(run.split.node);
            for (size_t j = run.start; j < run.start + run.len; ++j)
                m.nodes.push_back(r.inputs[j]);
        }
        m.removes = {n};
        m.summary = std::string(r.stack ? "stack " : "cat ") + n->name() + ": " + std::to_string(r.runs.size()) +
            " run(s) of split pieces become views of their inputs";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Read r;
        MatchFailure why;
        if (!read(m.anchor, r, why))
            return;
        const bool aten = r.runs[0].split.aten;
        Emit e = emitAt(rw, m.anchor, m.anchor, aten, {m.anchor->name()});
        std::vector<Node *> parts;
        size_t next = 0;
        for (size_t i = 0; i < r.inputs.size(); ++i) {
            if (next < r.runs.size() && i == r.runs[next].start) {
                const PieceRun &run = r.runs[next++];
                if (r.stack) { // a stack's dim may be one past the pieces' rank: no concatenated shape
                    parts.push_back(piecesAlong(e, run.split, r.dim, nullptr));
                } else {
                    auto concat = *staticShape(r.inputs[run.start]);
                    concat[size_t(r.dim)] *= int64_t(run.len);
                    parts.push_back(piecesAlong(e, run.split, r.dim, &concat));
                }
                i += run.len - 1;
                continue;
            }
            parts.push_back(r.stack ? e.unsqueeze(r.inputs[i], r.dim) : r.inputs[i]);
        }
        Node *c = e.call(aten ? "aten.cat.default" : "torch.cat", {Argument::list(nodeList(parts)), Argument::integer(r.dim)}, {}, "cat",
                         m.anchor->meta().val);
        rw.replaceAllUsesWith(m.anchor, c);
        rw.eraseIfDead(m.anchor);
        for (const auto &run : r.runs) {
            for (size_t j = run.start; j < run.start + run.len; ++j)
                rw.eraseIfDead(r.inputs[j]);
            rw.eraseIfDead(run.split.node);
        }
    }
};

/// stack(xs, d) whose equal-shaped inputs hold runs of split or unbind pieces along one dim c of the
/// pieces: cat(xs', c) viewed as [.., n, S[c], ..] with the new axis moved to d. A run costs nothing
/// (a whole split's input), a narrow (part of it) or a reshape (an unbind's source, merged at c); the
/// other inputs cost nothing, where the unsqueeze lowering pays one node for each.
class StackRunsToCatView : public Pattern {
public:
    StackRunsToCatView()
    {
        name = "stack_runs_to_cat_view";
        anchors = {{OpKind::CallFunction, "torch.stack"}, {OpKind::CallFunction, "aten.stack.default"}};
        labels = {"vertical"};
        description = "stack([a, s[0], ..., s[k-1], b], d) with pieces of split(x, w, c) or unbind(x, c) -> "
                      "movedim(reshape(cat([a, x, b], c), [.., n, w, ..]), c, d)";
    }
    struct Run {
        size_t start = 0, len = 0;
        Node *src = nullptr;
        bool unbind = false;
        int64_t offset = 0; ///< along c (split) or the unbind dim (unbind), in source coordinates
        bool whole = false; ///< covers the whole source
    };
    struct Read {
        StackView sv;
        std::vector<int64_t> shape; ///< every input's
        int64_t c = 0;
        std::vector<Run> runs;
    };
    bool read(Node *n, Read &r, MatchFailure &why) const
    {
        auto sv = asStack(n, why);
        if (!sv)
            return false;
        r.sv = *sv;
        auto first = staticShape(r.sv.inputs.empty() ? nullptr : r.sv.inputs[0]);
        if (!first || first->empty())
            return fail(why, n, "stack inputs", "tensors of one static shape, rank >= 1", "unknown or scalar");
        r.shape = *first;
        for (Node *x : r.sv.inputs)
            if (staticShape(x) != r.shape)
                return fail(why, x, "stack input shape", joinInts(r.shape), "another shape");
        const int64_t rank = int64_t(r.shape.size());
        // Runs of each kind, keyed by the piece dim they concatenate along.
        std::vector<Run> cand;
        std::vector<int64_t> dims;
        for (const auto &run : pieceRuns(r.sv.inputs, 0, false))
            if (run.len >= 2) {
                cand.push_back({run.start, run.len, run.split.input, false, run.offset, run.full()});
                dims.push_back(run.split.dim);
            }
        for (const auto &run : unbindRuns(r.sv.inputs))
            if (run.len >= 2 && run.dim < rank) {
                cand.push_back({run.start, run.len, run.src, true, run.firstIndex, run.full()});
                dims.push_back(run.dim);
            }
        if (cand.empty())
            return fail(why, n, "stack inputs", "runs of split or unbind pieces", "none");
        // The dim that removes the most; ties to the stack's own dim (no movedim).
        int best = -1000000;
        for (size_t i = 0; i < cand.size(); ++i) {
            std::vector<Run> runs;
            for (size_t j = 0; j < cand.size(); ++j)
                if (dims[j] == dims[i])
                    runs.push_back(cand[j]);
            std::sort(runs.begin(), runs.end(), [](const Run &a, const Run &b) { return a.start < b.start; });
            int gain = saved(n, r.sv, runs) - added(runs, dims[i] != r.sv.dim);
            if (gain > best || (gain == best && dims[i] == r.sv.dim)) {
                best = gain;
                r.c = dims[i];
                r.runs = runs;
            }
        }
        // The unsqueeze lowering (split_run_in_stack_cat, unbind_run_in_stack) pays one node per other
        // input and a view chain per run; fire only where this one leaves fewer nodes.
        size_t inRuns = 0, viewChains = 0;
        for (const auto &run : r.runs) {
            inRuns += run.len;
            viewChains += 1 + (r.c != r.sv.dim);
        }
        const int other = 1 + int(r.sv.inputs.size() - inRuns) + int(viewChains);
        const int mine = added(r.runs, r.c != r.sv.dim);
        if (best <= 0 || mine >= other)
            return fail(why, n, "node count", "fewer nodes than the stack and than its unsqueeze lowering",
                        std::to_string(mine) + " added, " + std::to_string(best + mine) + " removed, unsqueeze lowering " +
                            std::to_string(other));
        return true;
    }
    static int added(const std::vector<Run> &runs, bool move)
    {
        int k = 2 + move; // cat, reshape, movedim
        for (const auto &run : runs)
            k += run.unbind ? 1 + !run.whole : !run.whole;
        return k;
    }
    static int saved(Node *n, const StackView &sv, const std::vector<Run> &runs)
    {
        int k = 1;
        for (const auto &run : runs)
            for (size_t j = run.start; j < run.start + run.len; ++j)
                k += sv.inputs[j]->users().size() == 1 && sv.inputs[j]->users()[0] == n;
        return k;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Read r;
        if (!read(n, r, why))
            return false;
        m.nodes = {n};
        for (const auto &run : r.runs)
            for (size_t j = run.start; j < run.start + run.len; ++j)
                m.nodes.push_back(r.sv.inputs[j]);
        m.removes = {n};
        m.summary = "stack " + n->name() + ": " + std::to_string(r.runs.size()) + " run(s) of pieces along dim " + std::to_string(r.c) +
            " -> one cat and a view";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Read r;
        MatchFailure why;
        if (!read(m.anchor, r, why))
            return;
        const bool aten = isAten(m.anchor);
        Emit e = emitAt(rw, m.anchor, m.anchor, aten, {m.anchor->name()});
        const int64_t c = r.c, w = r.shape[size_t(c)];
        std::vector<Node *> parts;
        size_t next = 0;
        for (size_t i = 0; i < r.sv.inputs.size(); ++i) {
            if (next < r.runs.size() && i == r.runs[next].start) {
                const Run &run = r.runs[next++];
                const int64_t len = int64_t(run.len);
                if (run.unbind) {
                    Node *x = e.narrow(run.src, c, run.offset, len); // unbind dim == c in source coordinates
                    auto merged = *staticShape(x);
                    merged[size_t(c)] *= merged[size_t(c) + 1];
                    merged.erase(merged.begin() + c + 1);
                    parts.push_back(e.reshape(x, merged));
                } else {
                    parts.push_back(e.narrow(run.src, c, run.offset, len * w));
                }
                i += run.len - 1;
                continue;
            }
            parts.push_back(r.sv.inputs[i]);
        }
        auto catShape = r.shape;
        catShape[size_t(c)] *= int64_t(r.sv.inputs.size());
        ir::ValueMeta catVal = tensorLike(m.anchor, catShape);
        Node *cat =
            e.call(aten ? "aten.cat.default" : "torch.cat", {Argument::list(nodeList(parts)), Argument::integer(c)}, {}, "cat", catVal);
        auto split = r.shape;
        split.insert(split.begin() + c, int64_t(r.sv.inputs.size()));
        Node *y = e.movedim(e.reshape(cat, split), c, r.sv.dim);
        if (y->meta().val.isTensor())
            y->meta().val = m.anchor->meta().val;
        rw.replaceAllUsesWith(m.anchor, y);
        rw.eraseIfDead(m.anchor);
        for (const auto &run : r.runs) {
            for (size_t j = run.start; j < run.start + run.len; ++j)
                rw.eraseIfDead(r.sv.inputs[j]);
        }
        for (const auto &run : r.runs)
            for (Node *u : std::vector<Node *>{run.src->users().begin(), run.src->users().end()})
                if (u->users().empty() && u->op() == OpKind::CallFunction && !hasSideEffects(u))
                    rw.eraseIfDead(u);
    }
};

} // namespace

void registerLinearPatterns(Registrar &r)
{
    r.add(std::make_unique<BatchLinearLhs>());
    r.add(std::make_unique<StackRunsToCatView>());
    r.add(std::make_unique<SplitCatOtherDim>());
    r.add(std::make_unique<UnbindRunInStack>());
    r.add(std::make_unique<SplitRunInStackCat>());
}

} // namespace fxlens::patterns
