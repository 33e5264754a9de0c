// SPDX-License-Identifier: MIT
// Outputs written atomically: the bytes go to a temporary file next to the target, are flushed to
// disk, and replace the target by rename(2). A crash, a kill or a full disk mid-write leaves the
// previous file as it was (and at worst a stray `.NAME.fxlens-tmp-*` file, never a truncated target).
#pragma once

#include "util/Diagnostic.h"

#include <string>
#include <string_view>

namespace fxlens::io {

/// Writes `data` to `path` atomically. On failure the diagnostic's file is `path` and its message
/// says what failed (without the path).
Status writeFileAtomic(const std::string &path, std::string_view data);

/// The temporary name writeFileAtomic uses for `path` in this process (for tests and cleanup).
std::string atomicTempPrefix(const std::string &path);

} // namespace fxlens::io
