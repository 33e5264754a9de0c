// SPDX-License-Identifier: MIT
// libFuzzer target for the safetensors reader: any bytes read as tensors whose data fits their
// shapes, or give a diagnostic; what reads also writes and reads back equal.
#include "FuzzUtil.h"
#include "io/Safetensors.h"

#include <cstdlib>

using namespace fxlens;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::TempFile f(data, size, ".safetensors");
    auto r = io::readSafetensors(f.path);
    if (!r)
        return r.error().message.empty() ? (std::abort(), 0) : 0;
    const std::string out = f.path + ".out";
    if (!io::writeSafetensors(r.value(), out))
        std::abort();
    auto again = io::readSafetensors(out);
    std::remove(out.c_str());
    if (!again || again.value().size() != r.value().size())
        std::abort();
    for (const auto &[name, t] : r.value())
        if (again.value().at(name).data != t.data || again.value().at(name).shape != t.shape)
            std::abort();
    return 0;
}
