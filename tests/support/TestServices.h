// SPDX-License-Identifier: MIT
// The window's services as the app gives them (app/gui/main.cpp), for view tests: the source tree's
// pattern files, and the executor's step check when the build has LibTorch.
#pragma once

#include "Services.h"

#ifdef FXLENS_HAVE_TORCH
#include "exec/Executor.h"
#endif

inline fxlens::views::Services testServices()
{
    fxlens::views::Services s;
    s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
#ifdef FXLENS_HAVE_TORCH
    s.makeVerifier = [](const fxlens::ir::Graph &original, std::string &error) {
        return fxlens::exec::makeStepVerifier(original, fxlens::exec::ExecOptions{}, error);
    };
#endif
    return s;
}
