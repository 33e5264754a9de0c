// SPDX-License-Identifier: MIT
// Where the apps (fxlens, fxlens-cli) find the pattern files that ship with fxlens: process policy,
// kept out of the libraries.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fxlens::app {

/// $FXLENS_PATTERN_DIR, else the source tree's patterns/ (a build tree), else
/// <prefix>/share/fxlens/patterns next to the installed binary.
inline std::string defaultPatternDir()
{
    if (const char *env = std::getenv("FXLENS_PATTERN_DIR"); env && *env)
        return env;
    std::error_code ec;
    if (std::filesystem::is_directory(FXLENS_SOURCE_PATTERN_DIR, ec))
        return FXLENS_SOURCE_PATTERN_DIR;
    // Installed: <prefix>/bin/fxlens-cli -> <prefix>/share/fxlens/patterns
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return (exe.parent_path().parent_path() / "share" / "fxlens" / "patterns").string();
}

} // namespace fxlens::app
