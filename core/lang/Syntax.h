// SPDX-License-Identifier: MIT
// The pattern language's syntax: a restricted Python (module-level assignments and `def` functions
// whose bodies are assignments, `assert` and `return`), lexed and parsed by fxlens itself. No Python
// at run time. Depends on nothing but the standard library, so the fuzz target links only this.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fxlens::lang {

struct Loc {
    int line = 0, col = 0; ///< 1-based
    int len = 1;           ///< characters the caret underlines
};

struct Expr;
using ExprP = std::shared_ptr<Expr>;

struct Expr {
    enum class Kind : uint8_t {
        Name,  ///< s
        Int,   ///< ival
        Float, ///< fval
        Str,   ///< s
        None,
        Bool,      ///< ival 0/1
        Attr,      ///< a[0].s
        Call,      ///< a[0](a[1..]; kw)
        Subscript, ///< a[0][a[1]]
        Slice,     ///< a[0]:a[1] (either may be null)
        List,      ///< [a...]
        ListComp,  ///< [a[0] for s in a[1]]
        BinOp,     ///< a[0] s a[1]: + - * / // % |
        Compare,   ///< a[0] s a[1]: == != < <= > >= in
        And,
        Or,
        Not,
        Neg,
    };
    Kind kind = Kind::Name;
    std::string s;
    int64_t ival = 0;
    double fval = 0;
    std::vector<ExprP> a;
    int height = 1; ///< of the tree under this node (the parser bounds it)
    std::vector<std::pair<std::string, ExprP>> kw;
    Loc loc;
};

struct Stmt {
    enum class Kind : uint8_t { Assign, Return, Assert, Pass };
    Kind kind = Kind::Pass;
    std::string target; ///< Assign
    Loc targetLoc;
    ExprP e;
    std::string message; ///< Assert: the optional message
    Loc loc;
};

struct Param {
    std::string name;
    ExprP type; ///< annotation or null
    Loc loc;
};

struct Func {
    std::string name;
    std::vector<Param> params;
    std::vector<Stmt> body;
    Loc loc;
};

struct Setting {
    std::string name;
    ExprP value;
    Loc loc;
};

struct Module {
    std::vector<Setting> settings; ///< name = "...", level = "torch", ...
    std::vector<Func> funcs;
};

struct SyntaxError {
    Loc loc;
    std::string message;
};

/// Parses a pattern file. Returns false and fills `err` at the first error.
bool parseModule(const std::string &source, Module &out, SyntaxError &err);

/// "line N" of `source` (1-based, without the newline); "" past the end.
std::string sourceLine(const std::string &source, int line);

/// How a call's callee is written: the Python export spells `aten.x.y` as `torch.ops.aten.x.y`.
using CalleeSpelling = std::function<std::string(const Expr &callee)>;

/// The Python spelling of an expression (diagnostics, export); `callee`, when set, spells the
/// callee of every call.
std::string unparse(const Expr &e, const CalleeSpelling &callee = nullptr);

} // namespace fxlens::lang
