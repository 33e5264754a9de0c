// SPDX-License-Identifier: MIT
// Module ranges: sibling modules that differ only by their index ("blocks.0" … "blocks.49") named
// as one range ("blocks.0–49"). A rewrite that batches the same op of many blocks into one node
// records the range as that node's module, so it is not attributed to the first block alone.
#pragma once

#include "ir/Meta.h"

#include <string>
#include <vector>

namespace fxlens::ir {

class Node;

/// The index of a path's last component ("blocks.7" -> 7), -1 when it is not a number.
long moduleIndex(const std::string &path);
/// The path without its last component ("blocks.7" -> "blocks"; "7" -> "").
std::string moduleParent(const std::string &path);

/// "blocks.0–49" for blocks.0 … blocks.49; "blocks.0–3,7" when the indices have gaps. Paths that
/// are not `parent.<index>` are skipped; "" when none is.
std::string rangeLabel(const std::string &parent, const std::vector<std::string> &members);

/// Whether `path` is one of the modules range `range` names ("blocks.7" of "blocks.0–49" or of
/// "blocks.0–3,7"); false when `range` is no range.
bool rangeContains(const std::string &range, const std::string &path);

/// The module chain of a node that stands in for `replaced` when they come from several sibling
/// modules of one class (blocks.0 … blocks.49): the frames all share, then one frame named for the
/// range ("blocks.0–49", and "blocks.0–49.linear" below it when each was in its block's `linear`).
/// Nodes of different modules that are not numbered siblings (a fused Q/K/V projection of
/// attention.self's query, key and value) go to the frames they share (attention.self). Nothing
/// (an empty optional) when they share their whole chain, share no frame, or fewer than two of
/// them ran in a module.
std::optional<std::vector<ModuleFrame>> rangeModuleStack(const std::vector<const Node *> &replaced);

} // namespace fxlens::ir
