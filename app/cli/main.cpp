// SPDX-License-Identifier: MIT
// fxlens-cli: the headless front end (scripts and CI).
#include "Version.h"
#include "io/DotWriter.h"
#include "io/AtomicFile.h"
#include "io/GraphJson.h"
#include "io/PythonWriter.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"
#include "rewrite/Freeze.h"
#include "rewrite/PatternGraph.h"
#ifdef FXLENS_HAVE_TORCH
#include "exec/Executor.h"
#include "exec/Profiler.h"
#endif
#include "profile/Profile.h"
#include "lang/PatternLang.h"
#ifdef FXLENS_HAVE_TORCH
#include "exec/PatternCheck.h"
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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <type_traits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
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
                                       FORMAT: text (print(graph) form), json, python (a runnable
                                       torch.nn.Module), dot, svg, png
  optimize <graph.json> [-o OUT] [--preset vertical|all] [--patterns a,b] [--steps K]
           [--trace TRACE.json] [--checked] [--verify] [--verify-each] [--device D] [--freeze]
                                       apply rewrite patterns greedily to a fixpoint; --verify
                                       compares the result with the input graph by running both,
                                       --verify-each checks (and rolls back) every step; --freeze
                                       (with -o OUT.json) folds weight-only nodes (stacked,
                                       transposed weights) into new weights OUT.frozen.safetensors
                                       and writes OUT.fold.json, which computes them from the
                                       original weights (fxlens.load_graph(..., state_dict=))
  run <graph.json> [--device D] [--seed S] [--inputs F] [--weights F] [--expect F] [-o OUT]
      [--repeat K] [--random-inputs] [--freeze] [--cuda-graph]
                                       execute the graph with LibTorch; inputs/weights from
                                       safetensors files, else the example inputs saved with
                                       the graph, else seeded random (--random-inputs: always;
                                       ids stay below the tables they index); --expect compares with
                                       tensors output:0.. of a file; -o saves the outputs;
                                       --repeat runs K times (later runs use the compiled plan),
                                       checks every run gives the first run's outputs, and
                                       prints the times; --freeze folds weight-only nodes once;
                                       --cuda-graph captures one run as a CUDA graph and replays it
  verify <a.json> <b.json> [--device D] [--seed S] [--inputs F] [--weights F]
                                       run both on the same inputs and weights, compare outputs
  profile <graph.json|profile.json> [--compare H] [--optimize] [--iters K] [--warmup W]
          [--device cuda|cpu] [--freeze] [--cuda-graph] [--trace TRACE.json] [-o PROFILE.json]
          [--compare-output F] [--raw-events F] [--host-ops]
                                       run warm-up + K timed iterations with NVTX ranges per
                                       node and kernel capture (Kineto/CUPTI); prints kernels,
                                       GPU busy, wall, CPU launch time, peak memory and the top
                                       nodes; --compare profiles a second version (graph or saved
                                       profile) and prints the change, --optimize compares with
                                       the graph optimized by --preset; --freeze folds weight-only
                                       nodes once before timing (inference with frozen weights,
                                       as Inductor's freezing); --cuda-graph times replays
                                       of one captured run (no node ranges); --trace writes a Chrome
                                       trace (Perfetto); -o saves the profile; --raw-events
                                       writes the recorded events (tests reopen them); --host-ops
                                       also records the ATen ops on the host on CUDA. Without CUDA it
                                       says so and profiles on the CPU (ATen ops as kernels)
  explain --pattern P --node NODE <graph.json>
                                       why pattern P (a name or a .fxpat file) does or does not
                                       match at NODE: the first failing element or constraint,
                                       with the graph node, what was expected and what was found
  lint-patterns <DIR|FILE.fxpat>...    compile pattern files and print their diagnostics
  check-pattern <NAME|FILE.fxpat> [--trials N] [--seed S] [--device D]
                                       equivalence check: instantiate the pattern on random shapes,
                                       apply the replacement, compare outputs (counterexamples)
  export-pattern <NAME|FILE.fxpat> [-o OUT.py]
                                       the pattern as Python pattern/replacement functions for
                                       torch.fx.subgraph_rewriter.replace_pattern
  patterns [NAME]                      list the built-in patterns; with NAME, one pattern in full
                                       (anchors, IR level, and its pattern graph when it is data)
  doctor                               what this build can do (Graphviz, LibTorch, CUDA)

Options:
  -o, --output FILE                    write to FILE instead of standard output
  --pattern-dir DIR                    also load the pattern files (*.fxpat) of DIR (optimize,
                                       patterns, explain, check-pattern, export-pattern, profile);
                                       a file that does not compile is reported and skipped
  --no-meta                            text form without shape/dtype comments
  --version                            print the version
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
    bool deviceGiven = false;
    std::string compare, compareOutput, rawEvents;
    bool optimize = false;
    std::string patternDir, pattern, node;
    int trials = 200;
    bool freeze = false;
    bool cudaGraph = false;
    std::vector<std::string> given; ///< options as given ("-o" for --output), checked per command
    bool hostOps = false;
    int iters = 10, warmup = 3, repeat = 1;
    std::string inputs, weights, expect;
    uint64_t seed = 0;
    bool noMeta = false;
    bool randomInputs = false;
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
        // An integer option in [lo, hi]; the message says "positive" or "non-negative" by lo.
        auto integer = [&](long long lo, long long hi, auto &dst) {
            std::string v;
            if (!value(v))
                return false;
            char *end = nullptr;
            errno = 0;
            const long long x = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || !end || *end || errno == ERANGE || x < lo || x > hi) {
                err = s + " needs a " + (lo > 0 ? "positive" : "non-negative") + " integer, got '" + v + "'";
                return false;
            }
            dst = static_cast<std::remove_reference_t<decltype(dst)>>(x);
            return true;
        };
        if (s.size() > 1 && s[0] == '-' && s != "-h" && s != "--help" && s != "--version")
            a.given.push_back(s == "--output" ? "-o" : s);
        if (s == "-h" || s == "--help")
            a.help = true;
        else if (s == "--version")
            a.command = "version";
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
            if (!integer(0, LLONG_MAX, a.steps))
                return false;
        } else if (s == "--device") {
            if (!value(a.device))
                return false;
            a.deviceGiven = true;
        } else if (s == "--pattern-dir") {
            if (!value(a.patternDir))
                return false;
        } else if (s == "--pattern") {
            if (!value(a.pattern))
                return false;
        } else if (s == "--node") {
            if (!value(a.node))
                return false;
        } else if (s == "--trials") {
            if (!integer(1, 100000, a.trials))
                return false;
        } else if (s == "--compare") {
            if (!value(a.compare))
                return false;
        } else if (s == "--compare-output") {
            if (!value(a.compareOutput))
                return false;
        } else if (s == "--raw-events") {
            if (!value(a.rawEvents))
                return false;
        } else if (s == "--optimize") {
            a.optimize = true;
        } else if (s == "--freeze") {
            a.freeze = true;
        } else if (s == "--cuda-graph") {
            a.cudaGraph = true;
        } else if (s == "--host-ops") {
            a.hostOps = true;
        } else if (s == "--iters") {
            if (!integer(1, 100000, a.iters))
                return false;
        } else if (s == "--repeat") {
            if (!integer(1, 100000, a.repeat))
                return false;
        } else if (s == "--warmup") {
            if (!integer(0, 100000, a.warmup))
                return false;
        } else if (s == "--random-inputs") {
            a.randomInputs = true;
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

/// The options each command reads; any other is a usage error instead of being silently ignored.
bool optionsApply(const Args &a, std::string &err)
{
    static const std::vector<std::string> exec = {"--device", "--seed", "--inputs", "--weights", "--random-inputs"};
    static const std::map<std::string, std::vector<std::string>> table = {
        {"info", {"-o"}},
        {"lint", {}},
        {"convert", {"-o", "--to", "--no-meta"}},
        {"optimize", {"-o", "--preset", "--patterns", "--steps", "--trace", "--checked", "--verify", "--verify-each",
                      "--pattern-dir", "--freeze"}},
        {"run", {"-o", "--expect", "--repeat", "--freeze", "--cuda-graph"}},
        {"verify", {}},
        {"profile", {"-o", "--compare", "--compare-output", "--optimize", "--iters", "--warmup", "--freeze", "--cuda-graph",
                     "--trace", "--raw-events", "--host-ops", "--preset", "--patterns", "--pattern-dir"}},
        {"explain", {"--pattern", "--node", "--pattern-dir"}},
        {"lint-patterns", {}},
        {"check-pattern", {"--trials", "--seed", "--device", "--pattern-dir"}},
        {"export-pattern", {"-o", "--pattern-dir"}},
        {"patterns", {"--pattern-dir"}},
        {"doctor", {}},
    };
    auto found = table.find(a.command);
    if (found == table.end())
        return true; // unknown commands are reported by main()
    const bool usesExec = a.command == "optimize" || a.command == "run" || a.command == "verify" || a.command == "profile";
    for (const std::string &o : a.given) {
        const auto &own = found->second;
        if (std::find(own.begin(), own.end(), o) != own.end() || (usesExec && std::find(exec.begin(), exec.end(), o) != exec.end()))
            continue;
        std::string list;
        for (const auto &x : own)
            list += (list.empty() ? "" : " ") + x;
        if (usesExec)
            for (const auto &x : exec)
                list += " " + x;
        err = "option " + o + " does not apply to '" + a.command + "' (its options: " + (list.empty() ? "none" : list) + ")";
        return false;
    }
    return true;
}

bool emit(const std::string &data, const std::string &output)
{
    if (output.empty() || output == "-") {
        std::fwrite(data.data(), 1, data.size(), stdout);
        return true;
    }
    if (auto e = io::writeFileAtomic(output, data); !e.empty()) {
        std::cerr << "fxlens-cli: cannot write '" << output << "': " << e << "\n";
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

bool loadPatterns(const Args &a, rewrite::PatternRegistry &reg, const std::string &cmd);

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

#ifdef FXLENS_HAVE_TORCH
exec::ExecOptions execOptions(const Args &a, const std::string &graphPath)
{
    exec::ExecOptions o;
    o.device = a.device;
    o.seed = a.seed;
    o.inputsFile = a.inputs;
    o.randomInputs = a.randomInputs;
    o.weightsFile = a.weights;
    o.graphDir = std::filesystem::path(graphPath).parent_path().string();
    return o;
}

/// optimize --freeze: folds the weight-only nodes of `g` into new weights `_frozen_<node>` and writes
/// the frozen graph to `out`, its weights to `<stem>.frozen.safetensors` and the fold graph (the
/// folded nodes, reading the original weights) to `<stem>.fold.json`, all in `out`'s folder.
int writeFrozen(const Args &a, const ir::Graph &g, const std::string &out)
{
    namespace fs = std::filesystem;
    auto runner = exec::Runner::create(g, execOptions(a, a.positional[0]));
    if (!runner) {
        std::cerr << "fxlens-cli optimize: --freeze: " << runner.error().toString() << "\n";
        return kFailed;
    }
    if (g.weightsFile.empty() && a.weights.empty())
        std::cerr << "fxlens-cli optimize: --freeze: warning: " << a.positional[0]
                  << " has no weights file; the frozen values come from seeded random weights\n";
    const auto folded = rewrite::weightOnlyNodes(g);
    std::vector<std::string> names;
    for (const ir::Node *n : rewrite::freezeBoundary(g, folded))
        names.push_back(n->name());
    auto values = runner.value()->evaluateWeightNodes(g, names);
    if (!values) {
        std::cerr << "fxlens-cli optimize: --freeze: " << values.error().toString() << "\n";
        return kFailed;
    }
    std::vector<std::string> chosen;
    for (const auto &n : names)
        if (values.value().count(n))
            chosen.push_back(n);
    auto split = rewrite::splitFrozen(g, chosen);
    std::vector<std::string> kept;
    for (const auto &p : split.frozen->params)
        kept.push_back(p.name);
    auto tensors = runner.value()->weightValues(kept);
    for (size_t i = 0; i < chosen.size(); ++i) {
        const io::SafeTensor &t = values.value().at(chosen[i]);
        ir::ParamInfo p;
        p.name = split.targets[i];
        p.isBuffer = true;
        p.shape = t.shape;
        p.dtype = io::fxlensDtype(t.dtype);
        split.frozen->params.push_back(p);
        tensors[p.name] = t;
    }
    std::string stem = fs::path(out).filename().string();
    for (const char *ext : {".json.gz", ".json"})
        if (stem.size() > std::strlen(ext) && stem.compare(stem.size() - std::strlen(ext), std::string::npos, ext) == 0) {
            stem.resize(stem.size() - std::strlen(ext));
            break;
        }
    const fs::path dir = fs::path(out).parent_path();
    split.frozen->weightsFile = stem + ".frozen.safetensors";
    split.frozen->foldFile = split.targets.empty() ? "" : stem + ".fold.json";
    if (auto w = io::writeSafetensors(tensors, (dir / split.frozen->weightsFile).string()); !w) {
        std::cerr << w.error().toString() << "\n";
        return kFailed;
    }
    if (!split.frozen->foldFile.empty())
        if (auto w = io::writeGraphFile(*split.fold, (dir / split.frozen->foldFile).string()); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    if (auto w = io::writeGraphFile(*split.frozen, out); !w) {
        std::cerr << w.error().toString() << "\n";
        return kFailed;
    }
    size_t bytes = 0;
    for (const auto &[name, t] : tensors)
        bytes += t.data.size();
    std::printf("freeze: %zu value(s) folded from %zu node(s); nodes %zu -> %zu; weights %s (%zu tensors, %.1f MB)%s%s\n",
                chosen.size(), size_t(std::count(folded.begin(), folded.end(), true)), g.size(), split.frozen->size(),
                split.frozen->weightsFile.c_str(), tensors.size(), double(bytes) / 1e6,
                split.frozen->foldFile.empty() ? "" : "; fold graph ", split.frozen->foldFile.c_str());
    return kOk;
}
#endif

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

int cmdOptimize(const Args &a)
{
    int code = kOk;
    rewrite::PatternRegistry reg;
    std::string err;
    if (!loadPatterns(a, reg, "optimize"))
        return kFailed;
    auto selected = a.patterns.empty() ? reg.preset(a.preset, err) : reg.byNames(a.patterns, err);
    if (!err.empty()) {
        std::cerr << "fxlens-cli optimize: " << err << " (see `fxlens-cli patterns`)\n";
        return kUsage;
    }
    if (a.freeze) {
#ifdef FXLENS_HAVE_TORCH
        if (a.output.empty()) {
            std::cerr << "fxlens-cli optimize: --freeze needs -o OUT.json (the frozen weights are written next to it)\n";
            return kUsage;
        }
#else
        std::cerr << "fxlens-cli optimize: this build has no LibTorch; --freeze needs the executor\n";
        return kFailed;
#endif
    }
    auto g = load(a, code);
    if (!g)
        return code;
    // Rewrites assume a well-formed graph: a broken one is reported, node by node, not rewritten.
    if (auto errors = g->lint(); !errors.empty()) {
        for (const auto &e : errors)
            std::cerr << a.positional[0] << ": error: " << e.toString() << "\n";
        std::cerr << "fxlens-cli optimize: the input fails lint (" << errors.size() << " error(s)); nothing rewritten\n";
        return kBadInput;
    }
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
                // The rewrites still run; their result is written, marked unverified, and the exit code says so.
                std::cerr << "fxlens-cli optimize: --verify-each: the input graph does not run: " << verr
                          << "; steps are applied unverified\n";
                code = kFailed;
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
            // Keep the rewrite result (written below): only its check could not run.
            std::cerr << "fxlens-cli optimize: --verify: " << rep.error().toString() << "\n"
                      << "fxlens-cli optimize: warning: the result is unverified" << (a.output.empty() ? "" : " (still written)") << "\n";
            code = kFailed;
        } else {
            std::printf("verify: %s", rep.value().summary().c_str());
            if (!rep.value().pass)
                code = kFailed;
        }
    }
#endif
    if (!a.trace.empty()) {
        if (auto e = io::writeFileAtomic(a.trace, trace.toJson(session, r, g->name)); !e.empty()) {
            std::cerr << "fxlens-cli optimize: cannot write '" << a.trace << "': " << e << "\n";
            return kFailed;
        }
    }
    if (a.freeze) {
#ifdef FXLENS_HAVE_TORCH
        copySideFiles(*g, a.positional[0], a.output); // the fold graph reads the original weights
        if (int c = writeFrozen(a, *g, a.output); c != kOk)
            return c;
        return code;
#endif
    }
    if (!a.output.empty()) {
        copySideFiles(*g, a.positional[0], a.output);
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
    if (a.freeze) {
        auto f = runner.value()->freeze(*g);
        if (!f) {
            std::cerr << "fxlens-cli run: --freeze: " << f.error().toString() << "\n";
            return kFailed;
        }
        std::printf("frozen: %zu weight-only node(s) folded\n", f.value());
    }
    if (a.cudaGraph) {
        auto c = runner.value()->captureCudaGraph(*g);
        if (!c) {
            std::cerr << "fxlens-cli run: --cuda-graph: " << c.error().toString() << "\n";
            return kFailed;
        }
        std::printf("cuda graph: captured (runs replay it)\n");
    }
    // The first run compiles the graph into a plan (and binds each call's overload); later runs
    // reuse it. Every later run must reproduce the first run's outputs.
    std::vector<double> ms;
    Result<std::shared_ptr<exec::Outputs>> out = std::shared_ptr<exec::Outputs>();
    std::shared_ptr<exec::Outputs> first;
    for (int k = 0; k < a.repeat; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        out = runner.value()->run(*g);
        if (out)
            runner.value()->synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (!out) {
            Diagnostic d = out.error();
            d.file = a.positional[0];
            std::cerr << d.toString() << "\n";
            return kFailed;
        }
        if (k == 0) {
            // A replayed CUDA graph overwrites its outputs: keep the first run's values.
            first = a.cudaGraph && a.repeat > 1 ? runner.value()->snapshot(*out.value()) : out.value();
            continue;
        }
        auto same = runner.value()->compare(*first, *out.value());
        if (!same.pass) {
            std::printf("run %d of %d differs from run 1:\n%s", k + 1, a.repeat, same.summary().c_str());
            return kFailed;
        }
    }
    if (a.repeat > 1) {
        std::vector<double> later(ms.begin() + 1, ms.end());
        std::sort(later.begin(), later.end());
        std::printf("runs: %d, all outputs equal to run 1; first %.3f ms, later runs median %.3f ms, best %.3f ms\n", a.repeat,
                    ms[0], later[later.size() / 2], later.front());
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


/// Optimizes a copy of `g` with the preset or pattern list of `a` (profile --optimize).
std::unique_ptr<ir::Graph> optimizedCopy(const ir::Graph &g, const Args &a, std::string &err)
{
    rewrite::PatternRegistry reg;
    if (!loadPatterns(a, reg, "profile")) {
        err = "the patterns did not load";
        return nullptr;
    }
    auto selected = a.patterns.empty() ? reg.preset(a.preset, err) : reg.byNames(a.patterns, err);
    if (!err.empty())
        return nullptr;
    auto copy = g.clone();
    rewrite::Session session(*copy, selected, {});
    auto r = session.run();
    std::printf("optimized with %s: %zu -> %zu nodes in %zu rewrites\n", a.patterns.empty() ? ("preset " + a.preset).c_str() : a.patterns.c_str(),
                g.size(), copy->size(), r.steps);
    return copy;
}

int cmdProfile(const Args &a)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli profile: expected one graph or profile file\n";
        return kUsage;
    }
    if (!a.compare.empty() && a.optimize) {
        std::cerr << "fxlens-cli profile: --compare and --optimize both name the second version; use one\n";
        return kUsage;
    }
    const std::string first = a.positional[0];
    std::vector<std::string> sources = {first};
    if (!a.compare.empty())
        sources.push_back(a.compare);
    std::vector<prof::Profile> profiles;
    std::vector<std::unique_ptr<ir::Graph>> graphs;
    std::vector<std::string> graphSources;
    // Saved profiles open anywhere; graphs are read now and profiled below.
    for (const auto &src : sources) {
        if (prof::isProfileFile(src)) {
            auto p = prof::readProfile(src);
            if (!p) {
                std::cerr << p.error().toString() << "\n";
                return kBadInput;
            }
            profiles.push_back(std::move(p.value()));
            continue;
        }
        auto g = io::readGraphFile(src);
        if (!g) {
            std::cerr << g.error().toString() << "\n";
            return kBadInput;
        }
        graphs.push_back(std::move(g.value()));
        graphSources.push_back(src);
        profiles.emplace_back(); // filled below
    }
    if (a.optimize) {
        if (graphs.empty()) {
            std::cerr << "fxlens-cli profile: --optimize needs a graph, not a saved profile\n";
            return kUsage;
        }
        std::string err;
        auto opt = optimizedCopy(*graphs.front(), a, err);
        if (!opt) {
            std::cerr << "fxlens-cli profile: " << err << "\n";
            return kUsage;
        }
        graphs.push_back(std::move(opt));
        graphSources.push_back(first);
        profiles.emplace_back();
        sources.push_back(first + " (optimized)");
    }
    if (!graphs.empty()) {
#ifdef FXLENS_HAVE_TORCH
        Args b = a;
        if (!a.deviceGiven) {
            auto rt = exec::probeRuntime();
            if (rt.cudaAvailable) {
                b.device = "cuda";
            } else {
                std::cerr << "fxlens-cli profile: CUDA is not available on this machine (no GPU or no driver); "
                             "profiling on the CPU instead: ATen ops stand for kernels, timed on the host. "
                             "Pass --device cpu to silence this, or run on a machine with a GPU.\n";
                b.device = "cpu";
            }
        }
        auto runner = exec::Runner::create(*graphs.front(), execOptions(b, graphSources.front()));
        if (!runner) {
            std::cerr << "fxlens-cli profile: " << runner.error().toString() << "\n";
            return kFailed;
        }
        size_t gi = 0;
        for (size_t i = 0; i < profiles.size(); ++i) {
            if (!profiles[i].mode.empty())
                continue;
            exec::ProfileOptions o;
            o.iterations = a.iters;
            o.warmup = a.warmup;
            o.graph = std::filesystem::path(graphSources[gi]).filename().string();
            o.version = a.optimize && i == 1 ? "optimized (" + (a.patterns.empty() ? a.preset : a.patterns) + ")"
                        : profiles.size() > 1 ? (i == 0 ? "A" : "B") : "";
            o.versionId = int(i);
            o.freezeWeights = a.freeze;
            o.cudaGraph = a.cudaGraph;
            o.hostOps = a.hostOps;
            if (i == 0)
                o.rawEventsPath = a.rawEvents;
            auto p = exec::profileGraph(*runner.value(), *graphs[gi], o);
            if (!p) {
                Diagnostic d = p.error();
                d.file = graphSources[gi];
                std::cerr << "fxlens-cli profile: " << d.toString() << "\n";
                return kFailed;
            }
            profiles[i] = std::move(p.value());
            ++gi;
        }
#else
        std::cerr << "fxlens-cli profile: this build has no LibTorch, so it can only open saved profiles "
                     "(configure with torch's CMAKE_PREFIX_PATH to profile graphs)\n";
        return kFailed;
#endif
    }
    for (size_t i = 0; i < profiles.size(); ++i) {
        if (profiles.size() > 1)
            std::printf("== %s\n", i == 0 ? "A" : "B");
        std::printf("%s\n", prof::formatProfile(profiles[i]).c_str());
    }
    if (profiles.size() == 2)
        std::printf("%s", prof::formatComparison(profiles[0], profiles[1]).c_str());
    const std::pair<std::string, size_t> saves[] = {{a.output, 0}, {a.compareOutput, 1}};
    for (const auto &[path, i] : saves) {
        if (path.empty() || i >= profiles.size())
            continue;
        if (auto w = prof::writeProfile(profiles[i], path); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    if (!a.trace.empty()) {
        std::vector<const prof::Profile *> ps;
        for (const auto &p : profiles)
            ps.push_back(&p);
        if (auto w = prof::writeChromeTrace(ps, a.trace); !w) {
            std::cerr << w.error().toString() << "\n";
            return kFailed;
        }
    }
    return kOk;
}


/// The built-in patterns plus the pattern files of --pattern-dir. A file that does not compile is
/// reported on stderr and skipped; the others load.
bool loadPatterns(const Args &a, rewrite::PatternRegistry &reg, const std::string &cmd)
{
    std::string err = patterns::registerVerticalPatterns(reg);
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
    std::printf("pattern %s at node %s (%s %s)\n", p->name.c_str(), node->name().c_str(), ir::opKindName(node->op()), node->target().c_str());
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

/// The pattern file named by the first positional argument (a name or a .fxpat path); nullptr with
/// `code` set, and a message, when it does not load or is a C++ pattern (`cxxNote` says why).
const lang::FilePattern *filePatternArg(const Args &a, rewrite::PatternRegistry &reg, std::unique_ptr<lang::FilePattern> &owned,
                                        const std::string &cmd, const char *cxxNote, int &code)
{
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

int cmdExportPattern(const Args &a)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli export-pattern: expected one pattern name or .fxpat file\n";
        return kUsage;
    }
    rewrite::PatternRegistry reg;
    std::unique_ptr<lang::FilePattern> owned;
    int code = kOk;
    const lang::FilePattern *fp = filePatternArg(a, reg, owned, "export-pattern", "only pattern files export to Python", code);
    if (!fp)
        return code;
    return emit(lang::exportPython(*fp), a.output) ? kOk : kFailed;
}

#ifdef FXLENS_HAVE_TORCH
int cmdCheckPattern(const Args &a)
{
    if (a.positional.size() != 1) {
        std::cerr << "fxlens-cli check-pattern: expected one pattern name or .fxpat file\n";
        return kUsage;
    }
    rewrite::PatternRegistry reg;
    std::unique_ptr<lang::FilePattern> owned;
    int code = kOk;
    const lang::FilePattern *fp = filePatternArg(a, reg, owned, "check-pattern", "its checks are the corpus tests", code);
    if (!fp)
        return code;
    auto rep = exec::checkPattern(*fp, a.trials, a.seed, a.device);
    std::printf("%s: %s", fp->name.c_str(), rep.summary().c_str());
    return rep.ok() ? kOk : kFailed;
}
#endif

int cmdDoctor()
{
    std::string s = "fxlens-cli " FXLENS_VERSION "\n";
#ifdef FXLENS_HAVE_GRAPHVIZ
    s += "Graphviz: yes\n";
#else
    s += "Graphviz: no (built without)\n";
#endif
#ifdef FXLENS_HAVE_TORCH
    s += exec::probeRuntime().toString();
    s += std::string("NVTX ranges: ") + (exec::nvtxCompiledIn() ? "yes (domain \"fxlens\")" : "no (NVTX v3 headers not found at build time)") + "\n";
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
    if (a.command == "version") {
        std::cout << "fxlens-cli " FXLENS_VERSION "\n";
        return kOk;
    }
    if (!optionsApply(a, err)) {
        std::cerr << "fxlens-cli " << a.command << ": " << err << "\n";
        return kUsage;
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
    if (a.command == "profile")
        return cmdProfile(a);
    if (a.command == "explain")
        return cmdExplain(a);
    if (a.command == "lint-patterns")
        return cmdLintPatterns(a);
    if (a.command == "export-pattern")
        return cmdExportPattern(a);
    if (a.command == "check-pattern") {
#ifdef FXLENS_HAVE_TORCH
        return cmdCheckPattern(a);
#else
        std::cerr << "fxlens-cli check-pattern: this build has no LibTorch, which the equivalence check runs on\n";
        return kFailed;
#endif
    }
    if (a.command == "doctor")
        return cmdDoctor();
    std::cerr << "fxlens-cli: unknown command '" << a.command << "'\n" << kUsageText;
    return kUsage;
}
