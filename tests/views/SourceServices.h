// SPDX-License-Identifier: MIT
// The services the view tests open documents with: the source tree's pattern files, no executor;
// and the window they open with the transformer example and a compiled profile of it.
#pragma once

#include "MainWindow.h"
#include "Services.h"

#include <QString>

namespace fxlens::test {

inline views::Services sourceServices()
{
    views::Services s;
    s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
    return s;
}

/// The window (1400×900 unless said, shown) with the transformer example and `profile`, a compiled
/// profile of it (tests/data/profile), open.
struct CompiledTransformer {
    views::MainWindow w{sourceServices()};
    explicit CompiledTransformer(const QString &profile, QSize size = QSize(1400, 900))
    {
        w.resize(size);
        w.show();
        if (!w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_dynamo.json")) || !w.openProfile(profile))
            qFatal("the transformer or its compiled profile did not open");
    }
};

} // namespace fxlens::test
