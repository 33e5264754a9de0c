// SPDX-License-Identifier: MIT
// The pattern-file compiler: the pattern function becomes a pattern graph, its asserts and the
// replacement's dry run become constraints (so that "why no match" names the first that fails),
// and the replacement becomes the rewrite.
#include "lang/LangInternal.h"

#include "rewrite/Schema.h"

#include <filesystem>

namespace fxlens::lang {

using namespace detail;

namespace {

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
        ops.emplace_back(OpKind::CallFunction, d);
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
                ops.emplace_back(OpKind::CallFunction, d);
                what = d;
                schema = schemaFor(OpKind::CallFunction, d);
            } else if (f.kind == Expr::Kind::Attr && f.a[0]->kind == Expr::Kind::Name && syms.count(f.a[0]->s)) {
                const auto &m = knownMethods();
                if (std::find(m.begin(), m.end(), f.s) == m.end())
                    error(f.loc, "unknown method '." + f.s + "()'" + didYouMean(closest(f.s, m)));
                ops.emplace_back(OpKind::CallMethod, f.s);
                what = "." + f.s + "()";
                schema = schemaFor(OpKind::CallMethod, f.s);
                args.push_back(PArg::ref(tensorNode(f.a[0]->s, f.a[0]->loc)));
            } else if (f.kind == Expr::Kind::Name) {
                error(f.loc,
                      "cannot call '" + f.s + "' in a pattern: expected torch.*, aten.*, operator.*, F.* or a method of a node" +
                          didYouMean(closest("torch." + f.s, knownFunctions())));
            } else {
                std::string root = f.kind == Expr::Kind::Attr ? dotted(f) : std::string();
                error(f.loc,
                      "unknown op '" + (root.empty() ? unparse(f) : root) + "'" +
                          didYouMean(closest(root.empty() ? unparse(f) : root, knownFunctions())));
            }
        }
        for (const auto &p : positional)
            args.push_back(arg(p, inElem));
        if (schema && schema->varargs < 0 && args.size() > schema->params.size())
            error(e->loc,
                  what + " takes at most " + std::to_string(schema->params.size()) + " arguments, got " + std::to_string(args.size()));
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
                error(it.a[k]->loc,
                      "unknown name '" + it.a[k]->s + "' in range(): declare it as a parameter (lo: int)" +
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

struct Functions {
    const Func *pattern = nullptr, *replacement = nullptr, *check = nullptr;
};

/// Step 1: the file's functions (pattern, replacement, optional check).
Functions findFunctions(const Module &m)
{
    Functions fs;
    const Func *&pat = fs.pattern, *&rep = fs.replacement, *&chk = fs.check;
    for (const auto &f : m.funcs) {
        const Func **slot = f.name == "pattern" ? &pat : f.name == "replacement" ? &rep : f.name == "check" ? &chk : nullptr;
        if (!slot)
            error(f.loc,
                  "unexpected function '" + f.name + "': a pattern file defines pattern, replacement and optionally check" +
                      didYouMean(closest(f.name, {"pattern", "replacement", "check"})));
        if (*slot)
            error(f.loc, "'" + f.name + "' is defined twice");
        *slot = &f;
    }
    if (!pat)
        error({1, 1, 1}, "no 'def pattern(...)' in the file");
    if (!rep)
        error({1, 1, 1}, "no 'def replacement(...)' in the file");
    return fs;
}

/// Step 2: the settings (name, description, level, benefit, phase, labels).
void readSettings(FilePattern &pattern, const Module &m, const std::string &file)
{
    FilePattern *fp = &pattern;
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
            error(s.loc,
                  "unknown setting '" + s.name + "'" +
                      didYouMean(closest(s.name, {"name", "description", "level", "benefit", "phase", "labels"})) +
                      " (settings: name, description, level, benefit, phase, labels)");
        }
    }
}

/// Step 3: the pattern function's parameters and body as a pattern graph; returns the anchor node.
int compileMatcher(Compiler &c, const Func *pat)
{
    for (const auto &p : pat->params) {
        if (c.syms.count(p.name))
            error(p.loc, "parameter '" + p.name + "' is declared twice");
        std::string t = p.type ? typeName(*p.type) : "Any";
        if (std::find(kTypes.begin(), kTypes.end(), t) == kTypes.end())
            error(p.type->loc,
                  "unknown type '" + t + "'" + didYouMean(closest(t, kTypes)) + " (types: Tensor, int, float, bool, str, list)");
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
    return root;
}

/// The names asserts, check and replacement may read: parameters, pattern variables and the
/// comprehensions' bounds.
std::set<std::string> visibleNames(const Compiler &c)
{
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
    return bound;
}

/// Step 4: the check function's statements join the asserts (its names become visible).
void compileCheck(Compiler &c, const Func *chk, std::set<std::string> &bound)
{
    for (const auto &p : chk->params)
        if (!bound.count(p.name))
            error(p.loc,
                  "check parameter '" + p.name + "' is not bound by the pattern" +
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

/// Step 5: the replacement reads bound names only and returns a value.
void checkReplacement(const Func *rep, const std::set<std::string> &bound)
{
    std::set<std::string> rbound;
    for (const auto &p : rep->params) {
        if (!bound.count(p.name))
            error(p.loc,
                  "replacement parameter '" + p.name + "' is not bound by the pattern" +
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
}

/// Constraint: assert number `k`, after the check-local assignments before it; the failure names
/// the values it read.
bool holds(const FilePattern *self, size_t k, const Bindings &b, MatchFailure &why)
{
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
        why = {"assert " + unparse(*a.e), anchor ? anchor->name() : "?", "true", "an error: " + e.message};
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
    why = {"assert " + unparse(*a.e) + (a.message.empty() ? "" : " (" + a.message + ")"), anchor ? anchor->name() : "?", "true",
           "false with " + (found.empty() ? "no bindings" : found)};
    return false;
}

/// Constraint: a dry run of the replacement (it must evaluate and return a node).
bool replacementRuns(const FilePattern *self, const Bindings &b, MatchFailure &why)
{
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
        why = {"replacement line " + std::to_string(e.loc.line), anchor ? anchor->name() : "?", "a value", "an error: " + e.message};
        return false;
    }
    return true;
}

/// Step 6: the comprehensions' ranges, then every assert, then the replacement's dry run, as
/// pattern-graph constraints so that "why no match" reports the first one that fails.
void addConstraints(FilePattern *self)
{
    self->graph.constraints.push_back({"comprehension ranges", [self](const Bindings &b, MatchFailure &why) {
                                           Evaluator ev;
                                           return buildEnv(*self, b, ev, why);
                                       }});
    for (size_t k = 0; k < self->program->asserts.size(); ++k) {
        const Stmt &st = self->program->asserts[k];
        if (st.kind != Stmt::Kind::Assert)
            continue; // a check-local assignment, evaluated before the asserts that follow it
        self->graph.constraints.push_back(
            {"assert " + unparse(*st.e), [self, k](const Bindings &b, MatchFailure &why) { return holds(self, k, b, why); }});
    }
    self->graph.constraints.push_back(
        {"replacement", [self](const Bindings &b, MatchFailure &why) { return replacementRuns(self, b, why); }});
}

/// The rewrite: evaluates the replacement through the rewriter and replaces the anchor.
void applyReplacement(const FilePattern *self, const Bindings &b, Rewriter &rw)
{
    Evaluator ev;
    MatchFailure why;
    if (!buildEnv(*self, b, ev, why)) {
        rw.fail(self->file + ": the match no longer binds: " + why.toString());
        return;
    }
    Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
    ev.rw = &rw;
    ev.anchor = anchor;
    const Func &rep = *self->program->replacement;
    try {
        for (const auto &st : rep.body) {
            if (st.kind == Stmt::Kind::Assign) {
                ev.vars[st.target] = ev.eval(st.e);
                continue;
            }
            if (st.kind != Stmt::Kind::Return)
                continue;
            Value v = ev.eval(st.e);
            if (v.k != Value::K::Node) {
                rw.fail(self->file + ": the replacement returned " + v.str() + ", not a node");
                return;
            }
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
    } catch (const EvalError &e) {
        // The dry run in match() makes this unreachable in practice; the session rolls the step back.
        rw.fail(self->file + ":" + std::to_string(e.loc.line) + ": " + e.message);
    }
}

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
        const Functions fs = findFunctions(fp->module);
        readSettings(*fp, fp->module, file);
        Compiler c;
        const int root = compileMatcher(c, fs.pattern);
        std::set<std::string> bound = visibleNames(c);
        for (const auto &a : c.prog.asserts)
            checkNames(*a.e, bound);
        if (fs.check)
            compileCheck(c, fs.check, bound);
        checkReplacement(fs.replacement, bound);
        c.pg.root = root;
        fp->graph = std::move(c.pg);
        c.prog.replacement = fs.replacement;
        fp->program = std::make_shared<Program>(std::move(c.prog));
    } catch (const CompileError &e) {
        return diag(e.loc, e.message);
    }
    FilePattern *self = fp.get();
    addConstraints(self);
    self->deriveAnchors();
    self->summarize = [self](const Bindings &b) {
        Node *anchor = b.matched.empty() ? nullptr : b.matched.front();
        return self->name + " at " + (anchor ? anchor->name() : "?");
    };
    self->apply = [self](const Bindings &b, Rewriter &rw) { applyReplacement(self, b, rw); };
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

} // namespace fxlens::lang
