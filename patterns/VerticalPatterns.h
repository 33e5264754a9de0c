// SPDX-License-Identifier: MIT
// Built-in vertical patterns (split/cat/stack/unbind elimination) and normalizations.
#pragma once

#include "rewrite/Pattern.h"

#include <string>

namespace fxlens::patterns {

/// Registers normalize_split, normalize_cat, remove_split_with_size_one, merge_splits, split_cat,
/// cat_single and unbind_stack. Returns an error (duplicate name) or "".
std::string registerVerticalPatterns(rewrite::PatternRegistry &registry);

} // namespace fxlens::patterns
