// SPDX-License-Identifier: MIT
// The executor's options from the command line (--device, --seed, --inputs, --weights, ...), for
// the commands that run graphs (ExecCommands.cpp, MeasureExec.cpp; builds with LibTorch only).
#pragma once

#include "Cli.h"
#include "exec/Executor.h"

namespace fxlens::cli {

/// `graphPath`'s folder resolves the graph's relative weights file.
exec::ExecOptions execOptions(const Args &a, const std::string &graphPath);

} // namespace fxlens::cli
