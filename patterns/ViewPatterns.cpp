// SPDX-License-Identifier: MIT
// View patterns beyond Optimus that the tangle model needs: fold a view into its producer, remove
// dead views, share identical views.
#include "PatternUtil.h"

#include <algorithm>
#include <numeric>

namespace fxlens::patterns {

namespace {

/// fold_view: reshape/view chains that cancel. view(x, shape(x)) -> x; view(view(x, a), b) -> view(x, b).
class FoldView : public Pattern {
public:
    FoldView()
    {
        name = "fold_view";
        // clang-format off
        anchors = {{OpKind::CallFunction, "torch.reshape"}, {OpKind::CallMethod, "reshape"}, {OpKind::CallMethod, "view"},
                   {OpKind::CallFunction, "aten.view.default"}, {OpKind::CallFunction, "aten.reshape.default"},
                   {OpKind::CallFunction, "aten._unsafe_view.default"}};
        // clang-format on
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
        bool bothView = n->target() == in->target() && n->op() == in->op() && n->target() != "reshape" && n->target() != "torch.reshape" &&
            n->target() != "aten.reshape.default";
        std::string target = aten ? (bothView ? n->target() : "aten.reshape.default") : "torch.reshape";
        if (!aten && bothView && n->op() == OpKind::CallMethod) {
            auto args = n->args();
            args[0] = Argument::node(src);
            rw.setInputs(n, args, n->kwargs());
        } else {
            Node *v = emitAt(rw, n, n, aten, {n->name()})
                          .call(target, {Argument::node(src), Argument::list(intList(*staticShape(n)))}, {}, aten ? "view" : "reshape",
                                n->meta().val);
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
        labels = {"vertical"};
        description = "an unused getitem, split, unbind, cat, stack, view, slice, squeeze or unsqueeze is erased";
    }
    static bool pure(const Node *n)
    {
        // clang-format off
        static const char *fns[] = {"operator.getitem", "torch.split", "torch.unbind", "torch.cat", "torch.stack", "torch.reshape",
                                    "torch.narrow", "torch.squeeze", "torch.unsqueeze", "torch.movedim", "torch.permute",
                                    "torch.flatten", "aten.split_with_sizes.default", "aten.split.Tensor", "aten.unbind.int",
                                    "aten.cat.default", "aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
                                    "aten.slice.Tensor", "aten.select.int", "aten.squeeze.dims", "aten.squeeze.dim",
                                    "aten.unsqueeze.default", "aten.permute.default"};
        // clang-format on
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

void registerViewPatterns(Registrar &r)
{
    r.add(std::make_unique<FoldView>());
    r.add(std::make_unique<RemoveDeadViews>());
    r.add(std::make_unique<DedupeViews>());
}

} // namespace fxlens::patterns
