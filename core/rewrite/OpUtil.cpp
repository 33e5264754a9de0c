// SPDX-License-Identifier: MIT
// Normalized views of split/cat nodes.
#include "rewrite/OpUtil.h"

#include <algorithm>

namespace fxlens::rewrite {

using ir::OpKind;

int rankOf(const Node *n) { return n && n->meta().val.isTensor() ? int(n->meta().val.tensor.shape.size()) : -1; }

std::optional<int64_t> normalizeDim(int64_t dim, int rank)
{
    if (rank < 0)
        return std::nullopt;
    int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank)
        return std::nullopt;
    return d;
}

bool isGetItem(const Node *n) { return n->op() == OpKind::CallFunction && n->target() == "operator.getitem"; }

int64_t getItemIndex(const Node *n, Node **src)
{
    if (!isGetItem(n) || n->args().size() != 2 || !n->args()[0].isNode() || !n->args()[1].isInt())
        return -1;
    const Node *container = n->args()[0].toNode();
    int64_t i = n->args()[1].toInt();
    if (i < 0) {
        // fs[-2] of a split/unbind: counted from the end of its recorded outputs.
        const auto &v = container->meta().val;
        if (v.kind != ir::ValueMeta::Kind::Sequence || i + int64_t(v.items.size()) < 0)
            return -1;
        i += int64_t(v.items.size());
    }
    if (src)
        *src = n->args()[0].toNode();
    return i;
}

static void setWhy(MatchFailure *why, const Node *n, std::string element, std::string expected, std::string found)
{
    if (why)
        *why = {std::move(element), n->name(), std::move(expected), std::move(found)};
}

std::optional<SplitView> asSplit(Node *n, MatchFailure *why)
{
    SplitView v;
    v.node = n;
    const Argument *input = nullptr, *sizes = nullptr, *dim = nullptr;
    const std::string &t = n->target();
    if (n->op() == OpKind::CallFunction && (t == "torch.split" || t == "torch.functional.split")) {
        input = n->arg(0, "tensor");
        sizes = n->arg(1, "split_size_or_sections");
        dim = n->arg(2, "dim");
    } else if (n->op() == OpKind::CallMethod && t == "split") {
        input = n->arg(0, "");
        sizes = n->arg(1, "split_size");
        dim = n->arg(2, "dim");
    } else if (n->op() == OpKind::CallFunction && (t == "aten.split.Tensor" || t == "aten.split_with_sizes.default")) {
        v.aten = true;
        input = n->arg(0, "self");
        sizes = n->arg(1, t == "aten.split.Tensor" ? "split_size" : "split_sizes");
        dim = n->arg(2, "dim");
    } else {
        setWhy(why, n, "split", "torch.split / Tensor.split / aten.split", n->target());
        return std::nullopt;
    }
    if (!input || !input->isNode()) {
        setWhy(why, n, "split input", "a tensor node", "no node");
        return std::nullopt;
    }
    v.input = input->toNode();
    int rank = rankOf(v.input);
    if (dim && !dim->isInt()) {
        // A dim given as a node (#124629) or symbol: never guess.
        setWhy(why, n, "split dim", "an int", Argument::kindName(dim->kind()));
        return std::nullopt;
    }
    auto d = normalizeDim(dim ? dim->toInt() : 0, rank);
    if (!d) {
        setWhy(why, n, "split dim", "a dim within the input's known rank", rank < 0 ? "no shape meta on input" : "out of range");
        return std::nullopt;
    }
    v.dim = *d;
    // Sections: read from the output meta, which is exact also for uneven int splits (#197080).
    const auto &val = n->meta().val;
    if (val.kind == ir::ValueMeta::Kind::Sequence) {
        for (const auto &item : val.items) {
            if (!item.isTensor() || item.tensor.shape.size() <= size_t(v.dim) || !item.tensor.shape[size_t(v.dim)].isStatic()) {
                setWhy(why, n, "split sections", "static sizes in meta", "symbolic or missing");
                return std::nullopt;
            }
            v.sizes.push_back(item.tensor.shape[size_t(v.dim)].value);
        }
    } else if (sizes && sizes->isSequence()) {
        for (const auto &s : sizes->items()) {
            if (!s.isInt()) {
                setWhy(why, n, "split sections", "ints", s.toString());
                return std::nullopt;
            }
            v.sizes.push_back(s.toInt());
        }
    } else {
        setWhy(why, n, "split meta", "output shapes (meta.val)", "none");
        return std::nullopt;
    }
    return v;
}

std::optional<CatView> asCat(Node *n, MatchFailure *why)
{
    CatView v;
    v.node = n;
    const std::string &t = n->target();
    const Argument *list = nullptr, *dim = nullptr;
    if (n->op() == OpKind::CallFunction && (t == "torch.cat" || t == "torch.concat" || t == "torch.concatenate")) {
        list = n->arg(0, "tensors");
        dim = n->arg(1, "dim");
        if (!dim)
            dim = n->kwarg("axis");
    } else if (n->op() == OpKind::CallFunction && t == "aten.cat.default") {
        v.aten = true;
        list = n->arg(0, "tensors");
        dim = n->arg(1, "dim");
    } else {
        setWhy(why, n, "cat", "torch.cat / aten.cat.default", n->target());
        return std::nullopt;
    }
    if (!list || !list->isSequence()) {
        setWhy(why, n, "cat tensors", "a list of tensors", list ? Argument::kindName(list->kind()) : "nothing");
        return std::nullopt;
    }
    for (const auto &a : list->items()) {
        if (!a.isNode()) {
            setWhy(why, n, "cat tensors", "node references", a.toString());
            return std::nullopt;
        }
        v.inputs.push_back(a.toNode());
    }
    if (dim && !dim->isInt()) {
        setWhy(why, n, "cat dim", "an int", Argument::kindName(dim->kind()));
        return std::nullopt;
    }
    auto d = normalizeDim(dim ? dim->toInt() : 0, rankOf(n));
    if (!d) {
        setWhy(why, n, "cat dim", "a dim within the output's known rank", rankOf(n) < 0 ? "no shape meta" : "out of range");
        return std::nullopt;
    }
    v.dim = *d;
    return v;
}

bool getItemUsers(Node *n, std::vector<std::vector<Node *>> &byIndex, size_t count)
{
    byIndex.assign(count, {});
    for (Node *u : n->users()) {
        Node *src = nullptr;
        int64_t k = getItemIndex(u, &src);
        if (k < 0 || src != n || size_t(k) >= count)
            return false;
        byIndex[size_t(k)].push_back(u);
    }
    return true;
}

ir::ValueMeta pieceMeta(const Node *input, int64_t dim, int64_t size)
{
    ir::ValueMeta v = input->meta().val;
    if (v.isTensor() && size_t(dim) < v.tensor.shape.size())
        v.tensor.shape[size_t(dim)] = {size, {}};
    return v;
}

} // namespace fxlens::rewrite

namespace fxlens::rewrite {

namespace {

/// x[:, ..., :, i]: full slices, then an int: the i-th slice along that dim (a column).
std::optional<UnbindPiece> columnPiece(Node *n)
{
    UnbindPiece p;
    p.node = n;
    // x[:, ..., :, i]: full slices, then an int: the i-th slice along that dim (a column).
    const auto &items = n->args()[1].items();
    auto fullSlice = [](const Argument &a) {
        return a.kind() == Argument::Kind::Slice && a.items().size() == 3 && a.items()[0].isNone() && a.items()[1].isNone() &&
            a.items()[2].isNone();
    };
    if (items.empty() || !items.back().isInt())
        return std::nullopt;
    for (size_t i = 0; i + 1 < items.size(); ++i)
        if (!fullSlice(items[i]))
            return std::nullopt;
    p.src = n->args()[0].toNode();
    auto shape = staticShape(p.src);
    p.dim = int64_t(items.size()) - 1;
    if (!shape || p.dim >= int64_t(shape->size()))
        return std::nullopt;
    const int64_t size = (*shape)[size_t(p.dim)];
    p.index = items.back().toInt() < 0 ? items.back().toInt() + size : items.back().toInt();
    if (p.index < 0 || p.index >= size)
        return std::nullopt;
    return p;
}

/// getitem(unbind(x, d), i), or x[i] on a tensor (the i-th slice along dim 0).
std::optional<UnbindPiece> itemPiece(Node *n)
{
    UnbindPiece p;
    p.node = n;
    auto dimArg = [](const Node *m, size_t pos) -> std::optional<int64_t> {
        const Argument *d = m->arg(pos, "dim");
        if (!d)
            return 0;
        if (!d->isInt())
            return std::nullopt;
        return d->toInt();
    };
    Node *u = nullptr;
    p.index = getItemIndex(n, &u);
    if (p.index < 0)
        return std::nullopt;
    bool unbind = u->is(OpKind::CallFunction, "torch.unbind") || u->is(OpKind::CallMethod, "unbind") ||
        u->is(OpKind::CallFunction, "aten.unbind.int");
    if (!unbind && u->meta().val.isTensor()) {
        // x[i] on a tensor: the i-th slice along dim 0.
        auto shape = staticShape(u);
        if (!shape || shape->empty())
            return std::nullopt;
        p.src = u;
        p.dim = 0;
        if (p.index >= (*shape)[0])
            return std::nullopt;
        return p;
    }
    const Argument *in = u->arg(0, u->op() == OpKind::CallMethod ? "" : (u->target()[0] == 'a' ? "self" : "input"));
    if (!unbind || !in || !in->isNode())
        return std::nullopt;
    auto d = dimArg(u, 1);
    if (!d)
        return std::nullopt;
    p.src = in->toNode();
    auto nd = normalizeDim(*d, rankOf(p.src));
    if (!nd)
        return std::nullopt;
    p.dim = *nd;
    // An index past the unbind's length is a malformed graph, not a piece.
    if (auto shape = staticShape(p.src); shape && p.index >= (*shape)[size_t(p.dim)])
        return std::nullopt;
    return p;
}

/// aten.select.int(x, d, i).
std::optional<UnbindPiece> selectPiece(Node *n)
{
    UnbindPiece p;
    p.node = n;
    const Argument *in = n->arg(0, "self"), *d = n->arg(1, "dim"), *i = n->arg(2, "index");
    if (!in || !in->isNode() || !d || !d->isInt() || !i || !i->isInt())
        return std::nullopt;
    p.src = in->toNode();
    auto nd = normalizeDim(d->toInt(), rankOf(p.src));
    auto shape = staticShape(p.src);
    if (!nd || !shape)
        return std::nullopt;
    p.dim = *nd;
    p.index = i->toInt() < 0 ? i->toInt() + (*shape)[size_t(*nd)] : i->toInt();
    return p;
}

/// aten.squeeze(aten.slice(x, d, i, i + 1), d): decomposed select.
std::optional<UnbindPiece> squeezedSlicePiece(Node *n)
{
    UnbindPiece p;
    p.node = n;
    const Argument *in = n->arg(0, "self"), *d = n->arg(1, "dim");
    if (!in || !in->isNode() || !d)
        return std::nullopt;
    int64_t sd;
    if (d->isInt())
        sd = d->toInt();
    else if (d->isSequence() && d->items().size() == 1 && d->items()[0].isInt())
        sd = d->items()[0].toInt();
    else
        return std::nullopt;
    Node *sl = in->toNode();
    if (!sl->is(OpKind::CallFunction, "aten.slice.Tensor"))
        return std::nullopt;
    const Argument *src = sl->arg(0, "self"), *sdim = sl->arg(1, "dim"), *st = sl->arg(2, "start"), *en = sl->arg(3, "end"),
                   *step = sl->arg(4, "step");
    if (!src || !src->isNode() || !sdim || !sdim->isInt() || !st || !st->isInt() || !en || !en->isInt() ||
        (step && !(step->isInt() && step->toInt() == 1)))
        return std::nullopt;
    p.src = src->toNode();
    int rank = rankOf(p.src);
    auto a = normalizeDim(sdim->toInt(), rank), b = normalizeDim(sd, rank);
    if (!a || !b || *a != *b || en->toInt() != st->toInt() + 1 || st->toInt() < 0)
        return std::nullopt;
    p.dim = *a;
    p.index = st->toInt();
    return p;
}

} // namespace

std::optional<UnbindPiece> asUnbindPiece(Node *n)
{
    if (n->op() != OpKind::CallFunction)
        return std::nullopt;
    const std::string &t = n->target();
    if (t == "operator.getitem" && n->args().size() == 2 && n->args()[0].isNode() && n->args()[1].kind() == Argument::Kind::Tuple)
        return columnPiece(n);
    if (t == "operator.getitem")
        return itemPiece(n);
    if (t == "aten.select.int")
        return selectPiece(n);
    if (t == "aten.squeeze.dims" || t == "aten.squeeze.dim")
        return squeezedSlicePiece(n);
    return std::nullopt;
}

std::optional<SplitPiece> asSplitPiece(Node *n)
{
    Node *src = nullptr;
    int64_t k = getItemIndex(n, &src);
    if (k < 0)
        return std::nullopt;
    auto s = asSplit(src);
    if (!s || size_t(k) >= s->sizes.size())
        return std::nullopt;
    SplitPiece p;
    p.node = n;
    p.split = *s;
    p.index = k;
    for (int64_t i = 0; i < k; ++i)
        p.offset += s->sizes[size_t(i)];
    return p;
}

std::optional<std::vector<int64_t>> staticShape(const Node *n)
{
    if (!n || !n->meta().val.isTensor())
        return std::nullopt;
    std::vector<int64_t> out;
    for (const auto &d : n->meta().val.tensor.shape) {
        if (!d.isStatic())
            return std::nullopt;
        out.push_back(d.value);
    }
    return out;
}

static std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape)
{
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;)
        st[i - 1] = st[i] * std::max<int64_t>(shape[i], 1);
    return st;
}

bool isContiguous(const Node *n)
{
    auto shape = staticShape(n);
    if (!shape)
        return false;
    const auto &stride = n->meta().val.tensor.stride;
    if (stride.size() != shape->size())
        return false;
    auto want = contiguousStrides(*shape);
    for (size_t i = 0; i < stride.size(); ++i)
        if ((*shape)[i] != 1 && stride[i] != want[i])
            return false;
    return true;
}

ir::ValueMeta tensorLike(const Node *like, const std::vector<int64_t> &shape)
{
    ir::TensorMeta t;
    for (auto s : shape)
        t.shape.push_back({s, {}});
    if (like && like->meta().val.isTensor()) {
        t.dtype = like->meta().val.tensor.dtype;
        t.requiresGrad = like->meta().val.tensor.requiresGrad;
    }
    t.stride = contiguousStrides(shape);
    return ir::ValueMeta::ofTensor(std::move(t));
}

static std::vector<Argument> ints(const std::vector<int64_t> &v)
{
    std::vector<Argument> out;
    for (auto x : v)
        out.push_back(Argument::integer(x));
    return out;
}

Node *Emit::call(const std::string &target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs,
                 const std::string &name, const ir::ValueMeta &val)
{
    Node *n = rw.create(OpKind::CallFunction, target, std::move(args), std::move(kwargs), name, before, like, replaced);
    n->meta().val = val;
    return n;
}

Node *Emit::narrow(Node *x, int64_t dim, int64_t start, int64_t length)
{
    auto shape = *staticShape(x);
    if (start == 0 && length == shape[size_t(dim)])
        return x;
    shape[size_t(dim)] = length;
    auto val = tensorLike(x, shape);
    val.tensor.stride = x->meta().val.tensor.stride; // a view keeps its base's strides
    if (aten)
        return call("aten.slice.Tensor",
                    {Argument::node(x), Argument::integer(dim), Argument::integer(start), Argument::integer(start + length)}, {}, "slice",
                    val);
    return call("torch.narrow", {Argument::node(x), Argument::integer(dim), Argument::integer(start), Argument::integer(length)}, {},
                "narrow", val);
}

Node *Emit::reshape(Node *x, const std::vector<int64_t> &shape)
{
    if (staticShape(x) == shape)
        return x;
    auto val = tensorLike(x, shape);
    if (aten)
        return call(isContiguous(x) ? "aten.view.default" : "aten.reshape.default", {Argument::node(x), Argument::list(ints(shape))}, {},
                    isContiguous(x) ? "view" : "reshape", val);
    return call("torch.reshape", {Argument::node(x), Argument::list(ints(shape))}, {}, "reshape", val);
}

Node *Emit::movedim(Node *x, int64_t src, int64_t dst)
{
    if (src == dst)
        return x;
    auto shape = *staticShape(x);
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < int64_t(shape.size()); ++i)
        if (i != src)
            perm.push_back(i);
    perm.insert(perm.begin() + dst, src);
    std::vector<int64_t> out;
    std::vector<int64_t> stride;
    const auto &st = x->meta().val.tensor.stride;
    for (auto p : perm) {
        out.push_back(shape[size_t(p)]);
        if (st.size() == shape.size())
            stride.push_back(st[size_t(p)]);
    }
    auto val = tensorLike(x, out);
    val.tensor.stride = stride;
    if (aten)
        return call("aten.permute.default", {Argument::node(x), Argument::list(ints(perm))}, {}, "permute", val);
    return call("torch.movedim", {Argument::node(x), Argument::integer(src), Argument::integer(dst)}, {}, "movedim", val);
}

Node *Emit::unsqueeze(Node *x, int64_t dim)
{
    auto shape = *staticShape(x);
    shape.insert(shape.begin() + dim, 1);
    auto val = tensorLike(x, shape);
    if (aten)
        return call("aten.unsqueeze.default", {Argument::node(x), Argument::integer(dim)}, {}, "unsqueeze", val);
    return call("torch.unsqueeze", {Argument::node(x), Argument::integer(dim)}, {}, "unsqueeze", val);
}

} // namespace fxlens::rewrite
