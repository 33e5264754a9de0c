// SPDX-License-Identifier: MIT
// Canvas speed, offscreen: time from opening a file to the first painted frame (modules collapsed,
// as the app opens it), the same with every module expanded (the flat worst case), and frame
// times while zooming and panning at three zoom levels.
//
//   QT_QPA_PLATFORM=offscreen bench_canvas FILE [FRAMES]
#include "GraphCanvas.h"
#include "io/GraphJson.h"

#include <QApplication>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace fxlens;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_canvas FILE [FRAMES]\n");
        return 2;
    }
    const int frames = argc > 2 ? std::atoi(argv[2]) : 60;
    views::GraphCanvas c;
    c.resize(1600, 1000);
    QImage target(c.size(), QImage::Format_ARGB32_Premultiplied);
    auto paint = [&] { c.render(&target); };

    auto t0 = Clock::now();
    auto r = io::readGraphFile(argv[1]);
    if (!r) {
        std::fprintf(stderr, "%s\n", r.error().toString().c_str());
        return 3;
    }
    const double load = since(t0);
    auto t1 = Clock::now();
    c.setGraph(r.value().get());
    paint();
    const double firstCollapsed = since(t1);
    const size_t collapsedItems = c.view().items.size();
    auto t2 = Clock::now();
    c.expandAll();
    paint();
    const double firstExpanded = since(t2);
    std::printf("file=%s nodes=%zu load_s=%.3f collapsed_items=%zu first_frame_collapsed_s=%.3f open_to_screen_s=%.3f "
                "expanded_items=%zu expand_all_to_frame_s=%.3f\n",
                argv[1], r.value()->size(), load, collapsedItems, firstCollapsed, load + firstCollapsed, c.view().items.size(),
                firstExpanded);
    // Frames while zooming and panning (expanded view): fit (everything, boxes only), mid zoom,
    // and reading zoom (text), each as the median frame time over FRAMES pans.
    for (double zoom : {0.0, 0.05, 0.2, 1.0}) {
        c.fitToView();
        if (zoom > 0)
            c.zoomBy(zoom / c.scale(), QPointF(800, 500));
        std::vector<double> t;
        for (int i = 0; i < frames; ++i) {
            auto f = Clock::now();
            if (i % 2)
                c.zoomBy(1.02, QPointF(800, 500));
            else
                c.zoomBy(1 / 1.02, QPointF(790, 505));
            paint();
            t.push_back(since(f));
        }
        std::sort(t.begin(), t.end());
        const double med = t[t.size() / 2];
        std::printf("  zoom=%s frame_median_ms=%.2f fps=%.0f worst_ms=%.2f\n",
                    zoom == 0         ? "fit"
                        : zoom == 1   ? "1.0"
                        : zoom == 0.2 ? "0.2"
                                      : "0.05",
                    med * 1e3, 1 / med, t.back() * 1e3);
    }
    return 0;
}
