// SPDX-License-Identifier: MIT
// Reading and writing the fxlens graph file format (docs/FORMAT.md).
#pragma once

#include "ir/Graph.h"
#include "util/Diagnostic.h"

#include <memory>
#include <string>

namespace fxlens::io {

/// The schema version this build writes and reads.
constexpr int kFormatVersion = 1;
constexpr const char *kFormatName = "fxlens-graph";

/// Parses a graph from JSON text. `fileName` is only used in diagnostics. On failure the
/// diagnostic names the file, line and column (malformed JSON) or the node (bad content).
Result<std::unique_ptr<ir::Graph>> parseGraphJson(const std::string &text, const std::string &fileName);
/// Reads a whole file, transparently decompressing gzip (*.gz) files.
Result<std::string> readTextFile(const std::string &path);
/// Reads a graph file from disk (plain or gzip-compressed JSON).
Result<std::unique_ptr<ir::Graph>> readGraphFile(const std::string &path);

/// Serializes a graph: one node per line, so files diff well and line numbers point at nodes.
std::string writeGraphJson(const ir::Graph &g);
/// Writes a graph file (gzip-compressed when the path ends in .gz).
Result<bool> writeGraphFile(const ir::Graph &g, const std::string &path);

} // namespace fxlens::io
