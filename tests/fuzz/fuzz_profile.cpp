// SPDX-License-Identifier: MIT
// libFuzzer target for saved profiles and raw events: any bytes must read as a profile or give a
// diagnostic; a profile that reads also formats and writes its Chrome trace (alone and as an A/B).
#include "FuzzUtil.h"
#include "profile/Profile.h"

#include <cstdlib>

using namespace fxlens;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::TempFile f(data, size, ".prof.json");
    auto r = prof::readProfile(f.path);
    if (r) {
        (void)prof::formatProfile(r.value());
        const std::string trace = f.path + ".trace.json";
        (void)prof::writeChromeTrace({&r.value()}, trace);
        (void)prof::writeChromeTrace({&r.value(), &r.value()}, trace);
        std::remove(trace.c_str());
    } else if (r.error().message.empty()) {
        std::abort();
    }
    auto raw = prof::readRawEvents(f.path);
    if (raw) {
        auto p = prof::buildProfile(raw.value().first, raw.value().second, "cuda");
        (void)prof::formatProfile(p);
    }
    return 0;
}
