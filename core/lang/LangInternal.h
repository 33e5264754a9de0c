// SPDX-License-Identifier: MIT
// Shared by the pattern language's sources (never included outside core/lang): the vocabulary of
// ops, methods and builtins, compile errors, the value type of constraint and replacement
// expressions, the compiled program and its evaluator.
#pragma once

#include "lang/PatternLang.h"
#include "rewrite/PatternGraph.h"
#include "rewrite/Rewriter.h"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fxlens::lang::detail {

using ir::Argument;
using ir::Node;
using ir::OpKind;
using namespace rewrite;

// --- vocabulary (Vocabulary.cpp) ---

const std::vector<std::string> &knownFunctions();
const std::vector<std::string> &knownMethods();
const std::vector<std::string> &builtins();
/// The option nearest to `name` by edit distance ("" when none is near).
std::string closest(const std::string &name, const std::vector<std::string> &options);
std::string didYouMean(const std::string &s);

struct CompileError {
    Loc loc;
    std::string message;
};
[[noreturn]] void error(Loc loc, std::string msg);

/// "torch.split" for torch.split, "torch.nn.functional.relu" for F.relu; "" when `e` is no dotted name.
std::string dotted(const Expr &e);
bool isTargetRoot(const std::string &d);
void checkTarget(const std::string &t, Loc loc);
/// A parameter annotation's type name ("Tensor", "int", "List", ...).
std::string typeName(const Expr &t);
/// The parameter types a pattern function may declare.
extern const std::vector<std::string> kTypes;

// --- values (Value.cpp) ---

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

Value fromArg(const Argument &a);
Argument toArg(const Value &v);
bool truthy(const Value &v);
bool equal(const Value &a, const Value &b);

// --- the compiled program and its evaluator (Evaluator.cpp) ---

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
    void spend(int64_t n, Loc loc);
    /// Checked integer arithmetic (Python's ints do not overflow; a pattern's int64 reports it).
    int64_t checked(Loc loc, const std::string &op, int64_t a, int64_t b);

    Value shapeValue(Node *n, Loc loc);
    Node *asNode(const Value &v, Loc loc, const char *what);
    int64_t asInt(const Value &v, Loc loc);
    const std::vector<Value> &asList(const Value &v, Loc loc);

    Value eval(const ExprP &e);

    Value compare(const ExprP &e);

    Value binop(const ExprP &e);

    Value subscript(const ExprP &e);

    Value makeNode(OpKind op, const std::string &target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kw,
                   const std::string &name);

    Value call(const ExprP &e);

    Value builtin(const std::string &fn, const std::vector<Value> &args, Loc loc);
    Value nodeBuiltin(const std::string &fn, const std::vector<Value> &args, Loc loc);
};

} // namespace fxlens::lang::detail

namespace fxlens::lang {

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

} // namespace fxlens::lang

namespace fxlens::lang::detail {

using Program = FilePattern::Program;

/// The environment of a match: parameters, pattern variables, and what comprehensions bound.
/// Returns false (with `why`) when a comprehension's positions are not consecutive or disagree
/// with names bound elsewhere.
bool buildEnv(const FilePattern &fp, const Bindings &b, Evaluator &ev, MatchFailure &why);
/// The names an expression reads (for failure messages).
void namesIn(const Expr &e, std::set<std::string> &out);

} // namespace fxlens::lang::detail
