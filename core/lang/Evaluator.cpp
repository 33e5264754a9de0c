// SPDX-License-Identifier: MIT
// The evaluator of constraint and replacement expressions, and the environment of a match.
#include "ir/Target.h"
#include "lang/LangInternal.h"
#include "rewrite/OpUtil.h"
#include "rewrite/ShapeRules.h"

#include <cmath>

namespace fxlens::lang::detail {

void Evaluator::spend(int64_t n, Loc loc)
{
    if (n < 0 || n > kMaxCells || (cells += n) > kMaxCells)
        fail(loc, "evaluation makes more than " + std::to_string(kMaxCells) + " list elements");
}

/// Checked integer arithmetic (Python's ints do not overflow; a pattern's int64 reports it).
int64_t Evaluator::checked(Loc loc, const std::string &op, int64_t a, int64_t b)
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

Value Evaluator::shapeValue(Node *n, Loc loc)
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

Node *Evaluator::asNode(const Value &v, Loc loc, const char *what)
{
    if (v.k != Value::K::Node)
        fail(loc, std::string(what) + " needs a node, got " + v.str());
    if (!v.node)
        fail(loc, std::string(what) + " of a node the replacement creates is not known before it runs");
    return v.node;
}

int64_t Evaluator::asInt(const Value &v, Loc loc)
{
    if (v.k != Value::K::Int && v.k != Value::K::Bool)
        fail(loc, "expected an integer, got " + v.str());
    return v.i;
}

const std::vector<Value> &Evaluator::asList(const Value &v, Loc loc)
{
    if (v.k != Value::K::List)
        fail(loc, "expected a list, got " + v.str());
    return v.list;
}

Value Evaluator::eval(const ExprP &e)
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

Value Evaluator::compare(const ExprP &e)
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

Value Evaluator::binop(const ExprP &e)
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
        v.f = op == "+"  ? a + b
            : op == "-"  ? a - b
            : op == "*"  ? a * b
            : op == "/"  ? a / b
            : op == "//" ? std::floor(a / b)
                         : std::fmod(a, b);
        return v;
    }
    const int64_t a = l.i, b = r.i;
    if ((op == "//" || op == "%") && b == 0)
        fail(e->loc, "division by zero");
    return Value::integer(checked(e->loc, op, a, b));
}

Value Evaluator::subscript(const ExprP &e)
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

Value Evaluator::makeNode(OpKind op, const std::string &target, std::vector<Argument> args,
                          std::vector<std::pair<std::string, Argument>> kw, const std::string &name)
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

Value Evaluator::call(const ExprP &e)
{
    const Expr &f = *e->a[0];
    std::vector<Value> args;
    for (size_t k = 1; k < e->a.size(); ++k)
        args.push_back(eval(e->a[k]));
    std::vector<std::pair<std::string, Value>> kw;
    for (const auto &[k, v] : e->kw)
        kw.emplace_back(k, eval(v));
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
        a.reserve(args.size());
        for (const auto &v : args)
            a.push_back(toArg(v));
        std::vector<std::pair<std::string, Argument>> k;
        k.reserve(kw.size());
        for (const auto &[n, v] : kw)
            k.emplace_back(n, toArg(v));
        const std::string base = ir::Target::parse(d).base();
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
        k.reserve(kw.size());
        for (const auto &[nm, v] : kw)
            k.emplace_back(nm, toArg(v));
        return makeNode(OpKind::CallMethod, f.s, std::move(a), std::move(k), f.s);
    }
    if (f.kind != Expr::Kind::Name)
        fail(e->loc, "cannot call '" + unparse(f) + "'");
    return builtin(f.s, args, e->loc);
}

Value Evaluator::builtin(const std::string &fn, const std::vector<Value> &args, Loc loc)
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
    return nodeBuiltin(fn, args, loc);
}

/// The builtins about nodes and dims: shape, ndim, numel, dtype, users, all_users_getitem, is_node,
/// all_equal, all_distinct, norm_dim.
Value Evaluator::nodeBuiltin(const std::string &fn, const std::vector<Value> &args, Loc loc)
{
    auto need = [&](size_t n) {
        if (args.size() != n)
            fail(loc, fn + "() takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    };
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
        const int64_t d = asInt(args[0], loc), r = asInt(args[1], loc);
        const auto k = r >= 0 && r <= INT32_MAX ? normalizeDim(d, int(r)) : std::nullopt;
        if (!k)
            fail(loc, "norm_dim: dim " + std::to_string(d) + " is out of range for rank " + std::to_string(r));
        return Value::integer(*k);
    }
    fail(loc, "unknown function '" + fn + "'" + didYouMean(closest(fn, builtins())));
}

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
                why = {"[... for " + c.loopCapture.substr(1) + " in range(...)]", anchor ? anchor->name() : "?", "consecutive indices",
                       "[" + found + "]"};
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
            why = {"range end '" + unparse(*c.hi) + "'", anchor ? anchor->name() : "?",
                   ev.vars.count(c.hi->s) ? ev.vars[c.hi->s].str() : unparse(*c.hi),
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

} // namespace fxlens::lang::detail
