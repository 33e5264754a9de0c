// SPDX-License-Identifier: MIT
// Built-in vertical patterns (split/cat/stack/unbind elimination) and normalizations.
#pragma once

#include "rewrite/Pattern.h"

#include <string>

namespace fxlens::patterns {

/// Registers every built-in pattern: the C++ ones (normalizations, vertical, ATen, horizontal) and
/// the pattern files of builtinPatternDir(). Returns an error (duplicate name, a pattern file that
/// does not compile) or "".
std::string registerVerticalPatterns(rewrite::PatternRegistry &registry);

/// Where the built-in pattern files are: $FXLENS_PATTERN_DIR, else the source tree's patterns/,
/// else <prefix>/share/fxlens/patterns next to the installed binary.
std::string builtinPatternDir();

} // namespace fxlens::patterns
