// SPDX-License-Identifier: MIT
#include "lang/PatternLang.h"

#include "rewrite/OpUtil.h"
#include "rewrite/Rewriter.h"
#include "rewrite/Schema.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace fxlens::lang {

using ir::Argument;
using ir::Node;
using ir::OpKind;
using namespace rewrite;

// --- vocabulary ---------------------------------------------------------------------------------------

namespace {

const std::vector<std::string> &knownFunctions()
{
    static const std::vector<std::string> v = [] {
        std::vector<std::string> out;
        for (const char *f : {"split", "cat", "concat", "concatenate", "stack", "unbind", "chunk", "squeeze", "unsqueeze",
                              "reshape", "flatten", "unflatten", "movedim", "permute", "transpose", "narrow", "select",
                              "index_select", "tanh", "sigmoid", "relu", "gelu", "exp", "log", "abs", "neg", "sqrt", "rsqrt",
                              "sum", "mean", "amax", "amin", "max", "min", "mul", "add", "sub", "div", "matmul", "mm", "bmm",
                              "addmm", "baddbmm", "einsum", "clamp", "clip", "detach", "nan_to_num", "where", "zeros_like",
                              "ones_like", "flip", "roll", "t", "softmax", "log_softmax", "dropout", "layer_norm", "linear",
                              "split_with_sizes", "tensor_split", "hstack", "vstack", "full_like", "pow", "square", "erf",
                              "maximum", "minimum", "cumsum", "prod", "norm", "clone", "contiguous", "expand", "repeat",
                              "tile", "gather", "scatter", "embedding", "conv2d", "batch_norm", "silu", "sin", "cos"})
            out.push_back(std::string("torch.") + f);
        for (const char *f : {"relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "layer_norm",
                              "linear", "embedding", "conv2d", "batch_norm", "normalize", "pad", "leaky_relu", "elu"})
            out.push_back(std::string("torch.nn.functional.") + f);
        out.push_back("torch.functional.einsum");
        out.push_back("torch.functional.split");
        for (const char *f : {"getitem", "add", "sub", "mul", "truediv", "floordiv", "neg", "matmul", "mod", "pow"})
            out.push_back(std::string("operator.") + f);
        for (const char *f :
             {"split.Tensor", "split_with_sizes.default", "cat.default", "stack.default", "unbind.int", "select.int",
              "unsqueeze.default", "squeeze.dim", "squeeze.dims", "squeeze.default", "view.default", "_unsafe_view.default",
              "reshape.default", "permute.default", "slice.Tensor", "mm.default", "addmm.default", "bmm.default",
              "baddbmm.default", "mul.Tensor", "add.Tensor", "sub.Tensor", "div.Tensor", "sum.dim_IntList", "sum.default",
              "mean.dim", "tanh.default", "sigmoid.default", "relu.default", "clone.default", "expand.default",
              "transpose.int", "t.default", "narrow.default", "movedim.int", "native_layer_norm.default",
              "layer_norm.default", "detach.default", "clamp.default", "exp.default", "neg.default", "abs.default",
              "flatten.using_ints", "unflatten.int", "alias.default", "copy.default", "where.self", "gelu.default",
              "silu.default", "_softmax.default", "split_with_sizes_copy.default", "cat.out"})
            out.push_back(std::string("aten.") + f);
        return out;
    }();
    return v;
}

const std::vector<std::string> &knownMethods()
{
    static const std::vector<std::string> v = {
        "split", "unbind", "chunk", "squeeze", "unsqueeze", "reshape", "view", "flatten", "unflatten", "movedim",
        "permute", "transpose", "narrow", "select", "tanh", "sigmoid", "relu", "exp", "log", "abs", "neg", "sum",
        "mean", "mul", "add", "sub", "div", "matmul", "clamp", "detach", "contiguous", "expand", "repeat", "t",
        "size", "dim", "float", "half", "to", "softmax", "flip", "clone", "masked_fill", "index_select", "gather",
        "nan_to_num", "sqrt", "pow", "max", "min", "amax", "type_as", "expand_as", "view_as", "reshape_as", "replace"};
    return v;
}

const std::vector<std::string> &builtins()
{
    static const std::vector<std::string> v = {"len",   "sum",   "min",   "max",   "abs",      "range", "list",
                                               "int",   "float", "bool",  "shape", "dtype",    "ndim",  "rank",
                                               "users", "numel", "all_equal", "all_distinct", "norm_dim", "all_users_getitem", "is_node"};
    return v;
}

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string closest(const std::string &name, const std::vector<std::string> &options)
{
    std::string best;
    size_t bestD = std::max<size_t>(2, name.size() / 4) + 1;
    for (const auto &o : options) {
        size_t d = editDistance(name, o);
        if (d < bestD) {
            bestD = d;
            best = o;
        }
    }
    return best;
}

std::string didYouMean(const std::string &s) { return s.empty() ? std::string() : "; did you mean '" + s + "'?"; }

struct CompileError {
    Loc loc;
    std::string message;
};

[[noreturn]] void error(Loc loc, std::string msg) { throw CompileError{loc, std::move(msg)}; }

/// "torch.split" for torch.split, "torch.nn.functional.relu" for F.relu; "" when `e` is no dotted name.
std::string dotted(const Expr &e)
{
    if (e.kind == Expr::Kind::Name)
        return e.s == "F" ? "torch.nn.functional" : e.s;
    if (e.kind == Expr::Kind::Attr) {
        std::string base = dotted(*e.a[0]);
        return base.empty() ? std::string() : base + "." + e.s;
    }
    return {};
}

bool isTargetRoot(const std::string &d)
{
    return d.rfind("torch.", 0) == 0 || d.rfind("aten.", 0) == 0 || d.rfind("operator.", 0) == 0;
}

void checkTarget(const std::string &t, Loc loc)
{
    const auto &k = knownFunctions();
    if (std::find(k.begin(), k.end(), t) != k.end())
        return;
    error(loc, "unknown op '" + t + "'" + didYouMean(closest(t, k)));
}

} // namespace

std::string suggestOp(const std::string &name) { return closest(name, knownFunctions()); }
std::string closestName(const std::string &name, const std::vector<std::string> &options) { return closest(name, options); }

// --- values -----------------------------------------------------------------------------------------------

namespace {

struct Value {
    enum class K : uint8_t { None, Bool, Int, Float, Str, List, Node };
    K k = K::None;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<Value> list;
    Node *node = nullptr;

    static Value integer(int64_t v)
    {
        Value x;
        x.k = K::Int;
        x.i = v;
        return x;
    }
    static Value boolean(bool v)
    {
        Value x;
        x.k = K::Bool;
        x.i = v;
        return x;
    }
    static Value ofNode(Node *n)
    {
        Value x;
        x.k = K::Node;
        x.node = n;
        return x;
    }
    bool isNum() const { return k == K::Int || k == K::Bool || k == K::Float; }
    double num() const { return k == K::Float ? f : double(i); }
    std::string str() const
    {
        switch (k) {
        case K::None: return "None";
        case K::Bool: return i ? "True" : "False";
        case K::Int: return std::to_string(i);
        case K::Float: {
            std::ostringstream o;
            o << f;
            return o.str();
        }
        case K::Str: return "'" + s + "'";
        case K::Node: return node ? node->name() : "<new node>";
        case K::List: {
            std::string r = "[";
            for (size_t j = 0; j < list.size(); ++j)
                r += (j ? ", " : "") + list[j].str();
            return r + "]";
        }
        }
        return "?";
    }
};

Value fromArg(const Argument &a)
{
    Value v;
    if (a.isNone())
        return v;
    if (a.isNode())
        return Value::ofNode(a.toNode());
    if (a.isBool())
        return Value::boolean(a.toBool());
    if (a.isInt())
        return Value::integer(a.toInt());
    if (a.isFloat()) {
        v.k = Value::K::Float;
        v.f = a.toFloat();
        return v;
    }
    if (a.isSequence()) {
        v.k = Value::K::List;
        for (const auto &x : a.items())
            v.list.push_back(fromArg(x));
        return v;
    }
    v.k = Value::K::Str;
    v.s = a.isString() ? a.text() : a.toString();
    return v;
}

Argument toArg(const Value &v)
{
    switch (v.k) {
    case Value::K::None: return Argument::none();
    case Value::K::Bool: return Argument::boolean(v.i != 0);
    case Value::K::Int: return Argument::integer(v.i);
    case Value::K::Float: return Argument::real(v.f);
    case Value::K::Str: return Argument::string(v.s);
    case Value::K::Node: return Argument::node(v.node);
    case Value::K::List: {
        std::vector<Argument> items;
        for (const auto &x : v.list)
            items.push_back(toArg(x));
        return Argument::list(std::move(items));
    }
    }
    return Argument::none();
}

bool truthy(const Value &v)
{
    switch (v.k) {
    case Value::K::None: return false;
    case Value::K::Bool:
    case Value::K::Int: return v.i != 0;
    case Value::K::Float: return v.f != 0;
    case Value::K::Str: return !v.s.empty();
    case Value::K::List: return !v.list.empty();
    case Value::K::Node: return true;
    }
    return false;
}

bool equal(const Value &a, const Value &b)
{
    if (a.isNum() && b.isNum())
        return a.num() == b.num();
    if (a.k != b.k)
        return false;
    switch (a.k) {
    case Value::K::None: return true;
    case Value::K::Str: return a.s == b.s;
    case Value::K::Node: return a.node == b.node;
    case Value::K::List:
        if (a.list.size() != b.list.size())
            return false;
        for (size_t j = 0; j < a.list.size(); ++j)
            if (!equal(a.list[j], b.list[j]))
                return false;
        return true;
    default: return false;
    }
}

} // namespace


// --- shapes of the nodes a replacement creates ----------------------------------------------------------

namespace {

using Shape = std::vector<int64_t>;

std::optional<Shape> shapeArg(const Argument &a)
{
    if (a.isNode())
        return rewrite::staticShape(a.toNode());
    return std::nullopt;
}

std::optional<std::vector<int64_t>> intsArg(const Argument *a)
{
    if (!a)
        return std::nullopt;
    if (a->isInt())
        return std::vector<int64_t>{a->toInt()};
    if (!a->isSequence())
        return std::nullopt;
    std::vector<int64_t> v;
    for (const auto &x : a->items()) {
        if (!x.isInt())
            return std::nullopt;
        v.push_back(x.toInt());
    }
    return v;
}

int64_t nd(int64_t d, size_t rank) { return d < 0 ? d + int64_t(rank) : d; }

std::optional<Shape> broadcast(Shape a, Shape b)
{
    if (a.size() < b.size())
        std::swap(a, b);
    Shape out = a;
    for (size_t i = 0; i < b.size(); ++i) {
        int64_t &x = out[a.size() - b.size() + i];
        const int64_t y = b[i];
        if (x == 1)
            x = y;
        else if (y != 1 && y != x)
            return std::nullopt;
    }
    return out;
}

/// The op name without namespace and overload: "aten.unsqueeze.default" -> "unsqueeze".
std::string baseOp(const Node *n)
{
    std::string t = n->target();
    if (t.rfind("aten.", 0) == 0) {
        t = t.substr(5);
        return t.substr(0, t.find('.'));
    }
    return t.substr(t.rfind('.') + 1);
}

/// Shape rules for the ops replacements usually create. Unknown ops keep no meta (later patterns
/// that need shapes then do not match them), never a wrong one.
void inferMeta(Node *n)
{
    const auto &args = n->args();
    if (args.empty())
        return;
    const std::string op = baseOp(n);
    auto in = shapeArg(args[0]);
    const Node *like = args[0].isNode() ? args[0].toNode() : nullptr;
    auto arg = [&](size_t i, const char *kw) { return n->arg(i, kw); };
    auto set = [&](const Shape &s, const Node *l) {
        if (l)
            n->meta().val = rewrite::tensorLike(l, s);
    };
    static const std::set<std::string> same = {"tanh", "sigmoid", "relu", "neg", "abs", "exp", "log", "clone", "detach",
                                               "contiguous", "alias", "gelu", "silu", "sqrt", "rsqrt", "nan_to_num", "clamp"};
    if (op == "getitem" && like) {
        const auto &v = like->meta().val;
        if (v.kind == ir::ValueMeta::Kind::Sequence && args.size() > 1 && args[1].isInt()) {
            int64_t i = nd(args[1].toInt(), v.items.size());
            if (i >= 0 && size_t(i) < v.items.size())
                n->meta().val = v.items[size_t(i)];
        }
        return;
    }
    if (op == "cat" || op == "concat" || op == "stack") {
        if (!args[0].isSequence() || args[0].items().empty())
            return;
        std::vector<Shape> parts;
        for (const auto &x : args[0].items()) {
            auto s = shapeArg(x);
            if (!s)
                return;
            parts.push_back(*s);
        }
        const Argument *dA = arg(1, "dim");
        int64_t d = dA && dA->isInt() ? dA->toInt() : 0;
        Shape out = parts[0];
        if (op == "stack") {
            d = nd(d, out.size() + 1);
            if (d < 0 || size_t(d) > out.size())
                return;
            out.insert(out.begin() + d, int64_t(parts.size()));
        } else {
            d = nd(d, out.size());
            if (d < 0 || size_t(d) >= out.size())
                return;
            out[size_t(d)] = 0;
            for (const auto &p : parts)
                out[size_t(d)] += p.size() == out.size() ? p[size_t(d)] : 0;
        }
        set(out, args[0].items()[0].toNode());
        return;
    }
    if (!in)
        return;
    Shape s = *in;
    if (same.count(op)) {
        set(s, like);
    } else if (op == "unsqueeze") {
        const Argument *d = arg(1, "dim");
        if (!d || !d->isInt())
            return;
        int64_t k = nd(d->toInt(), s.size() + 1);
        if (k < 0 || size_t(k) > s.size())
            return;
        s.insert(s.begin() + k, 1);
        set(s, like);
    } else if (op == "squeeze") {
        auto d = intsArg(arg(1, "dim"));
        Shape out;
        for (size_t i = 0; i < s.size(); ++i) {
            bool named = !d;
            if (d)
                for (auto k : *d)
                    named = named || nd(k, s.size()) == int64_t(i);
            if (!(named && s[i] == 1))
                out.push_back(s[i]);
        }
        set(out, like);
    } else if (op == "view" || op == "reshape" || op == "_unsafe_view") {
        auto shp = intsArg(arg(1, op == "view" ? "size" : "shape"));
        if (!shp)
            return;
        int64_t numel = 1, known = 1;
        int neg = -1;
        for (auto x : s)
            numel *= x;
        for (size_t i = 0; i < shp->size(); ++i) {
            if ((*shp)[i] == -1)
                neg = int(i);
            else
                known *= (*shp)[i];
        }
        if (neg >= 0 && known > 0)
            (*shp)[size_t(neg)] = numel / known;
        set(*shp, like);
    } else if (op == "movedim") {
        const Argument *a = arg(1, "source"), *b = arg(2, "destination");
        if (!a || !b || !a->isInt() || !b->isInt())
            return;
        int64_t from = nd(a->toInt(), s.size()), to = nd(b->toInt(), s.size());
        if (from < 0 || to < 0 || size_t(from) >= s.size() || size_t(to) >= s.size())
            return;
        int64_t v = s[size_t(from)];
        s.erase(s.begin() + from);
        s.insert(s.begin() + to, v);
        set(s, like);
    } else if (op == "permute") {
        auto p = intsArg(arg(1, "dims"));
        if (!p || p->size() != s.size())
            return;
        Shape out;
        for (auto k : *p) {
            const int64_t kk = nd(k, s.size());
            if (kk < 0 || size_t(kk) >= s.size())
                return;
            out.push_back(s[size_t(kk)]);
        }
        set(out, like);
    } else if (op == "transpose") {
        const Argument *a = arg(1, "dim0"), *b = arg(2, "dim1");
        if (!a || !b || !a->isInt() || !b->isInt())
            return;
        const int64_t x = nd(a->toInt(), s.size()), y = nd(b->toInt(), s.size());
        if (x < 0 || y < 0 || size_t(x) >= s.size() || size_t(y) >= s.size())
            return;
        std::swap(s[size_t(x)], s[size_t(y)]);
        set(s, like);
    } else if (op == "flatten") {
        const Argument *a = arg(1, "start_dim"), *b = arg(2, "end_dim");
        int64_t lo = nd(a && a->isInt() ? a->toInt() : 0, s.size()), hi = nd(b && b->isInt() ? b->toInt() : -1, s.size());
        if (lo < 0 || hi < lo || size_t(hi) >= s.size())
            return;
        int64_t p = 1;
        for (int64_t i = lo; i <= hi; ++i)
            p *= s[size_t(i)];
        s.erase(s.begin() + lo, s.begin() + hi + 1);
        s.insert(s.begin() + lo, p);
        set(s, like);
    } else if (op == "unflatten") {
        const Argument *a = arg(1, "dim");
        auto sizes = intsArg(arg(2, "sizes"));
        if (!a || !a->isInt() || !sizes)
            return;
        int64_t d = nd(a->toInt(), s.size());
        if (d < 0 || size_t(d) >= s.size())
            return;
        s.erase(s.begin() + d);
        s.insert(s.begin() + d, sizes->begin(), sizes->end());
        set(s, like);
    } else if (op == "narrow") {
        const Argument *d = arg(1, "dim"), *len = arg(3, "length");
        if (!d || !len || !d->isInt() || !len->isInt())
            return;
        const int64_t k = nd(d->toInt(), s.size());
        if (k < 0 || size_t(k) >= s.size())
            return;
        s[size_t(k)] = len->toInt();
        set(s, like);
    } else if (op == "select") {
        const Argument *d = arg(1, "dim");
        if (!d || !d->isInt())
            return;
        const int64_t k = nd(d->toInt(), s.size());
        if (k < 0 || size_t(k) >= s.size())
            return;
        s.erase(s.begin() + k);
        set(s, like);
    } else if (op == "mul" || op == "add" || op == "sub" || op == "div" || op == "truediv") {
        std::optional<Shape> other = args.size() > 1 ? shapeArg(args[1]) : std::nullopt;
        auto out = other ? broadcast(s, *other) : std::optional<Shape>(s);
        if (out)
            set(*out, like);
    } else if (op == "sum" || op == "mean" || op == "amax") {
        auto d = intsArg(arg(1, "dim"));
        const Argument *keep = arg(2, "keepdim");
        if (!d)
            return;
        const bool k = keep && keep->isBool() && keep->toBool();
        std::set<int64_t> drop;
        for (auto x : *d)
            drop.insert(nd(x, s.size()));
        Shape out;
        for (size_t i = 0; i < s.size(); ++i)
            if (!drop.count(int64_t(i)))
                out.push_back(s[i]);
            else if (k)
                out.push_back(1);
        set(out, like);
    } else if (op == "split" || op == "split_with_sizes") {
        const Argument *sz = arg(1, op == "split" && n->target().rfind("torch.", 0) == 0 ? "split_size_or_sections" : "split_size");
        if (!sz)
            sz = arg(1, "split_sizes");
        const Argument *dA = arg(2, "dim");
        int64_t d = nd(dA && dA->isInt() ? dA->toInt() : 0, s.size());
        if (!sz || d < 0 || size_t(d) >= s.size())
            return;
        std::vector<int64_t> sizes;
        if (sz->isInt()) {
            for (int64_t off = 0; off < s[size_t(d)]; off += sz->toInt())
                sizes.push_back(std::min(sz->toInt(), s[size_t(d)] - off));
        } else if (auto v = intsArg(sz)) {
            sizes = *v;
        } else {
            return;
        }
        ir::ValueMeta seq;
        seq.kind = ir::ValueMeta::Kind::Sequence;
        for (auto x : sizes) {
            Shape p = s;
            p[size_t(d)] = x;
            seq.items.push_back(rewrite::tensorLike(like, p));
        }
        n->meta().val = seq;
    } else if (op == "unbind") {
        const Argument *dA = arg(1, "dim");
        int64_t d = nd(dA && dA->isInt() ? dA->toInt() : 0, s.size());
        if (d < 0 || size_t(d) >= s.size())
            return;
        Shape p = s;
        p.erase(p.begin() + d);
        ir::ValueMeta seq;
        seq.kind = ir::ValueMeta::Kind::Sequence;
        for (int64_t i = 0; i < s[size_t(d)]; ++i)
            seq.items.push_back(rewrite::tensorLike(like, p));
        n->meta().val = seq;
    }
}

} // namespace

// --- the compiled program -----------------------------------------------------------------------------

struct FilePattern::Program {
    struct Comp {
        std::string loopCapture; ///< "*i" ("" when the element does not use the loop variable)
        std::string positions;   ///< ListOf positions list name
        ExprP lo, hi;
    };
    std::vector<std::string> tensorParams, captureParams;
    std::map<std::string, int> nodeVars; ///< assigned pattern variables -> pattern node
    std::vector<Comp> comps;
    std::vector<Stmt> asserts;
    const Func *replacement = nullptr;
    std::string anchorVar; ///< name of the anchor in the environment
};

namespace {

using Program = FilePattern::Program;

struct EvalError {
    Loc loc;
    std::string message;
};

/// Evaluates constraint and replacement expressions. In replacement mode, calls of ops and methods
/// on nodes create graph nodes through the rewriter.
struct Evaluator {
    std::map<std::string, Value> vars;
    Rewriter *rw = nullptr;
    bool simulate = false; ///< a dry run of the replacement: ops make placeholder nodes (null)
    Node *anchor = nullptr;
    std::vector<Node *> created;
    bool creates() const { return rw || simulate; }

    [[noreturn]] void fail(Loc loc, std::string m) { throw EvalError{loc, std::move(m)}; }

    /// Bounds on one evaluation: steps (expressions evaluated) and list elements made, so that no
    /// pattern file can make `optimize` run out of memory or time.
    static constexpr int64_t kMaxSteps = 2000000, kMaxCells = 4000000;
    int64_t steps = 0, cells = 0;
    void spend(int64_t n, Loc loc)
    {
        if (n < 0 || n > kMaxCells || (cells += n) > kMaxCells)
            fail(loc, "evaluation makes more than " + std::to_string(kMaxCells) + " list elements");
    }
    /// Checked integer arithmetic (Python's ints do not overflow; a pattern's int64 reports it).
    int64_t checked(Loc loc, const std::string &op, int64_t a, int64_t b)
    {
        int64_t r = 0;
        bool bad = false;
        if (op == "+")
            bad = __builtin_add_overflow(a, b, &r);
        else if (op == "-")
            bad = __builtin_sub_overflow(a, b, &r);
        else if (op == "*")
            bad = __builtin_mul_overflow(a, b, &r);
        else if (b == -1 && a == INT64_MIN)
            bad = true; // // and % of INT64_MIN by -1
        else if (op == "//")
            r = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
        else
            r = a - (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) * b;
        if (bad)
            fail(loc, "integer overflow in " + std::to_string(a) + " " + op + " " + std::to_string(b));
        return r;
    }

    Value shapeValue(Node *n, Loc loc)
    {
        auto s = rewrite::staticShape(n);
        if (!s)
            fail(loc, "no static shape recorded for node '" + n->name() + "'");
        Value v;
        v.k = Value::K::List;
        for (auto d : *s)
            v.list.push_back(Value::integer(d));
        return v;
    }
    Node *asNode(const Value &v, Loc loc, const char *what)
    {
        if (v.k != Value::K::Node)
            fail(loc, std::string(what) + " needs a node, got " + v.str());
        if (!v.node)
            fail(loc, std::string(what) + " of a node the replacement creates is not known before it runs");
        return v.node;
    }
    int64_t asInt(const Value &v, Loc loc)
    {
        if (v.k != Value::K::Int && v.k != Value::K::Bool)
            fail(loc, "expected an integer, got " + v.str());
        return v.i;
    }
    const std::vector<Value> &asList(const Value &v, Loc loc)
    {
        if (v.k != Value::K::List)
            fail(loc, "expected a list, got " + v.str());
        return v.list;
    }

    Value eval(const ExprP &e)
    {
        if (++steps > kMaxSteps)
            fail(e->loc, "evaluation takes more than " + std::to_string(kMaxSteps) + " steps");
        switch (e->kind) {
        case Expr::Kind::Name: {
            auto it = vars.find(e->s);
            if (it == vars.end())
                fail(e->loc, "'" + e->s + "' is not bound");
            return it->second;
        }
        case Expr::Kind::Int: return Value::integer(e->ival);
        case Expr::Kind::Float: {
            Value v;
            v.k = Value::K::Float;
            v.f = e->fval;
            return v;
        }
        case Expr::Kind::Str: {
            Value v;
            v.k = Value::K::Str;
            v.s = e->s;
            return v;
        }
        case Expr::Kind::None: return {};
        case Expr::Kind::Bool: return Value::boolean(e->ival != 0);
        case Expr::Kind::List: {
            Value v;
            v.k = Value::K::List;
            for (const auto &x : e->a)
                v.list.push_back(eval(x));
            return v;
        }
        case Expr::Kind::ListComp: {
            Value it = eval(e->a[1]);
            Value out;
            out.k = Value::K::List;
            auto saved = vars.find(e->s) != vars.end() ? std::optional<Value>(vars[e->s]) : std::nullopt;
            spend(int64_t(asList(it, e->a[1]->loc).size()), e->loc);
            for (const auto &x : asList(it, e->a[1]->loc)) {
                vars[e->s] = x;
                out.list.push_back(eval(e->a[0]));
            }
            if (saved)
                vars[e->s] = *saved;
            else
                vars.erase(e->s);
            return out;
        }
        case Expr::Kind::Not: return Value::boolean(!truthy(eval(e->a[0])));
        case Expr::Kind::And: {
            Value l = eval(e->a[0]);
            return truthy(l) ? eval(e->a[1]) : l;
        }
        case Expr::Kind::Or: {
            Value l = eval(e->a[0]);
            return truthy(l) ? l : eval(e->a[1]);
        }
        case Expr::Kind::Neg: {
            Value v = eval(e->a[0]);
            if (v.k == Value::K::Float) {
                v.f = -v.f;
                return v;
            }
            return Value::integer(checked(e->loc, "-", 0, asInt(v, e->loc)));
        }
        case Expr::Kind::Compare: return compare(e);
        case Expr::Kind::BinOp: return binop(e);
        case Expr::Kind::Subscript: return subscript(e);
        case Expr::Kind::Attr: {
            Value base = eval(e->a[0]);
            Node *n = asNode(base, e->loc, ("." + e->s).c_str());
            if (e->s == "shape")
                return shapeValue(n, e->loc);
            if (e->s == "ndim")
                return Value::integer(int64_t(shapeValue(n, e->loc).list.size()));
            if (e->s == "dtype") {
                Value v;
                v.k = Value::K::Str;
                v.s = n->meta().val.isTensor() ? n->meta().val.tensor.dtype : "";
                return v;
            }
            fail(e->loc, "unknown attribute '." + e->s + "' (shape, ndim, dtype)");
        }
        case Expr::Kind::Call: return call(e);
        case Expr::Kind::Slice: fail(e->loc, "a slice outside of a subscript");
        }
        fail(e->loc, "cannot evaluate this expression");
    }

    Value compare(const ExprP &e)
    {
        Value l = eval(e->a[0]), r = eval(e->a[1]);
        const std::string &op = e->s;
        if (op == "==")
            return Value::boolean(equal(l, r));
        if (op == "!=")
            return Value::boolean(!equal(l, r));
        if (op == "in") {
            for (const auto &x : asList(r, e->a[1]->loc))
                if (equal(l, x))
                    return Value::boolean(true);
            return Value::boolean(false);
        }
        if (!l.isNum() || !r.isNum())
            fail(e->loc, "'" + op + "' compares numbers, got " + l.str() + " and " + r.str());
        const double a = l.num(), b = r.num();
        return Value::boolean(op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b);
    }

    Value binop(const ExprP &e)
    {
        Value l = eval(e->a[0]), r = eval(e->a[1]);
        const std::string &op = e->s;
        if (op == "+" && l.k == Value::K::List && r.k == Value::K::List) {
            spend(int64_t(r.list.size()), e->loc);
            l.list.insert(l.list.end(), r.list.begin(), r.list.end());
            return l;
        }
        if (op == "*" && l.k == Value::K::List && r.k == Value::K::Int) {
            Value out;
            out.k = Value::K::List;
            if (r.i > 0 && !l.list.empty())
                spend(r.i > kMaxCells / int64_t(l.list.size()) ? -1 : r.i * int64_t(l.list.size()), e->loc);
            for (int64_t k = 0; k < r.i; ++k)
                out.list.insert(out.list.end(), l.list.begin(), l.list.end());
            return out;
        }
        if (op == "|")
            fail(e->loc, "'|' joins op alternatives in a pattern, not values");
        if (!l.isNum() || !r.isNum())
            fail(e->loc, "'" + op + "' needs numbers, got " + l.str() + " and " + r.str());
        if (l.k == Value::K::Float || r.k == Value::K::Float || op == "/") {
            Value v;
            v.k = Value::K::Float;
            const double a = l.num(), b = r.num();
            if ((op == "/" || op == "//" || op == "%") && b == 0)
                fail(e->loc, "division by zero");
            v.f = op == "+" ? a + b : op == "-" ? a - b : op == "*" ? a * b : op == "/" ? a / b : op == "//" ? std::floor(a / b) : std::fmod(a, b);
            return v;
        }
        const int64_t a = l.i, b = r.i;
        if ((op == "//" || op == "%") && b == 0)
            fail(e->loc, "division by zero");
        return Value::integer(checked(e->loc, op, a, b));
    }

    Value subscript(const ExprP &e)
    {
        Value base = eval(e->a[0]);
        const ExprP &idx = e->a[1];
        if (base.k == Value::K::Node && creates()) {
            // A getitem node in a replacement: s2[0].
            if (idx->kind == Expr::Kind::Slice)
                fail(idx->loc, "slicing a node: use torch.narrow or aten.slice.Tensor");
            Value i = eval(idx);
            return makeNode(OpKind::CallFunction, "operator.getitem", {Argument::node(base.node), toArg(i)}, {}, "getitem");
        }
        if (base.k == Value::K::Str) {
            const auto n = int64_t(base.s.size());
            auto norm = [&](int64_t k) { return std::clamp<int64_t>(k < 0 ? k + n : k, 0, n); };
            Value out;
            out.k = Value::K::Str;
            if (idx->kind == Expr::Kind::Slice) {
                int64_t lo = idx->a[0] ? norm(asInt(eval(idx->a[0]), idx->loc)) : 0;
                int64_t hi = idx->a[1] ? norm(asInt(eval(idx->a[1]), idx->loc)) : n;
                out.s = hi > lo ? base.s.substr(size_t(lo), size_t(hi - lo)) : std::string();
                return out;
            }
            int64_t k = asInt(eval(idx), idx->loc);
            k = k < 0 ? k + n : k;
            if (k < 0 || k >= n)
                fail(idx->loc, "index " + std::to_string(k) + " out of range for a string of " + std::to_string(n));
            out.s = base.s.substr(size_t(k), 1);
            return out;
        }
        const auto &l = asList(base, e->a[0]->loc);
        const auto n = int64_t(l.size());
        auto norm = [&](int64_t k, bool clamp) {
            if (k < 0)
                k += n;
            return clamp ? std::clamp<int64_t>(k, 0, n) : k;
        };
        if (idx->kind == Expr::Kind::Slice) {
            int64_t lo = idx->a[0] ? norm(asInt(eval(idx->a[0]), idx->loc), true) : 0;
            int64_t hi = idx->a[1] ? norm(asInt(eval(idx->a[1]), idx->loc), true) : n;
            Value out;
            out.k = Value::K::List;
            for (int64_t k = lo; k < hi; ++k)
                out.list.push_back(l[size_t(k)]);
            return out;
        }
        int64_t k = norm(asInt(eval(idx), idx->loc), false);
        if (k < 0 || k >= n)
            fail(idx->loc, "index " + std::to_string(k) + " out of range for a list of " + std::to_string(n));
        return l[size_t(k)];
    }

    Value makeNode(OpKind op, const std::string &target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kw,
                   const std::string &name)
    {
        if (!rw) {
            created.push_back(nullptr);
            return Value::ofNode(nullptr);
        }
        std::vector<std::string> replaced;
        if (anchor)
            replaced.push_back(anchor->name());
        Node *n = rw->create(op, target, std::move(args), std::move(kw), name, anchor, anchor, replaced);
        inferMeta(n);
        created.push_back(n);
        return Value::ofNode(n);
    }

    Value call(const ExprP &e)
    {
        const Expr &f = *e->a[0];
        std::vector<Value> args;
        for (size_t k = 1; k < e->a.size(); ++k)
            args.push_back(eval(e->a[k]));
        std::vector<std::pair<std::string, Value>> kw;
        for (const auto &[k, v] : e->kw)
            kw.push_back({k, eval(v)});
        std::string d = dotted(f);
        if (f.kind == Expr::Kind::BinOp && f.s == "|" && creates()) {
            // An instance spells the first alternative.
            const Expr *first = &f;
            while (first->kind == Expr::Kind::BinOp)
                first = first->a[0].get();
            d = dotted(*first);
        }
        if (isTargetRoot(d)) {
            if (!creates())
                fail(e->loc, "'" + d + "' creates a node: only a replacement may call ops");
            std::vector<Argument> a;
            for (const auto &v : args)
                a.push_back(toArg(v));
            std::vector<std::pair<std::string, Argument>> k;
            for (const auto &[n, v] : kw)
                k.push_back({n, toArg(v)});
            std::string base = d.rfind("aten.", 0) == 0 ? d.substr(5, d.find('.', 5) - 5) : d.substr(d.rfind('.') + 1);
            return makeNode(OpKind::CallFunction, d, std::move(a), std::move(k), base);
        }
        if (f.kind == Expr::Kind::Attr) {
            Value recv = eval(f.a[0]);
            if (recv.k == Value::K::Str && f.s == "replace") {
                if (args.size() != 2 || args[0].k != Value::K::Str || args[1].k != Value::K::Str)
                    fail(e->loc, "str.replace(old, new) takes two strings");
                Value out = recv;
                if (!args[0].s.empty())
                    for (size_t p = out.s.find(args[0].s); p != std::string::npos; p = out.s.find(args[0].s, p + args[1].s.size()))
                        out.s.replace(p, args[0].s.size(), args[1].s);
                return out;
            }
            Node *n = asNode(recv, f.loc, ("." + f.s + "()").c_str());
            if (f.s == "size" || f.s == "dim") {
                Value s = shapeValue(n, e->loc);
                if (f.s == "dim")
                    return Value::integer(int64_t(s.list.size()));
                if (args.empty())
                    return s;
                int64_t k = asInt(args[0], e->loc);
                if (k < 0)
                    k += int64_t(s.list.size());
                if (k < 0 || k >= int64_t(s.list.size()))
                    fail(e->loc, "dim out of range");
                return s.list[size_t(k)];
            }
            if (!creates())
                fail(e->loc, "'." + f.s + "()' creates a node: only a replacement may call methods");
            std::vector<Argument> a{Argument::node(n)};
            for (const auto &v : args)
                a.push_back(toArg(v));
            std::vector<std::pair<std::string, Argument>> k;
            for (const auto &[nm, v] : kw)
                k.push_back({nm, toArg(v)});
            return makeNode(OpKind::CallMethod, f.s, std::move(a), std::move(k), f.s);
        }
        if (f.kind != Expr::Kind::Name)
            fail(e->loc, "cannot call '" + unparse(f) + "'");
        return builtin(f.s, args, e->loc);
    }

    Value builtin(const std::string &fn, const std::vector<Value> &args, Loc loc)
    {
        auto need = [&](size_t n) {
            if (args.size() != n)
                fail(loc, fn + "() takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
        };
        if (fn == "len") {
            need(1);
            if (args[0].k == Value::K::Str)
                return Value::integer(int64_t(args[0].s.size()));
            return Value::integer(int64_t(asList(args[0], loc).size()));
        }
        if (fn == "sum" || fn == "min" || fn == "max") {
            const std::vector<Value> &l = args.size() == 1 && args[0].k == Value::K::List ? args[0].list : args;
            if (l.empty()) {
                if (fn == "sum")
                    return Value::integer(0);
                fail(loc, fn + "() of an empty list");
            }
            bool isFloat = false;
            for (const auto &v : l) {
                if (!v.isNum())
                    fail(loc, fn + "() needs numbers, got " + v.str());
                isFloat = isFloat || v.k == Value::K::Float;
            }
            if (!isFloat) { // exact, with overflow reported
                int64_t acc = fn == "sum" ? 0 : l[0].i;
                for (const auto &v : l)
                    acc = fn == "sum" ? checked(loc, "+", acc, v.i) : fn == "min" ? std::min(acc, v.i) : std::max(acc, v.i);
                return Value::integer(acc);
            }
            double acc = fn == "sum" ? 0 : l[0].num();
            for (const auto &v : l)
                acc = fn == "sum" ? acc + v.num() : fn == "min" ? std::min(acc, v.num()) : std::max(acc, v.num());
            Value v;
            v.k = Value::K::Float;
            v.f = acc;
            return v;
        }
        if (fn == "abs") {
            need(1);
            if (args[0].k == Value::K::Float) {
                Value v = args[0];
                v.f = std::fabs(v.f);
                return v;
            }
            const int64_t x = asInt(args[0], loc);
            return Value::integer(x < 0 ? checked(loc, "-", 0, x) : x);
        }
        if (fn == "range") {
            if (args.empty() || args.size() > 2)
                fail(loc, "range() takes 1 or 2 arguments");
            int64_t lo = args.size() == 2 ? asInt(args[0], loc) : 0, hi = asInt(args.back(), loc), len = 0;
            if (__builtin_sub_overflow(hi, lo, &len) || len > 1000000)
                fail(loc, "range() too long");
            spend(std::max<int64_t>(len, 0), loc);
            Value v;
            v.k = Value::K::List;
            for (int64_t k = lo; k < hi; ++k)
                v.list.push_back(Value::integer(k));
            return v;
        }
        if (fn == "list") {
            need(1);
            asList(args[0], loc);
            return args[0];
        }
        if (fn == "int") {
            need(1);
            if (args[0].k == Value::K::Float) {
                // int64's range is [-2^63, 2^63): a float outside it (or NaN) has no int.
                if (!(args[0].f >= -9223372036854775808.0 && args[0].f < 9223372036854775808.0))
                    fail(loc, "int() of " + args[0].str() + ": out of the int64 range");
                return Value::integer(int64_t(args[0].f));
            }
            return Value::integer(asInt(args[0], loc));
        }
        if (fn == "float") {
            need(1);
            Value v;
            v.k = Value::K::Float;
            if (!args[0].isNum())
                fail(loc, "float() needs a number");
            v.f = args[0].num();
            return v;
        }
        if (fn == "bool") {
            need(1);
            return Value::boolean(truthy(args[0]));
        }
        if (fn == "shape") {
            need(1);
            return shapeValue(asNode(args[0], loc, "shape()"), loc);
        }
        if (fn == "ndim" || fn == "rank") {
            need(1);
            return Value::integer(int64_t(shapeValue(asNode(args[0], loc, "ndim()"), loc).list.size()));
        }
        if (fn == "numel") {
            need(1);
            int64_t p = 1;
            for (const auto &d : shapeValue(asNode(args[0], loc, "numel()"), loc).list)
                p = checked(loc, "*", p, d.i);
            return Value::integer(p);
        }
        if (fn == "dtype") {
            need(1);
            Node *n = asNode(args[0], loc, "dtype()");
            Value v;
            v.k = Value::K::Str;
            v.s = n->meta().val.isTensor() ? n->meta().val.tensor.dtype : "";
            return v;
        }
        if (fn == "users") {
            need(1);
            return Value::integer(int64_t(asNode(args[0], loc, "users()")->users().size()));
        }
        if (fn == "all_users_getitem") {
            need(1);
            for (Node *u : asNode(args[0], loc, "all_users_getitem()")->users())
                if (!u->is(OpKind::CallFunction, "operator.getitem"))
                    return Value::boolean(false);
            return Value::boolean(true);
        }
        if (fn == "is_node") {
            need(1);
            return Value::boolean(args[0].k == Value::K::Node);
        }
        if (fn == "all_equal") {
            need(1);
            const auto &l = asList(args[0], loc);
            for (const auto &v : l)
                if (!equal(v, l[0]))
                    return Value::boolean(false);
            return Value::boolean(true);
        }
        if (fn == "all_distinct") {
            need(1);
            const auto &l = asList(args[0], loc);
            for (size_t a = 0; a < l.size(); ++a)
                for (size_t b = a + 1; b < l.size(); ++b)
                    if (equal(l[a], l[b]))
                        return Value::boolean(false);
            return Value::boolean(true);
        }
        if (fn == "norm_dim") {
            need(2);
            int64_t d = asInt(args[0], loc), r = asInt(args[1], loc);
            return Value::integer(d < 0 ? d + r : d);
        }
        fail(loc, "unknown function '" + fn + "'" + didYouMean(closest(fn, builtins())));
    }
};

/// The environment of a match: parameters, pattern variables, and what comprehensions bound.
/// Returns false (with `why`) when a comprehension's positions are not consecutive or disagree
/// with names bound elsewhere.
bool buildEnv(const FilePattern &fp, const Bindings &b, Evaluator &ev, MatchFailure &why)
{
    const Program &pr = *fp.program;
    Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
    for (const auto &n : pr.tensorParams)
        if (Node *x = b.node(n))
            ev.vars[n] = Value::ofNode(x);
    for (const auto &n : pr.captureParams)
        if (const Argument *a = b.value(n))
            ev.vars[n] = fromArg(*a);
    for (const auto &[n, idx] : pr.nodeVars)
        if (Node *x = b.node(n))
            ev.vars[n] = Value::ofNode(x);
    for (const auto &c : pr.comps) {
        const auto &pos = b.list(c.positions);
        const int64_t count = int64_t(pos.size());
        std::vector<int64_t> idx;
        if (!c.loopCapture.empty())
            for (const auto &a : b.list(c.loopCapture)) {
                if (!a.isInt()) {
                    why = {"comprehension", anchor ? anchor->name() : "?", "integer indices", a.toString()};
                    return false;
                }
                idx.push_back(a.toInt());
            }
        int64_t lo = idx.empty() ? 0 : idx.front();
        for (size_t k = 1; k < idx.size(); ++k)
            if (idx[k] != idx[0] + int64_t(k)) {
                std::string found;
                for (auto v : idx)
                    found += (found.empty() ? "" : ", ") + std::to_string(v);
                why = {"[... for " + c.loopCapture.substr(1) + " in range(...)]", anchor ? anchor->name() : "?",
                       "consecutive indices", "[" + found + "]"};
                return false;
            }
        if (idx.empty() && c.lo)
            lo = c.lo->kind == Expr::Kind::Int ? c.lo->ival : 0;
        auto bind = [&](const ExprP &e, int64_t v, const char *what) {
            if (!e)
                return v == 0;
            if (e->kind == Expr::Kind::Int)
                return e->ival == v;
            if (e->kind == Expr::Kind::Name) {
                auto it = ev.vars.find(e->s);
                if (it == ev.vars.end()) {
                    ev.vars[e->s] = Value::integer(v);
                    return true;
                }
                return it->second.isNum() && it->second.num() == double(v);
            }
            (void)what;
            return true; // an expression: checked by asserts if the author wants
        };
        if (!bind(c.lo, lo, "start")) {
            const std::string want = c.lo ? unparse(*c.lo) : "0";
            why = {"range start '" + want + "'", anchor ? anchor->name() : "?", want, std::to_string(lo)};
            return false;
        }
        if (!bind(c.hi, lo + count, "end")) {
            why = {"range end '" + unparse(*c.hi) + "'", anchor ? anchor->name() : "?", ev.vars.count(c.hi->s) ? ev.vars[c.hi->s].str() : unparse(*c.hi),
                   std::to_string(lo + count) + " (" + std::to_string(count) + " items from " + std::to_string(lo) + ")"};
            return false;
        }
    }
    return true;
}

/// The names an expression reads (for failure messages).
void namesIn(const Expr &e, std::set<std::string> &out)
{
    if (e.kind == Expr::Kind::Name)
        out.insert(e.s);
    for (const auto &a : e.a)
        if (a && !(e.kind == Expr::Kind::Call && &a == &e.a[0] && a->kind == Expr::Kind::Name))
            namesIn(*a, out);
    for (const auto &[k, v] : e.kw)
        namesIn(*v, out);
}

// --- compiler -----------------------------------------------------------------------------------------

struct Compiler {
    enum class SymKind { Tensor, Capture, Node, Elem };
    struct Sym {
        SymKind kind;
        int node = -1;
        std::string capture;
    };
    PatternGraph pg;
    std::map<std::string, Sym> syms;
    Program prog;
    int anon = 0;

    std::vector<std::string> symNames() const
    {
        std::vector<std::string> v;
        for (const auto &[k, s] : syms)
            v.push_back(k);
        return v;
    }

    int addNode(std::string name, std::vector<std::pair<OpKind, std::string>> ops, std::vector<PArg> args)
    {
        PNode p;
        p.name = std::move(name);
        p.ops = std::move(ops);
        p.args = std::move(args);
        pg.nodes.push_back(std::move(p));
        return int(pg.nodes.size()) - 1;
    }

    int tensorNode(const std::string &name, Loc loc)
    {
        auto it = syms.find(name);
        if (it == syms.end())
            error(loc, "unknown name '" + name + "'" + didYouMean(closest(name, symNames())));
        if (it->second.kind == SymKind::Capture) {
            // First use as a node: a parameter without annotation becomes an input node.
            it->second.kind = SymKind::Tensor;
            it->second.node = addNode(name, {}, {});
            auto &cp = prog.captureParams;
            cp.erase(std::remove(cp.begin(), cp.end(), name), cp.end());
            prog.tensorParams.push_back(name);
        }
        if (it->second.kind == SymKind::Elem)
            error(loc, "'" + name + "' is a loop index, not a node");
        return it->second.node;
    }

    void collectTargets(const Expr &f, std::vector<std::pair<OpKind, std::string>> &ops)
    {
        if (f.kind == Expr::Kind::BinOp && f.s == "|") {
            collectTargets(*f.a[0], ops);
            collectTargets(*f.a[1], ops);
            return;
        }
        std::string d = dotted(f);
        if (!isTargetRoot(d))
            error(f.loc, "expected an op (torch.*, aten.*, operator.*, F.*) in an alternative, found '" + unparse(f) + "'");
        checkTarget(d, f.loc);
        ops.push_back({OpKind::CallFunction, d});
    }

    /// A call or subscript of the pattern as a pattern node.
    int node(const ExprP &e, const std::string &name, bool inElem)
    {
        if (e->kind == Expr::Kind::Subscript) {
            if (e->a[1]->kind == Expr::Kind::Slice)
                error(e->a[1]->loc, "slices are not supported in a pattern: match aten.slice.Tensor or torch.narrow");
            if (e->a[0]->kind != Expr::Kind::Name)
                error(e->a[0]->loc, "expected a name before '[' (s[0] where s = torch.split(...))");
            int base = tensorNode(e->a[0]->s, e->a[0]->loc);
            return addNode(name, {{OpKind::CallFunction, "operator.getitem"}}, {PArg::ref(base), arg(e->a[1], inElem)});
        }
        if (e->kind != Expr::Kind::Call)
            error(e->loc, "expected a call such as torch.split(x, sizes, dim), found '" + unparse(*e) + "'");
        const Expr &f = *e->a[0];
        std::vector<std::pair<OpKind, std::string>> ops;
        std::vector<PArg> args;
        std::vector<ExprP> positional(e->a.begin() + 1, e->a.end());
        const OpSchema *schema = nullptr;
        std::string what;
        if (f.kind == Expr::Kind::BinOp && f.s == "|") {
            collectTargets(f, ops);
            what = ops.front().second;
            schema = schemaFor(OpKind::CallFunction, ops.front().second);
        } else {
            std::string d = dotted(f);
            if (isTargetRoot(d)) {
                checkTarget(d, f.loc);
                ops.push_back({OpKind::CallFunction, d});
                what = d;
                schema = schemaFor(OpKind::CallFunction, d);
            } else if (f.kind == Expr::Kind::Attr && f.a[0]->kind == Expr::Kind::Name && syms.count(f.a[0]->s)) {
                const auto &m = knownMethods();
                if (std::find(m.begin(), m.end(), f.s) == m.end())
                    error(f.loc, "unknown method '." + f.s + "()'" + didYouMean(closest(f.s, m)));
                ops.push_back({OpKind::CallMethod, f.s});
                what = "." + f.s + "()";
                schema = schemaFor(OpKind::CallMethod, f.s);
                args.push_back(PArg::ref(tensorNode(f.a[0]->s, f.a[0]->loc)));
            } else if (f.kind == Expr::Kind::Name) {
                error(f.loc, "cannot call '" + f.s + "' in a pattern: expected torch.*, aten.*, operator.*, F.* or a method of a node" +
                                 didYouMean(closest("torch." + f.s, knownFunctions())));
            } else {
                std::string root = f.kind == Expr::Kind::Attr ? dotted(f) : std::string();
                error(f.loc, "unknown op '" + (root.empty() ? unparse(f) : root) + "'" + didYouMean(closest(root.empty() ? unparse(f) : root, knownFunctions())));
            }
        }
        for (const auto &p : positional)
            args.push_back(arg(p, inElem));
        if (schema && schema->varargs < 0 && args.size() > schema->params.size())
            error(e->loc, what + " takes at most " + std::to_string(schema->params.size()) + " arguments, got " + std::to_string(args.size()));
        for (const auto &[k, v] : e->kw) {
            if (!schema)
                error(v->loc, "keyword '" + k + "': fxlens knows no schema for " + what + "; pass the argument positionally");
            int pos = -1;
            std::vector<std::string> names;
            for (size_t i = 0; i < schema->params.size(); ++i) {
                names.push_back(schema->params[i].name);
                if (schema->params[i].name == k)
                    pos = int(i);
            }
            for (const auto &[alias, to] : schema->aliases)
                if (alias == k)
                    for (size_t i = 0; i < schema->params.size(); ++i)
                        if (schema->params[i].name == to)
                            pos = int(i);
            if (pos < 0) {
                std::string list;
                for (const auto &n : names)
                    list += (list.empty() ? "" : ", ") + n;
                Loc kl = v->loc; // the keyword itself: `k=` right before the value
                kl.col = std::max(1, kl.col - int(k.size()) - 1);
                error(kl, what + " has no parameter '" + k + "' (parameters: " + list + ")" + didYouMean(closest(k, names)));
            }
            if (size_t(pos) < args.size() && args[size_t(pos)].kind != PArg::Kind::Any)
                error(v->loc, "parameter '" + k + "' of " + what + " is given twice");
            while (args.size() <= size_t(pos))
                args.push_back(PArg::any());
            args[size_t(pos)] = arg(v, inElem);
        }
        return addNode(name, std::move(ops), std::move(args));
    }

    PArg arg(const ExprP &e, bool inElem)
    {
        switch (e->kind) {
        case Expr::Kind::Name: {
            if (e->s == "_")
                return PArg::any();
            auto it = syms.find(e->s);
            if (it == syms.end())
                error(e->loc, "unknown name '" + e->s + "'" + didYouMean(closest(e->s, symNames())));
            switch (it->second.kind) {
            case SymKind::Tensor:
            case SymKind::Node: return PArg::ref(it->second.node);
            case SymKind::Capture: return PArg::capture(e->s);
            case SymKind::Elem: return PArg::capture(it->second.capture);
            }
            return PArg::any();
        }
        case Expr::Kind::Int: return PArg::lit(Argument::integer(e->ival));
        case Expr::Kind::Float: return PArg::lit(Argument::real(e->fval));
        case Expr::Kind::Str: return PArg::lit(Argument::string(e->s));
        case Expr::Kind::Bool: return PArg::lit(Argument::boolean(e->ival != 0));
        case Expr::Kind::None: return PArg::lit(Argument::none());
        case Expr::Kind::List: {
            std::vector<PArg> items;
            for (const auto &x : e->a)
                items.push_back(arg(x, inElem));
            return PArg::listExact(std::move(items));
        }
        case Expr::Kind::ListComp: return comprehension(e, inElem);
        case Expr::Kind::Call:
        case Expr::Kind::Subscript: return PArg::ref(node(e, inElem ? std::string() : "_" + std::to_string(anon++), inElem));
        default:
            error(e->loc, "'" + unparse(*e) + "' cannot stand in a pattern's arguments: bind a name there and constrain it with assert");
        }
    }

    PArg comprehension(const ExprP &e, bool inElem)
    {
        if (inElem)
            error(e->loc, "nested comprehensions are not supported");
        const Expr &it = *e->a[1];
        if (!(it.kind == Expr::Kind::Call && it.a[0]->kind == Expr::Kind::Name && it.a[0]->s == "range" &&
              (it.a.size() == 2 || it.a.size() == 3) && it.kw.empty()))
            error(it.loc, "a comprehension in a pattern iterates over range(lo, hi) or range(n), found '" + unparse(it) + "'");
        for (size_t k = 1; k < it.a.size(); ++k)
            if (it.a[k]->kind != Expr::Kind::Int && it.a[k]->kind != Expr::Kind::Name)
                error(it.a[k]->loc, "range bounds in a pattern are integers or parameter names, found '" + unparse(*it.a[k]) + "'");
        if (syms.count(e->s) && syms[e->s].kind != SymKind::Elem)
            error(e->loc, "loop variable '" + e->s + "' shadows a parameter or variable");
        Program::Comp c;
        c.positions = "#c" + std::to_string(prog.comps.size());
        c.lo = it.a.size() == 3 ? it.a[1] : nullptr;
        c.hi = it.a.back();
        for (size_t k = 1; k < it.a.size(); ++k)
            if (it.a[k]->kind == Expr::Kind::Name && !syms.count(it.a[k]->s))
                error(it.a[k]->loc, "unknown name '" + it.a[k]->s + "' in range(): declare it as a parameter (lo: int)" +
                                        didYouMean(closest(it.a[k]->s, symNames())));
        syms[e->s] = {SymKind::Elem, -1, "*" + e->s};
        std::set<std::string> used;
        namesIn(*e->a[0], used);
        c.loopCapture = used.count(e->s) ? "*" + e->s : "";
        PArg elem = arg(e->a[0], true);
        syms.erase(e->s);
        prog.comps.push_back(c);
        return PArg::listOf(std::move(elem), c.positions);
    }
};

/// Checks that every name an expression reads is bound, and every function is known.
void checkNames(const Expr &e, const std::set<std::string> &bound)
{
    switch (e.kind) {
    case Expr::Kind::Name:
        if (!bound.count(e.s))
            error(e.loc, "unknown name '" + e.s + "'" + didYouMean(closest(e.s, std::vector<std::string>(bound.begin(), bound.end()))));
        return;
    case Expr::Kind::ListComp: {
        checkNames(*e.a[1], bound);
        auto inner = bound;
        inner.insert(e.s);
        checkNames(*e.a[0], inner);
        return;
    }
    case Expr::Kind::Call: {
        const Expr &f = *e.a[0];
        std::string d = dotted(f);
        if (f.kind == Expr::Kind::Name && !isTargetRoot(d)) {
            const auto &b = builtins();
            if (std::find(b.begin(), b.end(), f.s) == b.end())
                error(f.loc, "unknown function '" + f.s + "'" + didYouMean(closest(f.s, b)));
        } else if (isTargetRoot(d)) {
            checkTarget(d, f.loc);
        } else if (f.kind == Expr::Kind::Attr) {
            checkNames(*f.a[0], bound);
            const auto &m = knownMethods();
            if (std::find(m.begin(), m.end(), f.s) == m.end())
                error(f.loc, "unknown method '." + f.s + "()'" + didYouMean(closest(f.s, m)));
        }
        for (size_t k = 1; k < e.a.size(); ++k)
            checkNames(*e.a[k], bound);
        for (const auto &[k, v] : e.kw)
            checkNames(*v, bound);
        return;
    }
    case Expr::Kind::Attr:
        checkNames(*e.a[0], bound);
        if (e.s != "shape" && e.s != "ndim" && e.s != "dtype")
            error(e.loc, "unknown attribute '." + e.s + "' (shape, ndim, dtype)" + didYouMean(closest(e.s, {"shape", "ndim", "dtype"})));
        return;
    default:
        for (const auto &a : e.a)
            if (a)
                checkNames(*a, bound);
        for (const auto &[k, v] : e.kw)
            checkNames(*v, bound);
    }
}

std::string typeName(const Expr &t)
{
    if (t.kind == Expr::Kind::Name)
        return t.s;
    if (t.kind == Expr::Kind::Subscript && t.a[0]->kind == Expr::Kind::Name)
        return t.a[0]->s;
    if (t.kind == Expr::Kind::Attr)
        return dotted(t);
    return unparse(t);
}

const std::vector<std::string> kTypes = {"Tensor", "torch.Tensor", "int", "float", "bool", "str", "list", "List", "Any"};

} // namespace

Result<std::unique_ptr<FilePattern>> compilePattern(const std::string &source, const std::string &file)
{
    auto diag = [&](Loc loc, const std::string &m) {
        Diagnostic d;
        d.file = file;
        d.line = loc.line;
        d.column = loc.col;
        d.message = m;
        return d;
    };
    auto fp = std::make_unique<FilePattern>();
    fp->file = file;
    fp->source = source;
    SyntaxError se;
    if (!parseModule(source, fp->module, se))
        return diag(se.loc, se.message);
    try {
        const Module &m = fp->module;
        const Func *pat = nullptr, *rep = nullptr, *chk = nullptr;
        for (const auto &f : m.funcs) {
            const Func **slot = f.name == "pattern" ? &pat : f.name == "replacement" ? &rep : f.name == "check" ? &chk : nullptr;
            if (!slot)
                error(f.loc, "unexpected function '" + f.name + "': a pattern file defines pattern, replacement and optionally check" +
                                 didYouMean(closest(f.name, {"pattern", "replacement", "check"})));
            if (*slot)
                error(f.loc, "'" + f.name + "' is defined twice");
            *slot = &f;
        }
        if (!pat)
            error({1, 1, 1}, "no 'def pattern(...)' in the file");
        if (!rep)
            error({1, 1, 1}, "no 'def replacement(...)' in the file");
        // Settings.
        std::string stem = std::filesystem::path(file).stem().string();
        fp->name = stem;
        fp->labels = {"user"};
        fp->level = IrLevel::Both;
        for (const auto &s : m.settings) {
            const Expr &v = *s.value;
            auto str = [&]() {
                if (v.kind != Expr::Kind::Str)
                    error(v.loc, "'" + s.name + "' must be a string, found '" + unparse(v) + "'");
                return v.s;
            };
            if (s.name == "name") {
                fp->name = str();
                if (fp->name.empty())
                    error(v.loc, "'name' must not be empty");
            } else if (s.name == "description") {
                fp->description = str();
            } else if (s.name == "level") {
                std::string l = str();
                if (l == "torch")
                    fp->level = IrLevel::Torch;
                else if (l == "aten")
                    fp->level = IrLevel::Aten;
                else if (l == "both")
                    fp->level = IrLevel::Both;
                else
                    error(v.loc, "level must be \"torch\", \"aten\" or \"both\", found \"" + l + "\"");
            } else if (s.name == "benefit" || s.name == "phase") {
                if (v.kind != Expr::Kind::Int)
                    error(v.loc, "'" + s.name + "' must be an integer, found '" + unparse(v) + "'");
                (s.name == "benefit" ? fp->benefit : fp->phase) = int(v.ival);
            } else if (s.name == "labels") {
                if (v.kind != Expr::Kind::List)
                    error(v.loc, "'labels' must be a list of strings, found '" + unparse(v) + "'");
                fp->labels.clear();
                for (const auto &x : v.a) {
                    if (x->kind != Expr::Kind::Str)
                        error(x->loc, "'labels' must be a list of strings, found '" + unparse(*x) + "'");
                    fp->labels.push_back(x->s);
                }
            } else {
                error(s.loc, "unknown setting '" + s.name + "'" +
                                 didYouMean(closest(s.name, {"name", "description", "level", "benefit", "phase", "labels"})) +
                                 " (settings: name, description, level, benefit, phase, labels)");
            }
        }
        // The pattern function.
        Compiler c;
        for (const auto &p : pat->params) {
            if (c.syms.count(p.name))
                error(p.loc, "parameter '" + p.name + "' is declared twice");
            std::string t = p.type ? typeName(*p.type) : "Any";
            if (std::find(kTypes.begin(), kTypes.end(), t) == kTypes.end())
                error(p.type->loc, "unknown type '" + t + "'" + didYouMean(closest(t, kTypes)) + " (types: Tensor, int, float, bool, str, list)");
            if (t == "Tensor" || t == "torch.Tensor") {
                c.syms[p.name] = {Compiler::SymKind::Tensor, c.addNode(p.name, {}, {}), {}};
                c.prog.tensorParams.push_back(p.name);
            } else {
                c.syms[p.name] = {Compiler::SymKind::Capture, -1, {}};
                c.prog.captureParams.push_back(p.name);
            }
        }
        int root = -1;
        for (const auto &st : pat->body) {
            if (root >= 0)
                error(st.loc, "statement after 'return' is never reached");
            switch (st.kind) {
            case Stmt::Kind::Assign: {
                if (c.syms.count(st.target))
                    error(st.targetLoc, "'" + st.target + "' is already bound: each name is assigned once");
                int n = c.node(st.e, st.target, false);
                c.syms[st.target] = {Compiler::SymKind::Node, n, {}};
                c.prog.nodeVars[st.target] = n;
                break;
            }
            case Stmt::Kind::Return: {
                if (st.e->kind == Expr::Kind::Name) {
                    auto it = c.syms.find(st.e->s);
                    if (it == c.syms.end())
                        error(st.e->loc, "unknown name '" + st.e->s + "'" + didYouMean(closest(st.e->s, c.symNames())));
                    if (it->second.kind != Compiler::SymKind::Node)
                        error(st.e->loc, "the pattern must return a call (the anchor), not the parameter '" + st.e->s + "'");
                    root = it->second.node;
                    c.prog.anchorVar = st.e->s;
                } else {
                    root = c.node(st.e, "_anchor", false);
                    c.prog.anchorVar = "_anchor";
                    c.prog.nodeVars["_anchor"] = root;
                }
                break;
            }
            case Stmt::Kind::Assert: c.prog.asserts.push_back(st); break;
            case Stmt::Kind::Pass: break;
            }
        }
        if (root < 0)
            error(pat->loc, "'pattern' has no 'return': return the call the pattern is anchored on");
        // Names visible to asserts and the replacement.
        std::set<std::string> bound;
        for (const auto &[n, s] : c.syms)
            if (s.kind != Compiler::SymKind::Elem)
                bound.insert(n);
        for (const auto &cp : c.prog.comps)
            for (const auto &e : {cp.lo, cp.hi})
                if (e && e->kind == Expr::Kind::Name)
                    bound.insert(e->s);
        for (const auto &a : c.prog.asserts)
            checkNames(*a.e, bound);
        if (chk) {
            for (const auto &p : chk->params)
                if (!bound.count(p.name))
                    error(p.loc, "check parameter '" + p.name + "' is not bound by the pattern" +
                                     didYouMean(closest(p.name, std::vector<std::string>(bound.begin(), bound.end()))));
            for (const auto &st : chk->body) {
                if (st.kind == Stmt::Kind::Return)
                    error(st.loc, "'check' holds assignments and assert statements, not 'return'");
                if (st.kind == Stmt::Kind::Assert) {
                    checkNames(*st.e, bound);
                    c.prog.asserts.push_back(st);
                } else if (st.kind == Stmt::Kind::Assign) {
                    checkNames(*st.e, bound);
                    if (bound.count(st.target))
                        error(st.targetLoc, "'" + st.target + "' is already bound: each name is assigned once");
                    bound.insert(st.target);
                    c.prog.asserts.push_back(st);
                }
            }
        }
        // The replacement.
        std::set<std::string> rbound;
        for (const auto &p : rep->params) {
            if (!bound.count(p.name))
                error(p.loc, "replacement parameter '" + p.name + "' is not bound by the pattern" +
                                 didYouMean(closest(p.name, std::vector<std::string>(bound.begin(), bound.end()))));
            rbound.insert(p.name);
        }
        bool returned = false;
        for (const auto &st : rep->body) {
            if (returned)
                error(st.loc, "statement after 'return' is never reached");
            if (st.kind == Stmt::Kind::Assert)
                error(st.loc, "assert belongs in 'pattern' or 'check', not in 'replacement'");
            if (st.kind == Stmt::Kind::Assign) {
                checkNames(*st.e, rbound);
                rbound.insert(st.target);
            } else if (st.kind == Stmt::Kind::Return) {
                checkNames(*st.e, rbound);
                returned = true;
            }
        }
        if (!returned)
            error(rep->loc, "'replacement' has no 'return': return the value that replaces the anchor");

        c.pg.root = root;
        fp->graph = std::move(c.pg);
        c.prog.replacement = rep;
        fp->program = std::make_shared<Program>(std::move(c.prog));
    } catch (const CompileError &e) {
        return diag(e.loc, e.message);
    }
    // Constraints: the comprehensions' ranges, then every assert, as pattern-graph constraints so
    // that "why no match" reports the first one that fails.
    FilePattern *self = fp.get();
    self->graph.constraints.push_back({"comprehension ranges", [self](const Bindings &b, MatchFailure &why) {
                                           Evaluator ev;
                                           return buildEnv(*self, b, ev, why);
                                       }});
    for (size_t k = 0; k < self->program->asserts.size(); ++k) {
        const Stmt &st = self->program->asserts[k];
        if (st.kind != Stmt::Kind::Assert)
            continue; // a check-local assignment, evaluated before the asserts that follow it
        self->graph.constraints.push_back({"assert " + unparse(*st.e), [self, k](const Bindings &b, MatchFailure &why) {
                                               const Stmt &a = self->program->asserts[k];
                                               Evaluator ev;
                                               if (!buildEnv(*self, b, ev, why))
                                                   return false;
                                               Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
                                               try {
                                                   for (size_t j = 0; j < k; ++j)
                                                       if (self->program->asserts[j].kind == Stmt::Kind::Assign)
                                                           ev.vars[self->program->asserts[j].target] = ev.eval(self->program->asserts[j].e);
                                                   if (truthy(ev.eval(a.e)))
                                                       return true;
                                               } catch (const EvalError &e) {
                                                   why = {"assert " + unparse(*a.e), anchor ? anchor->name() : "?", "true",
                                                          "an error: " + e.message};
                                                   return false;
                                               }
                                               std::set<std::string> names;
                                               namesIn(*a.e, names);
                                               std::string found;
                                               for (const auto &n : names)
                                                   if (ev.vars.count(n)) {
                                                       const Value &v = ev.vars[n];
                                                       std::string text = v.str();
                                                       if (v.k == Value::K::Node && v.node && v.node->meta().val.isTensor())
                                                           text += " " + v.node->meta().val.toString();
                                                       found += (found.empty() ? "" : ", ") + n + " = " + text;
                                                   }
                                               why = {"assert " + unparse(*a.e) + (a.message.empty() ? "" : " (" + a.message + ")"),
                                                      anchor ? anchor->name() : "?", "true", "false with " + (found.empty() ? "no bindings" : found)};
                                               return false;
                                           }});
    }
    self->graph.constraints.push_back({"replacement", [self](const Bindings &b, MatchFailure &why) {
                                           Evaluator ev;
                                           if (!buildEnv(*self, b, ev, why))
                                               return false;
                                           ev.simulate = true;
                                           Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
                                           try {
                                               for (const auto &st : self->program->replacement->body) {
                                                   if (st.kind == Stmt::Kind::Assign)
                                                       ev.vars[st.target] = ev.eval(st.e);
                                                   else if (st.kind == Stmt::Kind::Return) {
                                                       Value v = ev.eval(st.e);
                                                       if (v.k != Value::K::Node) {
                                                           why = {"replacement return", anchor ? anchor->name() : "?", "a node", v.str()};
                                                           return false;
                                                       }
                                                       return true;
                                                   }
                                               }
                                           } catch (const EvalError &e) {
                                               why = {"replacement line " + std::to_string(e.loc.line), anchor ? anchor->name() : "?",
                                                      "a value", "an error: " + e.message};
                                               return false;
                                           }
                                           return true;
                                       }});
    self->deriveAnchors();
    self->summarize = [self](const Bindings &b) {
        Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
        return self->name + " at " + (anchor ? anchor->name() : "?");
    };
    self->apply = [self](const Bindings &b, Rewriter &rw) {
        Evaluator ev;
        MatchFailure why;
        if (!buildEnv(*self, b, ev, why))
            return;
        Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
        ev.rw = &rw;
        ev.anchor = anchor;
        const Func &rep = *self->program->replacement;
        try {
        for (const auto &st : rep.body) {
            if (st.kind == Stmt::Kind::Assign) {
                ev.vars[st.target] = ev.eval(st.e);
            } else if (st.kind == Stmt::Kind::Return) {
                Value v = ev.eval(st.e);
                if (v.k != Value::K::Node)
                    throw std::runtime_error(self->file + ": the replacement returned " + v.str() + ", not a node");
                Node *out = v.node;
                // The anchor's recorded value is exact; the replacement computes the same value.
                if (std::find(ev.created.begin(), ev.created.end(), out) != ev.created.end())
                    out->meta().val = anchor->meta().val;
                if (out != anchor) {
                    rw.replaceAllUsesWith(anchor, out);
                    rw.eraseIfDead(anchor);
                }
                return;
            }
        }
        } catch (const EvalError &e) {
            // The dry run in match() makes this unreachable in practice; undo what was created.
            for (auto it = ev.created.rbegin(); it != ev.created.rend(); ++it)
                rw.eraseIfDead(*it);
            throw std::runtime_error(self->file + ":" + std::to_string(e.loc.line) + ": " + e.message);
        }
    };
    return fp;
}

std::string renderDiagnostic(const Diagnostic &d, const std::string &source)
{
    std::string s = d.toString() + "\n";
    if (d.line <= 0)
        return s;
    std::string line = sourceLine(source, d.line);
    s += "    " + line + "\n    ";
    for (int i = 1; i < d.column && size_t(i - 1) < line.size(); ++i)
        s += line[size_t(i - 1)] == '\t' ? '\t' : ' ';
    return s + "^\n";
}

// --- export -------------------------------------------------------------------------------------------

namespace {

std::string pyTarget(const std::string &d)
{
    if (d.rfind("aten.", 0) == 0)
        return "torch.ops." + d;
    if (d.rfind("torch.nn.functional.", 0) == 0)
        return "F." + d.substr(20);
    return d;
}

/// Python for PyTorch: ATen targets through torch.ops, the first of op alternatives.
std::string pyExpr(const Expr &e)
{
    return unparse(e, [](const Expr &f) {
        const Expr *first = &f;
        while (first->kind == Expr::Kind::BinOp && first->s == "|")
            first = first->a[0].get();
        const std::string d = dotted(*first);
        return isTargetRoot(d) || d.rfind("torch.nn.functional", 0) == 0 ? pyTarget(d) : unparse(*first);
    });
}

void pyFunc(std::ostringstream &o, const Func &f, bool dropAsserts)
{
    o << "def " << f.name << "(";
    for (size_t k = 0; k < f.params.size(); ++k)
        o << (k ? ", " : "") << f.params[k].name;
    o << "):\n";
    bool any = false;
    for (const auto &st : f.body) {
        if (st.kind == Stmt::Kind::Assign)
            o << "    " << st.target << " = " << pyExpr(*st.e) << "\n";
        else if (st.kind == Stmt::Kind::Return)
            o << "    return " << pyExpr(*st.e) << "\n";
        else if (st.kind == Stmt::Kind::Assert && !dropAsserts)
            o << "    assert " << pyExpr(*st.e) << "\n";
        else
            continue;
        any = true;
    }
    if (!any)
        o << "    pass\n";
}

} // namespace

/// Text made safe for a Python comment: no character that could end the comment's line.
static std::string commentText(const std::string &s)
{
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        const auto u = static_cast<unsigned char>(s[i]);
        // U+0085, U+2028, U+2029 (line breaks to some readers) and every control character.
        if (u == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) {
            out += ' ';
            ++i;
        } else if (u == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
            out += ' ';
            i += 2;
        } else {
            out += u < 0x20 || u == 0x7f ? ' ' : s[i];
        }
    }
    return out;
}

std::string exportPython(const FilePattern &p)
{
    std::ostringstream o;
    o << "# " << commentText(p.name) << ": exported by fxlens from " << commentText(std::filesystem::path(p.file).filename().string())
      << "\n";
    if (!p.description.empty())
        o << "# " << commentText(p.description) << "\n";
    o << "# Use with torch.fx.subgraph_rewriter.replace_pattern_with_filters(gm, pattern, replacement, [match_filter]).\n"
         "# The pattern's asserts are fxlens constraints over shapes and bound values; match_filter lists them.\n"
         "import operator\n\nimport torch\nimport torch.nn.functional as F\n\n\n";
    for (const auto &f : p.module.funcs)
        if (f.name == "pattern") {
            pyFunc(o, f, true);
            o << "\n\n";
        }
    for (const auto &f : p.module.funcs)
        if (f.name == "replacement") {
            pyFunc(o, f, true);
            o << "\n\n";
        }
    o << "def match_filter(match, original_graph, pattern_graph):\n";
    if (p.program->asserts.empty())
        o << "    return True\n";
    else {
        o << "    # fxlens checks, on the matched nodes' shapes and arguments:\n";
        for (const auto &a : p.program->asserts)
            o << "    #   " << commentText((a.kind == Stmt::Kind::Assign ? a.target + " = " : std::string("assert ")) + unparse(*a.e)) << "\n";
        o << "    return True\n";
    }
    return o.str();
}

// --- instances ----------------------------------------------------------------------------------------

namespace {
/// Placeholder dims an instance must have for its splits to fit: (param, dim) -> size.
using ShapeFixes = std::map<std::pair<std::string, int64_t>, int64_t>;
std::unique_ptr<ir::Graph> instantiateWith(const FilePattern &p, uint64_t seed, const ShapeFixes &fixes, std::string &why,
                                           std::string &desc);
} // namespace

std::unique_ptr<ir::Graph> instantiate(const FilePattern &p, uint64_t seed, std::string &why, std::string &desc)
{
    // Draw once; where a split of a parameter asks for sections that do not sum to the drawn size,
    // draw again with that size fixed (the same seed draws the same values otherwise).
    auto g = instantiateWith(p, seed, {}, why, desc);
    if (!g)
        return g;
    ShapeFixes fixes;
    for (Node *n = g->first(); n; n = n->next()) {
        const std::string op = baseOp(n);
        if ((op != "split" && op != "split_with_sizes") || n->args().empty() || !n->args()[0].isNode())
            continue;
        Node *x = n->args()[0].toNode();
        auto sizes = intsArg(n->arg(1, "split_size_or_sections"));
        if (!sizes)
            sizes = intsArg(n->arg(1, "split_sizes"));
        const Argument *d = n->arg(2, "dim");
        auto shape = rewrite::staticShape(x);
        if (x->op() != OpKind::Placeholder || !sizes || sizes->size() < 1 || !shape || (d && !d->isInt()))
            continue;
        int64_t k = d ? d->toInt() : 0;
        k = k < 0 ? k + int64_t(shape->size()) : k;
        if (k < 0 || size_t(k) >= shape->size() || (n->target() == "aten.split.Tensor") || (sizes->size() == 1 && n->arg(1, "split_size_or_sections")->isInt()))
            continue;
        int64_t total = 0;
        for (auto v : *sizes)
            total += v;
        fixes[{x->name(), k}] = total;
    }
    if (fixes.empty())
        return g;
    return instantiateWith(p, seed, fixes, why, desc);
}

namespace {
std::unique_ptr<ir::Graph> instantiateWith(const FilePattern &p, uint64_t seed, const ShapeFixes &fixes, std::string &why,
                                           std::string &desc)
{
    std::mt19937_64 rng(seed);
    auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    // Sizes come from a small pool plus the integer constants of the pattern's asserts and their
    // neighbours (boundary values: "M >= 10240" needs 10240 to be drawn). Each instance favours two
    // sizes and one rank, so that shapes agree often enough for the ops to accept them.
    std::vector<int64_t> pool = {1, 2, 3, 4};
    std::function<void(const Expr &)> lits = [&](const Expr &e) {
        if (e.kind == Expr::Kind::Int && e.ival > 4 && e.ival <= (1 << 16))
            for (int64_t d : {e.ival - 1, e.ival, e.ival + 1})
                pool.push_back(d);
        for (const auto &x : e.a)
            if (x)
                lits(*x);
    };
    for (const auto &st : p.program->asserts)
        lits(*st.e);
    auto pick = [&]() { return pool[size_t(uni(0, int64_t(pool.size()) - 1))]; };
    const int64_t fav1 = uni(1, 4), fav2 = pick(), favRank = uni(1, 4);
    auto dim = [&]() {
        const int64_t r = uni(0, 9);
        return r < 4 ? fav1 : r < 7 ? fav2 : pick();
    };
    auto g = std::make_unique<ir::Graph>();
    g->name = p.name + "_instance";
    g->irLevel = p.level == IrLevel::Aten ? "aten" : "torch";
    const Func *pat = nullptr;
    for (const auto &f : p.module.funcs)
        if (f.name == "pattern")
            pat = &f;
    if (!pat) {
        why = "no pattern function";
        return nullptr;
    }
    Rewriter rw(*g);
    Evaluator ev;
    ev.rw = &rw;
    desc.clear();
    for (const auto &prm : pat->params) {
        const std::string t = prm.type ? typeName(*prm.type) : "Any";
        Value v;
        if (t == "Tensor" || t == "torch.Tensor") {
            const int64_t rank = uni(0, 9) < 7 ? favRank : uni(1, 4);
            std::vector<int64_t> shape;
            int64_t numel = 1;
            for (int64_t k = 0; k < rank; ++k) {
                int64_t d = dim();
                if (numel * d > (int64_t(1) << 20))
                    d = uni(1, 4); // keep instances small
                shape.push_back(d);
                numel *= d;
            }
            for (auto &[key, size] : fixes)
                if (key.first == prm.name && size_t(key.second) < shape.size())
                    shape[size_t(key.second)] = size;
            Node *n = g->create(OpKind::Placeholder, prm.name, {}, {}, prm.name);
            ir::TensorMeta tm;
            for (auto d : shape)
                tm.shape.push_back({d, {}});
            tm.dtype = "float32";
            int64_t stride = 1;
            tm.stride.assign(shape.size(), 1);
            for (size_t k = shape.size(); k-- > 0;) {
                tm.stride[k] = stride;
                stride *= shape[k];
            }
            n->meta().val = ir::ValueMeta::ofTensor(tm);
            v = Value::ofNode(n);
            desc += (desc.empty() ? "" : ", ") + prm.name + ": " + n->meta().val.toString();
            ev.vars[prm.name] = v;
            continue;
        }
        if (t == "int" || t == "Any")
            v = Value::integer(uni(0, 9) < 8 ? uni(0, 3) : pick());
        else if (t == "bool")
            v = Value::boolean(uni(0, 1) != 0);
        else if (t == "float") {
            v.k = Value::K::Float;
            v.f = double(uni(1, 4)) / 2;
        } else if (t == "list" || t == "List") {
            v.k = Value::K::List;
            const int64_t n = uni(1, 4);
            for (int64_t k = 0; k < n; ++k)
                v.list.push_back(Value::integer(uni(0, 1) ? fav1 : uni(1, 3)));
        } else {
            why = "parameter '" + prm.name + "' of type " + t + " cannot be sampled";
            return nullptr;
        }
        ev.vars[prm.name] = v;
        desc += (desc.empty() ? "" : ", ") + prm.name + " = " + v.str();
    }
    try {
        for (const auto &st : pat->body) {
            if (st.kind == Stmt::Kind::Assign) {
                if (st.e->kind == Expr::Kind::Name && st.e->s == "_")
                    throw EvalError{st.e->loc, "'_' cannot be spelled out"};
                ev.vars[st.target] = ev.eval(st.e);
            } else if (st.kind == Stmt::Kind::Return) {
                Value v = ev.eval(st.e);
                if (v.k != Value::K::Node || !v.node) {
                    why = "the pattern's return is not a node";
                    return nullptr;
                }
                g->create(OpKind::Output, "output", {Argument::tuple({Argument::node(v.node)})}, {}, "output");
                return g;
            }
        }
    } catch (const EvalError &e) {
        why = "line " + std::to_string(e.loc.line) + ": " + e.message;
        return nullptr;
    }
    why = "the pattern has no return";
    return nullptr;
}
} // namespace

// --- library ------------------------------------------------------------------------------------------

namespace {
std::filesystem::file_time_type mtimeOf(const std::string &p)
{
    std::error_code ec;
    auto t = std::filesystem::last_write_time(p, ec);
    return ec ? std::filesystem::file_time_type{} : t;
}
} // namespace

bool PatternLibrary::loadFile(const std::string &path, rewrite::PatternRegistry &reg)
{
    auto it = std::find_if(m_files.begin(), m_files.end(), [&](const FileState &f) { return f.path == path; });
    if (it == m_files.end()) {
        m_files.push_back({path, {}, {}, {}});
        it = m_files.end() - 1;
    }
    FileState &st = *it;
    if (!st.pattern.empty())
        reg.remove(st.pattern);
    st.pattern.clear();
    st.diagnostic.clear();
    st.mtime = mtimeOf(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        Diagnostic d;
        d.file = path;
        d.message = "cannot open the pattern file";
        st.diagnostic = d.toString() + "\n";
        return false;
    }
    std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = compilePattern(src, path);
    if (!r) {
        st.diagnostic = renderDiagnostic(r.error(), src);
        return false;
    }
    std::string name = r.value()->name;
    std::string err = reg.add(std::move(r.value()));
    if (!err.empty()) {
        Diagnostic d;
        d.file = path;
        d.line = 1;
        d.column = 1;
        d.message = err + " (another pattern, built in or from another file, has this name)";
        st.diagnostic = renderDiagnostic(d, src);
        return false;
    }
    st.pattern = name;
    return true;
}

size_t PatternLibrary::loadDirectory(const std::string &dir, rewrite::PatternRegistry &reg)
{
    if (std::find(m_dirs.begin(), m_dirs.end(), dir) == m_dirs.end())
        m_dirs.push_back(dir);
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".fxpat")
            paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    size_t failed = 0;
    for (const auto &p : paths)
        failed += !loadFile(p, reg);
    return failed;
}

std::vector<std::string> PatternLibrary::reloadChanged(rewrite::PatternRegistry &reg)
{
    std::vector<std::string> changed;
    // Removed files.
    for (auto it = m_files.begin(); it != m_files.end();) {
        if (!std::filesystem::exists(it->path)) {
            if (!it->pattern.empty())
                reg.remove(it->pattern);
            changed.push_back(it->path);
            it = m_files.erase(it);
        } else {
            ++it;
        }
    }
    // Changed files.
    std::vector<std::string> paths;
    for (const auto &f : m_files)
        if (mtimeOf(f.path) != f.mtime)
            paths.push_back(f.path);
    // New files in the loaded directories.
    for (const auto &dir : m_dirs) {
        std::error_code ec;
        for (const auto &e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().extension() == ".fxpat" &&
                std::none_of(m_files.begin(), m_files.end(), [&](const FileState &f) { return f.path == e.path().string(); }))
                paths.push_back(e.path().string());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto &p : paths) {
        loadFile(p, reg);
        changed.push_back(p);
    }
    return changed;
}

std::string PatternLibrary::diagnostics() const
{
    std::string s;
    for (const auto &f : m_files)
        s += f.diagnostic;
    return s;
}

} // namespace fxlens::lang
