// SPDX-License-Identifier: MIT
// Shape rules for the nodes a replacement creates (pattern files, built-in rewrites).
#pragma once

#include "ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace fxlens::rewrite {

/// Sets the meta of `n` from its inputs' static shapes for the ops replacements usually create
/// (elementwise, views, cat/stack, split/unbind, reductions). Unknown ops keep no meta (later
/// patterns that need shapes then do not match them), never a wrong one.
void inferMeta(ir::Node *n);

/// An int or a list of ints; nullopt for anything else (or no argument).
std::optional<std::vector<int64_t>> intsArg(const ir::Argument *a);

/// The op name without namespace and overload: "aten.unsqueeze.default" -> "unsqueeze".
std::string baseOp(const ir::Node *n);

} // namespace fxlens::rewrite
