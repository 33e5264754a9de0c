// SPDX-License-Identifier: MIT
// libFuzzer target for the graph reader: any bytes, as JSON text and as a file (plain or gzip, the
// reader decides by content), must come back as a graph or as a diagnostic naming the file, never as
// a crash, a hang or a sanitizer report. A graph that loads also lints, prints, writes and reads back.
#include "FuzzUtil.h"
#include "io/DotWriter.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"

#include <cstdlib>

using namespace fxlens;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const bool once = [] {
        io::readLimits().maxTextBytes = 4 << 20; // keep one input small: a gzip bomb stops at 4 MiB
        io::readLimits().maxNodes = 100000;
        return true;
    }();
    (void)once;
    fuzz::TempFile f(data, size, ".json");
    auto r = io::readGraphFile(f.path);
    if (!r) {
        if (r.error().file != f.path || r.error().message.empty())
            std::abort(); // every diagnostic names the file and says what is wrong
        return 0;
    }
    ir::Graph &g = *r.value();
    (void)g.lint();
    (void)ir::printGraph(g, {});
    (void)io::writeDot(g);
    const std::string text = io::writeGraphJson(g);
    auto again = io::parseGraphJson(text, "again.json");
    if (!again)
        std::abort(); // what fxlens writes, fxlens reads
    return 0;
}
