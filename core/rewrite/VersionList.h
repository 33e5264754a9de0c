// SPDX-License-Identifier: MIT
// Version lists: which versions of a rewrite history to look at (profile them, compare them), as
// users write them on the command line and in the app: "0,5,last", "0-10", "all", "spread:10".
#pragma once

#include "util/Diagnostic.h"

#include <string>
#include <vector>

namespace fxlens::rewrite {

/// Parses a comma-separated list over versions 0..latest: a number, "last" (= latest), "current"
/// (= `current`), "a-b" (a range, either end may be "last"), "all", or "spread:N" (N versions
/// evenly spaced from 0 to latest, both included). The result is sorted and without duplicates;
/// a version past `latest` or a word it does not know is an error that quotes it.
Result<std::vector<size_t>> parseVersionList(const std::string &text, size_t latest, size_t current = 0);

} // namespace fxlens::rewrite
