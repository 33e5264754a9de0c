// SPDX-License-Identifier: MIT
// The pattern language's syntax (core/lang/Syntax): the lexer and parser on valid files, positions
// of syntax errors, the limits on nesting, and unparse round trips.
#include "lang/Syntax.h"

#include <QtTest>

using namespace fxlens::lang;

namespace {

const char *kValid = R"(name = "demo"
benefit = 7

def pattern(x: Tensor, d: int):
    s = torch.split(x, [2, 3], d)
    y = torch.cat([s[0], s[1]], d)
    assert d >= 0 and not d > 3, "dim in range"
    return y

def replacement(x, d):
    return x
)";

} // namespace

class TestSyntax : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesSettingsFunctionsAndStatements()
    {
        Module m;
        SyntaxError err;
        QVERIFY2(parseModule(kValid, m, err), err.message.c_str());
        QCOMPARE(m.settings.size(), size_t(2));
        QCOMPARE(m.settings[0].name, std::string("name"));
        QCOMPARE(m.settings[1].value->ival, int64_t(7));
        QCOMPARE(m.funcs.size(), size_t(2));
        const Func &p = m.funcs[0];
        QCOMPARE(p.name, std::string("pattern"));
        QCOMPARE(p.params.size(), size_t(2));
        QCOMPARE(unparse(*p.params[0].type), std::string("Tensor"));
        QCOMPARE(p.body.size(), size_t(4));
        QVERIFY(p.body[0].kind == Stmt::Kind::Assign && p.body[0].target == "s");
        QVERIFY(p.body[2].kind == Stmt::Kind::Assert);
        QCOMPARE(p.body[2].message, std::string("dim in range"));
        QVERIFY(p.body[3].kind == Stmt::Kind::Return);
        QCOMPARE(p.body[0].loc.line, 5);
        QCOMPARE(unparse(*p.body[1].e), std::string("torch.cat([s[0], s[1]], d)"));
    }

    /// Unparsing gives Python that parses back to the same text.
    void unparseRoundTrips()
    {
        for (const char *expr :
             {"a + b * c", "f(x, dim=-1)", "[x[i] for i in range(0, n)]", "x.shape[-1] // 2", "not a or b", "1.5e-3", "'text'", "x[1:3]"}) {
            Module m;
            SyntaxError err;
            const std::string src = std::string("def pattern(x):\n    y = ") + expr + "\n    return y\n";
            QVERIFY2(parseModule(src, m, err), qPrintable(QString::fromStdString(err.message) + " in " + expr));
            const std::string once = unparse(*m.funcs[0].body[0].e);
            Module m2;
            QVERIFY(parseModule(std::string("def pattern(x):\n    y = ") + once + "\n    return y\n", m2, err));
            QCOMPARE(unparse(*m2.funcs[0].body[0].e), once);
        }
    }

    /// Errors name the line and column, with a message saying what is wrong.
    void errorsHavePositions()
    {
        struct Case {
            const char *src;
            int line, col;
            const char *message;
        } cases[] = {
            {"def pattern(x):\n    y = 'open\n", 2, 9, "unterminated string"},
            {"def pattern(x):\n\ty = x\n", 2, 1, "tab in indentation"},
            {"def pattern(x):\n    y = 12abc\n", 2, 9, "malformed number"},
            {"def pattern(x):\n    y = x $ 2\n", 2, 11, "unexpected character"},
            {"def pattern(x):\n    y = x\n  return y\n", 3, 3, "indentation"},
        };
        for (const auto &c : cases) {
            Module m;
            SyntaxError err;
            QVERIFY2(!parseModule(c.src, m, err), c.src);
            QVERIFY2(err.message.find(c.message) != std::string::npos, err.message.c_str());
            QCOMPARE(err.loc.line, c.line);
            QCOMPARE(err.loc.col, c.col);
        }
    }

    /// Deep nesting and long operator chains are refused with a message, not a stack overflow.
    void nestingIsBounded()
    {
        std::string deep = "def pattern(x):\n    y = " + std::string(5000, '(') + "x" + std::string(5000, ')') + "\n    return y\n";
        Module m;
        SyntaxError err;
        QVERIFY(!parseModule(deep, m, err));
        QVERIFY2(err.message.find("nest") != std::string::npos || err.message.find("deep") != std::string::npos, err.message.c_str());
        std::string chain = "def pattern(x):\n    y = x";
        for (int i = 0; i < 20000; ++i)
            chain += " + x";
        chain += "\n    return y\n";
        QVERIFY(!parseModule(chain, m, err));
    }

    void sourceLineIsOneBased()
    {
        QCOMPARE(sourceLine("a\nbc\n", 2), std::string("bc"));
        QCOMPARE(sourceLine("a\nbc\n", 9), std::string());
    }
};

QTEST_GUILESS_MAIN(TestSyntax)
#include "tst_Syntax.moc"
