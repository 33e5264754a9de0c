// SPDX-License-Identifier: MIT
// profile --compiled: each version compiled by Inductor and profiled by the Python companion
// (python -m fxlens.compiled, run by the Python of FXLENS_PYTHON, else python3), its kernels
// attributed to the version's FX nodes by Inductor's provenance records. Needs no LibTorch here.
#include "Cli.h"

#include "io/GraphJson.h"
#include "ir/GraphInfo.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fxlens::cli {

namespace {

namespace fs = std::filesystem;

/// Exit status of the launcher when torch or the companion does not import (the module's name on stderr).
constexpr int kMissingModule = 97;

/// Imports first, so that a Python without torch or without the companion says which is missing.
const char *kLauncher = "import sys\n"
                        "try:\n"
                        "    import torch\n"
                        "    import fxlens.compiled as c\n"
                        "except ImportError as e:\n"
                        "    print(e.name or str(e), file=sys.stderr)\n"
                        "    sys.exit(97)\n"
                        "sys.exit(c.main(sys.argv[1:]))\n";

std::string companionPython()
{
    const char *env = std::getenv("FXLENS_PYTHON");
    return env && *env ? env : "python3";
}

/// Runs the companion on one graph file; "" or why it failed.
std::string runCompanion(const std::string &python, const std::vector<std::string> &args, const fs::path &errFile)
{
    std::vector<std::string> all = {python, "-c", kLauncher};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv = argvOf(all);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return "cannot run Python '" + python + "': set FXLENS_PYTHON to a Python with torch and the fxlens companion";
    int status = 0;
    waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code == 0)
        return "";
    auto err = io::readTextFile(errFile.string());
    std::string text = err ? err.value() : "";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    if (code == kMissingModule) {
        const bool torch = text.rfind("torch", 0) == 0;
        return "the Python '" + python + "' cannot import " +
            (torch ? "torch: install PyTorch into it"
                   : "the fxlens companion (" + text + "): pip install -e python/ (the companion package)") +
            ", or set FXLENS_PYTHON to a Python that has " + (torch ? "it" : "both");
    }
    const auto last = text.rfind('\n');
    if (last != std::string::npos) { // the companion's message above its one-line gist (at most 20 lines)
        size_t from = last;
        for (int lines = 0; from != std::string::npos && from > 0 && lines < 20; ++lines)
            from = text.rfind('\n', from - 1);
        std::cerr << text.substr(from == std::string::npos ? 0 : from + 1, last - (from == std::string::npos ? 0 : from + 1)) << "\n";
    }
    return "the compiled run failed (exit " + std::to_string(code) + "): " + (last == std::string::npos ? text : text.substr(last + 1));
}

std::vector<prof::NodeInfo> nodeInfos(const ir::Graph &g)
{
    std::vector<prof::NodeInfo> nodes;
    for (const ir::Node *n = g.first(); n; n = n->next())
        nodes.push_back({n->name(), ir::opKindName(n->op()), n->target(), n->meta().modulePath()});
    return nodes;
}

/// Share of the busy time whose kernels name FX nodes, as `profile --compiled` reports it.
void printAttribution(const prof::Profile &p)
{
    double busy = 0, attributed = 0;
    size_t missing = 0;
    for (const auto &k : p.kernels) {
        busy += k.durUs;
        attributed += k.nodes.empty() ? 0 : k.durUs;
        missing += k.nodes.empty();
    }
    std::printf("compiled (%s, %s): %zu kernels in %d iterations; attributed %.1f of %.1f us busy (%.1f%%); %zu unattributed\n",
                p.backend.c_str(), p.device.c_str(), p.kernels.size(), p.iterations, attributed, busy,
                busy > 0 ? 100.0 * attributed / busy : 100.0, missing);
    for (const auto &k : p.kernels)
        if (k.nodes.empty() && k.iteration == 0)
            std::printf("  unattributed: %s: %s\n", k.name.c_str(), k.reason.c_str());
    if (!p.postGradGraph.empty())
        std::printf("post-grad graph: %s (%zu of its nodes traced to FX nodes)\n", p.postGradGraph.c_str(), p.postGradNodes.size());
}

/// Where profile `i` of `count` keeps its post-grad graph: beside the file it is saved in
/// (`P.json` -> `P.post_grad.json`, `P.2.post_grad.json` for version 2 of a set); "" when it is
/// saved nowhere.
std::string postGradPathFor(const Args &a, size_t i, size_t count)
{
    const bool set = count > 2 || !a.versions.empty();
    auto beside = [](std::string f, const std::string &tag) {
        for (const char *ext : {".gz", ".json"})
            if (f.size() > std::strlen(ext) && f.compare(f.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
                f.resize(f.size() - std::strlen(ext));
        return f + tag + ".post_grad.json";
    };
    if (i == 1 && !set && !a.compareOutput.empty())
        return beside(a.compareOutput, "");
    if (!a.output.empty() && (set || i == 0))
        return beside(a.output, set ? "." + std::to_string(i) : "");
    return "";
}

/// Copies the run's post-grad graph to where the profile keeps it (postGradPathFor); the profile
/// names it there, or none when it is saved nowhere. "" or why it could not be written.
std::string keepPostGrad(prof::Profile &p, const std::string &dest)
{
    const std::string from = p.postGradGraph;
    p.postGradGraph.clear();
    if (from.empty() || dest.empty())
        return "";
    auto text = io::readTextFile(from);
    if (!text)
        return "the companion wrote no post-grad graph: " + text.error().message;
    if (auto w = io::writeTextFile(dest, text.value()); !w)
        return "cannot write the post-grad graph '" + dest + "': " + w.error().message;
    p.postGradGraph = dest;
    return "";
}

} // namespace

int profileCompiled(const Args &a, std::vector<std::unique_ptr<ir::Graph>> &graphs, const std::vector<std::string> &sources,
                    std::vector<prof::Profile> &profiles, const std::vector<std::pair<std::string, int>> &labels)
{
    const std::string python = companionPython();
    std::error_code ec;
    const fs::path dir = fs::temp_directory_path() / ("fxlens-compiled-" + std::to_string(getpid()));
    fs::create_directories(dir, ec);
    // POSIX calls rather than std::filesystem::remove_all, which LibTorch's copy of libstdc++'s
    // filesystem interposes (it crashes when this binary links LibTorch).
    struct Cleanup {
        fs::path d;
        ~Cleanup()
        {
            if (DIR *h = opendir(d.c_str())) {
                while (const dirent *e = readdir(h))
                    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
                        unlink((d / e->d_name).c_str());
                closedir(h);
            }
            rmdir(d.c_str());
        }
    } cleanup{dir};
    for (size_t i = 0, gi = 0; i < profiles.size(); ++i) {
        if (!profiles[i].mode.empty())
            continue;
        const ir::Graph &g = *graphs[gi];
        const fs::path graphFile = dir / ("version" + std::to_string(gi) + ".json"), runFile = dir / "run.json";
        if (auto w = io::writeGraphFile(g, graphFile.string()); !w) {
            std::cerr << "fxlens-cli profile: " << w.error().toString() << "\n";
            return kFailed;
        }
        if (const fs::path in = fs::absolute(sources[gi], ec).parent_path() / g.inputsFile; !g.inputsFile.empty() && !fs::exists(in, ec)) {
            std::cerr << "fxlens-cli profile --compiled: " << sources[gi] << ": names example inputs '" << g.inputsFile
                      << "', which are not beside it (remove \"inputs\" from the graph file to profile with inputs of the "
                         "recorded shapes)\n";
            return kFailed;
        }
        copySideFiles(g, sources[gi], graphFile.string());
        std::vector<std::string> args = {graphFile.string(),       "--device", a.deviceGiven ? a.device : "cpu", "--warmup",
                                         std::to_string(a.warmup), "--iters",  std::to_string(a.iters),          "-o",
                                         runFile.string()};
        if (!a.postGrad.empty()) {
            std::string paths; // absolute, since the companion runs on a copy of the graph elsewhere
            for (size_t from = 0; from <= a.postGrad.size();) {
                const size_t comma = std::min(a.postGrad.find(',', from), a.postGrad.size());
                if (comma > from)
                    paths += (paths.empty() ? "" : ",") + fs::absolute(a.postGrad.substr(from, comma - from), ec).string();
                from = comma + 1;
            }
            args.insert(args.end(), {"--post-grad", paths});
        }
        const std::string why = runCompanion(python, args, dir / "stderr.txt");
        if (!why.empty()) {
            std::cerr << "fxlens-cli profile --compiled: " << sources[gi] << ": " << why << "\n";
            return kFailed;
        }
        auto p = prof::readCompiledRun(runFile.string(), nodeInfos(g));
        if (!p) {
            std::cerr << "fxlens-cli profile --compiled: " << p.error().toString() << "\n";
            return kFailed;
        }
        p.value().graph = fs::path(sources[gi]).filename().string();
        p.value().graphHash = ir::fingerprintHex(g);
        p.value().version = labels.size() > gi ? labels[gi].first
            : a.optimize && i == 1             ? "optimized (" + (a.patterns.empty() ? a.preset : a.patterns) + ")"
            : profiles.size() > 1              ? (i == 0 ? "A" : "B")
                                               : "";
        p.value().versionId = labels.size() > gi ? labels[gi].second : int(i);
        if (const std::string err = keepPostGrad(p.value(), postGradPathFor(a, i, profiles.size())); !err.empty()) {
            std::cerr << "fxlens-cli profile --compiled: " << err << "\n";
            return kFailed;
        }
        printAttribution(p.value());
        profiles[i] = std::move(p.value());
        ++gi;
    }
    return kOk;
}

} // namespace fxlens::cli
