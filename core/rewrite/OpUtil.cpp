// SPDX-License-Identifier: MIT
// Normalized views of split/cat nodes.
#include "rewrite/OpUtil.h"

namespace fxlens::rewrite {

using ir::OpKind;

int rankOf(const Node *n)
{
    return n && n->meta().val.isTensor() ? int(n->meta().val.tensor.shape.size()) : -1;
}

std::optional<int64_t> normalizeDim(int64_t dim, int rank)
{
    if (rank < 0)
        return std::nullopt;
    int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank)
        return std::nullopt;
    return d;
}

bool isGetItem(const Node *n)
{
    return n->op() == OpKind::CallFunction && n->target() == "operator.getitem";
}

int64_t getItemIndex(const Node *n, Node **src)
{
    if (!isGetItem(n) || n->args().size() != 2 || !n->args()[0].isNode() || !n->args()[1].isInt())
        return -1;
    if (src)
        *src = n->args()[0].toNode();
    return n->args()[1].toInt();
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
