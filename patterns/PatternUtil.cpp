// SPDX-License-Identifier: MIT
// Helpers shared by the built-in pattern files: emitters, input readers and run finders.
#include "PatternUtil.h"
#include "BuiltinPatterns.h"

#include "ir/Target.h"

#include <algorithm>

namespace fxlens::patterns {

Node *firstInput(const Node *n)
{
    const Argument *a = n->arg(0, n->op() == OpKind::CallMethod ? "" : (isAten(n) ? "self" : "input"));
    return a && a->isNode() ? a->toNode() : nullptr;
}

bool isViewLike(const Node *n)
{
    return n->is(OpKind::CallFunction, "torch.reshape") || n->is(OpKind::CallMethod, "reshape") || n->is(OpKind::CallMethod, "view") ||
        n->is(OpKind::CallFunction, "aten.view.default") || n->is(OpKind::CallFunction, "aten.reshape.default") ||
        n->is(OpKind::CallFunction, "aten._unsafe_view.default");
}

Node *unflattenRun(Emit &e, const PieceRun &run)
{
    const SplitView &s = run.split;
    Node *t = e.narrow(s.input, s.dim, run.offset, run.width);
    auto shape = *staticShape(t);
    shape[size_t(s.dim)] = s.sizes[size_t(run.firstIndex)];
    shape.insert(shape.begin() + s.dim, int64_t(run.len));
    return e.reshape(t, shape);
}

std::vector<Node *> emitSplit(Rewriter &rw, const SplitView &like, Node *input, const std::vector<int64_t> &sizes, int64_t dim,
                              Node *before, const std::vector<std::string> &replaced)
{
    Node *s;
    if (like.aten)
        s = rw.create(OpKind::CallFunction, "aten.split_with_sizes.default",
                      {Argument::node(input), Argument::list(intList(sizes)), Argument::integer(dim)}, {}, "split_with_sizes", before,
                      like.node, replaced);
    else
        s = rw.create(OpKind::CallFunction, "torch.split", {Argument::node(input), Argument::list(intList(sizes))},
                      {{"dim", Argument::integer(dim)}}, "split", before, like.node, replaced);
    s->meta().val.kind = ir::ValueMeta::Kind::Sequence;
    for (auto sz : sizes)
        s->meta().val.items.push_back(pieceMeta(input, dim, sz));
    std::vector<Node *> pieces;
    for (size_t i = 0; i < sizes.size(); ++i) {
        Node *g = rw.create(OpKind::CallFunction, "operator.getitem", {Argument::node(s), Argument::integer(int64_t(i))}, {}, "getitem",
                            before, like.node);
        g->meta().val = s->meta().val.items[i];
        pieces.push_back(g);
    }
    return pieces;
}

void canonicalize(Rewriter &rw, Node *n, const std::string &target, std::vector<Argument> args,
                  std::vector<std::pair<std::string, Argument>> kwargs)
{
    if (n->op() == OpKind::CallFunction && n->target() == target) {
        rw.setInputs(n, std::move(args), std::move(kwargs));
        return;
    }
    const std::string base = ir::Target::parse(target).base();
    Node *c = rw.create(OpKind::CallFunction, target, std::move(args), std::move(kwargs), base, n, n, {n->name()});
    c->meta().val = n->meta().val;
    rw.replaceAllUsesWith(n, c);
    rw.erase(n);
}

void setCatInputs(Rewriter &rw, Node *cat, const std::vector<Node *> &inputs)
{
    if (inputs.size() == 1) {
        rw.replaceAllUsesWith(cat, inputs[0]);
        rw.eraseIfDead(cat);
        return;
    }
    auto args = cat->args();
    auto kwargs = cat->kwargs();
    if (!args.empty() && args[0].isSequence())
        args[0] = Argument::list(nodeList(inputs));
    else
        for (auto &kv : kwargs)
            if (kv.first == "tensors")
                kv.second = Argument::list(nodeList(inputs));
    rw.setInputs(cat, args, kwargs);
}

std::vector<PieceRun> pieceRuns(const std::vector<Node *> &inputs, int64_t catDim, bool requireSameDim)
{
    std::vector<PieceRun> runs;
    size_t a = 0;
    while (a < inputs.size()) {
        auto p = asSplitPiece(inputs[a]);
        if (!p || (requireSameDim && p->split.dim != catDim)) {
            ++a;
            continue;
        }
        size_t b = a + 1;
        int64_t width = p->split.sizes[size_t(p->index)];
        while (b < inputs.size()) {
            Node *src = nullptr;
            int64_t k = getItemIndex(inputs[b], &src);
            if (src != p->split.node || k != p->index + int64_t(b - a) || k < 0 || size_t(k) >= p->split.sizes.size())
                break; // (an index past the split's end is a malformed graph: never read past the sizes)
            width += p->split.sizes[size_t(k)];
            ++b;
        }
        PieceRun r;
        r.start = a;
        r.len = b - a;
        r.split = p->split;
        r.firstIndex = p->index;
        r.offset = p->offset;
        r.width = width;
        runs.push_back(std::move(r));
        a = b;
    }
    return runs;
}

/// stack(ts, dim): the tensor list and the non-negative dim (against the output rank).
std::optional<StackView> asStack(Node *n, MatchFailure &why)
{
    if (!n->is(OpKind::CallFunction, "torch.stack") && !n->is(OpKind::CallFunction, "aten.stack.default")) {
        fail(why, n, "stack", "torch.stack / aten.stack", n->target());
        return std::nullopt;
    }
    const Argument *list = n->arg(0, "tensors"), *d = n->arg(1, "dim");
    if (!list || !list->isSequence()) {
        fail(why, n, "stack tensors", "a list", "other");
        return std::nullopt;
    }
    StackView v;
    for (const auto &a : list->items()) {
        if (!a.isNode()) {
            fail(why, n, "stack tensors", "node references", a.toString());
            return std::nullopt;
        }
        v.inputs.push_back(a.toNode());
    }
    if (d && !d->isInt()) {
        fail(why, n, "stack dim", "an int", d->toString());
        return std::nullopt;
    }
    auto nd = normalizeDim(d ? d->toInt() : 0, rankOf(n));
    if (!nd || !staticShape(n)) {
        fail(why, n, "stack dim", "a dim within the output's known static shape", "no shape meta");
        return std::nullopt;
    }
    v.dim = *nd;
    return v;
}

std::optional<std::vector<Node *>> hoistBefore(Node *first, const std::vector<Node *> &operands, const std::unordered_set<Node *> &pinned,
                                               Node *&blocker)
{
    Graph &g = *first->graph();
    std::vector<Node *> work, out;
    for (Node *o : operands)
        if (o && g.before(first, o))
            work.push_back(o);
    std::unordered_set<Node *> seen;
    while (!work.empty()) {
        Node *x = work.back();
        work.pop_back();
        if (!seen.insert(x).second)
            continue;
        if (x->op() == OpKind::Placeholder || pinned.count(x)) {
            blocker = x;
            return std::nullopt;
        }
        out.push_back(x);
        for (Node *in : x->inputNodes())
            if (g.before(first, in))
                work.push_back(in);
    }
    std::sort(out.begin(), out.end(), [&](Node *a, Node *b) { return g.before(a, b); });
    return out;
}

bool equalSections(const SplitView &s)
{
    for (auto k : s.sizes)
        if (k != s.sizes[0])
            return false;
    return true;
}

Node *piecesAlong(Emit &e, const SplitView &s, int64_t dim, const std::vector<int64_t> *concatShape)
{
    auto shape = *staticShape(s.input);
    const int64_t n = int64_t(s.sizes.size()), k = s.sizes[0];
    shape[size_t(s.dim)] = k;
    shape.insert(shape.begin() + s.dim, n);
    Node *v = e.reshape(s.input, shape); // [.., n, k, ..]: piece i at index i of the split dim
    v = e.movedim(v, s.dim, dim);        // the pieces stacked at `dim`
    return concatShape ? e.reshape(v, *concatShape) : v;
}

bool UnbindRun::full() const
{
    auto shape = staticShape(src);
    return shape && firstIndex == 0 && int64_t(len) == (*shape)[size_t(dim)];
}

std::vector<UnbindRun> unbindRuns(const std::vector<Node *> &inputs)
{
    std::vector<UnbindRun> runs;
    size_t a = 0;
    while (a < inputs.size()) {
        auto p = asUnbindPiece(inputs[a]);
        if (!p || !staticShape(p->src)) {
            ++a;
            continue;
        }
        size_t b = a + 1;
        while (b < inputs.size()) {
            auto q = asUnbindPiece(inputs[b]);
            if (!q || q->src != p->src || q->dim != p->dim || q->index != p->index + int64_t(b - a))
                break;
            ++b;
        }
        runs.push_back({a, b - a, p->src, p->dim, p->index});
        a = b;
    }
    return runs;
}

const std::vector<AnchorKey> kSplitKeys = {{OpKind::CallFunction, "torch.split"},
                                           {OpKind::CallMethod, "split"},
                                           {OpKind::CallFunction, "aten.split.Tensor"},
                                           {OpKind::CallFunction, "aten.split_with_sizes.default"}};
const std::vector<AnchorKey> kCatKeys = {
    {OpKind::CallFunction, "torch.cat"}, {OpKind::CallFunction, "torch.concat"}, {OpKind::CallFunction, "aten.cat.default"}};
const std::vector<AnchorKey> kStackKeys = {{OpKind::CallFunction, "torch.stack"}, {OpKind::CallFunction, "aten.stack.default"}};

bool sameSizes(const SplitView &s, size_t first, size_t len)
{
    for (size_t i = first; i < first + len; ++i)
        if (s.sizes[i] != s.sizes[first])
            return false;
    return true;
}

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

void Registrar::add(std::unique_ptr<Pattern> p)
{
    if (!m_error.empty())
        return;
    const int benefit = builtinBenefit(p->name);
    if (benefit < 0) {
        m_error = "built-in pattern '" + p->name + "' has no entry in the benefit table (patterns/BuiltinPatterns.cpp)";
        return;
    }
    p->benefit = benefit;
    m_error = m_registry.add(std::move(p));
}

} // namespace fxlens::patterns
