// SPDX-License-Identifier: MIT
// The kernel timeline as a user sees it: ink proportional to time (a stream 10 % busy covers 10 %
// of its track's pixels, weighted by shade, at the opening zoom and zoomed in), fitted to the data
// on open in the docked panel, B's tracks under A's on one axis, the kernel table of a node or a
// range with its name filter, a range measured by dragging, and the host launch track drawn from
// the recorded launches (the GPU's wait for the host). Screenshots of the opening view, of A/B and
// of a measured range are written to build/screenshots/.
#include "GraphDocument.h"
#include "KernelTableModel.h"
#include "KernelTimeline.h"
#include "MainWindow.h"
#include "ProfilePanel.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "TimelinePane.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>

using namespace fxlens;
using views::KernelTimeline;
using Kind = views::TimelineTrack::Kind;

namespace {

const char *kTangle200 = FXLENS_EXAMPLES "/tangle200_aten.json.gz";
const char *kRecording = FXLENS_EXAMPLES "/tangle200_aten.fxprof.json.gz";

views::Services services()
{
    views::Services s;
    s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
    return s;
}

/// A CUDA profile of one 20 ms iteration: a kernel every `periodUs` lasting `durUs`, each with a
/// second kernel of half its length at the same start on the same stream (overlap that must not
/// count twice), launched `leadUs` before it starts (or all at once at the start when `leadUs` < 0).
std::shared_ptr<const prof::Profile> synthetic(double durUs, double periodUs = 10, double leadUs = 2)
{
    prof::Profile p;
    p.mode = "cuda";
    p.version = "synthetic";
    p.iterations = 1;
    const int n = int(20000 / periodUs);
    for (int i = 0; i < n; ++i) {
        p.nodes.push_back({"node_" + std::to_string(i), "call_function", "aten.relu.default", ""});
        const double start = 100 + i * periodUs, launch = leadUs < 0 ? 50 + i * 0.001 : start - leadUs;
        p.ranges.push_back({i, 0, launch - 1, 2, 1});
        for (double d : {durUs, durUs / 2}) {
            prof::KernelRec k;
            k.name = "relu_kernel";
            k.kind = "kernel";
            k.device = 0;
            k.stream = 7;
            k.startUs = start;
            k.durUs = d;
            k.launchUs = launch;
            k.iteration = 0;
            k.node = i;
            p.kernels.push_back(k);
        }
    }
    p.iters.push_back({0, 0, 100 + n * periodUs, 100 + n * periodUs, 0, 0});
    p.finish();
    return std::make_shared<const prof::Profile>(std::move(p));
}

int trackOf(const KernelTimeline &t, Kind kind, int group = 0)
{
    for (size_t i = 0; i < t.tracks().size(); ++i)
        if (t.tracks()[i].kind == kind && t.tracks()[i].group == group)
            return int(i);
    return -1;
}

int lum(QRgb c) { return qGray(c); }

/// The most common grey level (a 100 % busy track's shade) in `area` of `img`.
int modeLum(const QImage &img, const QRect &area)
{
    std::map<int, int> counts;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x)
            ++counts[lum(img.pixel(x, y))];
    return std::max_element(counts.begin(), counts.end(), [](auto &a, auto &b) { return a.second < b.second; })->first;
}

/// Ink in `area`: each pixel weighted by how far its shade has gone from `bg` towards `full`.
double ink(const QImage &img, const QRect &area, int bg, int full)
{
    double sum = 0;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x)
            sum += std::clamp(double(lum(img.pixel(x, y)) - bg) / (full - bg), 0.0, 1.0);
    return sum;
}

/// The share of a track's drawing that `busy` inks, against a 100 % busy profile at the same view.
double inkShare(KernelTimeline &t, std::shared_ptr<const prof::Profile> busy, std::shared_ptr<const prof::Profile> full, double start = -1,
                double scale = -1)
{
    auto draw = [&](std::shared_ptr<const prof::Profile> p) {
        t.setProfile(std::move(p));
        if (scale > 0)
            t.setView(start, scale);
        return t.grab().toImage();
    };
    const QImage img = draw(std::move(busy)), ref = draw(std::move(full));
    const QRect area = t.trackRect(trackOf(t, Kind::Device)).adjusted(0, 0, -1, -1);
    const int bg = lum(t.palette().color(QPalette::Base).rgb()), fullLum = modeLum(ref, area);
    return ink(img, area, bg, fullLum) / ink(ref, area, bg, fullLum);
}

/// `w` is drawn whole: no ancestor up to its window clips it.
bool wholeOnScreen(const QWidget *w)
{
    for (const QWidget *up = w->parentWidget(); up; up = up->parentWidget())
        if (!up->rect().contains(QRect(w->mapTo(up, QPoint(0, 0)), w->size())))
            return false;
    return w->isVisible();
}

/// tangle200 and its profile opened in shown `w`, the Profile dock on the timeline in A/B mode
/// (B: the profile's second version); nullptr when the window or the file does not open.
views::ProfilePanel *dockedAB(views::MainWindow &w)
{
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !w.openFile(QString::fromUtf8(kTangle200)))
        return nullptr;
    auto *panel = w.profilePanel();
    w.showProfileDock();
    panel->tabs()->setCurrentWidget(panel->timelinePane());
    panel->compareWith(1);
    QCoreApplication::processEvents();
    return panel;
}

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true); // no saved window geometry from an earlier run
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
    }

    void init() { QSettings().clear(); } // each window starts as on a first start

    /// At the window's first-start size (and at 1280x800) the docked Timeline tab with A/B shows
    /// every track of A and B, a range's readout whole and at least five rows of its kernel table,
    /// with kernel names cut at the right; a drag from left of time zero measures from the data's
    /// start.
    void dockedABRoomAtDefaultSize_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("first start") << QSize();
        QTest::newRow("1280x800") << QSize(1280, 800);
    }
    void dockedABRoomAtDefaultSize()
    {
        QFETCH(QSize, size);
        views::MainWindow w(services());
        if (size.isValid())
            w.resize(size);
        auto *panel = dockedAB(w);
        QVERIFY(panel);
        KernelTimeline *t = panel->timeline();
        views::TimelinePane *pane = panel->timelinePane();
        QVERIFY(trackOf(*t, Kind::Device, 1) >= 0);
        const QRect lastTrack = t->trackRect(int(t->tracks().size()) - 1);
        QVERIFY2(lastTrack.bottom() < t->height() && wholeOnScreen(t),
                 qPrintable(QStringLiteral("last track ends at %1 of %2").arg(lastTrack.bottom()).arg(t->height())));
        // A drag from left of time zero (the view panned so that 0 is a fifth into it).
        t->setView(-0.2 * (t->viewEnd() - t->viewStart()), t->usPerPixel());
        const QRect area = t->trackRect(trackOf(*t, Kind::Device));
        const int x0 = area.left() + 5, x1 = area.left() + area.width() / 2;
        QVERIFY(t->viewStart() + 5 * t->usPerPixel() < 0);
        QTest::mousePress(t, Qt::LeftButton, {}, QPoint(x0, area.center().y()));
        QTest::mouseMove(t, QPoint(x0 + 50, area.center().y()));
        QTest::mouseRelease(t, Qt::LeftButton, {}, QPoint(x1, area.center().y()));
        QVERIFY(t->hasRange());
        QVERIFY2(t->range().first >= 0 && t->range().first == t->dataStart(), qPrintable(pane->readout()));
        QCoreApplication::processEvents();
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        const QString name = size.isValid() ? QStringLiteral("%1x%2").arg(size.width()).arg(size.height()) : QStringLiteral("default");
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_docked_ab_%1.png").arg(name)));
        // The readout: a line for the range, one for A, one for B; all of it inside its rect.
        auto *readout = pane->findChild<QLabel *>(QStringLiteral("rangeReadout"));
        QVERIFY(readout && wholeOnScreen(readout));
        QCOMPARE(readout->text().count(QLatin1Char('\n')), 2);
        const QRect box = readout->contentsRect();
        const QRect need = readout->fontMetrics().boundingRect(box, int(readout->alignment()) | Qt::TextWordWrap, readout->text());
        QVERIFY2(
            need.height() <= box.height() && need.width() <= box.width(),
            qPrintable(QStringLiteral("needs %1x%2, has %3x%4").arg(need.width()).arg(need.height()).arg(box.width()).arg(box.height())));
        // At least five whole rows of the kernel table in view.
        QTableView *table = pane->table();
        QVERIFY(pane->filterModel()->rowCount() >= 5 && wholeOnScreen(table));
        int rows = 0;
        for (int r = 0; r < pane->filterModel()->rowCount(); ++r)
            rows += table->viewport()->rect().contains(table->visualRect(pane->filterModel()->index(r, 0)));
        QVERIFY2(rows >= 5, qPrintable(QStringLiteral("%1 rows in view").arg(rows)));
        QCOMPARE(table->textElideMode(), Qt::ElideRight);
    }

    /// In the dock at the window's first-start size (and at 1280x800), A's and B's headers are
    /// drawn whole (B a later step, its rule's name long): each names its version and its kernels
    /// and busy time per iteration; the rest is their tooltip.
    void headersWholeInTheDock_data() { dockedABRoomAtDefaultSize_data(); }
    void headersWholeInTheDock()
    {
        QFETCH(QSize, size);
        views::MainWindow w(services());
        if (size.isValid())
            w.resize(size);
        auto *panel = dockedAB(w);
        QVERIFY(panel);
        panel->compareWith(2); // step 1214 (dedupe_views @ permute)
        QCoreApplication::processEvents();
        KernelTimeline *t = panel->timeline();
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        const QString name = size.isValid() ? QStringLiteral("%1x%2").arg(size.width()).arg(size.height()) : QStringLiteral("default");
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_headers_%1.png").arg(name)));
        QFont bold = t->font();
        bold.setBold(true);
        for (const int g : {0, 1}) {
            const int header = trackOf(*t, Kind::Header, g);
            QVERIFY(header >= 0);
            const QString text = t->headerText(header);
            QVERIFY2(!text.contains(QChar(0x2026)) && QFontMetrics(bold).horizontalAdvance(text) <= t->width() - 8,
                     qPrintable(QStringLiteral("%1 (%2 px wide)").arg(text).arg(t->width())));
            QVERIFY2(text.startsWith(g == 0 ? QStringLiteral("A · original") : QStringLiteral("B · step 1214")), qPrintable(text));
            QVERIFY2(text.contains(QStringLiteral(" kernels/iter · busy ")), qPrintable(text));
        }
        for (const int g : {0, 1}) { // the whole header on hovering it
            const int header = trackOf(*t, Kind::Header, g);
            const QPoint at(t->width() / 2, t->trackRect(header).center().y());
            QVERIFY2(t->toolTipAt(at).contains(t->tracks()[size_t(header)].name.toHtmlEscaped()), qPrintable(t->toolTipAt(at)));
        }
    }

    /// A stream busy 10 % of the time inks 10 % ± 3 % of its track at the opening zoom (sub-pixel
    /// kernels shaded by their busy share, overlapping ones merged) and zoomed in.
    void inkProportionalToTime()
    {
        KernelTimeline t;
        t.resize(1200, 200);
        const auto tenth = synthetic(1), full = synthetic(10);
        QCOMPARE(tenth->kernels.size(), size_t(4000));
        const double share = inkShare(t, tenth, full);
        QVERIFY2(std::fabs(share - 0.10) <= 0.03, qPrintable(QStringLiteral("opening zoom: %1 of the track inked").arg(share)));
        QVERIFY(t.usPerPixel() > 10); // the opening zoom folds several kernels into a pixel
        const double zoomed = inkShare(t, tenth, full, 5000, 2.0);
        QVERIFY2(std::fabs(zoomed - 0.10) <= 0.03, qPrintable(QStringLiteral("2 µs/px: %1 of the track inked").arg(zoomed)));
        // A third of the time busy reads as a third.
        const double third = inkShare(t, synthetic(10.0 / 3), full);
        QVERIFY2(std::fabs(third - 1.0 / 3) <= 0.03, qPrintable(QStringLiteral("%1").arg(third)));
    }

    /// Opened in the docked panel, the axis spans the recorded iterations (about 204 ms), not a
    /// guess made before the panel had its size; it refits as the panel is resized until zoomed.
    void fittedToTheDataOnOpen()
    {
        views::MainWindow w(services());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(w.openFile(QString::fromUtf8(kTangle200)));
        auto *panel = w.profilePanel();
        w.showProfileDock();
        panel->tabs()->setCurrentWidget(panel->timelinePane());
        QCoreApplication::processEvents();
        KernelTimeline *t = panel->timeline();
        const prof::Profile *p = t->profile();
        QVERIFY(p && t->isVisible() && t->width() > 300);
        double end = 0;
        for (const auto &k : p->kernels)
            end = std::max(end, k.startUs + k.durUs);
        for (const auto &it : p->iters)
            end = std::max(end, it.startUs + std::max(it.cpuUs, it.wallUs));
        const double start = p->iters.front().startUs;
        auto spansData = [&] {
            return t->viewStart() <= t->displayTime(0, start) && t->viewEnd() >= t->displayTime(0, end) &&
                t->viewEnd() - t->viewStart() <= 1.05 * (end - start);
        };
        QVERIFY2(spansData(),
                 qPrintable(QStringLiteral("view %1..%2 µs, data %3..%4 µs").arg(t->viewStart()).arg(t->viewEnd()).arg(start).arg(end)));
        QVERIFY(end < 250e3); // the five timed iterations end near 204 ms
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_tangle200_open.png")));
        t->window()->resize(1200, 900);
        QCoreApplication::processEvents();
        QVERIFY(spansData());
        QTest::keyClick(t, Qt::Key_W); // zoomed: a resize keeps the zoom
        const double scale = t->usPerPixel();
        t->window()->resize(1500, 900);
        QCoreApplication::processEvents();
        QCOMPARE(t->usPerPixel(), scale);
    }

    /// Comparing with B draws B's tracks under A's, labelled, on the same axis: each profile's
    /// first iteration at 0; without B there are no B tracks.
    void bTrackAlignedUnderA()
    {
        views::GraphDocument doc(services());
        views::ProfilePanel panel(doc);
        QVERIFY(panel.openProfile(QString::fromUtf8(kRecording)));
        panel.showProfile(0);
        KernelTimeline *t = panel.timeline();
        QCOMPARE(trackOf(*t, Kind::Device, 1), -1);
        panel.compareWith(1);
        QVERIFY(t->comparison() && t->comparison() != t->profile());
        const int headerA = trackOf(*t, Kind::Header, 0), headerB = trackOf(*t, Kind::Header, 1);
        const int devA = trackOf(*t, Kind::Device, 0), devB = trackOf(*t, Kind::Device, 1);
        QVERIFY(headerA == 0 && headerB > devA && devB > headerB); // A's block, then B's under it
        QVERIFY(t->tracks()[size_t(headerA)].name.startsWith(QStringLiteral("A · original")));
        QVERIFY(t->tracks()[size_t(headerB)].name.startsWith(QStringLiteral("B · step 607")));
        // One axis: both first iterations at 0, although the recordings started 0.7 s apart.
        const prof::Profile &a = *t->profile(), &b = *t->comparison();
        QCOMPARE(t->displayTime(0, a.iters.front().startUs), 0.0);
        QCOMPARE(t->displayTime(1, b.iters.front().startUs), 0.0);
        // B's stream is drawn where B's kernels ran: ink under B's first and last kernels.
        panel.resize(1200, 900);
        panel.tabs()->setCurrentWidget(panel.timelinePane());
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QImage img = t->grab().toImage();
        const QRect row = t->trackRect(devB);
        auto inkAt = [&](double us) {
            const int x = int(row.left() + (us - t->viewStart()) / t->usPerPixel());
            int dark = 0;
            for (int y = row.top(); y <= row.bottom(); ++y)
                dark += lum(img.pixel(std::clamp(x, row.left(), row.right()), y)) < 200;
            return dark;
        };
        double firstB = 1e300, lastB = 0;
        for (const auto &k : b.kernels)
            firstB = std::min(firstB, k.startUs), lastB = std::max(lastB, k.startUs + k.durUs);
        QVERIFY(inkAt(t->displayTime(1, firstB) + t->usPerPixel() / 2) > 0);
        QVERIFY(inkAt(t->displayTime(1, lastB) - t->usPerPixel() / 2) > 0);
        QVERIFY(t->viewEnd() >= t->displayTime(1, lastB)); // fitted to both
        panel.compareWith(-1);
        QCOMPARE(trackOf(*t, Kind::Device, 1), -1);
    }

    /// A node selected before the profile is shown (a file's first candidate, its profile loading
    /// with it): the kernel table lists that node's kernels once the profile is there.
    void kernelTableForNodeSelectedBefore()
    {
        QString name;
        int node = -1;
        {
            views::GraphDocument doc(services());
            views::ProfilePanel first(doc);
            QVERIFY(first.openProfile(QString::fromUtf8(kRecording)));
            first.showProfile(0);
            const prof::Profile *p = first.timelinePane()->timeline()->profile();
            QVERIFY(p);
            for (const auto &k : p->kernels)
                if (k.node >= 0 && node < 0)
                    node = k.node;
            QVERIFY(node >= 0);
            name = QString::fromStdString(p->nodes[size_t(node)].name);
        }
        views::GraphDocument doc(services());
        views::ProfilePanel panel(doc);
        panel.selectNode(name); // no profile yet
        QVERIFY(panel.openProfile(QString::fromUtf8(kRecording)));
        panel.showProfile(0);
        views::TimelinePane *pane = panel.timelinePane();
        const prof::Profile &p = *pane->timeline()->profile();
        const auto ofNode = size_t(std::count_if(p.kernels.begin(), p.kernels.end(), [&](const auto &k) { return prof::covers(k, node); }));
        QVERIFY(ofNode > 0);
        QCOMPARE(size_t(pane->filterModel()->rowCount()), ofNode);
        QVERIFY2(pane->caption().contains(name), qPrintable(pane->caption()));
    }

    /// A node that the version on screen no longer has (tangle200's first candidate, cat_599,
    /// selected as the file opens, then a run to the fixpoint dedupes it away) is no selection: the
    /// kernel table of the original's profile lists a whole iteration, and says so, not the
    /// kernels of a node that is nowhere on screen.
    void kernelTableWithoutTheNodeOnScreen()
    {
        views::MainWindow w(services());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w) && w.openFile(QString::fromUtf8(kTangle200)));
        auto *panel = w.profilePanel();
        views::TimelinePane *pane = panel->timelinePane();
        const QString node = w.selection()->currentNode();
        QVERIFY(!node.isEmpty());
        QVERIFY2(pane->caption().contains(node), qPrintable(pane->caption())); // its kernels, while it is there
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        QCoreApplication::processEvents();
        QVERIFY(!w.document()->graph()->find(node.toStdString()));
        panel->showProfile(0); // A: the original, which had the node
        w.showProfileDock();
        panel->tabs()->setCurrentWidget(pane);
        QCoreApplication::processEvents();
        const prof::Profile &p = *pane->timeline()->profile();
        QCOMPARE(QString::fromStdString(p.version), QStringLiteral("original"));
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_node_not_on_screen.png")));
        QVERIFY2(!pane->caption().contains(node), qPrintable(pane->caption()));
        QCOMPARE(pane->timeline()->selectedNode(), -1);
        const auto first =
            size_t(std::count_if(p.kernels.begin(), p.kernels.end(), [&](const auto &k) { return k.iteration == p.iters[0].index; }));
        QCOMPARE(size_t(pane->filterModel()->rowCount()), first);
        QVERIFY2(pane->caption().contains(QStringLiteral("All %1 kernels of iteration %2").arg(first).arg(p.iters[0].index)),
                 qPrintable(pane->caption()));
    }

    /// The kernel table lists the selected node's kernels, or those of a measured range; the name
    /// filter keeps the matching ones (case-insensitive); a row selects its kernel.
    void kernelTableForNodeAndRange()
    {
        views::GraphDocument doc(services());
        views::ProfilePanel panel(doc);
        QVERIFY(panel.openProfile(QString::fromUtf8(kRecording)));
        panel.showProfile(0);
        views::TimelinePane *pane = panel.timelinePane();
        QAbstractItemModelTester tester(pane->tableModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester filtered(pane->filterModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const prof::Profile &p = *pane->timeline()->profile();
        // Nothing selected yet: the first iteration, whole.
        QCOMPARE(size_t(pane->filterModel()->rowCount()),
                 size_t(std::count_if(p.kernels.begin(), p.kernels.end(), [&](const auto &k) { return k.iteration == p.iters[0].index; })));
        QVERIFY2(pane->caption().startsWith(QStringLiteral("All 2202 kernels of iteration 0")), qPrintable(pane->caption()));
        // A node: its kernels, every iteration.
        int node = -1;
        for (const auto &k : p.kernels)
            if (k.node >= 0 && p.nodes[size_t(k.node)].target == "aten.addmm.default") {
                node = k.node;
                break;
            }
        QVERIFY(node >= 0);
        panel.selectNode(QString::fromStdString(p.nodes[size_t(node)].name));
        const auto ofNode = size_t(std::count_if(p.kernels.begin(), p.kernels.end(), [&](const auto &k) { return k.node == node; }));
        QCOMPARE(size_t(pane->filterModel()->rowCount()), ofNode);
        QVERIFY(pane->caption().contains(QString::fromStdString(p.nodes[size_t(node)].name)));
        // A range: the second iteration's kernels, then filtered by name.
        const auto &it = p.iters[1];
        pane->timeline()->setRange(it.startUs, it.startUs + it.wallUs);
        size_t inRange = 0, matching = 0;
        for (const auto &k : p.kernels)
            if (k.startUs < it.startUs + it.wallUs && k.startUs + k.durUs > it.startUs) {
                ++inRange;
                matching += QString::fromStdString(k.name).contains(QStringLiteral("catarraybatchedcopy"), Qt::CaseInsensitive);
            }
        QCOMPARE(size_t(pane->filterModel()->rowCount()), inRange);
        QCOMPARE(inRange, size_t(2202));
        QTest::keyClicks(pane->filter(), QStringLiteral("catarraybatchedcopy"));
        QVERIFY(matching > 0 && matching < inRange);
        QCOMPARE(size_t(pane->filterModel()->rowCount()), matching);
        // Sorted by duration, the longest first; a row selects its kernel.
        pane->table()->sortByColumn(views::KernelTableModel::DurationCol, Qt::DescendingOrder);
        const QModelIndex top = pane->filterModel()->index(0, 0);
        const int k = top.data(views::KernelTableModel::KernelRole).toInt();
        for (int r = 1; r < pane->filterModel()->rowCount(); ++r)
            QVERIFY(p.kernels[size_t(k)].durUs >=
                    p.kernels[size_t(pane->filterModel()->index(r, 0).data(views::KernelTableModel::KernelRole).toInt())].durUs);
        QCOMPARE(top.data().toString(), QStringLiteral("CatArrayBatchedCopy")); // the short name; the full one as tooltip
        QVERIFY(top.data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("void at::native::")));
        QCOMPARE(views::KernelTableModel::shortName("Memset (Device)"), QStringLiteral("Memset (Device)"));
        pane->table()->setCurrentIndex(top);
        QCOMPARE(pane->timeline()->selectedKernel(), k);
        QCOMPARE(size_t(pane->filterModel()->rowCount()), matching); // the list stays
    }

    /// Dragging across the timeline measures a range: its duration and the busy time in it (10 %
    /// of a 10 % busy stream), and the kernels in it; a click elsewhere or Esc drops it.
    void dragMeasuresARange()
    {
        views::TimelinePane pane;
        pane.resize(1200, 500);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        pane.setProfiles(synthetic(1), nullptr);
        KernelTimeline *t = pane.timeline();
        const int y = t->trackRect(trackOf(*t, Kind::Device)).center().y();
        const int x0 = t->trackRect(0).left() + 300, x1 = x0 + 400;
        const double from = t->viewStart() + 300 * t->usPerPixel(), to = from + 400 * t->usPerPixel();
        QTest::mousePress(t, Qt::LeftButton, {}, QPoint(x0, y));
        QTest::mouseMove(t, QPoint(x0 + 200, y));
        QTest::mouseMove(t, QPoint(x1, y));
        QTest::mouseRelease(t, Qt::LeftButton, {}, QPoint(x1, y));
        QVERIFY(t->hasRange());
        QVERIFY(std::fabs(t->range().first - from) <= t->usPerPixel() && std::fabs(t->range().second - to) <= t->usPerPixel());
        const double len = t->range().second - t->range().first;
        QVERIFY(std::fabs(t->busyIn(0, t->range().first, t->range().second) / len - 0.10) < 0.01);
        const QString text = pane.readout();
        QVERIFY2(text.contains(views::formatUs(len)), qPrintable(text));
        const auto pct = QRegularExpression(QStringLiteral("GPU busy [\\d.]+ \\S+ \\(([\\d.]+) %\\)")).match(text);
        QVERIFY2(pct.hasMatch() && std::fabs(pct.captured(1).toDouble() - 10.0) < 1.0, qPrintable(text));
        // The kernels in it: two per 10 µs (each with its overlapping half-length twin).
        QVERIFY(std::abs(pane.filterModel()->rowCount() - int(len / 10 * 2)) <= 4);
        QVERIFY(pane.caption().contains(QStringLiteral("in the measured range")));
        // Its banner on the ruler lies over the range only: the ticks beside it keep their labels
        // (ink in the ruler left of the range, where the banner used to spread).
        const auto [banner, said] = t->rangeBanner(t->fontMetrics());
        QVERIFY2(!banner.isEmpty() && banner.left() >= x0 - 1.5 && banner.right() <= x1 + 1.5, qPrintable(said));
        const QImage ruler = t->grab(QRect(x0 - 250, 0, 248, 14)).toImage();
        int ink = 0;
        for (int yy = 0; yy < ruler.height(); ++yy)
            for (int xx = 0; xx < ruler.width(); ++xx)
                ink += qGray(ruler.pixel(xx, yy)) < 128;
        QVERIFY2(ink > 20, qPrintable(QString::number(ink)));
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(pane.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_range.png")));
        // A range narrower than the text: a shorter banner or none, never one past the range.
        t->setRange(from, from + 40 * t->usPerPixel());
        const QRectF narrow = t->rangeBanner(t->fontMetrics()).first;
        QVERIFY(narrow.isEmpty() || (narrow.left() >= x0 - 1.5 && narrow.right() <= x0 + 41.5));
        QTest::keyClick(t, Qt::Key_Escape);
        QVERIFY(!t->hasRange());
        QCOMPARE(pane.filterModel()->rowCount(), int(t->profile()->kernels.size())); // the iteration, whole (no node selected)
        QVERIFY2(pane.caption().startsWith(QStringLiteral("All 4000 kernels of iteration 0")), qPrintable(pane.caption()));
    }

    /// The host launch track is drawn from the recorded launches: amber where the GPU sat idle
    /// until the host launched its next kernel, nothing where work was queued ahead; on the H200
    /// recording most of the GPU's idle time is spent so.
    void launchTrackFromTheData()
    {
        KernelTimeline t;
        t.resize(1200, 200);
        t.setProfile(synthetic(1)); // launched 2 µs before each start: launch-bound
        const int row = trackOf(t, Kind::Launches);
        QVERIFY(row >= 0);
        QCOMPARE(t.tracks()[size_t(row)].name, QStringLiteral("host launches"));
        // Zoomed in on one period: the gap before a kernel is amber, the kernel's time is not,
        // and the launch is a tick where it was recorded.
        t.setView(5090, 0.05);
        const QImage img = t.grab().toImage();
        const QRect r = t.trackRect(row);
        auto x = [&](double us) { return int(r.left() + (us - t.viewStart()) / t.usPerPixel()); };
        const int y = r.bottom() - 4; // inside the bar, below the tick's end
        const QColor gap = img.pixelColor(x(5105), y), kernel = img.pixelColor(x(5100.5), y);
        QVERIFY2(gap.red() > gap.blue() + 60, qPrintable(gap.name())); // amber
        QCOMPARE(kernel, img.pixelColor(x(5100.5), r.top() + 1));      // the row's background
        const QColor tick = img.pixelColor(x(5108), r.top() + 5), beside = img.pixelColor(x(5108) + 3, r.top() + 5);
        QVERIFY2(lum(tick.rgb()) < lum(beside.rgb()) - 40, qPrintable(tick.name() + beside.name()));
        QVERIFY(t.toolTipAt(QPoint(x(5105), y)).contains(QStringLiteral("launch-bound")));
        // Queued ahead (GPU-bound): no launch-bound time, no amber.
        t.setProfile(synthetic(10, 10, -1));
        QVERIFY(t.tracks()[size_t(trackOf(t, Kind::Launches))].busy.empty());
        // The H200 recording: launch-bound idle is most of the idle time, never more.
        auto set = prof::readProfiles(kRecording);
        QVERIFY(set.ok());
        auto p = std::make_shared<const prof::Profile>(std::move(set.value().front()));
        t.setProfile(p);
        const auto &launch = t.tracks()[size_t(trackOf(t, Kind::Launches))];
        const double waited = views::coveredIn(launch.busy, t.dataStart(), t.dataEnd());
        double first = 1e300, last = 0;
        for (const auto &k : p->kernels)
            first = std::min(first, k.startUs), last = std::max(last, k.startUs + k.durUs);
        const double idle = (last - first) - t.busyIn(0, t.dataStart(), t.dataEnd());
        QVERIFY2(waited > 0.8 * idle && waited <= idle + 1e-6, qPrintable(QStringLiteral("%1 of %2 µs idle").arg(waited).arg(idle)));
    }

    /// Screenshots of A/B and of a measured range in the docked panel at 1600x1000.
    void screenshots()
    {
        views::MainWindow w(services());
        w.resize(1600, 1000);
        auto *panel = dockedAB(w);
        QVERIFY(panel);
        KernelTimeline *t = panel->timeline();
        QVERIFY(trackOf(*t, Kind::Device, 1) >= 0);
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_tangle200_ab.png")));
        panel->compareWith(-1);
        const auto &it = t->profile()->iters[2];
        t->setView(it.startUs - 200, 2.0);
        const int y = t->trackRect(trackOf(*t, Kind::Device)).center().y(), x0 = t->trackRect(0).left() + 100;
        QTest::mousePress(t, Qt::LeftButton, {}, QPoint(x0, y));
        QTest::mouseMove(t, QPoint(x0 + 300, y));
        QTest::mouseRelease(t, Qt::LeftButton, {}, QPoint(x0 + 300, y));
        QVERIFY(t->hasRange());
        QCoreApplication::processEvents();
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/timeline_tangle200_range.png")));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestTimeline)
#include "tst_Timeline.moc"
