// SPDX-License-Identifier: MIT
// Reading and writing the fxlens graph file format (docs/FORMAT.md).
#pragma once

#include <cstdint>

#include "ir/Graph.h"
#include "util/Diagnostic.h"

#include <memory>
#include <string>

namespace fxlens::io {

/// The schema version this build writes and reads.
constexpr int kFormatVersion = 1;
constexpr const char *kFormatName = "fxlens-graph";

/// Bounds on what a reader accepts, so that a hostile or broken file gets a message instead of
/// exhausting memory: the file, the decompressed text (gzip bombs: also a ratio bound past 64 MiB),
/// nodes per graph and characters per string.
struct ReadLimits {
    uint64_t maxFileBytes = uint64_t(4) << 30;
    uint64_t maxTextBytes = uint64_t(8) << 30;
    uint64_t maxGzipRatio = 1000; ///< decompressed / compressed, checked past 64 MiB of text
    size_t maxNodes = 20'000'000;
    size_t maxStringBytes = size_t(1) << 20;
};
/// The limits every reader uses (process-wide; tests lower them).
ReadLimits &readLimits();

/// Parses a graph from JSON text. `fileName` is only used in diagnostics. On failure the
/// diagnostic names the file, line and column (malformed JSON) or the node (bad content).
Result<std::unique_ptr<ir::Graph>> parseGraphJson(const std::string &text, const std::string &fileName);
/// Reads a whole file, transparently decompressing gzip (*.gz) files.
Result<std::string> readTextFile(const std::string &path);
/// Reads a graph file from disk (plain or gzip-compressed JSON).
Result<std::unique_ptr<ir::Graph>> readGraphFile(const std::string &path);

/// Serializes a graph: one node per line, so files diff well and line numbers point at nodes.
std::string writeGraphJson(const ir::Graph &g);
/// Writes text atomically, gzip-compressed when the path ends in .gz (writeFileAtomic's diagnostic).
Status writeTextFile(const std::string &path, std::string text);
/// Writes a graph file (gzip-compressed when the path ends in .gz).
Status writeGraphFile(const ir::Graph &g, const std::string &path);

} // namespace fxlens::io
