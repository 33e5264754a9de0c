// SPDX-License-Identifier: MIT
// optimize: the greedy rewrite driver over a graph file, with checks, verification, a trace and
// frozen export.
#include "Cli.h"

#include "io/AtomicFile.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"
#include "rewrite/TraceRecorder.h"

#include <cstdio>
#include <iostream>

namespace fxlens::cli {

int refuseRandomFreeze(const Args &a, const std::string &why)
{
    std::cerr << a.positional[0] << ": error: --freeze: " << why
              << "; the frozen weights would be seeded random values. Pass the weights (--weights F, or export with "
                 "weights=True), or --random-weights to freeze random values (benchmarks)\n";
    return kBadInput;
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
    if (a.freeze || a.verify || a.verifyEach)
        if (const std::string missing = executorMissing("optimize"); !missing.empty()) {
            std::cerr << missing << (a.freeze ? "; --freeze" : "; --verify") << " needs the executor\n";
            return kFailed;
        }
    if (a.freeze && a.output.empty()) {
        std::cerr << "fxlens-cli optimize: --freeze needs -o OUT.json (the frozen weights are written next to it)\n";
        return kUsage;
    }
    if (a.randomWeights && !a.freeze) {
        std::cerr << "fxlens-cli optimize: --random-weights goes with --freeze\n";
        return kUsage;
    }
    auto g = load(a, code);
    if (!g)
        return code;
    if (a.freeze && g->weightsFile.empty() && a.weights.empty() && !a.randomWeights && !g->params.empty()) {
        // Refused before rewriting: the frozen weights would be seeded random values (writeFrozen
        // also refuses a weights file that lacks some).
        return refuseRandomFreeze(a, "the graph has no weights file");
    }
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
        original = g->clone();
        if (a.verifyEach) {
            std::string verr;
            cfg.verify = stepVerifier(*original, a, verr);
            if (!cfg.verify) {
                // The rewrites still run; their result is written, marked unverified, and the exit code says so.
                std::cerr << "fxlens-cli optimize: --verify-each: the input graph does not run: " << verr
                          << "; steps are applied unverified\n";
                code = kFailed;
            }
        }
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
    for (const auto &rb : r.rollbacks)
        std::fprintf(stderr, "fxlens-cli optimize: pattern '%s' at '%s' rolled back: %s\n", rb.pattern.c_str(), rb.anchor.c_str(),
                     rb.reason.c_str());
    auto lint = g->lint();
    if (!lint.empty()) {
        std::fprintf(stderr, "fxlens-cli optimize: result fails lint: %s\n", lint.front().toString().c_str());
        return kFailed;
    }
    if (a.verify && verifyResult(*original, *g, a) != kOk)
        code = kFailed; // the rewrite result is still written below: only its check failed
    if (!a.trace.empty()) {
        if (Status st = io::writeFileAtomic(a.trace, trace.toJson(session, r, g->name)); !st) {
            std::cerr << "fxlens-cli optimize: cannot write '" << a.trace << "': " << st.error().message << "\n";
            return kFailed;
        }
    }
    if (a.freeze) {
        copySideFiles(*g, a.positional[0], a.output); // the fold graph reads the original weights
        const int c = writeFrozen(a, *g, a.output);
        return c != kOk ? c : code;
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

} // namespace fxlens::cli
