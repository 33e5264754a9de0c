// SPDX-License-Identifier: MIT
// Expressions of the pattern language back to Python (diagnostics, the Python export).
#include "lang/Syntax.h"

#include <sstream>

namespace fxlens::lang {

std::string unparse(const Expr &e, const CalleeSpelling &callee)
{
    auto u = [&](const ExprP &p) { return p ? unparse(*p, callee) : std::string(); };
    switch (e.kind) {
    case Expr::Kind::Name: return e.s;
    case Expr::Kind::Int: return std::to_string(e.ival);
    case Expr::Kind::Float: {
        std::ostringstream o;
        o << e.fval;
        std::string s = o.str();
        if (s.find_first_of(".e") == std::string::npos)
            s += ".0";
        return s;
    }
    case Expr::Kind::Str: {
        std::string s = "\"";
        for (char c : e.s) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                s += '\\';
                s += c;
            } else if (u < 0x20 || u == 0x7f) { // every control character escaped: no line break survives
                static const char hex[] = "0123456789abcdef";
                s += "\\x";
                s += hex[u >> 4];
                s += hex[u & 15];
            } else {
                s += c;
            }
        }
        return s + "\"";
    }
    case Expr::Kind::None: return "None";
    case Expr::Kind::Bool: return e.ival ? "True" : "False";
    case Expr::Kind::Attr: return u(e.a[0]) + "." + e.s;
    case Expr::Kind::Call: {
        std::string s = (callee ? callee(*e.a[0]) : u(e.a[0])) + "(";
        for (size_t i = 1; i < e.a.size(); ++i)
            s += (i > 1 ? ", " : "") + u(e.a[i]);
        for (size_t i = 0; i < e.kw.size(); ++i)
            s += (e.a.size() > 1 || i ? ", " : "") + e.kw[i].first + "=" + u(e.kw[i].second);
        return s + ")";
    }
    case Expr::Kind::Subscript: return u(e.a[0]) + "[" + u(e.a[1]) + "]";
    case Expr::Kind::Slice: return u(e.a[0]) + ":" + u(e.a[1]);
    case Expr::Kind::List: {
        std::string s = "[";
        for (size_t i = 0; i < e.a.size(); ++i)
            s += (i ? ", " : "") + u(e.a[i]);
        return s + "]";
    }
    case Expr::Kind::ListComp: return "[" + u(e.a[0]) + " for " + e.s + " in " + u(e.a[1]) + "]";
    case Expr::Kind::BinOp:
    case Expr::Kind::Compare: {
        auto side = [&](const ExprP &p) {
            const bool paren = p &&
                (p->kind == Expr::Kind::BinOp || p->kind == Expr::Kind::Compare || p->kind == Expr::Kind::And || p->kind == Expr::Kind::Or);
            return paren ? "(" + u(p) + ")" : u(p);
        };
        return side(e.a[0]) + " " + e.s + " " + side(e.a[1]);
    }
    case Expr::Kind::And: return u(e.a[0]) + " and " + u(e.a[1]);
    case Expr::Kind::Or: return "(" + u(e.a[0]) + " or " + u(e.a[1]) + ")";
    case Expr::Kind::Not: return "not " + u(e.a[0]);
    case Expr::Kind::Neg: {
        const Expr::Kind k = e.a[0] ? e.a[0]->kind : Expr::Kind::Name;
        const bool paren = k == Expr::Kind::BinOp || k == Expr::Kind::Compare || k == Expr::Kind::And || k == Expr::Kind::Or ||
            k == Expr::Kind::Not || k == Expr::Kind::Neg;
        return paren ? "-(" + u(e.a[0]) + ")" : "-" + u(e.a[0]);
    }
    }
    return "?";
}

} // namespace fxlens::lang
