// SPDX-License-Identifier: MIT
// fxlens-cli's parts: the parsed command line, the command table, and the helpers commands share.
// Commands live by area (GraphCommands, RewriteCommands, ProfileCommand, ExecCommands); the ones
// that run graphs are in ExecCommands.cpp, which CMake replaces by NoExec.cpp in a build without
// LibTorch.
#pragma once

#include "ir/Graph.h"
#include "profile/Profile.h"
#include "rewrite/Pattern.h"
#include "rewrite/Tune.h"
#include "util/Diagnostic.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fxlens::lang {
class FilePattern;
}

namespace fxlens::cli {

/// Exit codes, documented in --help.
enum Exit { kOk = 0, kFailed = 1, kUsage = 2, kBadInput = 3 };

/// The command line as parsed (Options.cpp). A command reads only the options its table entry
/// lists; any other is refused before it runs.
struct Args {
    std::string command;
    std::vector<std::string> positional;
    std::vector<std::string> given; ///< options as given, by their canonical name ("-o" for --output)
    bool help = false;

    std::string output, to, trace;
    std::string preset = "all";
    std::string patterns, patternDir, pattern, node;
    std::string postGrad; ///< profile --compiled --post-grad: pattern files run inside Inductor on its post-grad graph
    long steps = -1;
    bool checked = false, verify = false, verifyEach = false;
    std::string device = "cpu";
    bool deviceGiven = false;
    std::string compare, compareOutput, rawEvents;
    std::string versions; ///< profile --versions: versions of the greedy history
    bool optimize = false, freeze = false, cudaGraph = false, hostOps = false;
    bool compiled = false; ///< profile --compiled: Inductor's kernels, through the Python companion
    int trials = 200, iters = 10, warmup = 3, repeat = 1;
    std::string inputs, weights, expect;
    uint64_t seed = 0;
    bool noMeta = false, randomInputs = false;
    bool randomWeights = false;         ///< optimize --freeze: seeded random weights may be frozen (benchmarks)
    std::vector<std::string> libraries; ///< --load-library: custom operators' C++ kernels
    double budget = 600;                ///< tune --budget: seconds of search
    std::string report;                 ///< tune --report: the HTML page
    std::string devices;                ///< tune --devices: one measuring worker process per device
};

struct Command {
    /// Where a command runs: fxlens-cli links no LibTorch and hands the commands that run graphs to
    /// fxlens-cli-exec (NoExec.cpp); optimize only with its options that run graphs.
    enum class Exec { Never, Always, ForRunOptions };
    const char *name;
    const char *synopsis; ///< the arguments after the name, as --help shows them
    const char *help;     ///< what it does (wrapped by --help)
    std::vector<const char *> options;
    int (*run)(const Args &);
    Exec exec = Exec::Never;
};

/// Every command, in the order --help lists them (Commands.cpp).
const std::vector<Command> &commands();
const Command *findCommand(const std::string &name);

/// Options.cpp: parsing, per-command option checks, the generated --help.
bool parseArgs(int argc, char **argv, Args &a, std::string &err);
bool optionsApply(const Command &c, const Args &a, std::string &err);
std::string usageText();

// --- helpers (GraphCommands.cpp) ---

/// An exec-style argument vector over `args` (null-terminated; valid while `args` is unchanged), for
/// the child processes commands start (tune's measuring workers, the compiled-profile companion).
std::vector<char *> argvOf(std::vector<std::string> &args);
/// Writes to a file (atomically) or to stdout for "" / "-".
bool emit(const std::string &data, const std::string &output);
/// The one graph file a command takes; nullptr with `exitCode` set and a message when it does not load.
std::unique_ptr<ir::Graph> load(const Args &a, int &exitCode);
/// The built-in patterns plus the pattern files of --pattern-dir. A file that does not compile is
/// reported on stderr and skipped; the others load.
bool loadPatterns(const Args &a, rewrite::PatternRegistry &reg, const std::string &cmd);
/// A pattern named on the command line: a .fxpat file (compiled now) or a registered name.
const rewrite::Pattern *namedPattern(const std::string &what, rewrite::PatternRegistry &reg, std::unique_ptr<lang::FilePattern> &owned,
                                     const std::string &cmd, int &code);
/// The pattern file named by the one positional argument; nullptr with `code` set, and a message,
/// when it does not load or is a C++ pattern (`cxxNote` says why that matters).
const lang::FilePattern *filePatternArg(const Args &a, rewrite::PatternRegistry &reg, std::unique_ptr<lang::FilePattern> &owned,
                                        const std::string &cmd, const char *cxxNote, int &code);
/// A graph written to another folder takes its weights and example inputs along (side files are
/// always resolved in the graph's own folder).
void copySideFiles(const ir::Graph &g, const std::string &from, const std::string &to);

// --- commands ---

int cmdInfo(const Args &a);
int cmdLint(const Args &a);
int cmdConvert(const Args &a);
int cmdPatterns(const Args &a);
int cmdExplain(const Args &a);
int cmdLintPatterns(const Args &a);
int cmdExportPattern(const Args &a);
int cmdDoctor(const Args &a);
int cmdOptimize(const Args &a);
int cmdProfile(const Args &a);
int cmdTune(const Args &a);
int cmdMeasureWorker(const Args &a);
// ExecCommands.cpp (NoExec.cpp without LibTorch):
int cmdRun(const Args &a);
int cmdVerify(const Args &a);
int cmdCheckPattern(const Args &a);

// --- what torch-free commands ask of the executor (ExecCommands.cpp / NoExec.cpp) ---

/// "" when this build runs graphs, else why not (for `command`'s message).
std::string executorMissing(const std::string &command);
/// optimize --verify-each: the per-step check against `original`; nullptr with `err` when the
/// original does not run.
std::function<std::string(const ir::Graph &)> stepVerifier(const ir::Graph &original, const Args &a, std::string &err);
/// optimize --verify: runs both graphs and prints the comparison; kOk, or kFailed when they differ
/// or cannot run.
int verifyResult(const ir::Graph &original, const ir::Graph &result, const Args &a);
/// tune: the cost model that measures whole versions of `original` on the executor (one worker
/// process per device of `--devices`, else in this process); nullptr with `err` when it cannot.
std::unique_ptr<rewrite::CostModel> tuneCostModel(const ir::Graph &original, const Args &a, std::string &note, std::string &err);
/// The pool of `measure-worker` processes, one per device (TuneCommand.cpp); nullptr with `err`
/// when one does not start.
std::unique_ptr<rewrite::CostModel> startWorkers(const Args &a, const std::vector<std::string> &devices, std::string &err);
/// optimize --freeze on a graph whose weights would be made up (`why`), without --random-weights:
/// the message (naming the graph file and the option) and kBadInput (RewriteCommands.cpp).
int refuseRandomFreeze(const Args &a, const std::string &why);
/// optimize --freeze: folds the weight-only nodes of `g` into new weights and writes the frozen
/// graph to `out` with its weights and fold graph next to it.
int writeFrozen(const Args &a, const ir::Graph &g, const std::string &out);
/// profile: profiles `graphs` (the versions whose profile slot is empty) on the chosen device.
/// `labels` names each graph's version (label, id) when given (profile --versions).
int profileGraphs(const Args &a, std::vector<std::unique_ptr<ir::Graph>> &graphs, const std::vector<std::string> &sources,
                  std::vector<prof::Profile> &profiles, const std::vector<std::pair<std::string, int>> &labels = {});
/// profile --compiled: compiles `graphs` with Inductor and profiles them through the Python
/// companion (CompiledProfile.cpp); the kernels carry the FX nodes Inductor's provenance names.
int profileCompiled(const Args &a, std::vector<std::unique_ptr<ir::Graph>> &graphs, const std::vector<std::string> &sources,
                    std::vector<prof::Profile> &profiles, const std::vector<std::pair<std::string, int>> &labels = {});
/// doctor: what the executor finds (LibTorch, CUDA, NVTX).
std::string executorReport();

/// fxlens-cli itself does not load LibTorch (half a second per start): the commands that run graphs
/// are carried out by fxlens-cli-exec, the same program with the executor, installed beside it. When
/// `a` needs the executor, this replaces the process by that program with the same arguments (it
/// returns only when there is none: the command then says that this build cannot run graphs).
/// fxlens-cli-exec itself carries out everything (NoExec.cpp / ExecCommands.cpp).
void runInExecutor(char **argv, const Args &a);

} // namespace fxlens::cli
