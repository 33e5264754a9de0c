// SPDX-License-Identifier: MIT
// ATen-IR patterns (catalog #27-#31): the post-grad forms of stack/unbind/select/view detours and
// the memory-bound matmul decomposition. Most are written as pattern graphs (data) plus a rewrite.
#include "PatternUtil.h"

namespace fxlens::patterns {

namespace {

const std::vector<std::string> kAtenCat = {"aten.cat.default"};

/// Checks that per-element pieces are unbind outputs 0..n-1 of one source along `dim`.
bool allPiecesInOrder(const std::vector<Node *> &pieces, Node *&src, int64_t &dim, MatchFailure &why)
{
    for (size_t i = 0; i < pieces.size(); ++i) {
        auto p = asUnbindPiece(pieces[i]);
        if (!p)
            return fail(why, pieces[i], "piece", "select(x, d, i) or squeeze(slice(x, d, i, i+1))", pieces[i]->target());
        if (i == 0) {
            src = p->src;
            dim = p->dim;
        }
        if (p->src != src || p->dim != dim || p->index != int64_t(i))
            return fail(why, pieces[i], "piece " + std::to_string(i), "index " + std::to_string(i) + " of " + src->name() + " along " + std::to_string(dim),
                        "index " + std::to_string(p->index) + " of " + p->src->name());
    }
    auto shape = staticShape(src);
    if (!shape || (*shape)[size_t(dim)] != int64_t(pieces.size()))
        return fail(why, src, "pieces", "all " + (shape ? std::to_string((*shape)[size_t(dim)]) : std::string("?")) + " along dim " + std::to_string(dim),
                    std::to_string(pieces.size()));
    return true;
}

/// #27 merge_unbind_stack_aten: cat([unsqueeze(select(x, d, i), d) for i in 0..n-1], d) -> x.
class MergeUnbindStackAten : public GraphPattern {
public:
    MergeUnbindStackAten()
    {
        name = "merge_unbind_stack_aten";
        level = IrLevel::Aten;
        benefit = 34;
        labels = {"vertical"};
        description = "s_i = select(x, d, i); u_i = unsqueeze(s_i, d); y = cat(u, d) -> y = x (stack(unbind(x)) after decomposition)";
        PatternBuilder b;
        int piece = b.input("*piece");
        int u = b.call("*unsqueeze", {"aten.unsqueeze.default"}, {PArg::ref(piece), PArg::capture("ud")}, 1);
        int c = b.call("cat", kAtenCat, {PArg::listOf(PArg::ref(u), "inputs"), PArg::capture("cd")});
        b.constrain("pieces are select(x, d, 0..n-1), unsqueeze dim == cat dim == d", [](const Bindings &bb, MatchFailure &why) {
            Node *src = nullptr;
            int64_t d = 0;
            if (!allPiecesInOrder(bb.nodeList("*piece"), src, d, why))
                return false;
            Node *cat = bb.node("cat");
            auto ud = normalizeDim(bb.integer("ud", -999), rankOf(cat)), cd = normalizeDim(bb.integer("cd", 0), rankOf(cat));
            if (ud != d || cd != d)
                return fail(why, cat, "dims", "unsqueeze and cat on dim " + std::to_string(d), "other dims");
            return true;
        });
        graph = b.build(c);
        deriveAnchors();
        summarize = [](const Bindings &bb) {
            Node *src = nullptr;
            int64_t d;
            MatchFailure w;
            allPiecesInOrder(bb.nodeList("*piece"), src, d, w);
            return "replace " + bb.node("cat")->name() + " by " + (src ? src->name() : "?");
        };
        apply = [](const Bindings &bb, Rewriter &rw) {
            Node *src = nullptr;
            int64_t d;
            MatchFailure w;
            if (!allPiecesInOrder(bb.nodeList("*piece"), src, d, w))
                return;
            rw.replaceAllUsesWith(bb.node("cat"), src);
            rw.eraseIfDead(bb.node("cat"));
        };
    }
};

/// #29 merge_select_cat_aten: cat([select(x, d, i) for i in 0..n-1], d) -> view(x, cat shape).
class MergeSelectCatAten : public GraphPattern {
public:
    MergeSelectCatAten()
    {
        name = "merge_select_cat_aten";
        level = IrLevel::Aten;
        benefit = 34;
        labels = {"vertical"};
        description = "s_i = select(x, d, i); y = cat([s_0..s_{n-1}], d) -> y = view(x, cat shape)";
        PatternBuilder b;
        int x = b.input("x");
        int sel = b.call("*select", {"aten.select.int"}, {PArg::ref(x), PArg::capture("sd"), PArg::capture("*i")});
        int c = b.call("cat", kAtenCat, {PArg::listOf(PArg::ref(sel), "inputs"), PArg::capture("cd")});
        b.constrain("select dim == cat dim, indices 0..n-1, n == x.shape[d]", [](const Bindings &bb, MatchFailure &why) {
            Node *xx = bb.node("x"), *cat = bb.node("cat");
            auto shape = staticShape(xx);
            auto sd = normalizeDim(bb.integer("sd", -999), rankOf(xx)), cd = normalizeDim(bb.integer("cd", 0), rankOf(cat));
            if (!shape || !sd || !cd || *sd != *cd)
                return fail(why, cat, "dims", "select dim == cat dim", "different or unknown");
            const auto &idx = bb.list("*i");
            for (size_t i = 0; i < idx.size(); ++i)
                if (!idx[i].isInt() || idx[i].toInt() != int64_t(i))
                    return fail(why, cat, "select index " + std::to_string(i), std::to_string(i), idx[i].toString());
            if (int64_t(idx.size()) != (*shape)[size_t(*sd)])
                return fail(why, cat, "selects", std::to_string((*shape)[size_t(*sd)]) + " (all of x along d)", std::to_string(idx.size()));
            return true;
        });
        graph = b.build(c);
        deriveAnchors();
        summarize = [](const Bindings &bb) { return "replace " + bb.node("cat")->name() + " by a view of " + bb.node("x")->name(); };
        apply = [](const Bindings &bb, Rewriter &rw) {
            Node *cat = bb.node("cat");
            Node *v = emitAt(rw, cat, cat, true, {cat->name()}).reshape(bb.node("x"), *staticShape(cat));
            rw.replaceAllUsesWith(cat, v);
            rw.eraseIfDead(cat);
        };
    }
};

/// #30 move_view_after_cat: cat([view(s[i], shp_i) for all pieces], d) -> reshape(x, cat shape), when
/// every view keeps the dims before the split dim and the cat runs along the split dim.
class MoveViewAfterCat : public Pattern {
public:
    MoveViewAfterCat()
    {
        name = "move_view_after_cat";
        anchors = {{OpKind::CallFunction, "aten.cat.default"}, {OpKind::CallFunction, "torch.cat"}};
        benefit = 33;
        labels = {"vertical"};
        description = "v_i = view(s[i], shp_i); y = cat(v, d) -> y = view(x, cat shape) (all pieces, split dim == cat dim, "
                      "views keep the leading dims)";
    }
    static Node *viewOf(Node *v) { return isViewLike(v) ? firstInput(v) : nullptr; }
    bool check(Node *n, CatView &c, PieceRun &run, MatchFailure &why) const
    {
        auto cv = asCat(n, &why);
        if (!cv)
            return false;
        c = *cv;
        std::vector<Node *> pieces;
        for (Node *v : c.inputs) {
            Node *p = viewOf(v);
            if (!p)
                return fail(why, v, "cat input", "a view/reshape of a split piece", v->target());
            pieces.push_back(p);
        }
        auto runs = pieceRuns(pieces, -1, false);
        if (runs.size() != 1 || !runs[0].full())
            return fail(why, n, "viewed pieces", "every piece of one split, in order", std::to_string(runs.size()) + " run(s)");
        run = runs[0];
        const int64_t d = run.split.dim;
        if (c.dim != d)
            return fail(why, n, "cat dim", "the split dim " + std::to_string(d), std::to_string(c.dim));
        for (size_t i = 0; i < pieces.size(); ++i) {
            auto ps = staticShape(pieces[i]), vs = staticShape(c.inputs[i]);
            if (!ps || !vs || vs->size() <= size_t(d))
                return fail(why, c.inputs[i], "view shape", "static, rank > split dim", "unknown or smaller");
            for (int64_t k = 0; k < d; ++k)
                if ((*ps)[size_t(k)] != (*vs)[size_t(k)])
                    return fail(why, c.inputs[i], "view dim " + std::to_string(k), "kept (" + std::to_string((*ps)[size_t(k)]) + ")",
                                std::to_string((*vs)[size_t(k)]));
        }
        if (!staticShape(n))
            return fail(why, n, "cat shape", "static", "unknown");
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        CatView c;
        PieceRun run;
        if (!check(n, c, run, why))
            return false;
        m.nodes = {n, run.split.node};
        m.nodes.insert(m.nodes.end(), c.inputs.begin(), c.inputs.end());
        m.removes = m.nodes;
        m.summary = "replace " + n->name() + " of " + std::to_string(c.inputs.size()) + " viewed pieces by a view of " + run.split.input->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        CatView c;
        PieceRun run;
        MatchFailure why;
        if (!check(m.anchor, c, run, why))
            return;
        Node *y = emitAt(rw, m.anchor, m.anchor, c.aten, {m.anchor->name()}).reshape(run.split.input, *staticShape(m.anchor));
        rw.replaceAllUsesWith(m.anchor, y);
        rw.eraseIfDead(m.anchor);
        for (Node *v : c.inputs)
            rw.eraseIfDead(v);
    }
};

/// #31 decompose_mm / decompose_addmm / decompose_bmm: memory-bound matmuls (one long dim, small
/// others) -> broadcast multiply + sum, which fuses with neighbours. Shape thresholds as Inductor's.
class DecomposeMm : public GraphPattern {
public:
    enum class Kind { Mm, Addmm, Bmm };
    DecomposeMm(Kind k)
    {
        level = IrLevel::Aten;
        benefit = 10;
        labels = {"vertical"};
        PatternBuilder b;
        int a = b.input("a"), bb2 = b.input("b");
        int root;
        if (k == Kind::Mm) {
            name = "decompose_mm";
            description = "mm(A[M,K], B[K,N]) with M >= 10240, K, N < 32 -> sum(A[:, :, None] * B[None], 1)";
            root = b.call("mm", {"aten.mm.default"}, {PArg::ref(a), PArg::ref(bb2)});
        } else if (k == Kind::Addmm) {
            name = "decompose_addmm";
            description = "addmm(bias, A[M,K], B[K,N]) with M >= 10240, K, N < 32 -> sum(A[:, :, None] * B[None], 1) + bias";
            int bias = b.input("bias");
            root = b.call("mm", {"aten.addmm.default"},
                          {PArg::ref(bias), PArg::ref(a), PArg::ref(bb2), PArg::lit(Argument::integer(1)), PArg::lit(Argument::integer(1))});
        } else {
            name = "decompose_bmm";
            description = "bmm(A[B,m,k], B[B,k,n]) with B >= 10240 and two of m, k, n < 32 -> sum(A[..., None] * B[:, None], 2)";
            root = b.call("mm", {"aten.bmm.default"}, {PArg::ref(a), PArg::ref(bb2)});
        }
        const bool batched = k == Kind::Bmm;
        b.constrain(batched ? "batch >= 10240 and two of m, k, n < 32" : "M >= 10240 and K, N < 32",
                    [batched](const Bindings &bb, MatchFailure &why) {
                        auto sa = staticShape(bb.node("a")), sb = staticShape(bb.node("b"));
                        if (!sa || !sb || sa->size() != (batched ? 3u : 2u) || sb->size() != sa->size())
                            return fail(why, bb.node("mm"), "operand shapes", batched ? "static 3-D" : "static 2-D", "other");
                        bool ok;
                        std::string found = joinInts(*sa) + " x " + joinInts(*sb);
                        if (batched) {
                            int small = int((*sa)[1] < 32) + int((*sa)[2] < 32) + int((*sb)[2] < 32);
                            ok = (*sa)[0] >= 10240 && small >= 2;
                        } else {
                            ok = (*sa)[0] >= 10240 && (*sa)[1] < 32 && (*sb)[1] < 32;
                        }
                        if (!ok)
                            return fail(why, bb.node("mm"), "shapes", batched ? "batch >= 10240, two of m, k, n < 32" : "M >= 10240, K < 32, N < 32", found);
                        return true;
                    });
        graph = b.build(root);
        deriveAnchors();
        summarize = [](const Bindings &bb) { return "decompose " + bb.node("mm")->name() + " into mul + sum"; };
        apply = [batched](const Bindings &bb, Rewriter &rw) {
            Node *mm = bb.node("mm");
            Emit e = emitAt(rw, mm, mm, true, {mm->name()});
            Node *ua = e.unsqueeze(bb.node("a"), batched ? 3 : 2);
            Node *ub = e.unsqueeze(bb.node("b"), batched ? 1 : 0);
            auto sa = *staticShape(ua), sb = *staticShape(ub);
            std::vector<int64_t> prod(sa.size());
            for (size_t i = 0; i < sa.size(); ++i)
                prod[i] = std::max(sa[i], sb[i]);
            Node *mul = e.call("aten.mul.Tensor", {Argument::node(ua), Argument::node(ub)}, {}, "mul", tensorLike(mm, prod));
            std::vector<int64_t> out = prod;
            out.erase(out.begin() + (batched ? 2 : 1));
            Node *sum = e.call("aten.sum.dim_IntList", {Argument::node(mul), Argument::list({Argument::integer(batched ? 2 : 1)})}, {},
                               "sum", tensorLike(mm, out));
            Node *y = sum;
            if (Node *bias = bb.node("bias"))
                y = e.call("aten.add.Tensor", {Argument::node(sum), Argument::node(bias)}, {}, "add", tensorLike(mm, out));
            rw.replaceAllUsesWith(mm, y);
            rw.eraseIfDead(mm);
        };
    }
};

} // namespace

std::string registerAtenPatterns(PatternRegistry &r)
{
    std::string err;
    auto add = [&](std::unique_ptr<Pattern> p) {
        if (err.empty())
            err = r.add(std::move(p));
    };
    add(std::make_unique<MergeUnbindStackAten>());
    add(std::make_unique<MergeSelectCatAten>());
    add(std::make_unique<MoveViewAfterCat>());
    add(std::make_unique<DecomposeMm>(DecomposeMm::Kind::Mm));
    add(std::make_unique<DecomposeMm>(DecomposeMm::Kind::Addmm));
    add(std::make_unique<DecomposeMm>(DecomposeMm::Kind::Bmm));
    return err;
}

} // namespace fxlens::patterns
