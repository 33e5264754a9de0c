// SPDX-License-Identifier: MIT
// libFuzzer target for the pattern language: any byte string goes through the lexer, the parser
// and the compiler, and must come back as a pattern or as a diagnostic with a position inside the
// input, never as a crash, a hang or a sanitizer report. A pattern that compiles is also evaluated:
// spelled out as a graph (its own instance) and applied there in checked mode, so that constraints and
// replacements run (bounded: steps, list sizes, checked arithmetic).
#include "lang/PatternLang.h"
#include "rewrite/Session.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string src(reinterpret_cast<const char *>(data), size);
    auto r = fxlens::lang::compilePattern(src, "fuzz.fxpat");
    if (r) {
        // A compiled pattern also renders and exports.
        (void)r.value()->graph.toString();
        (void)fxlens::lang::exportPython(*r.value());
        std::string why, desc;
        if (auto g = fxlens::lang::instantiate(*r.value(), size, why, desc)) {
            fxlens::rewrite::SessionConfig cfg;
            cfg.checked = true;
            cfg.maxSteps = 20;
            fxlens::rewrite::Session s(*g, {r.value().get()}, cfg);
            s.run();
        }
        return 0;
    }
    const auto &d = r.error();
    if (d.line < 1 || d.column < 1 || d.message.empty())
        std::abort(); // every diagnostic names a position and says what is wrong
    (void)fxlens::lang::renderDiagnostic(d, src);
    return 0;
}
