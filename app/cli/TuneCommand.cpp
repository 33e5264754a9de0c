// SPDX-License-Identifier: MIT
// fxlens-cli tune: the search of rewrite/Tune.h with the executor's cost model (MeasureExec.cpp),
// its trace as JSON and its report as one HTML page (report/TuneReport.h); and the pool of measuring
// worker processes (`fxlens-cli measure-worker`, one per device) that tune --devices uses.
#include "Cli.h"

#include "io/GraphJson.h"
#include "report/TuneReport.h"
#include "util/Text.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fxlens::cli {

namespace {

std::string jsonTrace(const rewrite::TuneResult &r, const std::string &graphFile, const std::string &note)
{
    std::ostringstream o;
    o << "{\"format\":\"fxlens-tune-trace\",\"version\":1,\"graph\":\"" << escapeQuoted(graphFile) << "\",\"measured\":\""
      << escapeQuoted(note) << "\",\"band_s\":" << r.band << ",\"seconds\":" << r.seconds
      << ",\"budget_reached\":" << (r.budgetReached ? "true" : "false") << ",\"original_s\":" << r.original.seconds
      << ",\"greedy_s\":" << r.greedy.seconds << ",\"tuned_s\":" << r.tuned.seconds << ",\"plan\":\"" << escapeQuoted(r.best.describe())
      << "\",\n\"trials\":[\n";
    for (size_t i = 0; i < r.trials.size(); ++i) {
        const auto &t = r.trials[i];
        o << (i ? ",\n" : "") << "{\"index\":" << t.index << ",\"kind\":\"" << t.kind << "\",\"decision\":\"" << escapeQuoted(t.decision)
          << "\",\"version\":\"" << escapeQuoted(t.plan.describe()) << "\",\"seconds\":" << t.seconds << ",\"spread\":" << t.spread
          << ",\"nodes\":" << t.nodes << ",\"steps\":" << t.steps << ",\"accepted\":" << (t.accepted ? "true" : "false");
        if (!t.dropped.empty())
            o << ",\"left_out\":\"" << escapeQuoted(t.dropped) << "\",\"delta_s\":" << t.baseSeconds - t.seconds;
        if (!t.error.empty())
            o << ",\"error\":\"" << escapeQuoted(t.error) << "\"";
        o << "}";
    }
    o << "\n],\n\"left_out\":[";
    for (size_t i = 0; i < r.leftOut.size(); ++i)
        o << (i ? "," : "") << "{\"what\":\"" << escapeQuoted(r.leftOut[i].what) << "\",\"steps\":" << r.leftOut[i].steps
          << ",\"cost_s\":" << r.leftOut[i].deltaSeconds << "}";
    o << "]}\n";
    return o.str();
}

void printSummary(const rewrite::TuneResult &r, size_t originalNodes)
{
    size_t greedyNodes = 0;
    for (const auto &t : r.trials)
        if (t.kind == "greedy")
            greedyNodes = t.nodes;
    std::printf("%-9s %12s %7s %7s\n", "version", "time", "nodes", "steps");
    std::printf("%-9s %9.3f ms %7zu %7d\n", "original", r.original.seconds * 1e3, originalNodes, 0);
    std::printf("%-9s %9.3f ms %7zu %7zu\n", "greedy", r.greedy.seconds * 1e3, greedyNodes, r.greedySteps);
    std::printf("%-9s %9.3f ms %7zu %7zu\n", "tuned", r.tuned.seconds * 1e3, r.graph ? r.graph->size() : 0, r.steps.size());
    std::printf("plan: %s\nnoise band: %.3f ms; %zu measurement(s) in %.1f s%s\n", r.best.describe().c_str(), r.band * 1e3, r.trials.size(),
                r.seconds, r.budgetReached ? " (budget reached)" : "");
    for (const auto &l : r.leftOut)
        std::printf("left out: %s (%zu step(s)): keeping it cost %+.3f ms\n", l.what.c_str(), l.steps, l.deltaSeconds * 1e3);
}

} // namespace

int cmdTune(const Args &a)
{
    rewrite::PatternRegistry reg;
    std::string err;
    if (!loadPatterns(a, reg, "tune"))
        return kFailed;
    auto selected = a.patterns.empty() ? reg.preset(a.preset, err) : reg.byNames(a.patterns, err);
    if (!err.empty()) {
        std::cerr << "fxlens-cli tune: " << err << " (see `fxlens-cli patterns`)\n";
        return kUsage;
    }
    int code = kOk;
    auto g = load(a, code);
    if (!g)
        return code;
    if (auto errors = g->lint(); !errors.empty()) {
        for (const auto &e : errors)
            std::cerr << a.positional[0] << ": error: " << e.toString() << "\n";
        std::cerr << "fxlens-cli tune: the input fails lint (" << errors.size() << " error(s)); nothing tuned\n";
        return kBadInput;
    }
    // The graph and the patterns are checked first: a bad file says so in any build.
    if (const std::string missing = executorMissing("tune"); !missing.empty()) {
        std::cerr << missing << "; tune measures versions on the executor\n";
        return kFailed;
    }
    std::string note;
    auto cost = tuneCostModel(*g, a, note, err);
    if (!cost) {
        std::cerr << "fxlens-cli tune: " << err << "\n";
        return kFailed;
    }
    rewrite::TuneConfig cfg;
    cfg.budgetSeconds = a.budget;
    cfg.checked = a.checked;
    cfg.onTrial = [](const rewrite::TuneTrial &t) {
        if (t.error.empty())
            std::fprintf(stderr, "[%zu] %-8s %9.3f ms %s%s\n", t.index, t.kind.c_str(), t.seconds * 1e3, t.decision.c_str(),
                         t.accepted ? "  (taken)" : "");
        else
            std::fprintf(stderr, "[%zu] %-8s failed: %s (%s)\n", t.index, t.kind.c_str(), t.error.c_str(), t.decision.c_str());
    };
    rewrite::TuneResult r = rewrite::tune(*g, selected, *cost, cfg);
    if (!r.error.empty()) {
        std::cerr << a.positional[0] << ": fxlens-cli tune: " << r.error << "\n";
        return kFailed;
    }
    printSummary(r, g->size());
    if (!a.output.empty()) {
        if (auto w = io::writeGraphFile(*r.graph, a.output); !w) {
            std::cerr << "fxlens-cli tune: " << w.error().toString() << "\n";
            return kFailed;
        }
        copySideFiles(*r.graph, a.positional[0], a.output);
    }
    if (!a.trace.empty())
        if (auto w = io::writeTextFile(a.trace, jsonTrace(r, a.positional[0], note)); !w) {
            std::cerr << "fxlens-cli tune: " << w.error().toString() << "\n";
            return kFailed;
        }
    if (!a.report.empty())
        if (auto w = io::writeTextFile(a.report, report::tuneReportHtml(*g, r, {a.positional[0], a.device, note})); !w) {
            std::cerr << "fxlens-cli tune: " << w.error().toString() << "\n";
            return kFailed;
        }
    return kOk;
}

// ------------------------------------------------------------------------------------------ workers

namespace workers {

/// One `fxlens-cli measure-worker` process: graph file names go in on its standard input, one JSON
/// line per measurement comes back on its standard output.
struct Worker {
    pid_t pid = -1;
    FILE *in = nullptr, *out = nullptr;
    std::string device;
};

/// Reads `"key":number` from a flat JSON line.
bool number(const std::string &line, const std::string &key, double &v)
{
    auto p = line.find("\"" + key + "\":");
    if (p == std::string::npos)
        return false;
    v = std::strtod(line.c_str() + p + key.size() + 3, nullptr);
    return true;
}

} // namespace workers

using workers::Worker;

/// Spreads the versions of one measure() call over its workers (one version per worker at a time)
/// and collects the answers in order.
class WorkerPool : public rewrite::CostModel {
public:
    ~WorkerPool() override
    {
        for (auto &w : m_workers)
            if (w.in)
                std::fclose(w.in); // end of input: the worker exits
        for (auto &w : m_workers) {
            if (w.out)
                std::fclose(w.out);
            if (w.pid > 0)
                waitpid(w.pid, nullptr, 0);
        }
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }

    bool start(const std::vector<std::string> &argsBase, const std::vector<std::string> &devices, std::string &err)
    {
        m_dir = std::filesystem::temp_directory_path() / ("fxlens-tune-" + std::to_string(getpid()));
        std::filesystem::create_directories(m_dir);
        for (const auto &d : devices) {
            int toChild[2], fromChild[2];
            // Close-on-exec: a later worker must not inherit this one's pipe ends (its standard input
            // would never see end of file).
            if (pipe2(toChild, O_CLOEXEC) || pipe2(fromChild, O_CLOEXEC)) {
                err = "cannot create pipes for the workers";
                return false;
            }
            std::vector<std::string> args = argsBase;
            args.emplace_back("--device");
            args.push_back(d);
            std::vector<char *> argv = argvOf(args);
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_adddup2(&fa, toChild[0], 0);
            posix_spawn_file_actions_adddup2(&fa, fromChild[1], 1);
            posix_spawn_file_actions_addclose(&fa, toChild[1]);
            posix_spawn_file_actions_addclose(&fa, fromChild[0]);
            Worker w;
            w.device = d;
            int rc = posix_spawn(&w.pid, argv[0], &fa, nullptr, argv.data(), environ);
            posix_spawn_file_actions_destroy(&fa);
            close(toChild[0]);
            close(fromChild[1]);
            if (rc != 0) {
                err = "cannot start a measuring worker (" + args[0] + ")";
                return false;
            }
            w.in = fdopen(toChild[1], "w");
            w.out = fdopen(fromChild[0], "r");
            m_workers.push_back(w);
            std::string ready;
            if (!readLine(m_workers.back(), ready) || ready.find("\"ready\"") == std::string::npos) {
                err = "the worker on " + d + " did not start: " + (ready.empty() ? "it exited" : ready);
                return false;
            }
        }
        return true;
    }

    size_t parallelism() const override { return m_workers.size(); }

    std::vector<Result<rewrite::Measurement>> measure(const std::vector<const ir::Graph *> &versions) override
    {
        std::vector<Result<rewrite::Measurement>> out;
        for (size_t i = 0; i < versions.size(); i += m_workers.size()) {
            size_t n = std::min(m_workers.size(), versions.size() - i);
            for (size_t k = 0; k < n; ++k) {
                std::string file = (m_dir / ("v" + std::to_string(m_next++) + ".json")).string();
                Status w = io::writeGraphFile(*versions[i + k], file);
                std::fprintf(m_workers[k].in, "%s\n", w ? file.c_str() : "");
                std::fflush(m_workers[k].in);
            }
            for (size_t k = 0; k < n; ++k)
                out.push_back(answer(m_workers[k]));
        }
        return out;
    }

private:
    static bool readLine(Worker &w, std::string &line)
    {
        line.clear();
        int c;
        while ((c = std::fgetc(w.out)) != EOF && c != '\n')
            line += char(c);
        return c == '\n';
    }

    Result<rewrite::Measurement> answer(Worker &w)
    {
        std::string line;
        if (!readLine(w, line))
            return Diagnostic{Diagnostic::Severity::Error, "", 0, 0, "", "the worker on " + w.device + " exited"};
        if (auto p = line.find("\"error\":\""); p != std::string::npos)
            return Diagnostic{Diagnostic::Severity::Error, "", 0, 0, "", line.substr(p + 9, line.rfind('"') - p - 9)};
        rewrite::Measurement m;
        double runs = 0;
        workers::number(line, "seconds", m.seconds);
        workers::number(line, "spread", m.spread);
        workers::number(line, "runs", runs);
        m.runs = size_t(runs);
        m.note = w.device;
        return m;
    }

    std::vector<Worker> m_workers;
    std::filesystem::path m_dir;
    size_t m_next = 0;
};

std::unique_ptr<rewrite::CostModel> startWorkers(const Args &a, const std::vector<std::string> &devices, std::string &err)
{
    std::vector<std::string> base{std::filesystem::read_symlink("/proc/self/exe").string(),
                                  "measure-worker",
                                  a.positional[0],
                                  "--iters",
                                  std::to_string(a.iters),
                                  "--warmup",
                                  std::to_string(a.warmup),
                                  "--seed",
                                  std::to_string(a.seed)};
    if (a.freeze)
        base.emplace_back("--freeze");
    for (auto [flag, value] : {std::pair{"--inputs", a.inputs}, std::pair{"--weights", a.weights}})
        if (!value.empty()) {
            base.emplace_back(flag);
            base.push_back(value);
        }
    if (a.randomInputs)
        base.emplace_back("--random-inputs");
    for (const auto &l : a.libraries) {
        base.emplace_back("--load-library");
        base.push_back(l);
    }
    signal(SIGPIPE, SIG_IGN);
    auto pool = std::make_unique<WorkerPool>();
    if (!pool->start(base, devices, err))
        return nullptr;
    return pool;
}

} // namespace fxlens::cli
