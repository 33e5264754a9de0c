// SPDX-License-Identifier: MIT
// A build without LibTorch: the commands that run graphs say so (CMake compiles this file instead
// of ExecCommands.cpp).
#include "Cli.h"

#include <iostream>

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
    return "fxlens-cli " + command + ": this build has no LibTorch (configure with torch's CMAKE_PREFIX_PATH)";
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
