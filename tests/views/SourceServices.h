// SPDX-License-Identifier: MIT
// The services the view tests open documents with: the source tree's pattern files, no executor.
#pragma once

#include "Services.h"

namespace fxlens::test {

inline views::Services sourceServices()
{
    views::Services s;
    s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
    return s;
}

} // namespace fxlens::test
