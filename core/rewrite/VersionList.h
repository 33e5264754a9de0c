// SPDX-License-Identifier: MIT
// Version lists: which versions of a rewrite history to look at (profile them, compare them), as
// users write them on the command line and in the app: "0,5,last", "0-10", "all", "spread:10".
#pragma once

#include "rewrite/Session.h"
#include "util/Diagnostic.h"

#include <memory>
#include <string>
#include <vector>

namespace fxlens::rewrite {

/// Parses a comma-separated list over versions 0..latest: a number, "last" (= latest), "current"
/// (= `current`), "a-b" (a range, either end may be "last"), "all", or "spread:N" (N versions
/// evenly spaced from 0 to latest, both included). The result is sorted and without duplicates;
/// a version past `latest` or a word it does not know is an error that quotes it.
Result<std::vector<size_t>> parseVersionList(const std::string &text, size_t latest, size_t current = 0);

/// "original", or "step 12 (merge_splits @ split_2)": version `v` of a history, as profiles and
/// comparisons label it.
std::string versionLabel(const std::vector<Step> &history, size_t v);

struct VersionCopy {
    size_t version = 0;
    std::string label;
    std::unique_ptr<ir::Graph> graph;
};

/// Copies of the session's graph at each of `versions` (checked out in turn by undo/redo; the
/// session goes back to the version it was at). What profiling and comparing versions work on, in
/// the CLI and the app. Empty when a version is past the history.
std::vector<VersionCopy> copyVersions(Session &s, const std::vector<size_t> &versions);

} // namespace fxlens::rewrite
