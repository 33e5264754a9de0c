// SPDX-License-Identifier: MIT
// Recommendation models (the Optimus paper's home ground): dozens of sparse features, each a column of
// one input, cast to int64 and looked up in one or more embedding tables of one dim.
//  - batch_embedding: equal-dim lookups become one lookup in the concatenated tables, the ids stacked
//    and offset by each table's first row (the fused embedding-bag idea, which Optimus leaves to
//    TorchRec); the vertical patterns then turn the pieces back into views;
//  - cast_through_stack: stack(cast(a_i)) -> cast(stack(a_i)), so that the stacked column slices
//    (x[:, i]) collapse into one slice of x: the slice/cast chains become one.
#include "PatternUtil.h"

#include "rewrite/Schema.h"

#include <algorithm>
#include <unordered_set>

namespace fxlens::patterns {

namespace {

/// A dtype conversion in any spelling: x.long() (and int/float/...), x.to(dtype), aten._to_copy(x,
/// dtype=...), prims.convert_element_type(x, dtype). `key` is equal for equal conversions.
struct Cast {
    Node *input = nullptr;
    std::string key;
};

std::optional<Cast> asCast(Node *n)
{
    static const std::unordered_set<std::string> methods = {"long", "int", "float", "double", "half", "bool", "bfloat16", "short"};
    Cast c;
    if (n->op() == OpKind::CallMethod && methods.count(n->target()) && n->args().size() == 1 && n->args()[0].isNode() &&
        n->kwargs().empty()) {
        c.input = n->args()[0].toNode();
        c.key = "method:" + n->target();
        return c;
    }
    if (n->op() == OpKind::CallMethod && n->target() == "to" && n->args().size() == 2 && n->args()[0].isNode() &&
        n->args()[1].kind() == Argument::Kind::Dtype && n->kwargs().empty()) {
        c.input = n->args()[0].toNode();
        c.key = "to:" + n->args()[1].text();
        return c;
    }
    if (n->is(OpKind::CallFunction, "aten._to_copy.default") && n->args().size() == 1 && n->args()[0].isNode()) {
        std::string dtype;
        for (const auto &[k, v] : n->kwargs()) {
            if (k == "dtype" && v.kind() == Argument::Kind::Dtype)
                dtype = v.text();
            else if (!v.isNone() && k != "layout" && k != "device")
                return std::nullopt;
        }
        if (dtype.empty())
            return std::nullopt;
        c.input = n->args()[0].toNode();
        c.key = "_to_copy:" + dtype;
        return c;
    }
    if (n->is(OpKind::CallFunction, "prims.convert_element_type.default") && n->args().size() == 2 && n->args()[0].isNode()) {
        c.input = n->args()[0].toNode();
        c.key = "convert:" + n->args()[1].toString();
        return c;
    }
    return std::nullopt;
}

class CastThroughStack : public Pattern {
public:
    CastThroughStack()
    {
        name = "cast_through_stack";
        anchors = {{OpKind::CallFunction, "torch.stack"}, {OpKind::CallFunction, "aten.stack.default"}};
        labels = {"vertical"};
        description = "stack([cast(a_0), ..., cast(a_n)], d) -> cast(stack([a_0, ..., a_n], d)) (one conversion for n; the stacked "
                      "slices of one tensor then collapse into one slice)";
    }
    bool read(Node *n, StackView &sv, std::vector<Cast> &casts, MatchFailure &why) const
    {
        auto v = asStack(n, why);
        if (!v)
            return false;
        sv = *v;
        casts.clear();
        for (Node *in : sv.inputs) {
            auto c = asCast(in);
            if (!c)
                return fail(why, in, "stack input", "a dtype conversion (x.long(), x.to(dtype), _to_copy)", in->target());
            if (!casts.empty() && c->key != casts[0].key)
                return fail(why, in, "stack input", "the same conversion as the others", c->key);
            if (!staticShape(c->input))
                return fail(why, c->input, "shape", "static", "unknown");
            casts.push_back(*c);
        }
        if (casts.size() < 2)
            return fail(why, n, "stack inputs", ">= 2 conversions", std::to_string(casts.size()));
        return true;
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        StackView sv;
        std::vector<Cast> casts;
        if (!read(n, sv, casts, why))
            return false;
        m.nodes = {n};
        m.nodes.insert(m.nodes.end(), sv.inputs.begin(), sv.inputs.end());
        m.removes = {n};
        m.summary = "one " + casts[0].key + " after " + n->name() + " instead of " + std::to_string(casts.size());
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        StackView sv;
        std::vector<Cast> casts;
        MatchFailure why;
        if (!read(m.anchor, sv, casts, why))
            return;
        const bool aten = isAten(m.anchor);
        Emit e = emitAt(rw, m.anchor, m.anchor, aten, {m.anchor->name()});
        std::vector<Node *> raw;
        raw.reserve(casts.size());
        for (const auto &c : casts)
            raw.push_back(c.input);
        Node *st = e.call(m.anchor->target(), {Argument::list(nodeList(raw)), Argument::integer(sv.dim)}, {}, "stack",
                          tensorLike(raw[0], *staticShape(m.anchor)));
        Node *proto = sv.inputs[0];
        auto args = proto->args();
        args[0] = Argument::node(st);
        Node *c = rw.create(proto->op(), proto->target(), args, proto->kwargs(),
                            proto->op() == OpKind::CallMethod ? proto->target() : "cast", m.anchor, m.anchor, {m.anchor->name()});
        c->meta().val = m.anchor->meta().val;
        rw.replaceAllUsesWith(m.anchor, c);
        rw.eraseIfDead(m.anchor);
        for (Node *in : sv.inputs)
            rw.eraseIfDead(in);
    }
};

/// One lookup of a batch_embedding group.
struct Lookup {
    Node *node = nullptr;
    Node *ids = nullptr;
    Node *table = nullptr;  ///< [V, D] (nullptr for an nn.Embedding call_module: its parameter)
    std::string tableParam; ///< nn.Embedding: the weight's qualified name
    std::string dtype;
    int64_t rows = 0, dim = 0;
};

std::optional<Lookup> asLookup(Node *n)
{
    Lookup l;
    l.node = n;
    if (n->op() == OpKind::CallModule) {
        // nn.Embedding as a leaf module (symbolic_trace graphs): a plain lookup in its weight.
        const Graph &g = *n->graph();
        const ir::ModuleInfo *mod = g.module(n->target());
        if (!mod || mod->type.substr(mod->type.rfind('.') + 1) != "Embedding" || n->args().size() != 1 || !n->args()[0].isNode() ||
            !n->kwargs().empty())
            return std::nullopt;
        for (const char *k : {"padding_idx", "max_norm"})
            if (const Argument *a = mod->attr(k); a && !a->isNone())
                return std::nullopt;
        for (const char *k : {"scale_grad_by_freq", "sparse"})
            if (const Argument *a = mod->attr(k); a && !(a->isBool() && !a->toBool()))
                return std::nullopt;
        for (const auto &p : g.params)
            if (p.name == n->target() + ".weight" && p.shape.size() == 2) {
                l.tableParam = p.name;
                l.rows = p.shape[0];
                l.dim = p.shape[1];
                l.dtype = p.dtype;
            }
        l.ids = n->args()[0].toNode();
        if (l.tableParam.empty() || !staticShape(l.ids) || !l.ids->meta().val.isTensor())
            return std::nullopt;
        return l;
    }
    if (n->is(OpKind::CallFunction, "torch.nn.functional.embedding")) {
        const OpSchema *s = schemaFor(n->op(), n->target());
        std::vector<Argument> in;
        if (!s || !normalizedArgs(n, *s, in) || in.size() < 2 || !in[0].isNode() || !in[1].isNode())
            return std::nullopt;
        // Only plain lookups: no padding_idx, max_norm, scale_grad_by_freq or sparse gradients.
        for (size_t i = 2; i < in.size(); ++i) {
            const Argument &a = in[i];
            const bool plain = a.isNone() || (a.isBool() && !a.toBool()) || (i == 4 && a.isFloat() && a.toFloat() == 2.0) ||
                (i == 4 && a.isInt() && a.toInt() == 2);
            if (!plain)
                return std::nullopt;
        }
        l.ids = in[0].toNode();
        l.table = in[1].toNode();
    } else if (n->is(OpKind::CallFunction, "aten.embedding.default")) {
        const auto &a = n->args();
        if (a.size() < 2 || !a[0].isNode() || !a[1].isNode() || !n->kwargs().empty())
            return std::nullopt;
        if ((a.size() > 2 && !(a[2].isInt() && a[2].toInt() == -1)) || (a.size() > 3 && !(a[3].isBool() && !a[3].toBool())) ||
            (a.size() > 4 && !(a[4].isBool() && !a[4].toBool())))
            return std::nullopt;
        l.table = a[0].toNode();
        l.ids = a[1].toNode();
    } else {
        return std::nullopt;
    }
    auto t = staticShape(l.table);
    if (!t || t->size() != 2 || !staticShape(l.ids) || !l.ids->meta().val.isTensor())
        return std::nullopt;
    l.rows = (*t)[0];
    l.dim = (*t)[1];
    l.dtype = l.table->meta().val.tensor.dtype;
    return l;
}

constexpr size_t kMinLookups = 2;

class BatchEmbedding : public Pattern {
public:
    BatchEmbedding()
    {
        name = "batch_embedding";
        anchors = {{OpKind::CallFunction, "torch.nn.functional.embedding"},
                   {OpKind::CallFunction, "aten.embedding.default"},
                   {OpKind::CallModule, ""}};
        phase = 1;
        labels = {"horizontal"};
        description = "N × embedding(ids_i, T_i), equal dims and id shapes -> embedding(stack(ids) + offsets, cat(T)) -> unbind "
                      "(equal table sizes: offsets by arange)";
    }
    static std::string key(const Lookup &l)
    {
        const std::string form = l.node->op() == OpKind::CallModule ? std::string("module") : l.node->target();
        return form + "|" + std::to_string(l.dim) + "|" + l.dtype + "|" + l.ids->meta().val.tensor.toString();
    }
    bool group(Node *n, std::vector<Lookup> &out, std::vector<Node *> &toMove, MatchFailure &why) const
    {
        auto a = asLookup(n);
        if (!a)
            return fail(why, n, "embedding", "a plain lookup (no padding_idx/max_norm) in a static [V, D] table", n->target());
        if (n->users().empty())
            return fail(why, n, "users", "a used value", "none");
        if (!scan().ctx)
            return fail(why, n, "engine", "a session (the anchor index)", "none");
        const std::string k = key(*a);
        Graph &g = *n->graph();
        for (Node *c : candidates(g)) {
            auto l = asLookup(c);
            if (l && !c->users().empty() && key(*l) == k && l->rows == a->rows)
                out.push_back(*l);
        }
        std::sort(out.begin(), out.end(), [&](const Lookup &x, const Lookup &y) { return g.before(x.node, y.node); });
        if (out.size() < kMinLookups)
            return fail(why, n, "group",
                        std::to_string(kMinLookups) + " or more lookups of dim " + std::to_string(a->dim) + " in tables of " +
                            std::to_string(a->rows) + " rows with ids like " + a->ids->name(),
                        std::to_string(out.size()));
        // Ids and tables move before the first lookup with what they read; none may read a lookup.
        std::unordered_set<Node *> members;
        std::vector<Node *> operands;
        for (const auto &l : out) {
            members.insert(l.node);
            operands.push_back(l.ids);
            operands.push_back(l.table);
        }
        Node *blocker = nullptr;
        auto moved = hoistBefore(out.front().node, operands, members, blocker);
        if (!moved)
            return fail(why, blocker, "ids and tables", "independent of the lookups", "reads one of them");
        toMove = std::move(*moved);
        return true;
    }
    /// The context of the call in progress and, from one scan per graph version, the nn.Embedding
    /// modules of the graph; the calling thread's (perThread).
    struct Scan {
        const MatchContext *ctx = nullptr;
        uint64_t scanned = ~uint64_t(0);
        const Graph *graph = nullptr;
        std::vector<Node *> modules;
    };
    Scan &scan() const { return perThread<Scan>(this); }
    /// Every lookup node of the graph: the functional ones from the anchor index, nn.Embedding
    /// modules from one scan per graph version (modules are anchored on any call_module target).
    std::vector<Node *> candidates(const Graph &g) const
    {
        Scan &s = scan();
        std::vector<Node *> out;
        for (const auto &ak : anchors)
            if (!ak.target.empty())
                out.insert(out.end(), s.ctx->nodesWithKey(ak).begin(), s.ctx->nodesWithKey(ak).end());
        const uint64_t edits = s.ctx->editCount();
        if (edits != s.scanned || &g != s.graph || edits == 0) {
            s.modules.clear();
            bool any = false;
            for (const auto &m : g.modules)
                any = any || m.type.substr(m.type.rfind('.') + 1) == "Embedding";
            for (Node *c = any ? g.first() : nullptr; c; c = c->next())
                if (c->op() == OpKind::CallModule && asLookup(c))
                    s.modules.push_back(c);
            s.scanned = edits;
            s.graph = &g;
        }
        out.insert(out.end(), s.modules.begin(), s.modules.end());
        return out;
    }

    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        scan().ctx = m.context;
        std::vector<Lookup> group_;
        std::vector<Node *> toMove;
        if (!group(n, group_, toMove, why))
            return false;
        for (const auto &l : group_)
            m.nodes.push_back(l.node);
        m.removes = m.nodes;
        m.summary = "one lookup for " + std::to_string(group_.size()) + " embeddings of dim " + std::to_string(group_[0].dim);
        return true;
    }

    void rewrite(const Match &m, Rewriter &rw) const override
    {
        scan().ctx = m.context;
        std::vector<Lookup> ls;
        std::vector<Node *> toMove;
        MatchFailure why;
        if (!group(m.anchor, ls, toMove, why))
            return;
        Node *first = ls.front().node;
        for (Node *x : toMove)
            rw.moveBefore(x, first);
        const bool aten = isAten(first);
        std::vector<std::string> replaced;
        replaced.reserve(ls.size());
        for (const auto &l : ls)
            replaced.push_back(l.node->name());
        Emit e = emitAt(rw, first, first, aten, replaced);
        const int64_t k = int64_t(ls.size()), V = ls[0].rows, D = ls[0].dim;
        auto idShape = *staticShape(ls[0].ids);
        const int64_t at = int64_t(idShape.size()); // ids stacked last: [*S, k]
        // Ids: each distinct ids node once; when every one is used r times in a row (a wide and a deep
        // table per feature), stack the distinct ones and repeat_interleave them.
        std::vector<Node *> distinct;
        for (const auto &l : ls)
            if (distinct.empty() || distinct.back() != l.ids)
                distinct.push_back(l.ids);
        const int64_t r = k / int64_t(distinct.size());
        bool repeated = r > 1 && int64_t(distinct.size()) * r == k;
        for (int64_t i = 0; repeated && i < k; ++i)
            repeated = ls[size_t(i)].ids == distinct[size_t(i / r)];
        std::vector<Node *> idList;
        if (repeated)
            idList = distinct;
        else
            for (const auto &l : ls)
                idList.push_back(l.ids);
        auto stackShape = idShape;
        stackShape.push_back(int64_t(idList.size()));
        Node *ids = e.call(aten ? "aten.stack.default" : "torch.stack", {Argument::list(nodeList(idList)), Argument::integer(at)}, {},
                           "stack", tensorLike(ls[0].ids, stackShape));
        auto fullShape = idShape;
        fullShape.push_back(k);
        if (repeated)
            ids = e.call(aten ? "aten.repeat_interleave.self_int" : "torch.repeat_interleave",
                         {Argument::node(ids), Argument::integer(r), Argument::integer(at)}, {}, "repeat_interleave",
                         tensorLike(ls[0].ids, fullShape));
        // Offsets: table i starts at row i * V of the concatenated table.
        const std::string idType = ls[0].ids->meta().val.tensor.dtype;
        Node *offsets =
            e.call(aten ? "aten.arange.start_step" : "torch.arange", {Argument::integer(0), Argument::integer(k * V), Argument::integer(V)},
                   {{"dtype", Argument::tagged(Argument::Kind::Dtype, idType)}}, "arange", tensorLike(ls[0].ids, {k}));
        offsets->meta().val.tensor.dtype = idType;
        Node *shifted = e.call(aten ? "aten.add.Tensor" : "torch.add", {Argument::node(ids), Argument::node(offsets)}, {}, "add",
                               tensorLike(ls[0].ids, fullShape));
        std::vector<Node *> tables;
        for (const auto &l : ls) {
            Node *t = l.table;
            if (!t) { // nn.Embedding: read its weight
                t = rw.create(OpKind::GetAttr, l.tableParam, {}, {}, attrNodeName(l.tableParam), first, l.node);
                ir::TensorMeta tm;
                tm.shape = {{l.rows, {}}, {l.dim, {}}};
                tm.dtype = l.dtype;
                t->meta().val = ir::ValueMeta::ofTensor(tm);
                t->meta().val = tensorLike(t, {l.rows, l.dim});
            }
            tables.push_back(t);
        }
        Node *T = e.call(aten ? "aten.cat.default" : "torch.cat", {Argument::list(nodeList(tables)), Argument::integer(0)}, {}, "cat",
                         tensorLike(tables[0], {k * V, D}));
        auto outShape = fullShape;
        outShape.push_back(D);
        Node *y = aten
            ? e.call("aten.embedding.default", {Argument::node(T), Argument::node(shifted)}, {}, "embedding", tensorLike(T, outShape))
            : e.call("torch.nn.functional.embedding", {Argument::node(shifted), Argument::node(T)}, {}, "embedding",
                     tensorLike(T, outShape));
        Node *u =
            e.call(aten ? "aten.unbind.int" : "torch.unbind", {Argument::node(y), Argument::integer(at)}, {}, "unbind", ir::ValueMeta());
        u->meta().val.kind = ir::ValueMeta::Kind::Sequence;
        for (int64_t i = 0; i < k; ++i)
            u->meta().val.items.push_back(ls[size_t(i)].node->meta().val);
        std::vector<std::pair<Node *, Node *>> replace;
        for (int64_t i = 0; i < k; ++i) {
            e.replaced = {ls[size_t(i)].node->name()};
            Node *piece =
                e.call("operator.getitem", {Argument::node(u), Argument::integer(i)}, {}, "getitem", ls[size_t(i)].node->meta().val);
            replace.emplace_back(ls[size_t(i)].node, piece);
        }
        rw.replaceAllUsesWith(replace);
        for (const auto &l : ls)
            rw.eraseIfDead(l.node);
    }
};

} // namespace

void registerEmbeddingPatterns(Registrar &r)
{
    r.add(std::make_unique<BatchEmbedding>());
    r.add(std::make_unique<CastThroughStack>());
}

} // namespace fxlens::patterns
