// SPDX-License-Identifier: MIT
// The window's services as the app gives them (app/gui/AppServices.h), for view tests: the source
// tree's pattern files, and the executor's step check and profiler when the build has LibTorch.
#pragma once

#include "AppServices.h"

inline fxlens::views::Services testServices() { return fxlens::app::appServices(FXLENS_PATTERN_SOURCE_DIR); }
