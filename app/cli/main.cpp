// SPDX-License-Identifier: MIT
// fxlens-cli: the headless front end (scripts and CI).
#include "io/DotWriter.h"
#include "io/GraphJson.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"
#include "rewrite/PatternGraph.h"
#ifdef FXLENS_HAVE_TORCH
#include "exec/Executor.h"
#endif
#include "rewrite/Session.h"
#include "rewrite/TraceRecorder.h"
#include "util/Text.h"
#include "VerticalPatterns.h"
#ifdef FXLENS_HAVE_GRAPHVIZ
#include "layout/GraphvizRender.h"
#endif
#ifdef FXLENS_HAVE_TORCH
#include "exec/TorchRuntime.h"
#endif

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace fxlens;

/// Exit codes, documented in --help.
enum Exit { kOk = 0, kFailed = 1, kUsage = 2, kBadInput = 3 };

const char *kUsageText = R"(usage: fxlens-cli <command> [options]

Commands:
  info <graph.json>                    node counts by op and target, depth, module tree
  lint <graph.json>                    check graph invariants (torch.fx Graph.lint rules)
  convert <graph.json> --to FORMAT [-o OUT]
                                       FORMAT: text (print(graph) form), json, dot, svg, png
  optimize <graph.json> [-o OUT] [--preset vertical|all] [--patterns a,b] [--steps K]
           [--trace TRACE.json] [--checked] [--verify] [--verify-each] [--device D]
                                       apply rewrite patterns greedily to a fixpoint; --verify
                                       compares the result with the input graph by running both,
                                       --verify-each checks (and rolls back) every step
  run <graph.json> [--device D] [--seed S] [--inputs F] [--weights F] [--expect F] [-o OUT]
                                       execute the graph with LibTorch; inputs/weights from
                                       safetensors files or seeded random; --expect compares with
                                       tensors output:0.. of a file; -o saves the outputs
  verify <a.json> <b.json> [--device D] [--seed S] [--inputs F] [--weights F]
                                       run both on the same inputs and weights, compare outputs
  patterns [NAME]                      list the built-in patterns; with NAME, one pattern in full
                                       (anchors, IR level, and its pattern graph when it is data)
  doctor                               what this build can do (Graphviz, LibTorch, CUDA)

Options:
  -o, --output FILE                    write to FILE instead of standard output
  --no-meta                            text form without shape/dtype comments
  -h, --help                           this help

Exit codes: 0 success, 1 the check failed (lint errors), 2 usage error, 3 unreadable or invalid input.
)";

struct Args {
    std::string command;
    std::vector<std::string> positional;
    std::string output;
    std::string to;
    std::string preset = "all";
    std::string patterns;
    std::string trace;
    long steps = -1;
    bool checked = false;
    bool verify = false;
    bool verifyEach = false;
    std::string device = "cpu";
    std::string inputs, weights, expect;
    uint64_t seed = 0;
    bool noMeta = false;
    bool help = false;
};

bool parseArgs(int argc, char **argv, Args &a, std::string &err)
{
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        auto value = [&](std::string &dst) {
            if (i + 1 >= argc) {
                err = "option " + s + " needs a value";
                return false;
            }
            dst = argv[++i];
            return true;
        };
        if (s == "-h" || s == "--help")
            a.help = true;
        else if (s == "-o" || s == "--output") {
            if (!value(a.output))
                return false;
        } else if (s == "--to") {
            if (!value(a.to))
                return false;
        } else if (s == "--preset") {
            if (!value(a.preset))
                return false;
        } else if (s == "--patterns") {
            if (!value(a.patterns))
                return false;
        } else if (s == "--trace") {
            if (!value(a.trace))
                return false;
        } else if (s == "--steps") {
            std::string v;
            if (!value(v))
                return false;
            char *end = nullptr;
            a.steps = std::strtol(v.c_str(), &end, 10);
            if (!end || *end || a.steps < 0) {
                err = "--steps needs a non-negative integer, got '" + v + "'";
                return false;
            }
        } else if (s == "--device") {
            if (!value(a.device))
                return false;
        } else if (s == "--inputs") {
            if (!value(a.inputs))
                return false;
        } else if (s == "--weights") {
            if (!value(a.weights))
                return false;
        } else if (s == "--expect") {
            if (!value(a.expect))
                return false;
        } else if (s == "--seed") {
            std::string v;
            if (!value(v))
                return false;
            char *end = nullptr;
            a.seed = std::strtoull(v.c_str(), &end, 10);
            if (!end || *end || v.empty() || v[0] == '-') {
                err = "--seed needs a non-negative integer, got '" + v + "'";
                return false;
            }
        } else if (s == "--checked")
            a.checked = true;
        else if (s == "--verify")
            a.verify = true;
        else if (s == "--verify-each")
            a.verifyEach = true;
        else if (s == "--no-meta")
            a.noMeta = true;
        else if (s.size() > 1 && s[0] == '-') {
            err = "unknown option '" + s + "'";
            return false;
        } else if (a.command.empty())
            a.command = s;
        else
            a.positional.push_back(s);
    }
    return true;
}

bool emit(const std::string &data, const std::string &output)
{
    if (output.empty() || output == "-") {
        std::fwrite(data.data(), 1, data.size(), stdout);
        return true;
    }
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    out << data;
    if (!out) {
        std::cerr << "fxlens-cli: cannot write '" << output << "'\n";
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

int cmdInfo(const Args &a)
{
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    std::string s = "graph: " + (g->name.empty() ? a.positional[0] : g->name) + "\nir: " + g->irLevel +
                    "\nsource: " + g->source + "\nparameters: " + std::to_string(g->params.size()) + "\n";
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
        std::cerr << "fxlens-cli convert: --to FORMAT is required (text, json, dot, svg, png)\n";
        return kUsage;
    }
    if (a.to != "text" && a.to != "json" && a.to != "dot" && a.to != "svg" && a.to != "png") {
        std::cerr << "fxlens-cli convert: unknown format '" << a.to << "' (text, json, dot, svg, png)\n";
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
    if (a.to == "json")
        return emit(io::writeGraphJson(*g), a.output) ? kOk : kFailed;
    std::string dot = io::writeDot(*g);
    if (a.to == "dot")
        return emit(dot, a.output) ? kOk : kFailed;
#ifdef FXLENS_HAVE_GRAPHVIZ
    if (g->size() > 5000)
        std::cerr << "fxlens-cli convert: note: " << g->size()
                  << " nodes; a flat Graphviz layout of a graph this size can take minutes\n";
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

const char *irLevelName(rewrite::IrLevel l)
{
    return l == rewrite::IrLevel::Torch ? "torch" : l == rewrite::IrLevel::Aten ? "aten" : "both";
}

int cmdPatterns(const Args &a)
{
    rewrite::PatternRegistry reg;
    patterns::registerVerticalPatterns(reg);
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

#ifdef FXLENS_HAVE_TORCH
exec::ExecOptions execOptions(const Args &a, const std::string &graphPath)
{
    exec::ExecOptions o;
    o.device = a.device;
    o.seed = a.seed;
    o.inputsFile = a.inputs;
    o.weightsFile = a.weights;
    o.graphDir = std::filesystem::path(graphPath).parent_path().string();
    return o;
}
#endif

int cmdOptimize(const Args &a)
{
    int code = kOk;
    rewrite::PatternRegistry reg;
    std::string err = patterns::registerVerticalPatterns(reg);
    if (!err.empty()) {
        std::cerr << "fxlens-cli optimize: " << err << "\n";
        return kFailed;
    }
    auto selected = a.patterns.empty() ? reg.preset(a.preset, err) : reg.byNames(a.patterns, err);
    if (!err.empty()) {
        std::cerr << "fxlens-cli optimize: " << err << " (see `fxlens-cli patterns`)\n";
        return kUsage;
    }
    auto g = load(a, code);
    if (!g)
        return code;
    size_t before = g->size();
    rewrite::SessionConfig cfg;
    cfg.checked = a.checked;
    if (a.steps >= 0)
        cfg.maxSteps = size_t(a.steps);
    std::unique_ptr<ir::Graph> original;
    if (a.verify || a.verifyEach) {
#ifdef FXLENS_HAVE_TORCH
        original = g->clone();
        if (a.verifyEach) {
            std::string verr;
            cfg.verify = exec::makeStepVerifier(*original, execOptions(a, a.positional[0]), verr);
            if (!cfg.verify) {
                std::cerr << "fxlens-cli optimize: --verify-each: the input graph does not run: " << verr << "\n";
                return kFailed;
            }
        }
#else
        std::cerr << "fxlens-cli optimize: this build has no LibTorch; --verify needs the executor\n";
        return kFailed;
#endif
    }
    rewrite::Session session(*g, selected, cfg);
    rewrite::TraceRecorder trace;
    if (!a.trace.empty())
        session.addListener(&trace);
    auto r = session.run();
    std::printf("nodes: %zu -> %zu\n", before, g->size());
    std::printf("rewrites: %zu in %.3f s (%zu match attempts)\n", r.steps, r.seconds, r.attempts);
    for (const auto &[name, count] : r.rewritesByPattern)
        std::printf("  %-28s %zu\n", name.c_str(), count);
    std::printf("stop reason: %s\n", rewrite::stopReasonName(r.reason));
    if (!session.lastError().empty())
        std::fprintf(stderr, "fxlens-cli optimize: %s\n", session.lastError().c_str());
    auto lint = g->lint();
    if (!lint.empty()) {
        std::fprintf(stderr, "fxlens-cli optimize: result fails lint: %s\n", lint.front().toString().c_str());
        return kFailed;
    }
#ifdef FXLENS_HAVE_TORCH
    if (a.verify) {
        auto rep = exec::verifyGraphs(*original, *g, execOptions(a, a.positional[0]));
        if (!rep) {
            std::cerr << "fxlens-cli optimize: --verify: " << rep.error().toString() << "\n";
            return kFailed;
        }
        std::printf("verify: %s", rep.value().summary().c_str());
        if (!rep.value().pass)
            code = kFailed;
    }
#endif
    if (!a.trace.empty()) {
        std::ofstream out(a.trace);
        out << trace.toJson(session, r, g->name);
        if (!out) {
            std::cerr << "fxlens-cli optimize: cannot write '" << a.trace << "'\n";
            return kFailed;
        }
    }
    if (!a.output.empty()) {
        auto w = io::writeGraphFile(*g, a.output);
        if (!w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    return code;
}

#ifdef FXLENS_HAVE_TORCH
int cmdRun(const Args &a)
{
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    auto runner = exec::Runner::create(*g, execOptions(a, a.positional[0]));
    if (!runner) {
        std::cerr << "fxlens-cli run: " << runner.error().toString() << "\n";
        return kFailed;
    }
    auto out = runner.value()->run(*g);
    if (!out) {
        Diagnostic d = out.error();
        d.file = a.positional[0];
        std::cerr << d.toString() << "\n";
        return kFailed;
    }
    auto infos = runner.value()->describe(*out.value());
    for (size_t i = 0; i < infos.size(); ++i) {
        std::string shape;
        for (auto s : infos[i].shape)
            shape += (shape.empty() ? "" : ", ") + std::to_string(s);
        std::printf("output %zu: %s[%s] abs sum %.6g\n", i, infos[i].dtype.c_str(), shape.c_str(), infos[i].absSum);
    }
    if (!a.output.empty()) {
        auto w = runner.value()->saveOutputs(*out.value(), a.output);
        if (!w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    if (!a.expect.empty()) {
        auto rep = runner.value()->compareWithFile(*out.value(), a.expect);
        if (!rep) {
            std::cerr << "fxlens-cli run: " << rep.error().toString() << "\n";
            return kBadInput;
        }
        std::printf("expect: %s", rep.value().summary().c_str());
        return rep.value().pass ? kOk : kFailed;
    }
    return kOk;
}

int cmdVerify(const Args &a)
{
    if (a.positional.size() != 2) {
        std::cerr << "fxlens-cli verify: expected two graph files\n";
        return kUsage;
    }
    auto ga = io::readGraphFile(a.positional[0]), gb = io::readGraphFile(a.positional[1]);
    for (auto *r : {&ga, &gb})
        if (!*r) {
            std::cerr << r->error().toString() << "\n";
            return kBadInput;
        }
    auto rep = exec::verifyGraphs(*ga.value(), *gb.value(), execOptions(a, a.positional[0]));
    if (!rep) {
        std::cerr << "fxlens-cli verify: " << rep.error().toString() << "\n";
        return kFailed;
    }
    std::printf("%s", rep.value().summary().c_str());
    return rep.value().pass ? kOk : kFailed;
}
#endif

int cmdDoctor()
{
    std::string s = "fxlens-cli 0.1.0\n";
#ifdef FXLENS_HAVE_GRAPHVIZ
    s += "Graphviz: yes\n";
#else
    s += "Graphviz: no (built without)\n";
#endif
#ifdef FXLENS_HAVE_TORCH
    s += exec::probeRuntime().toString();
#else
    s += "LibTorch: no (built without; execution, verification and profiling are unavailable)\n";
#endif
    std::cout << s;
    return kOk;
}

} // namespace

int main(int argc, char **argv)
{
    Args a;
    std::string err;
    if (!parseArgs(argc, argv, a, err)) {
        std::cerr << "fxlens-cli: " << err << "\n" << kUsageText;
        return kUsage;
    }
    if (a.help || a.command.empty() || a.command == "help") {
        std::cout << kUsageText;
        return a.command.empty() && !a.help ? kUsage : kOk;
    }
    if (a.command == "info")
        return cmdInfo(a);
    if (a.command == "lint")
        return cmdLint(a);
    if (a.command == "convert")
        return cmdConvert(a);
    if (a.command == "optimize")
        return cmdOptimize(a);
    if (a.command == "patterns")
        return cmdPatterns(a);
    if (a.command == "run" || a.command == "verify") {
#ifdef FXLENS_HAVE_TORCH
        return a.command == "run" ? cmdRun(a) : cmdVerify(a);
#else
        std::cerr << "fxlens-cli " << a.command << ": this build has no LibTorch (configure with torch's CMAKE_PREFIX_PATH)\n";
        return kFailed;
#endif
    }
    if (a.command == "doctor")
        return cmdDoctor();
    std::cerr << "fxlens-cli: unknown command '" << a.command << "'\n" << kUsageText;
    return kUsage;
}
