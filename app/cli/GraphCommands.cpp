// SPDX-License-Identifier: MIT
// Commands that read graphs and patterns without running them: info, lint, convert, patterns,
// explain, lint-patterns, export-pattern, doctor; and the helpers every command shares.
#include "Cli.h"

#include "BuiltinPatterns.h"
#include "PatternDir.h"
#include "Version.h"
#include "io/AtomicFile.h"
#include "io/DotWriter.h"
#include "io/GraphJson.h"
#include "io/PythonWriter.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"
#include "lang/PatternLang.h"
#include "rewrite/PatternGraph.h"
#ifdef FXLENS_HAVE_GRAPHVIZ
#include "layout/GraphvizRender.h"
#endif

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace fxlens::cli {

std::vector<char *> argvOf(std::vector<std::string> &args)
{
    std::vector<char *> argv;
    argv.reserve(args.size() + 1);
    for (auto &s : args)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    return argv;
}

bool emit(const std::string &data, const std::string &output)
{
    if (output.empty() || output == "-") {
        std::fwrite(data.data(), 1, data.size(), stdout);
        return true;
    }
    if (Status st = io::writeFileAtomic(output, data); !st) {
        std::cerr << "fxlens-cli: cannot write '" << output << "': " << st.error().message << "\n";
        return false;
    }
    return true;
}

std::unique_ptr<ir::Graph> load(const Args &a, int &exitCode)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli " << a.command << ": expected exactly one graph file\n";
        exitCode = kUsage;
        return nullptr;
    }
    auto r = io::readGraphFile(a.positional[0]);
    if (!r) {
        std::cerr << r.error().toString() << "\n";
        exitCode = kBadInput;
        return nullptr;
    }
    return std::move(r.value());
}

/// The built-in patterns plus the pattern files of --pattern-dir. A file that does not compile is
/// reported on stderr and skipped; the others load.
bool loadPatterns(const Args &a, rewrite::PatternRegistry &reg, const std::string &cmd)
{
    std::string err = patterns::registerBuiltinPatterns(reg, app::defaultPatternDir());
    if (!err.empty()) {
        std::cerr << "fxlens-cli " << cmd << ": " << err << "\n";
        return false;
    }
    if (!a.patternDir.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(a.patternDir, ec)) {
            std::cerr << "fxlens-cli " << cmd << ": --pattern-dir '" << a.patternDir << "' is not a directory\n";
            return false;
        }
        lang::PatternLibrary lib;
        lib.loadDirectory(a.patternDir, reg);
        std::cerr << lib.diagnostics();
    }
    return true;
}

/// A pattern named on the command line: a .fxpat file (compiled now) or a registered name.
const rewrite::Pattern *namedPattern(const std::string &what, rewrite::PatternRegistry &reg, std::unique_ptr<lang::FilePattern> &owned,
                                     const std::string &cmd, int &code)
{
    if (what.size() > 6 && what.compare(what.size() - 6, 6, ".fxpat") == 0) {
        std::ifstream in(what, std::ios::binary);
        if (!in) {
            std::cerr << what << ": error: cannot open the pattern file\n";
            code = kBadInput;
            return nullptr;
        }
        std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto r = lang::compilePattern(src, what);
        if (!r) {
            std::cerr << lang::renderDiagnostic(r.error(), src);
            code = kBadInput;
            return nullptr;
        }
        owned = std::move(r.value());
        return owned.get();
    }
    const rewrite::Pattern *p = reg.find(what);
    if (!p) {
        std::vector<std::string> names;
        for (const auto *q : reg.all())
            names.push_back(q->name);
        const std::string best = lang::closestName(what, names);
        std::cerr << "fxlens-cli " << cmd << ": unknown pattern '" << what << "'" << (best.empty() ? "" : "; did you mean '" + best + "'?")
                  << " (see `fxlens-cli patterns`)\n";
        code = kUsage;
    }
    return p;
}

/// The pattern file named by the first positional argument (a name or a .fxpat path); nullptr with
/// `code` set, and a message, when it does not load or is a C++ pattern (`cxxNote` says why).
const lang::FilePattern *filePatternArg(const Args &a, rewrite::PatternRegistry &reg, std::unique_ptr<lang::FilePattern> &owned,
                                        const std::string &cmd, const char *cxxNote, int &code)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli " << cmd << ": expected one pattern name or .fxpat file\n";
        code = kUsage;
        return nullptr;
    }
    if (!loadPatterns(a, reg, cmd)) {
        code = kFailed;
        return nullptr;
    }
    const rewrite::Pattern *p = namedPattern(a.positional[0], reg, owned, cmd, code);
    if (!p)
        return nullptr;
    const auto *fp = dynamic_cast<const lang::FilePattern *>(p);
    if (!fp) {
        std::cerr << "fxlens-cli " << cmd << ": '" << p->name << "' is written in C++; " << cxxNote << "\n";
        code = kUsage;
    }
    return fp;
}

/// A graph written to another folder takes its weights and example inputs along (side files are
/// always resolved in the graph's own folder).
void copySideFiles(const ir::Graph &g, const std::string &from, const std::string &to)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path src = fs::absolute(from, ec).parent_path(), dst = fs::absolute(to, ec).parent_path();
    if (fs::equivalent(src, dst, ec))
        return;
    for (const std::string &f : {g.weightsFile, g.inputsFile}) {
        if (f.empty() || fs::path(f).filename() != fs::path(f) || !fs::exists(src / f, ec) || fs::exists(dst / f, ec))
            continue;
        fs::copy_file(src / f, dst / f, ec);
    }
}

int cmdInfo(const Args &a)
{
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    std::string s = "graph: " + (g->name.empty() ? a.positional[0] : g->name) + "\nir: " + g->irLevel + "\nsource: " + g->source +
        "\nparameters: " + std::to_string(g->params.size()) + "\n";
    s += ir::computeGraphInfo(*g).toString();
    return emit(s, a.output) ? kOk : kFailed;
}

int cmdLint(const Args &a)
{
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    auto errors = g->lint();
    for (const auto &e : errors)
        std::cerr << a.positional[0] << ": lint: " << e.toString() << "\n";
    if (!errors.empty()) {
        std::cerr << errors.size() << " lint error(s)\n";
        return kFailed;
    }
    std::cout << a.positional[0] << ": ok (" << g->size() << " nodes)\n";
    return kOk;
}

int cmdConvert(const Args &a)
{
    int code = kOk;
    if (a.to.empty()) {
        std::cerr << "fxlens-cli convert: --to FORMAT is required (text, json, python, dot, svg, png)\n";
        return kUsage;
    }
    if (a.to != "text" && a.to != "json" && a.to != "python" && a.to != "dot" && a.to != "svg" && a.to != "png") {
        std::cerr << "fxlens-cli convert: unknown format '" << a.to << "' (text, json, python, dot, svg, png)\n";
        return kUsage;
    }
    auto g = load(a, code);
    if (!g)
        return code;
    if (a.to == "text") {
        ir::PrintOptions opts;
        opts.showMeta = !a.noMeta;
        return emit(ir::printGraph(*g, opts), a.output) ? kOk : kFailed;
    }
    if (a.to == "json") {
        if (a.output.empty() || a.output == "-")
            return emit(io::writeGraphJson(*g), a.output) ? kOk : kFailed;
        // A file: the graph writer (gzip for .gz, atomic).
        auto w = io::writeGraphFile(*g, a.output);
        if (!w) {
            std::cerr << "fxlens-cli: cannot write '" << a.output << "': " << w.error().message << "\n";
            return kFailed;
        }
        return kOk;
    }
    if (a.to == "python") {
        auto py = io::writePython(*g);
        if (!py.error.empty()) {
            std::cerr << a.positional[0] << ": error: cannot write Python: " << py.error << "\n";
            return kFailed;
        }
        for (const auto &n : py.unsupported)
            std::cerr << a.positional[0] << ": warning: node '" << n << "': call_module of a type the Python export does not know; "
                      << "the module raises NotImplementedError there\n";
        return emit(py.code, a.output) ? kOk : kFailed;
    }
    std::string dot = io::writeDot(*g);
    if (a.to == "dot")
        return emit(dot, a.output) ? kOk : kFailed;
#ifdef FXLENS_HAVE_GRAPHVIZ
    if (g->size() > 5000)
        std::cerr << "fxlens-cli convert: note: " << g->size() << " nodes; a flat Graphviz layout of a graph this size can take minutes\n";
    auto r = layout::renderDot(dot, a.to);
    if (!r) {
        std::cerr << "fxlens-cli convert: " << r.error().message << "\n";
        return kFailed;
    }
    return emit(r.value(), a.output) ? kOk : kFailed;
#else
    std::cerr << "fxlens-cli convert: this build has no Graphviz; use --to dot and run `dot -T" << a.to << "`\n";
    return kFailed;
#endif
}

namespace {

const char *irLevelName(rewrite::IrLevel l)
{
    return l == rewrite::IrLevel::Torch ? "torch" : l == rewrite::IrLevel::Aten ? "aten" : "both";
}

} // namespace

int cmdPatterns(const Args &a)
{
    rewrite::PatternRegistry reg;
    if (!loadPatterns(a, reg, "patterns"))
        return kFailed;
    if (!a.positional.empty()) {
        const rewrite::Pattern *p = reg.find(a.positional[0]);
        if (!p) {
            std::cerr << "fxlens-cli patterns: unknown pattern '" << a.positional[0] << "'\n";
            return kUsage;
        }
        std::string anchors;
        for (const auto &k : p->anchors)
            anchors += (anchors.empty() ? "" : ", ") + std::string(ir::opKindName(k.op)) + "[" + (k.target.empty() ? "*" : k.target) + "]";
        std::string labels;
        for (const auto &l : p->labels)
            labels += (labels.empty() ? "" : ", ") + l;
        std::printf("%s\n  %s\n  IR: %s   benefit: %d   labels: %s\n  anchors: %s\n", p->name.c_str(), p->description.c_str(),
                    irLevelName(p->level), p->benefit, labels.c_str(), anchors.c_str());
        if (const auto *gp = dynamic_cast<const rewrite::GraphPattern *>(p)) {
            std::printf("  pattern graph:\n");
            std::string text = gp->graph.toString();
            size_t start = 0;
            while (start < text.size()) {
                size_t nl = text.find('\n', start);
                std::printf("    %s\n", text.substr(start, nl - start).c_str());
                start = nl == std::string::npos ? text.size() : nl + 1;
            }
        } else {
            std::printf("  match: hand-written (C++)\n");
        }
        return kOk;
    }
    for (const auto *p : reg.all()) {
        std::string labels;
        for (const auto &l : p->labels)
            labels += (labels.empty() ? "" : ",") + l;
        std::printf("%-32s %-5s %-14s %4d  %s\n", p->name.c_str(), irLevelName(p->level), labels.c_str(), p->benefit,
                    p->description.c_str());
    }
    return kOk;
}

int cmdExplain(const Args &a)
{
    if (a.pattern.empty() || a.node.empty()) {
        std::cerr << "fxlens-cli explain: needs --pattern NAME and --node NODE\n";
        return kUsage;
    }
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    rewrite::PatternRegistry reg;
    if (!loadPatterns(a, reg, "explain"))
        return kFailed;
    std::unique_ptr<lang::FilePattern> owned;
    const rewrite::Pattern *p = namedPattern(a.pattern, reg, owned, "explain", code);
    if (!p)
        return code;
    ir::Node *node = nullptr;
    for (ir::Node *n = g->first(); n; n = n->next())
        if (n->name() == a.node)
            node = n;
    if (!node) {
        std::cerr << a.positional[0] << ": error: no node named '" << a.node << "'\n";
        return kBadInput;
    }
    std::printf("pattern %s at node %s (%s %s)\n", p->name.c_str(), node->name().c_str(), ir::opKindName(node->op()),
                node->target().c_str());
    const auto e = rewrite::explain(*p, *g, node);
    std::printf("%s\n", e.toString().c_str());
    if (!e.anchor)
        return kFailed;
    if (e.matched) {
        std::string nodes;
        for (ir::Node *n : e.match.nodes)
            nodes += (nodes.empty() ? "" : ", ") + n->name();
        std::printf("  matched nodes: %s\n", nodes.c_str());
        return kOk;
    }
    std::printf("  element:  %s\n  node:     %s\n  expected: %s\n  found:    %s\n", e.failure.element.c_str(), e.failure.node.c_str(),
                e.failure.expected.c_str(), e.failure.found.c_str());
    return kFailed;
}

int cmdLintPatterns(const Args &a)
{
    if (a.positional.empty()) {
        std::cerr << "fxlens-cli lint-patterns: expected pattern files or directories\n";
        return kUsage;
    }
    rewrite::PatternRegistry reg;
    lang::PatternLibrary lib;
    size_t failed = 0;
    for (const auto &path : a.positional) {
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec))
            failed += lib.loadDirectory(path, reg);
        else
            failed += !lib.loadFile(path, reg);
    }
    std::cerr << lib.diagnostics();
    for (const auto &f : lib.files())
        if (!f.pattern.empty())
            std::printf("%s: ok (%s)\n", f.path.c_str(), f.pattern.c_str());
    return failed ? kBadInput : kOk;
}

int cmdExportPattern(const Args &a)
{
    rewrite::PatternRegistry reg;
    std::unique_ptr<lang::FilePattern> owned;
    int code = kOk;
    const lang::FilePattern *fp = filePatternArg(a, reg, owned, "export-pattern", "only pattern files export to Python", code);
    if (!fp)
        return code;
    return emit(lang::exportPython(*fp), a.output) ? kOk : kFailed;
}

int cmdDoctor(const Args &)
{
    std::string s = "fxlens-cli " FXLENS_VERSION "\n";
#ifdef FXLENS_HAVE_GRAPHVIZ
    s += "Graphviz: yes\n";
#else
    s += "Graphviz: no (built without)\n";
#endif
    s += executorReport();
    std::cout << s;
    return kOk;
}

} // namespace fxlens::cli
