// SPDX-License-Identifier: MIT
// Normalizations (catalog §2.A, #1-#12): one canonical spelling per op, so that the vertical
// patterns see torch.split(x, [sizes], dim=D>=0) and friends, whatever the model wrote.
#include "PatternUtil.h"

#include "rewrite/Schema.h"

namespace fxlens::patterns {

namespace {

/// Base of the normalizations: `canonical()` computes the canonical call; the pattern matches when it
/// differs from the node as written.
class Normalization : public Pattern {
public:
    struct Call {
        std::string target;
        std::vector<Argument> args;
        std::vector<std::pair<std::string, Argument>> kwargs;
    };
    virtual bool canonical(Node *n, Call &c, MatchFailure &why) const = 0;

    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        Call c;
        if (!canonical(n, c, why))
            return false;
        if (n->op() == OpKind::CallFunction && n->target() == c.target && n->args() == c.args && n->kwargs() == c.kwargs)
            return fail(why, n, name, "a non-canonical spelling", "already canonical");
        m.nodes = {n};
        std::string text = c.target + "(";
        for (size_t i = 0; i < c.args.size(); ++i)
            text += (i ? ", " : "") + c.args[i].toString();
        for (size_t i = 0; i < c.kwargs.size(); ++i)
            text += ((i || !c.args.empty()) ? ", " : "") + c.kwargs[i].first + "=" + c.kwargs[i].second.toString();
        m.summary = "normalize " + n->name() + " to " + text + ")";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Call c;
        MatchFailure why;
        if (canonical(m.anchor, c, why))
            canonicalize(rw, m.anchor, c.target, std::move(c.args), std::move(c.kwargs));
    }

protected:
    void init(std::string n, IrLevel lvl, std::vector<AnchorKey> a, std::string desc)
    {
        name = std::move(n);
        level = lvl;
        anchors = std::move(a);
        labels = {"normalization"};
        description = std::move(desc);
    }
    /// Inputs in schema order; false (with a reason) when the call does not fit its schema.
    static bool inputs(Node *n, std::vector<Argument> &in, MatchFailure &why)
    {
        const OpSchema *s = schemaFor(n->op(), n->target());
        std::string err;
        if (!s)
            return fail(why, n, "call", "an op with a known schema", n->target());
        if (!normalizedArgs(n, *s, in, &err))
            return fail(why, n, "arguments", "a call that fits the schema of " + n->target(), err);
        return true;
    }
    static bool dimArg(const Node *n, const Argument &d, int rank, int64_t &out, MatchFailure &why)
    {
        if (!d.isInt())
            return fail(why, n, "dim", "an int", d.toString());
        auto nd = normalizeDim(d.toInt(), rank);
        if (!nd)
            return fail(why, n, "dim", "a dim within the known rank", rank < 0 ? "no shape meta" : "out of range");
        out = *nd;
        return true;
    }
};

const std::vector<AnchorKey> kSplitAnchors = {
    {OpKind::CallFunction, "torch.split"}, {OpKind::CallMethod, "split"}, {OpKind::CallFunction, "torch.functional.split"}};

/// #1 normalize_split
class NormalizeSplit : public Normalization {
public:
    NormalizeSplit()
    {
        init("normalize_split", IrLevel::Torch, kSplitAnchors,
             "x.split(4, -1) / torch.split(x, 4, -1) -> torch.split(x, [4, 4, ...], dim=D>=0), sections from meta");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        auto s = asSplit(n, &why);
        if (!s)
            return false;
        c = {"torch.split", {Argument::node(s->input), Argument::list(intList(s->sizes))}, {{"dim", Argument::integer(s->dim)}}};
        return true;
    }
};

/// #2 normalize_unbind
class NormalizeUnbind : public Normalization {
public:
    NormalizeUnbind()
    {
        init("normalize_unbind", IrLevel::Torch, {{OpKind::CallFunction, "torch.unbind"}, {OpKind::CallMethod, "unbind"}},
             "x.unbind(-1) / torch.unbind(x, axis=...) -> torch.unbind(x, dim=D>=0)");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        std::vector<Argument> in;
        int64_t d;
        if (!inputs(n, in, why))
            return false;
        if (!in[0].isNode())
            return fail(why, n, "input", "a tensor node", in[0].toString());
        if (!dimArg(n, in[1], rankOf(in[0].toNode()), d, why))
            return false;
        c = {"torch.unbind", {in[0]}, {{"dim", Argument::integer(d)}}};
        return true;
    }
};

/// #3 normalize_cat
class NormalizeCat : public Normalization {
public:
    NormalizeCat()
    {
        init("normalize_cat", IrLevel::Torch,
             {{OpKind::CallFunction, "torch.cat"}, {OpKind::CallFunction, "torch.concat"}, {OpKind::CallFunction, "torch.concatenate"}},
             "torch.cat(ts, -1) / torch.concat(ts, axis=...) -> torch.cat(ts, dim=D>=0)");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        auto v = asCat(n, &why);
        if (!v)
            return false;
        c = {"torch.cat", {Argument::list(nodeList(v->inputs))}, {{"dim", Argument::integer(v->dim)}}};
        return true;
    }
};

/// #4 normalize_stack
class NormalizeStack : public Normalization {
public:
    NormalizeStack()
    {
        init("normalize_stack", IrLevel::Torch, {{OpKind::CallFunction, "torch.stack"}},
             "torch.stack(ts, -1) / axis= -> torch.stack(ts, dim=D>=0)");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        std::vector<Argument> in;
        int64_t d;
        if (!inputs(n, in, why))
            return false;
        if (!in[0].isSequence())
            return fail(why, n, "tensors", "a list", in[0].toString());
        if (!dimArg(n, in[1], rankOf(n), d, why))
            return false;
        c = {"torch.stack", {Argument::list(in[0].items())}, {{"dim", Argument::integer(d)}}};
        return true;
    }
};

/// #5 normalize_squeeze
class NormalizeSqueeze : public Normalization {
public:
    NormalizeSqueeze()
    {
        init("normalize_squeeze", IrLevel::Torch, {{OpKind::CallMethod, "squeeze"}, {OpKind::CallFunction, "torch.squeeze"}},
             "x.squeeze(-1) / torch.squeeze(x, [d]) -> torch.squeeze(x, dim=D>=0) (or torch.squeeze(x))");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        std::vector<Argument> in;
        if (!inputs(n, in, why))
            return false;
        if (!in[0].isNode())
            return fail(why, n, "input", "a tensor node", in[0].toString());
        Argument d = in[1];
        if (d.isSequence() && d.items().size() == 1)
            d = d.items()[0];
        if (d.isNone()) {
            // squeeze() over a static shape names its size-1 dims, so that patterns that read a
            // squeeze of one dim (unbind pieces) see it.
            std::vector<Argument> ones;
            if (auto shape = staticShape(in[0].toNode()))
                for (size_t i = 0; i < shape->size(); ++i)
                    if ((*shape)[i] == 1)
                        ones.push_back(Argument::integer(int64_t(i)));
            if (ones.size() == 1)
                c = {"torch.squeeze", {in[0]}, {{"dim", ones[0]}}};
            else if (ones.size() > 1)
                c = {"torch.squeeze", {in[0]}, {{"dim", Argument::tuple(ones)}}};
            else
                c = {"torch.squeeze", {in[0]}, {}};
            return true;
        }
        if (d.isSequence()) {
            std::vector<Argument> dims;
            for (const auto &x : d.items()) {
                int64_t nd;
                if (!dimArg(n, x, rankOf(in[0].toNode()), nd, why))
                    return false;
                dims.push_back(Argument::integer(nd));
            }
            c = {"torch.squeeze", {in[0]}, {{"dim", Argument::tuple(dims)}}};
            return true;
        }
        int64_t nd;
        if (!dimArg(n, d, rankOf(in[0].toNode()), nd, why))
            return false;
        c = {"torch.squeeze", {in[0]}, {{"dim", Argument::integer(nd)}}};
        return true;
    }
};

/// #6 normalize_reshape
class NormalizeReshape : public Normalization {
public:
    NormalizeReshape()
    {
        init("normalize_reshape", IrLevel::Torch, {{OpKind::CallMethod, "reshape"}, {OpKind::CallFunction, "torch.reshape"}},
             "x.reshape(b, -1) -> torch.reshape(x, [static shape from meta])");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        std::vector<Argument> in;
        if (!inputs(n, in, why))
            return false;
        auto shape = staticShape(n);
        if (!shape)
            return fail(why, n, "shape", "a static output shape in meta", "symbolic or missing");
        if (!in[0].isNode())
            return fail(why, n, "input", "a tensor node", in[0].toString());
        c = {"torch.reshape", {in[0], Argument::list(intList(*shape))}, {}};
        return true;
    }
};

/// #7 normalize_clamp
class NormalizeClamp : public Normalization {
public:
    NormalizeClamp()
    {
        init("normalize_clamp", IrLevel::Torch,
             {{OpKind::CallMethod, "clamp"},
              {OpKind::CallMethod, "clip"},
              {OpKind::CallFunction, "torch.clamp"},
              {OpKind::CallFunction, "torch.clip"}},
             "x.clamp(0, 1) / torch.clip(x, min=0) -> torch.clamp(x, min=..., max=...)");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        std::vector<Argument> in;
        if (!inputs(n, in, why))
            return false;
        if (!staticShape(n))
            return fail(why, n, "shape", "static shapes", "symbolic or missing");
        c = {"torch.clamp", {in[0]}, {{"min", in[1]}, {"max", in[2]}}};
        return true;
    }
};

/// #8 normalize_detach
class NormalizeDetach : public GraphPattern {
public:
    NormalizeDetach()
    {
        name = "normalize_detach";
        level = IrLevel::Torch;
        labels = {"normalization"};
        description = "x.detach() -> torch.detach(x)";
        PatternBuilder b;
        int x = b.input("x");
        int d = b.call("detach", {"method:detach"}, {PArg::ref(x)});
        graph = b.build(d);
        deriveAnchors();
        summarize = [](const Bindings &bb) {
            return "normalize " + bb.node("detach")->name() + " to torch.detach(" + bb.node("x")->name() + ")";
        };
        apply = [](const Bindings &bb, Rewriter &rw) {
            canonicalize(rw, bb.node("detach"), "torch.detach", {Argument::node(bb.node("x"))}, {});
        };
    }
};

/// #9 numpy_compat: numpy keyword spellings on torch functions.
class NumpyCompat : public Pattern {
public:
    NumpyCompat()
    {
        name = "numpy_compat";
        level = IrLevel::Torch;
        anchors = {{OpKind::CallFunction, ""}};
        labels = {"normalization"};
        description = "torch.f(..., axis=, keepdims=, x=, a=, x1=, x2=) -> dim=, keepdim=, input=, other=";
    }
    static const char *rename(const std::string &k) { return numpyKeyword(k); }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        if (!ir::Target::parse(n->target()).inNamespace("torch"))
            return fail(why, n, "target", "a torch.* function", n->target());
        for (const auto &kv : n->kwargs())
            if (const char *to = rename(kv.first)) {
                if (n->kwarg(to))
                    return fail(why, n, "keyword " + kv.first, "no '" + std::string(to) + "' beside it", "both");
                m.nodes = {n};
                m.summary = "rename keyword " + kv.first + " to " + to + " in " + n->name();
                return true;
            }
        return fail(why, n, "keywords", "a numpy spelling (axis, keepdims, x, a, x1, x2)", "none");
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto kw = m.anchor->kwargs();
        for (auto &kv : kw)
            if (const char *to = rename(kv.first))
                kv.first = to;
        rw.setInputs(m.anchor, m.anchor->args(), kw);
    }
};

/// #10 normalize_cat_aten
class NormalizeCatAten : public Normalization {
public:
    NormalizeCatAten()
    {
        init("normalize_cat_aten", IrLevel::Aten, {{OpKind::CallFunction, "aten.cat.default"}}, "aten.cat(ts, -1) -> aten.cat(ts, D>=0)");
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        auto v = asCat(n, &why);
        if (!v)
            return false;
        c = {"aten.cat.default", {Argument::list(nodeList(v->inputs)), Argument::integer(v->dim)}, {}};
        return true;
    }
};

/// #11 normalize_split_aten: aten.split.Tensor -> aten.split_with_sizes with the exact sections from
/// meta (an uneven split of 10 by 4 gives [4, 4, 2]; pytorch #197080 wrote [4, 4, 4]).
/// #12 normalize_split_with_size_aten: aten.split_with_sizes(x, sizes, dim=-1) -> positional, D >= 0.
/// Both have one canonical form: aten.split_with_sizes(x, sizes, D).
class NormalizeSplitAten : public Normalization {
public:
    NormalizeSplitAten(std::string n, std::string anchor, std::string desc)
    {
        init(std::move(n), IrLevel::Aten, {{OpKind::CallFunction, std::move(anchor)}}, std::move(desc));
    }
    bool canonical(Node *n, Call &c, MatchFailure &why) const override
    {
        auto s = asSplit(n, &why);
        if (!s)
            return false;
        c = {"aten.split_with_sizes.default", {Argument::node(s->input), Argument::list(intList(s->sizes)), Argument::integer(s->dim)}, {}};
        return true;
    }
};

} // namespace

void registerNormalizations(Registrar &r)
{
    auto add = [&](std::unique_ptr<Pattern> p) { r.add(std::move(p)); };
    add(std::make_unique<NormalizeSplit>());
    add(std::make_unique<NormalizeUnbind>());
    add(std::make_unique<NormalizeCat>());
    add(std::make_unique<NormalizeStack>());
    add(std::make_unique<NormalizeSqueeze>());
    add(std::make_unique<NormalizeReshape>());
    add(std::make_unique<NormalizeClamp>());
    add(std::make_unique<NormalizeDetach>());
    add(std::make_unique<NumpyCompat>());
    add(std::make_unique<NormalizeCatAten>());
    add(std::make_unique<NormalizeSplitAten>(
        "normalize_split_aten", "aten.split.Tensor",
        "aten.split.Tensor(x, 4, -1) -> aten.split_with_sizes(x, [4, 4, 2], D>=0), sections from meta"));
    add(std::make_unique<NormalizeSplitAten>("normalize_split_with_size_aten", "aten.split_with_sizes.default",
                                             "aten.split_with_sizes(x, sizes, dim=-1) -> aten.split_with_sizes(x, sizes, D>=0)"));
}

} // namespace fxlens::patterns
