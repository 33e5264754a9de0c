// SPDX-License-Identifier: MIT
// ATen-IR patterns (catalog #27-#31): the post-grad forms of stack/unbind/select/view detours and
// the memory-bound matmul decomposition. Most are written as pattern graphs (data) plus a rewrite.
#include "PatternUtil.h"

namespace fxlens::patterns {

namespace {

const std::vector<std::string> kAtenCat = {"aten.cat.default"};

/// #30 move_view_after_cat: cat([view(s[i], shp_i) for all pieces], d) -> reshape(x, cat shape), when
/// every view keeps the dims before the split dim and the cat runs along the split dim.
class MoveViewAfterCat : public Pattern {
public:
    MoveViewAfterCat()
    {
        name = "move_view_after_cat";
        anchors = {{OpKind::CallFunction, "aten.cat.default"}, {OpKind::CallFunction, "torch.cat"}};
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
        m.summary =
            "replace " + n->name() + " of " + std::to_string(c.inputs.size()) + " viewed pieces by a view of " + run.split.input->name();
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

} // namespace

void registerAtenPatterns(Registrar &r)
{
    auto add = [&](std::unique_ptr<Pattern> p) { r.add(std::move(p)); };
    add(std::make_unique<MoveViewAfterCat>());
}

} // namespace fxlens::patterns
