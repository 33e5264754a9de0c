// SPDX-License-Identifier: MIT
// GraphInfo: summary statistics of a graph (what `fxlens-cli info` and the status bar show).
#pragma once

#include "ir/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace fxlens::ir {

struct ModuleTreeEntry {
    std::string path; ///< "" = root
    std::string type;
    size_t depth = 0; ///< number of dots + 1 (root = 0)
    size_t nodes = 0; ///< nodes whose innermost module is this one or below
};

struct GraphInfo {
    size_t nodes = 0;
    size_t edges = 0;                        ///< (input, user) pairs
    std::map<std::string, size_t> byOp;      ///< op kind name -> count
    std::map<std::string, size_t> byTarget;  ///< "call_function torch.cat" -> count
    size_t depth = 0;                        ///< longest path, in nodes
    std::vector<ModuleTreeEntry> moduleTree; ///< sorted by path
    std::string session;                     ///< RecordedSession::summary() of a recorded session, "" when none
    std::string toString(size_t maxTargets = 30) const;
};

GraphInfo computeGraphInfo(const Graph &g);

/// The identity of one graph version: a 64-bit hash of every node as printed (name, op, target,
/// arguments, keywords) in program order. Two versions with the same fingerprint compute the same
/// program; a profile carries the fingerprint of the version it was recorded on.
uint64_t fingerprint(const Graph &g);
/// The fingerprint as 16 hex digits (what files carry).
std::string fingerprintHex(const Graph &g);

} // namespace fxlens::ir
