// SPDX-License-Identifier: MIT
// fxlens-cli without LibTorch: the commands that run graphs go to fxlens-cli-exec beside it (the
// same program with the executor, built from ExecCommands.cpp), or, in a build without LibTorch,
// say that they cannot run.
#include "Cli.h"

#include <filesystem>
#include <iostream>

#include <unistd.h>

namespace fxlens::cli {

namespace {

int noTorch(const std::string &cmd, const char *what)
{
    std::cerr << executorMissing(cmd) << "; " << what << "\n";
    return kFailed;
}

} // namespace

std::string executorMissing(const std::string &command)
{
    return "fxlens-cli " + command + ": this build has no LibTorch (no fxlens-cli-exec beside fxlens-cli; configure with torch's " +
        "CMAKE_PREFIX_PATH)";
}

namespace {

/// The commands and options that run graphs (or report on the executor, as doctor does).
bool needsExecutor(const Args &a)
{
    const Command *c = findCommand(a.command);
    if (!c)
        return false;
    return c->exec == Command::Exec::Always ||
        (c->exec == Command::Exec::ForRunOptions && (a.verify || a.verifyEach || a.freeze || !a.libraries.empty()));
}

} // namespace

void runInExecutor(char **argv, const Args &a)
{
    if (!needsExecutor(a))
        return;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return;
    const std::string exec = (self.parent_path() / "fxlens-cli-exec").string();
    if (::access(exec.c_str(), X_OK) != 0)
        return;
    ::execv(exec.c_str(), argv);
    std::cerr << "fxlens-cli " << a.command << ": could not start " << exec << "\n"; // the message below follows
}

int cmdRun(const Args &) { return noTorch("run", "running graphs needs the executor"); }
int cmdVerify(const Args &) { return noTorch("verify", "comparing graphs needs the executor"); }
int cmdCheckPattern(const Args &) { return noTorch("check-pattern", "the equivalence check runs on LibTorch"); }

std::function<std::string(const ir::Graph &)> stepVerifier(const ir::Graph &, const Args &, std::string &err)
{
    err = "this build has no LibTorch";
    return nullptr;
}

int verifyResult(const ir::Graph &, const ir::Graph &, const Args &) { return noTorch("optimize", "--verify needs the executor"); }

int writeFrozen(const Args &, const ir::Graph &, const std::string &) { return noTorch("optimize", "--freeze needs the executor"); }

int profileGraphs(const Args &, std::vector<std::unique_ptr<ir::Graph>> &, const std::vector<std::string> &, std::vector<prof::Profile> &,
                  const std::vector<std::pair<std::string, int>> &)
{
    return noTorch("profile", "it can only open saved profiles");
}

std::unique_ptr<rewrite::CostModel> tuneCostModel(const ir::Graph &, const Args &, std::string &, std::string &err)
{
    err = executorMissing("tune") + "; tune measures versions on the executor";
    return nullptr;
}

int cmdMeasureWorker(const Args &) { return noTorch("measure-worker", "measuring versions needs the executor"); }

std::string executorReport() { return "LibTorch: no (built without; execution, verification and profiling are unavailable)\n"; }

} // namespace fxlens::cli
