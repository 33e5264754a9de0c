// SPDX-License-Identifier: MIT
// The command table: name, arguments, help and options of every command, and what runs it.
#include "Cli.h"

namespace fxlens::cli {

namespace {

/// The options of every command that runs graphs (inputs, weights, device).
std::vector<const char *> withExec(std::vector<const char *> own)
{
    for (const char *o : {"--device", "--seed", "--inputs", "--weights", "--random-inputs", "--load-library"})
        own.push_back(o);
    return own;
}

} // namespace

const std::vector<Command> &commands()
{
    static const std::vector<Command> table = {
        {"info", "<graph.json>", "node counts by op and target, depth, module tree", {"-o"}, cmdInfo},
        {"lint", "<graph.json>", "check graph invariants (torch.fx Graph.lint rules)", {}, cmdLint},
        {"convert",
         "<graph.json> (--to required)",
         "FORMAT: text (print(graph) form), json, python (a runnable torch.nn.Module), dot, svg, png",
         {"-o", "--to", "--no-meta"},
         cmdConvert},
        {"optimize", "<graph.json>",
         "apply rewrite patterns greedily to a fixpoint; --verify compares the result with the input graph by running "
         "both, --verify-each checks (and rolls back) every step; --freeze (with -o OUT.json) folds weight-only nodes "
         "(stacked, transposed weights) into new weights OUT.frozen.safetensors and writes OUT.fold.json, which computes "
         "them from the original weights (fxlens.load_graph(..., state_dict=)); a graph without its weights is refused "
         "unless --random-weights allows freezing seeded random values (benchmarks)",
         withExec({"-o", "--preset", "--patterns", "--steps", "--trace", "--checked", "--verify", "--verify-each", "--pattern-dir",
                   "--freeze", "--random-weights"}),
         cmdOptimize, Command::Exec::ForRunOptions},
        {"run", "<graph.json>",
         "execute the graph with LibTorch; inputs/weights from safetensors files, else the example inputs saved with the "
         "graph, else seeded random (--random-inputs: always; ids stay below the tables they index); --expect compares "
         "with tensors output:0.. of a file; -o saves the outputs; --repeat runs K times (later runs use the compiled "
         "plan), checks every run gives the first run's outputs, and prints the times; --freeze folds weight-only nodes "
         "once; --cuda-graph captures one run as a CUDA graph and replays it",
         withExec({"-o", "--expect", "--repeat", "--freeze", "--cuda-graph"}), cmdRun, Command::Exec::Always},
        {"verify", "<a.json> <b.json>",
         "run both on the same inputs and weights, compare outputs; a frozen graph (optimize --freeze) against its "
         "original gets its frozen weights from its fold graph, computed from the original's weights",
         withExec({}), cmdVerify, Command::Exec::Always},
        {"profile", "<graph.json|profile.json>",
         "run warm-up + K timed iterations with NVTX ranges per node and kernel capture (Kineto/CUPTI); prints kernels, "
         "GPU busy, wall, CPU launch time, peak memory and the top nodes; --compare profiles a second version (graph or "
         "saved profile) and prints the change, --optimize compares with the graph optimized by --preset; --freeze folds "
         "weight-only nodes once before timing (inference with frozen weights, as Inductor's freezing); --cuda-graph "
         "times replays of one captured run (no node ranges); --trace writes a Chrome trace (Perfetto); -o saves the "
         "profile; --raw-events writes the recorded events; --host-ops also records the ATen ops on the host on CUDA. "
         "Without CUDA it says so and profiles on the CPU (ATen ops as kernels). --versions LIST runs the greedy rewrite "
         "history (--preset / --patterns) and profiles the versions listed, one table per version and a table of all; -o "
         "saves them as one profile set (the app's per-version chart reads it). A saved profile set prints the same. "
         "--compiled compiles each version with Inductor instead (through the Python companion) and attributes every "
         "kernel to the FX nodes it came from; --post-grad runs pattern files inside that compile, on Inductor's post-grad graph",
         withExec({"-o", "--compare", "--compare-output", "--optimize", "--versions", "--iters", "--warmup", "--freeze", "--cuda-graph",
                   "--trace", "--raw-events", "--host-ops", "--compiled", "--post-grad", "--preset", "--patterns", "--pattern-dir"}),
         cmdProfile, Command::Exec::Always},
        {"tune", "<graph.json>",
         "choose the patterns, the order of their families and which matches to apply by measured time of the whole "
         "graph: starts from the greedy result, leaves out a pattern or a group of same-structure matches only when that "
         "saves time beyond the noise band (the greedy version measured three times); on CUDA each version is replayed "
         "as a CUDA graph, on the CPU timed by the host clock (median of --iters after --warmup); --freeze times versions "
         "with weight-only nodes folded. -o writes the tuned graph, --trace every measurement as JSON, --report an HTML "
         "page; --budget bounds the search; --devices spreads measurements over several devices",
         withExec({"-o", "--preset", "--patterns", "--pattern-dir", "--budget", "--trace", "--report", "--iters", "--warmup", "--freeze",
                   "--devices", "--checked"}),
         cmdTune, Command::Exec::Always},
        {"measure-worker", "<graph.json>",
         "(used by tune --devices) reads graph file names on standard input, one per line, and prints one JSON line with "
         "each version's measured time",
         withExec({"--iters", "--warmup", "--freeze"}), cmdMeasureWorker, Command::Exec::Always},
        {"explain",
         "<graph.json> (--pattern and --node required)",
         "why pattern P (a name or a .fxpat file) does or does not match at NODE: the first failing element or "
         "constraint, with the graph node, what was expected and what was found",
         {"--pattern", "--node", "--pattern-dir"},
         cmdExplain},
        {"lint-patterns", "<DIR|FILE.fxpat>...", "compile pattern files and print their diagnostics", {}, cmdLintPatterns},
        {"check-pattern",
         "<NAME|FILE.fxpat>",
         "equivalence check: instantiate the pattern on random shapes, apply the replacement, compare outputs "
         "(counterexamples)",
         {"--trials", "--seed", "--device", "--pattern-dir"},
         cmdCheckPattern,
         Command::Exec::Always},
        {"export-pattern",
         "<NAME|FILE.fxpat>",
         "the pattern as Python pattern/replacement functions for torch.fx.subgraph_rewriter.replace_pattern",
         {"-o", "--pattern-dir"},
         cmdExportPattern},
        {"patterns",
         "[NAME]",
         "list the built-in patterns; with NAME, one pattern in full (anchors, IR level, and its pattern graph when it "
         "is data)",
         {"--pattern-dir"},
         cmdPatterns},
        {"doctor", "", "what this build can do (Graphviz, LibTorch, CUDA)", {}, cmdDoctor, Command::Exec::Always},
    };
    return table;
}

const Command *findCommand(const std::string &name)
{
    for (const Command &c : commands())
        if (name == c.name)
            return &c;
    return nullptr;
}

} // namespace fxlens::cli
