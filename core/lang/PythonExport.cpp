// SPDX-License-Identifier: MIT
// A pattern file as a Python module (torch.fx subgraph rewriter / Inductor pattern matcher).
#include "lang/LangInternal.h"

#include "ir/Target.h"

#include <sstream>

namespace fxlens::lang {

using namespace detail;

namespace {

std::string pyTarget(const std::string &d)
{
    const ir::Target t = ir::Target::parse(d);
    if (t.isAten())
        return "torch.ops." + d;
    if (t.isNnFunctional())
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
            o << "    #   " << commentText((a.kind == Stmt::Kind::Assign ? a.target + " = " : std::string("assert ")) + unparse(*a.e))
              << "\n";
        o << "    return True\n";
    }
    return o.str();
}

} // namespace fxlens::lang
