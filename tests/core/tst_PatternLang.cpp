// SPDX-License-Identifier: MIT
// The pattern language: every diagnostic kind on a malformed file (exact message, line, column and
// caret), the shipped pattern files, hot reload of a directory, and the Python export.
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"
#include "lang/PatternLang.h"
#include "rewrite/Pattern.h"
#include "rewrite/Session.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <thread>

using namespace fxlens;

namespace {

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write(const QString &path, const char *text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
    f.close();
    // Make the modification visible to a file-time comparison even on coarse clocks.
    auto t = std::filesystem::last_write_time(path.toStdString());
    static int bump = 0;
    std::filesystem::last_write_time(path.toStdString(), t + std::chrono::seconds(++bump));
}

const char *kTanh = R"(name = "tanh_to_relu"
description = "first version"

def pattern(x: Tensor):
    y = torch.tanh(x)
    return y

def replacement(x):
    return torch.relu(x)
)";

const char *kTanhV2 = R"(name = "tanh_to_relu"
description = "second version"

def pattern(x: Tensor):
    y = torch.tanh(x)
    return y

def replacement(x):
    return torch.relu(x)
)";

const char *kSigmoid = R"(name = "sigmoid_to_relu"

def pattern(x: Tensor):
    y = torch.sigmoid(x)
    return y

def replacement(x):
    return torch.relu(x)
)";

} // namespace

class TestPatternLang : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void diagnostics_data()
    {
        QTest::addColumn<QString>("expected");
        QTest::newRow("assigned_twice.fxpat") << QStringLiteral(
            "assigned_twice.fxpat:3:5: error: 'y' is already bound: each name is assigned once");
        QTest::newRow("bad_character.fxpat") << QStringLiteral("bad_character.fxpat:2:23: error: unexpected character '$'");
        QTest::newRow("bad_dedent.fxpat") << QStringLiteral(
            "bad_dedent.fxpat:3:3: error: this line's indentation matches no enclosing block");
        QTest::newRow("bad_level.fxpat") << QStringLiteral(
            "bad_level.fxpat:1:9: error: level must be \"torch\", \"aten\" or \"both\", found \"cuda\"");
        QTest::newRow("comprehension_not_range.fxpat") << QStringLiteral("comprehension_not_range.fxpat:3:34: error: a comprehension in a "
                                                                         "pattern iterates over range(lo, hi) or range(n), found 'items'");
        QTest::newRow("decorator.fxpat") << QStringLiteral("decorator.fxpat:1:1: error: decorators are not part of the pattern language: "
                                                           "write `name = \"...\"` settings at the top of the file");
        QTest::newRow("expression_argument.fxpat") << QStringLiteral("expression_argument.fxpat:2:27: error: 'd + 1' cannot stand in a "
                                                                     "pattern's arguments: bind a name there and constrain it with assert");
        QTest::newRow("if_statement.fxpat") << QStringLiteral(
            "if_statement.fxpat:2:5: error: 'if' is not part of the pattern language (bodies hold assignments, 'assert' and 'return')");
        QTest::newRow("missing_colon.fxpat") << QStringLiteral(
            "missing_colon.fxpat:1:23: error: expected ':' at the end of the 'def' line, found end of line");
        QTest::newRow("missing_replacement.fxpat")
            << QStringLiteral("missing_replacement.fxpat:1:1: error: no 'def replacement(...)' in the file");
        QTest::newRow("missing_return.fxpat") << QStringLiteral(
            "missing_return.fxpat:1:5: error: 'pattern' has no 'return': return the call the pattern is anchored on");
        QTest::newRow("returns_parameter.fxpat")
            << QStringLiteral("returns_parameter.fxpat:2:12: error: the pattern must return a call (the anchor), not the parameter 'x'");
        QTest::newRow("tab_indent.fxpat") << QStringLiteral("tab_indent.fxpat:2:1: error: tab in indentation: indent with spaces");
        QTest::newRow("unbound_replacement_param.fxpat") << QStringLiteral(
            "unbound_replacement_param.fxpat:5:20: error: replacement parameter 'z' is not bound by the pattern; did you mean 'x'?");
        QTest::newRow("unclosed_paren.fxpat") << QStringLiteral(
            "unclosed_paren.fxpat:3:5: error: expected ',' or ')' in the argument list, found 'return'");
        QTest::newRow("unknown_function.fxpat")
            << QStringLiteral("unknown_function.fxpat:4:12: error: unknown function 'lenn'; did you mean 'len'?");
        QTest::newRow("unknown_function_name.fxpat")
            << QStringLiteral("unknown_function_name.fxpat:2:9: error: cannot call 'tanh' in a pattern: expected torch.*, aten.*, "
                              "operator.*, F.* or a method of a node; did you mean 'torch.tanh'?");
        QTest::newRow("unknown_keyword.fxpat") << QStringLiteral("unknown_keyword.fxpat:2:31: error: torch.split has no parameter 'dims' "
                                                                 "(parameters: tensor, split_size_or_sections, dim); did you mean 'dim'?");
        QTest::newRow("unknown_method.fxpat") << QStringLiteral(
            "unknown_method.fxpat:2:9: error: unknown method '.tahn()'; did you mean 'tanh'?");
        QTest::newRow("unknown_name.fxpat") << QStringLiteral("unknown_name.fxpat:2:20: error: unknown name 'xx'; did you mean 'x'?");
        QTest::newRow("unknown_op.fxpat") << QStringLiteral(
            "unknown_op.fxpat:2:9: error: unknown op 'torch.splt'; did you mean 'torch.split'?");
        QTest::newRow("unknown_setting.fxpat") << QStringLiteral("unknown_setting.fxpat:1:1: error: unknown setting 'levle'; did you mean "
                                                                 "'level'? (settings: name, description, level, benefit, phase, labels)");
        QTest::newRow("unknown_type.fxpat") << QStringLiteral(
            "unknown_type.fxpat:1:16: error: unknown type 'Tensr'; did you mean 'Tensor'? (types: Tensor, int, float, bool, str, list)");
        QTest::newRow("unreachable.fxpat") << QStringLiteral("unreachable.fxpat:7:5: error: statement after 'return' is never reached");
        QTest::newRow("unterminated_string.fxpat") << QStringLiteral("unterminated_string.fxpat:1:8: error: unterminated string");
    }
    void diagnostics()
    {
        QFETCH(QString, expected);
        const std::string file = QString::fromLatin1(QTest::currentDataTag()).toStdString();
        const std::string src = slurp(std::string(FXLENS_TEST_DATA "/lang/bad/") + file);
        QVERIFY(!src.empty());
        auto r = lang::compilePattern(src, file);
        QVERIFY2(!r.ok(), "a malformed file compiled");
        QCOMPARE(QString::fromStdString(r.error().toString()), expected);
    }

    /// Found by the fuzzer: deep nesting is a diagnostic, not a stack overflow.
    void deepNestingIsRefused()
    {
        std::string src = "def pattern(x: Tensor):\n    y = " + std::string(5000, '(') + "x" + std::string(5000, ')') + "\n    return y\n";
        auto r = lang::compilePattern(src, "deep.fxpat");
        QVERIFY(!r.ok());
        QVERIFY2(r.error().toString().find("expression nested more than 100 levels deep") != std::string::npos,
                 r.error().toString().c_str());
        std::string neg = "def pattern(x: Tensor):\n    y = " + std::string(5000, '-') + "x\n    return y\n";
        QVERIFY(!lang::compilePattern(neg, "neg.fxpat").ok());
    }

    void caretUnderTheToken()
    {
        const std::string src = slurp(FXLENS_TEST_DATA "/lang/bad/unknown_op.fxpat");
        auto r = lang::compilePattern(src, "unknown_op.fxpat");
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(lang::renderDiagnostic(r.error(), src)),
                 QStringLiteral("unknown_op.fxpat:2:9: error: unknown op 'torch.splt'; did you mean 'torch.split'?\n"
                                "        s = torch.splt(x, sizes, d)\n"
                                "            ^\n"));
        QCOMPARE(QString::fromStdString(lang::suggestOp("aten.mm.defualt")), QStringLiteral("aten.mm.default"));
    }

    /// Every shipped pattern file compiles, registers, and has a graph anchored on a call.
    void shippedPatternsCompile()
    {
        rewrite::PatternRegistry reg;
        lang::PatternLibrary lib;
        const std::string dir = FXLENS_PATTERN_SOURCE_DIR;
        QCOMPARE(lib.loadDirectory(dir, reg), size_t(0));
        QVERIFY2(lib.diagnostics().empty(), lib.diagnostics().c_str());
        QVERIFY(lib.files().size() >= 12);
        size_t catalog = 0;
        for (const auto &f : lib.files()) {
            const auto *p = dynamic_cast<const lang::FilePattern *>(reg.find(f.pattern));
            QVERIFY(p);
            QVERIFY(!p->anchors.empty());
            QVERIFY(!p->description.empty());
            catalog += p->hasLabel("catalog") || p->hasLabel("vertical");
        }
        QVERIFY(catalog >= 12);
    }

    /// A directory is loaded once; edited, broken, fixed, removed and added files are picked up by
    /// reloadChanged(), and a broken file never takes the others down.
    void hotReload()
    {
        QTemporaryDir tmp;
        const QString a = tmp.filePath(QStringLiteral("a.fxpat")), b = tmp.filePath(QStringLiteral("b.fxpat"));
        write(a, kTanh);
        write(b, kSigmoid);
        rewrite::PatternRegistry reg;
        lang::PatternLibrary lib;
        QCOMPARE(lib.loadDirectory(tmp.path().toStdString(), reg), size_t(0));
        QVERIFY(reg.find("tanh_to_relu") && reg.find("sigmoid_to_relu"));
        QCOMPARE(reg.find("tanh_to_relu")->description, std::string("first version"));
        QVERIFY(lib.reloadChanged(reg).empty()); // nothing changed

        write(a, kTanhV2);
        auto changed = lib.reloadChanged(reg);
        QCOMPARE(changed.size(), size_t(1));
        QCOMPARE(changed[0], a.toStdString());
        QCOMPARE(reg.find("tanh_to_relu")->description, std::string("second version"));

        write(b, "def pattern(x: Tensor):\n    y = torch.sigmoid(x\n");
        lib.reloadChanged(reg);
        QVERIFY(!reg.find("sigmoid_to_relu")); // the broken file's pattern is gone
        QVERIFY(reg.find("tanh_to_relu"));     // the other file is untouched
        QVERIFY2(lib.diagnostics().find("b.fxpat:3:1: error: expected ',' or ')' in the argument list") != std::string::npos,
                 lib.diagnostics().c_str());

        write(b, kSigmoid);
        lib.reloadChanged(reg);
        QVERIFY(reg.find("sigmoid_to_relu"));
        QVERIFY(lib.diagnostics().empty());

        QVERIFY(QFile::remove(a));
        lib.reloadChanged(reg);
        QVERIFY(!reg.find("tanh_to_relu"));

        write(tmp.filePath(QStringLiteral("c.fxpat")), kTanh);
        lib.reloadChanged(reg);
        QVERIFY(reg.find("tanh_to_relu"));
        QCOMPARE(lib.files().size(), size_t(2));
    }

    /// A pattern file may not take a built-in pattern's name.
    void duplicateNameIsReported()
    {
        QTemporaryDir tmp;
        write(tmp.filePath(QStringLiteral("dup.fxpat")),
              "name = \"split_cat\"\n\ndef pattern(x: Tensor):\n    return torch.tanh(x)\n\n"
              "def replacement(x):\n    return x\n");
        rewrite::PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        lang::PatternLibrary lib;
        QCOMPARE(lib.loadDirectory(tmp.path().toStdString(), reg), size_t(1));
        QVERIFY2(lib.diagnostics().find("duplicate pattern name 'split_cat'") != std::string::npos, lib.diagnostics().c_str());
    }

    /// A file pattern runs in the engine like a built-in one: candidates, apply, undo, redo,
    /// breakpoints by pattern name, checked mode.
    void stepUndoBreakpoint()
    {
        rewrite::PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        const rewrite::Pattern *p = reg.find("mutate_cat_range");
        QVERIFY(p);
        auto r = io::readGraphFile(FXLENS_TEST_DATA "/patterns/mutate_cat_range_pos.torch.json");
        QVERIFY(r.ok());
        ir::Graph &g = *r.value();
        const std::string before = ir::printGraph(g);
        rewrite::SessionConfig cfg;
        cfg.checked = true;
        rewrite::Session s(g, {p}, cfg);
        auto c = s.candidates();
        QCOMPARE(c.size(), size_t(1));
        QCOMPARE(c[0].pattern, std::string("mutate_cat_range"));
        QVERIFY(s.apply(c[0]));
        const std::string after = ir::printGraph(g);
        QVERIFY(after.find("torch.narrow") != std::string::npos);
        QVERIFY(after.find("torch.cat") == std::string::npos);
        QVERIFY(s.undo());
        QCOMPARE(ir::printGraph(g), before);
        QVERIFY(s.redo());
        QCOMPARE(ir::printGraph(g), after);
        QVERIFY(s.undo());
        s.addBreakpoint({rewrite::Breakpoint::Kind::Pattern, "mutate_cat_range"});
        auto res = s.run();
        QCOMPARE(res.reason, rewrite::StopReason::Breakpoint);
        QCOMPARE(ir::printGraph(g), before); // stopped before applying
        s.clearBreakpoints();
        res = s.run();
        QCOMPARE(res.rewritesByPattern["mutate_cat_range"], size_t(1));
        QVERIFY(s.lastError().empty());
    }

    void exportPython()
    {
        rewrite::PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        const auto *p = dynamic_cast<const lang::FilePattern *>(reg.find("decompose_addmm"));
        QVERIFY(p);
        const std::string py = lang::exportPython(*p);
        QVERIFY2(py.find("def pattern(bias, a, b):\n    mm = torch.ops.aten.addmm.default(bias, a, b, beta=1, alpha=1)\n    return mm\n") !=
                     std::string::npos,
                 py.c_str());
        QVERIFY2(py.find("def replacement(bias, a, b):\n    prod = torch.ops.aten.mul.Tensor(") != std::string::npos, py.c_str());
        QVERIFY(py.find("#   assert (a.shape[0] >= 10240)") != std::string::npos ||
                py.find("#   assert a.shape[0] >= 10240") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestPatternLang)
#include "tst_PatternLang.moc"
