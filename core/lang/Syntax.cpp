// SPDX-License-Identifier: MIT
#include "lang/Syntax.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace fxlens::lang {

namespace {

struct Tok {
    enum class K : uint8_t { Name, Int, Float, Str, Op, Newline, Indent, Dedent, End };
    K k = K::End;
    std::string text;
    Loc loc;
};

const char *kindName(Tok::K k)
{
    switch (k) {
    case Tok::K::Name: return "a name";
    case Tok::K::Int: return "an integer";
    case Tok::K::Float: return "a number";
    case Tok::K::Str: return "a string";
    case Tok::K::Op: return "an operator";
    case Tok::K::Newline: return "end of line";
    case Tok::K::Indent: return "an indented block";
    case Tok::K::Dedent: return "end of block";
    case Tok::K::End: return "end of file";
    }
    return "?";
}

std::string describe(const Tok &t)
{
    switch (t.k) {
    case Tok::K::Name:
    case Tok::K::Op: return "'" + t.text + "'";
    case Tok::K::Int:
    case Tok::K::Float: return "number " + t.text;
    case Tok::K::Str: return "string " + t.text;
    default: return kindName(t.k);
    }
}

struct Fail {
    SyntaxError e;
};

[[noreturn]] void fail(Loc loc, std::string msg) { throw Fail{{loc, std::move(msg)}}; }

/// The end of the number literal at `i` (digits, a fraction, an exponent); `isFloat` when it has
/// a fraction or an exponent.
size_t numberEnd(const std::string &src, size_t i, bool &isFloat)
{
    size_t j = i;
    isFloat = false;
    while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '_'))
        ++j;
    if (j < src.size() && src[j] == '.' && !(j + 1 < src.size() && std::isalpha(static_cast<unsigned char>(src[j + 1])))) {
        isFloat = true;
        ++j;
        while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j])))
            ++j;
    }
    if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
        size_t k = j + 1;
        if (k < src.size() && (src[k] == '+' || src[k] == '-'))
            ++k;
        if (k < src.size() && std::isdigit(static_cast<unsigned char>(src[k]))) {
            isFloat = true;
            j = k;
            while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j])))
                ++j;
        }
    }
    return j;
}

/// The position of the quote closing the string literal at `i` (or where the line or the source
/// ends first); `text` gets its value, escapes resolved.
size_t stringEnd(const std::string &src, size_t i, std::string &text)
{
    const char quote = src[i];
    size_t j = i + 1;
    while (j < src.size() && src[j] != quote && src[j] != '\n') {
        if (src[j] == '\\' && j + 1 < src.size() && src[j + 1] != '\n') {
            const char e = src[j + 1];
            text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
            j += 2;
            continue;
        }
        text += src[j++];
    }
    return j;
}

std::vector<Tok> lex(const std::string &src)
{
    std::vector<Tok> out;
    std::vector<int> indents{0};
    int depth = 0; // open brackets: newlines inside do not end a line
    size_t i = 0;
    int line = 1;
    size_t lineStart = 0;
    bool atLineStart = true;
    auto loc = [&](size_t pos, size_t len = 1) { return Loc{line, int(pos - lineStart) + 1, int(len)}; };
    while (i <= src.size()) {
        if (atLineStart && depth == 0) {
            // Measure indentation; blank and comment-only lines do not count.
            size_t j = i;
            int width = 0;
            while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) {
                if (src[j] == '\t')
                    fail(loc(j), "tab in indentation: indent with spaces");
                ++width;
                ++j;
            }
            if (j >= src.size() || src[j] == '\n' || src[j] == '#' || src[j] == '\r') {
                while (j < src.size() && src[j] != '\n')
                    ++j;
                if (j >= src.size())
                    break;
                i = j + 1;
                ++line;
                lineStart = i;
                continue;
            }
            if (width > indents.back()) {
                indents.push_back(width);
                out.push_back({Tok::K::Indent, "", loc(j)});
            } else {
                while (width < indents.back()) {
                    indents.pop_back();
                    out.push_back({Tok::K::Dedent, "", loc(j)});
                }
                if (width != indents.back())
                    fail(loc(j), "this line's indentation matches no enclosing block");
            }
            i = j;
            atLineStart = false;
        }
        if (i >= src.size())
            break;
        const char c = src[i];
        if (c == '\n') {
            if (depth == 0)
                out.push_back({Tok::K::Newline, "", loc(i)});
            ++i;
            ++line;
            lineStart = i;
            atLineStart = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            ++i;
            continue;
        }
        if (c == '#') {
            while (i < src.size() && src[i] != '\n')
                ++i;
            continue;
        }
        if (c == '\\' && i + 1 < src.size() && src[i + 1] == '\n') {
            i += 2;
            ++line;
            lineStart = i;
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t j = i;
            while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_'))
                ++j;
            out.push_back({Tok::K::Name, src.substr(i, j - i), loc(i, j - i)});
            i = j;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            bool isFloat = false;
            const size_t j = numberEnd(src, i, isFloat);
            if (j < src.size() && (std::isalpha(static_cast<unsigned char>(src[j])) || src[j] == '_'))
                fail(loc(i, j - i + 1), "malformed number '" + src.substr(i, j - i + 1) + "'");
            out.push_back({isFloat ? Tok::K::Float : Tok::K::Int, src.substr(i, j - i), loc(i, j - i)});
            i = j;
            continue;
        }
        if (c == '"' || c == '\'') {
            std::string text;
            const size_t j = stringEnd(src, i, text);
            if (j >= src.size() || src[j] != c)
                fail(loc(i, j - i), "unterminated string");
            out.push_back({Tok::K::Str, text, loc(i, j - i + 1)});
            i = j + 1;
            continue;
        }
        static const char *ops2[] = {"==", "!=", "<=", ">=", "//", "->", "**"};
        bool two = false;
        for (const char *op : ops2)
            if (src.compare(i, 2, op) == 0) {
                out.push_back({Tok::K::Op, op, loc(i, 2)});
                i += 2;
                two = true;
                break;
            }
        if (two)
            continue;
        if (std::string("()[]{},:.=+-*/%|<>@").find(c) != std::string::npos) {
            if (c == '(' || c == '[' || c == '{')
                ++depth;
            if (c == ')' || c == ']' || c == '}')
                depth = depth > 0 ? depth - 1 : 0;
            out.push_back({Tok::K::Op, std::string(1, c), loc(i)});
            ++i;
            continue;
        }
        fail(loc(i),
             std::string("unexpected character '") +
                 (std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c)
                                                              : "\\x" + std::to_string(int(static_cast<unsigned char>(c)))) +
                 "'");
    }
    const Loc end{line, int(i - lineStart) + 1, 1};
    if (!out.empty() && out.back().k != Tok::K::Newline && out.back().k != Tok::K::Dedent)
        out.push_back({Tok::K::Newline, "", end});
    while (indents.size() > 1) {
        indents.pop_back();
        out.push_back({Tok::K::Dedent, "", end});
    }
    out.push_back({Tok::K::End, "", end});
    return out;
}

class Parser {
public:
    explicit Parser(std::vector<Tok> t) : m_t(std::move(t)) {}

    Module module()
    {
        Module m;
        while (peek().k != Tok::K::End) {
            if (peek().k == Tok::K::Newline) {
                next();
                continue;
            }
            if (peek().k == Tok::K::Indent)
                fail(peek().loc, "unexpected indentation at the top level");
            if (isName("def")) {
                m.funcs.push_back(func());
                continue;
            }
            if (peek().k == Tok::K::Op && peek().text == "@")
                fail(peek().loc, "decorators are not part of the pattern language: write `name = \"...\"` settings at the top of the file");
            if (peek().k != Tok::K::Name)
                fail(peek().loc, "expected a setting (name = value) or 'def', found " + describe(peek()));
            Setting s;
            s.name = peek().text;
            s.loc = peek().loc;
            next();
            expectOp("=", "after setting name '" + s.name + "'");
            s.value = expr();
            endLine();
            m.settings.push_back(std::move(s));
        }
        return m;
    }

private:
    std::vector<Tok> m_t;
    size_t m_p = 0;

    const Tok &peek(size_t k = 0) const { return m_t[std::min(m_p + k, m_t.size() - 1)]; }
    Tok next() { return m_t[std::min(m_p++, m_t.size() - 1)]; }
    bool isName(const char *w) const { return peek().k == Tok::K::Name && peek().text == w; }
    bool isOp(const char *o) const { return peek().k == Tok::K::Op && peek().text == o; }
    void expectOp(const char *o, const std::string &where)
    {
        if (!isOp(o))
            fail(peek().loc, std::string("expected '") + o + "' " + where + ", found " + describe(peek()));
        next();
    }
    void endLine()
    {
        if (peek().k == Tok::K::End || peek().k == Tok::K::Dedent)
            return;
        if (peek().k != Tok::K::Newline)
            fail(peek().loc, "expected end of line, found " + describe(peek()));
        next();
    }
    std::string name(const std::string &what)
    {
        if (peek().k != Tok::K::Name)
            fail(peek().loc, "expected " + what + ", found " + describe(peek()));
        return next().text;
    }

    Func func()
    {
        Func f;
        f.loc = peek().loc;
        next(); // def
        f.loc = peek().loc;
        f.name = name("a function name after 'def'");
        expectOp("(", "after the function name");
        while (!isOp(")")) {
            Param p;
            p.loc = peek().loc;
            p.name = name("a parameter name");
            if (isOp(":")) {
                next();
                p.type = expr();
            }
            if (isOp("="))
                fail(peek().loc, "parameters take no default values");
            f.params.push_back(std::move(p));
            if (isOp(","))
                next();
            else if (!isOp(")"))
                fail(peek().loc, "expected ',' or ')' in the parameter list, found " + describe(peek()));
        }
        next();
        if (isOp("->")) {
            next();
            (void)expr();
        }
        expectOp(":", "at the end of the 'def' line");
        if (peek().k != Tok::K::Newline)
            fail(peek().loc, "expected the body on the next lines, found " + describe(peek()));
        next();
        if (peek().k != Tok::K::Indent)
            fail(peek().loc, "expected an indented body for '" + f.name + "'");
        next();
        while (peek().k != Tok::K::Dedent && peek().k != Tok::K::End)
            f.body.push_back(stmt());
        if (peek().k == Tok::K::Dedent)
            next();
        return f;
    }

    Stmt stmt()
    {
        Stmt s;
        s.loc = peek().loc;
        if (peek().k == Tok::K::Indent)
            fail(peek().loc, "unexpected indentation");
        if (isName("return")) {
            next();
            s.kind = Stmt::Kind::Return;
            if (peek().k == Tok::K::Newline)
                fail(peek().loc, "'return' needs a value");
            s.e = expr();
        } else if (isName("assert")) {
            next();
            s.kind = Stmt::Kind::Assert;
            s.e = expr();
            if (isOp(",")) {
                next();
                if (peek().k != Tok::K::Str)
                    fail(peek().loc, "expected a message string after 'assert ...,', found " + describe(peek()));
                s.message = next().text;
            }
        } else if (isName("pass")) {
            next();
        } else if (isName("if") || isName("for") || isName("while") || isName("def") || isName("import") || isName("from") ||
                   isName("with") || isName("lambda") || isName("class")) {
            fail(peek().loc, "'" + peek().text + "' is not part of the pattern language (bodies hold assignments, 'assert' and 'return')");
        } else if (peek().k == Tok::K::Name && peek(1).k == Tok::K::Op && peek(1).text == "=") {
            s.kind = Stmt::Kind::Assign;
            s.targetLoc = peek().loc;
            s.target = next().text;
            next();
            s.e = expr();
        } else if (peek().k == Tok::K::Name && peek(1).k == Tok::K::Op && peek(1).text == ",") {
            fail(peek(1).loc, "unpacking is not supported: assign the call to one name and index it (s = torch.split(...); a = s[0])");
        } else {
            ExprP e = expr();
            fail(e->loc, "expected an assignment, 'assert' or 'return', found the expression '" + unparse(*e) + "'");
        }
        endLine();
        return s;
    }

    static ExprP mk(Expr::Kind k, Loc loc)
    {
        auto e = std::make_shared<Expr>();
        e->kind = k;
        e->loc = loc;
        return e;
    }

    /// Nesting limit: deeper expressions are refused rather than exhausting the stack.
    static constexpr int kMaxDepth = 100;
    int m_depth = 0;
    struct Deeper {
        Parser &p;
        explicit Deeper(Parser &pp) : p(pp)
        {
            if (++p.m_depth > kMaxDepth)
                fail(p.peek().loc, "expression nested more than " + std::to_string(kMaxDepth) + " levels deep");
        }
        ~Deeper() { --p.m_depth; }
    };

    /// Height limit of one expression tree: operator chains (`a + b + ...`, `x.a.b...`) grow trees
    /// without nesting, and checking, unparsing and evaluating recurse over them.
    static constexpr int kMaxHeight = 300;
    /// Records the height of a finished node and refuses trees over the limit.
    ExprP grown(ExprP e)
    {
        int h = 0;
        for (const auto &c : e->a)
            if (c)
                h = std::max(h, c->height);
        for (const auto &kv : e->kw)
            if (kv.second)
                h = std::max(h, kv.second->height);
        e->height = h + 1;
        if (e->height > kMaxHeight)
            fail(e->loc,
                 "expression more than " + std::to_string(kMaxHeight) +
                     " levels deep (split a long chain of operators, "
                     "calls or attributes into named values)");
        return e;
    }

    ExprP expr()
    {
        Deeper d(*this);
        return orExpr();
    }
    ExprP orExpr()
    {
        ExprP l = andExpr();
        while (isName("or")) {
            Loc loc = next().loc;
            ExprP e = mk(Expr::Kind::Or, loc);
            e->a = {l, andExpr()};
            l = grown(e);
        }
        return l;
    }
    ExprP andExpr()
    {
        ExprP l = notExpr();
        while (isName("and")) {
            Loc loc = next().loc;
            ExprP e = mk(Expr::Kind::And, loc);
            e->a = {l, notExpr()};
            l = grown(e);
        }
        return l;
    }
    ExprP notExpr()
    {
        Deeper d(*this);
        if (isName("not")) {
            Loc loc = next().loc;
            ExprP e = mk(Expr::Kind::Not, loc);
            e->a = {notExpr()};
            return grown(e);
        }
        return compare();
    }
    ExprP compare()
    {
        ExprP l = bitor_();
        for (const char *op : {"==", "!=", "<=", ">=", "<", ">"})
            if (isOp(op)) {
                Loc loc = next().loc;
                ExprP e = mk(Expr::Kind::Compare, loc);
                e->s = op;
                e->a = {l, bitor_()};
                grown(e);
                for (const char *op2 : {"==", "!=", "<=", ">=", "<", ">"})
                    if (isOp(op2))
                        fail(peek().loc, "chained comparisons are not supported: join them with 'and'");
                return e;
            }
        if (isName("in")) {
            Loc loc = next().loc;
            ExprP e = mk(Expr::Kind::Compare, loc);
            e->s = "in";
            e->a = {l, bitor_()};
            return grown(e);
        }
        return l;
    }
    ExprP bitor_()
    {
        ExprP l = additive();
        while (isOp("|")) {
            Loc loc = next().loc;
            ExprP e = mk(Expr::Kind::BinOp, loc);
            e->s = "|";
            e->a = {l, additive()};
            l = grown(e);
        }
        return l;
    }
    ExprP additive()
    {
        ExprP l = term();
        while (isOp("+") || isOp("-")) {
            Tok t = next();
            ExprP e = mk(Expr::Kind::BinOp, t.loc);
            e->s = t.text;
            e->a = {l, term()};
            l = grown(e);
        }
        return l;
    }
    ExprP term()
    {
        ExprP l = unary();
        while (isOp("*") || isOp("//") || isOp("%") || isOp("/")) {
            Tok t = next();
            ExprP e = mk(Expr::Kind::BinOp, t.loc);
            e->s = t.text;
            e->a = {l, unary()};
            l = grown(e);
        }
        return l;
    }
    ExprP unary()
    {
        Deeper d(*this);
        if (isOp("-")) {
            Loc loc = next().loc;
            ExprP inner = unary();
            if (inner->kind == Expr::Kind::Int) {
                inner->ival = -inner->ival;
                inner->loc = loc;
                return inner;
            }
            if (inner->kind == Expr::Kind::Float) {
                inner->fval = -inner->fval;
                inner->loc = loc;
                return inner;
            }
            ExprP e = mk(Expr::Kind::Neg, loc);
            e->a = {inner};
            return grown(e);
        }
        if (isOp("**") || isOp("@"))
            fail(peek().loc, "'" + peek().text + "' is not supported in patterns");
        return postfix(atom());
    }
    ExprP postfix(ExprP e)
    {
        for (;;) {
            if (isOp(".")) {
                next();
                ExprP a = mk(Expr::Kind::Attr, peek().loc);
                a->s = name("an attribute name after '.'");
                a->a = {e};
                a->loc.col = e->loc.col;
                a->loc.line = e->loc.line;
                grown(a);
                a->loc.len = int(unparse(*a).size());
                e = a;
            } else if (isOp("(")) {
                Loc loc = next().loc;
                ExprP c = mk(Expr::Kind::Call, e->loc);
                c->a = {e};
                (void)loc;
                while (!isOp(")")) {
                    if (peek().k == Tok::K::Name && peek(1).k == Tok::K::Op && peek(1).text == "=") {
                        std::string k = next().text;
                        next();
                        c->kw.emplace_back(k, expr());
                    } else {
                        if (!c->kw.empty())
                            fail(peek().loc, "positional argument after keyword arguments");
                        if (isOp("*"))
                            fail(peek().loc, "'*args' is not supported in patterns: pass a list");
                        c->a.push_back(expr());
                    }
                    if (isOp(","))
                        next();
                    else if (!isOp(")"))
                        fail(peek().loc, "expected ',' or ')' in the argument list, found " + describe(peek()));
                }
                next();
                e = grown(c);
            } else if (isOp("[")) {
                Loc loc = next().loc;
                ExprP s = mk(Expr::Kind::Subscript, loc);
                s->a = {e, subscript()};
                expectOp("]", "to close the subscript");
                e = grown(s);
            } else {
                return e;
            }
        }
    }
    ExprP subscript()
    {
        ExprP lo, hi;
        Loc loc = peek().loc;
        if (!isOp(":"))
            lo = expr();
        if (isOp(":")) {
            next();
            if (!isOp("]"))
                hi = expr();
            ExprP s = mk(Expr::Kind::Slice, loc);
            s->a = {lo, hi};
            return grown(s);
        }
        return lo;
    }
    ExprP atom()
    {
        const Tok t = peek();
        switch (t.k) {
        case Tok::K::Name: {
            next();
            if (t.text == "None")
                return mk(Expr::Kind::None, t.loc);
            if (t.text == "True" || t.text == "False") {
                ExprP e = mk(Expr::Kind::Bool, t.loc);
                e->ival = t.text == "True";
                return e;
            }
            for (const char *kw : {"def", "return", "assert", "for", "in", "if", "else", "and", "or", "not", "lambda"})
                if (t.text == kw)
                    fail(t.loc, "expected an expression, found keyword '" + t.text + "'");
            ExprP e = mk(Expr::Kind::Name, t.loc);
            e->s = t.text;
            return e;
        }
        case Tok::K::Int: {
            next();
            ExprP e = mk(Expr::Kind::Int, t.loc);
            std::string digits;
            for (char c : t.text)
                if (c != '_')
                    digits += c;
            errno = 0;
            e->ival = std::strtoll(digits.c_str(), nullptr, 10);
            if (errno == ERANGE)
                fail(t.loc, "integer " + t.text + " does not fit in 64 bits");
            return e;
        }
        case Tok::K::Float: {
            next();
            ExprP e = mk(Expr::Kind::Float, t.loc);
            e->fval = std::strtod(t.text.c_str(), nullptr);
            return e;
        }
        case Tok::K::Str: {
            next();
            ExprP e = mk(Expr::Kind::Str, t.loc);
            e->s = t.text;
            return e;
        }
        case Tok::K::Op:
            if (t.text == "(") {
                next();
                ExprP e = expr();
                if (isOp(","))
                    fail(peek().loc, "tuples are written as lists in patterns: [a, b]");
                expectOp(")", "to close '(' opened at " + std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col));
                return e;
            }
            if (t.text == "[") {
                next();
                ExprP l = mk(Expr::Kind::List, t.loc);
                if (isOp("]")) {
                    next();
                    return l;
                }
                ExprP first = expr();
                if (isName("for")) {
                    next();
                    ExprP c = mk(Expr::Kind::ListComp, t.loc);
                    c->s = name("a loop variable after 'for'");
                    if (!isName("in"))
                        fail(peek().loc, "expected 'in' in the comprehension, found " + describe(peek()));
                    next();
                    c->a = {first, expr()};
                    if (isName("if"))
                        fail(peek().loc, "filters ('if') in comprehensions are not supported: use an assert");
                    expectOp("]", "to close the comprehension");
                    return grown(c);
                }
                l->a.push_back(first);
                while (isOp(",")) {
                    next();
                    if (isOp("]"))
                        break;
                    l->a.push_back(expr());
                }
                expectOp("]", "to close the list opened at " + std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col));
                return grown(l);
            }
            if (t.text == "{")
                fail(t.loc, "dicts and sets are not supported in patterns");
            fail(t.loc, "expected an expression, found " + describe(t));
        default: fail(t.loc, "expected an expression, found " + describe(t));
        }
    }
};

} // namespace

bool parseModule(const std::string &source, Module &out, SyntaxError &err)
{
    try {
        Parser p(lex(source));
        out = p.module();
        return true;
    } catch (const Fail &f) {
        err = f.e;
        return false;
    }
}

std::string sourceLine(const std::string &source, int line)
{
    std::istringstream in(source);
    std::string l;
    for (int i = 1; std::getline(in, l); ++i)
        if (i == line) {
            if (!l.empty() && l.back() == '\r')
                l.pop_back();
            return l;
        }
    return {};
}

} // namespace fxlens::lang
