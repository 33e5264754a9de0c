// SPDX-License-Identifier: MIT
// The built-in pattern library: the C++ pattern families and the pattern files that ship with
// fxlens. The apps choose the pattern-file directory (app/PatternDir.h); the library does not look
// at the process (environment, executable path).
#pragma once

#include "rewrite/Pattern.h"

#include <string>
#include <utility>
#include <vector>

namespace fxlens::patterns {

/// Registers every built-in pattern: the C++ families (normalizations, cleanup, split, stack, view,
/// ATen, horizontal, linear, embedding, view-chain), each pattern with the benefit of the benefit
/// table, then the pattern files (*.fxpat) of `patternDir` ("" for none). Returns an error
/// (duplicate name, a pattern missing from the table, a pattern file that does not compile) or "".
std::string registerBuiltinPatterns(rewrite::PatternRegistry &registry, const std::string &patternDir);

/// The benefit table: every built-in C++ pattern by name, highest benefit first. The driver tries
/// the patterns of an anchor in this order (ties in registration order). Pattern files set their own
/// benefit (`benefit = N`).
const std::vector<std::pair<const char *, int>> &benefitTable();
/// A C++ pattern's benefit from the table; -1 for a name it lacks.
int builtinBenefit(const std::string &name);

} // namespace fxlens::patterns
