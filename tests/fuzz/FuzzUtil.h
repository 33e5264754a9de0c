// SPDX-License-Identifier: MIT
// Shared by the libFuzzer targets: bytes to a temporary file (for readers that take a path).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace fxlens::fuzz {

/// A file holding `data`, removed when the object goes away.
struct TempFile {
    std::string path;
    TempFile(const uint8_t *data, size_t size, const char *suffix)
    {
        const char *dir = std::getenv("TMPDIR");
        path = std::string(dir && *dir ? dir : "/tmp") + "/fxlens-fuzz-" + std::to_string(getpid()) + suffix;
        FILE *f = std::fopen(path.c_str(), "wb");
        if (!f)
            std::abort();
        if (size)
            std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    ~TempFile() { std::remove(path.c_str()); }
};

} // namespace fxlens::fuzz
