// SPDX-License-Identifier: MIT
// The details a user reads in the side panels and around the canvas, measured as they are shown:
// text that fits its panel (wrapped, never cut sideways), the dark theme's disabled state and links,
// Save and Save As, counts in words ("1 node"), class names on module boxes, a minimap that leaves
// the fitted drawing free, the pattern editor's colours, and what the debugger shows after Apply,
// Skip and Undo and after a click on a version. Settings and autosaves live in a temporary folder.
#include "MainWindow.h"
#include "TestServices.h"

#include "Count.h"
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "Inspector.h"
#include "PatternEditor.h"
#include "PatternHighlighter.h"
#include "ProfilePanel.h"
#include "RewriteDebugger.h"
#include "Selection.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QMenuBar>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QtTest>

#include <cmath>
#include <numeric>

using fxlens::views::MainWindow;

namespace {

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

/// WCAG contrast ratio of two colours (1 to 21).
double contrast(const QColor &a, const QColor &b)
{
    auto lum = [](const QColor &c) {
        auto ch = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF());
    };
    const double x = lum(a), y = lum(b);
    return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

/// The window at the walkthrough's size, first start (no saved dock state), with `file` open and
/// the Rewrite panel in front.
bool showWith(MainWindow &w, const QString &file)
{
    w.resize(1600, 1000);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !w.openFile(file))
        return false;
    w.findChild<QDockWidget *>(QStringLiteral("rewriteDock"))->raise();
    QCoreApplication::processEvents();
    return true;
}

/// The widest line of a text browser's plain text, in its font.
int widestLine(const QTextBrowser *b)
{
    int widest = 0;
    for (const QString &line : b->toPlainText().split(QLatin1Char('\n')))
        widest = std::max(widest, b->fontMetrics().horizontalAdvance(line));
    return widest;
}

/// The foreground of the first link in a text browser, or an invalid colour.
QColor firstLinkColour(const QTextBrowser *b)
{
    for (QTextBlock block = b->document()->begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it)
            if (it.fragment().charFormat().isAnchor())
                return it.fragment().charFormat().foreground().color();
    return {};
}

QAction *actionWithKey(MainWindow &w, const QKeySequence &key)
{
    for (QAction *menu : w.menuBar()->actions())
        if (menu->menu())
            for (QAction *a : menu->menu()->actions())
                if (a->shortcut() == key)
                    return a;
    return nullptr;
}

/// The format the highlighter gave the character at `column` of line `line` (0-based).
QTextCharFormat formatAt(QPlainTextEdit *edit, int line, int column)
{
    const QTextBlock block = edit->document()->findBlockByNumber(line);
    for (const QTextLayout::FormatRange &r : block.layout()->formats())
        if (column >= r.start && column < r.start + r.length)
            return r.format;
    return {};
}

} // namespace

class TestPanelDetails : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_PanelDetails"));
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        qputenv("FXLENS_AUTOSAVE_DIR", m_dir.filePath(QStringLiteral("autosave")).toLocal8Bit());
    }

    void init()
    {
        QSettings().clear();
        QApplication::setPalette(QApplication::style()->standardPalette()); // a test that failed in the dark leaves no dark
    }

    /// Candidates, the step's diff and the pattern editor's status wrap in their panel: nothing needs
    /// a sideways scrollbar and every line shows whole; the inspector has room for a node's rows.
    void sidePanelsWrapTheirText()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("transformer_dynamo.json")));
        auto *d = w.debugger();
        QVERIFY(d->candidateCount() > 0);
        QVERIFY(d->applySelected());
        QCoreApplication::processEvents();

        QListView *list = d->candidateList();
        QCOMPARE(list->horizontalScrollBar()->maximum(), 0);
        for (int r = 0; r < list->model()->rowCount(); ++r) {
            const QModelIndex i = list->model()->index(r, 0);
            const QRect shown = list->visualRect(i);
            const QString text = i.data().toString();
            QVERIFY2(shown.right() <= list->viewport()->width(), qPrintable(text));
            // The whole text fits the row it is drawn in (wrapped to its width).
            const QRect needed = list->fontMetrics().boundingRect(QRect(0, 0, shown.width() - 8, 10000), Qt::TextWordWrap, text);
            QVERIFY2(needed.height() <= shown.height(),
                     qPrintable(QStringLiteral("%1: %2 > %3").arg(text).arg(needed.height()).arg(shown.height())));
        }

        auto *diff = d->findChild<QTextBrowser *>(QStringLiteral("diff"));
        QVERIFY2(widestLine(diff) > diff->viewport()->width(), "a diff line longer than the panel (what used to be cut)");
        QCOMPARE(diff->horizontalScrollBar()->maximum(), 0);

        // The pattern editor's compile line wraps too.
        auto *editor = w.patternEditor();
        w.findChild<QDockWidget *>(QStringLiteral("patternEditorDock"))->raise();
        QCoreApplication::processEvents();
        editor->setSource(QStringLiteral("name = \"long_description\"\ndescription = \"%1\"\n\ndef pattern(x: Tensor, d: int):\n"
                                         "    y = torch.cat([x], d)\n    return y\n\ndef replacement(x):\n    return x\n")
                              .arg(QString(QStringLiteral("cat of a single tensor is that tensor ")).repeated(4)));
        QVERIFY2(editor->compiled(), qPrintable(editor->diagnostics()));
        auto *diag = editor->findChild<QTextBrowser *>(QStringLiteral("patternDiagnostics"));
        QVERIFY(widestLine(diag) > diag->viewport()->width());
        QCOMPARE(diag->horizontalScrollBar()->maximum(), 0);

        // The inspector: a node with a stack trace and a step's provenance shows all of it unscrolled.
        const fxlens::ir::Node *made = nullptr;
        for (const fxlens::ir::Node *n = w.graph()->first(); n && !made; n = n->next())
            if (n->meta().provenance && !n->meta().stackTrace.empty())
                made = n;
        const fxlens::ir::Node *traced = made;
        for (const fxlens::ir::Node *n = w.graph()->first(); n && !traced; n = n->next())
            if (!n->meta().stackTrace.empty())
                traced = n;
        QVERIFY(traced);
        QVERIFY(w.selectNode(QString::fromStdString(traced->name())));
        auto *inspector = w.findChild<fxlens::views::Inspector *>();
        QCoreApplication::processEvents();
        QVERIFY(
            inspector->toPlainText().contains(QString::fromStdString(traced->meta().stackTrace).section(QLatin1Char('\n'), -1).trimmed()));
        QVERIFY2(inspector->verticalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("inspector %1 px tall, content %2 px")
                                .arg(inspector->viewport()->height())
                                .arg(inspector->document()->size().height())));
        QCOMPARE(inspector->horizontalScrollBar()->maximum(), 0);
    }

    /// Dark theme: a disabled button's text is clearly dimmer than an enabled one's; links on screen
    /// (shown before the switch) take a colour readable on the dark background.
    void darkThemeDisabledAndLinks()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("tangle4_fx.json")));
        QVERIFY(w.selectNode(QStringLiteral("split")));
        auto *inspector = w.findChild<fxlens::views::Inspector *>();
        QVERIFY(firstLinkColour(inspector).isValid());
        w.setDarkTheme(true);
        QPushButton *undo = nullptr, *apply = nullptr;
        for (auto *b : w.debugger()->findChildren<QPushButton *>())
            (b->text() == QStringLiteral("Undo") ? undo : b->text() == QStringLiteral("Apply") ? apply : b) = b;
        QVERIFY(undo && apply);
        QVERIFY(!undo->isEnabled() && apply->isEnabled());
        const QColor disabled = undo->palette().color(QPalette::Disabled, QPalette::ButtonText);
        const QColor enabled = apply->palette().color(QPalette::Active, QPalette::ButtonText);
        QVERIFY2(contrast(disabled, enabled) >= 1.8, qPrintable(QStringLiteral("%1 vs %2").arg(disabled.name(), enabled.name())));
        const QColor base = inspector->palette().color(QPalette::Base);
        QVERIFY(base.lightness() < 80);
        const QColor link = firstLinkColour(inspector);
        QVERIFY2(contrast(link, base) >= 4.5, qPrintable(QStringLiteral("link %1 on %2").arg(link.name(), base.name())));
        QVERIFY(w.selectNode(QStringLiteral("x"))); // shown after the switch: the same
        QVERIFY(contrast(firstLinkColour(inspector), base) >= 4.5);
        // Check boxes: the box stands out from the dark panel ("Verify each step").
        auto *verify = w.debugger()->findChild<QCheckBox *>();
        QVERIFY(verify && verify->isVisible());
        QStyleOptionButton opt;
        opt.initFrom(verify);
        const QRect box = verify->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &opt, verify);
        const QImage img = verify->grab().toImage();
        const QColor panel = w.debugger()->palette().color(QPalette::Window);
        double inside = 0;
        for (int y = box.top() + 3; y <= box.bottom() - 3; ++y)
            for (int x = box.left() + 3; x <= box.right() - 3; ++x)
                inside += qGray(img.pixel(x, y));
        inside /= std::max(1, (box.width() - 6) * (box.height() - 6));
        QVERIFY2(inside - qGray(panel.rgb()) >= 30, qPrintable(QStringLiteral("box %1 on panel %2").arg(inside).arg(qGray(panel.rgb()))));
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.debugger()->grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/dark_theme_checkbox.png")));
        w.setDarkTheme(false);
    }

    /// Save As has Ctrl+Shift+S and proposes `<name>_opt.json` beside the input (never the input);
    /// Save (Ctrl+S) writes to the file last saved; opening the open file again says so.
    void saveAndSaveAs()
    {
        const QString input = m_dir.filePath(QStringLiteral("tangle4_fx.json"));
        QFile::remove(input);
        QVERIFY(QFile::copy(example("tangle4_fx.json"), input));
        MainWindow w(testServices());
        QVERIFY(showWith(w, input));
        QCOMPARE(w.proposedSavePath(), m_dir.filePath(QStringLiteral("tangle4_fx_opt.json")));
        QVERIFY(actionWithKey(w, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)));
        QAction *save = actionWithKey(w, QKeySequence(Qt::CTRL | Qt::Key_S));
        QVERIFY(save);

        QVERIFY(w.debugger()->applySelected());
        const QString out = m_dir.filePath(QStringLiteral("mine.json"));
        QVERIFY(w.saveFile(out));
        QCOMPARE(w.proposedSavePath(), out);
        const qint64 first = QFileInfo(out).size();
        QVERIFY(w.debugger()->applySelected());
        QVERIFY(w.isModified());
        save->trigger(); // no dialog: the file last saved
        QVERIFY(!w.isModified());
        QVERIFY(QFileInfo(out).size() != first);

        // The same file again: said, not silently reloaded.
        const fxlens::ir::Graph *g = w.graph();
        QVERIFY(w.openFileAsked(out));
        QVERIFY(w.graph() == g);
        QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("already open")), qPrintable(w.statusBar()->currentMessage()));
        // With unsaved steps: asked first (here: cancelled, nothing changes).
        QVERIFY(w.debugger()->applySelected());
        QString asked;
        w.setUnsavedPrompt([&](const QString &before) {
            asked = before;
            return int(QMessageBox::Cancel);
        });
        QVERIFY(!w.openFileAsked(out));
        QVERIFY(asked.contains(QStringLiteral("reloading")));
        QVERIFY(w.graph() == g && w.isModified());
    }

    /// One rule for counts: "1 node", "2 nodes", "1 match", "3 matches", on module boxes too ("1 op · 2 weights").
    void countsInWords()
    {
        using fxlens::views::counted;
        QCOMPARE(counted(1, "node"), QStringLiteral("1 node"));
        QCOMPARE(counted(2, "node"), QStringLiteral("2 nodes"));
        QCOMPARE(counted(1, "match"), QStringLiteral("1 match"));
        QCOMPARE(counted(0, "match"), QStringLiteral("0 matches"));
        QCOMPARE(counted(3, "step"), QStringLiteral("3 steps"));
        QCOMPARE(counted(2, "op", "ops"), QStringLiteral("2 ops"));
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("transformer_fx.json"))); // a box per module, each of one node
        int boxes = 0, single = 0;
        for (const auto &it : w.canvas()->view().items) {
            if (it.kind != fxlens::layout::ViewItem::Kind::Module)
                continue;
            ++boxes;
            single += it.nodeCount == 1;
            const QString detail = QString::fromStdString(it.detail);
            QVERIFY2(
                detail.endsWith(counted(qint64(it.nodeCount), "op")) ||
                    detail.endsWith(counted(qint64(it.nodeCount), "op") + QStringLiteral(" · ") + counted(qint64(it.weights), "weight")),
                qPrintable(detail));
            QVERIFY2(!detail.contains(QStringLiteral("1 ops")) && !detail.contains(QStringLiteral("1 weights")), qPrintable(detail));
        }
        QVERIFY(boxes > 0 && single > 0);
        w.setSearch(QStringLiteral("/^x$/"));
        QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("1 match"));
    }

    /// A module's class name shows whole where the box has room (a 520 px box); where it has not,
    /// the leading packages go first and the class name and the count stay.
    void classNamesElidedOnlyWithoutRoom()
    {
        QFont small;
        small.setPixelSize(10);
        const QFontMetrics fm(small);
        const QString detail = QStringLiteral("transformers.models.bert.modeling_bert.BertEmbeddings, 5 ops · 5 weights");
        QCOMPARE(fxlens::views::GraphCanvas::elideDetail(detail, fm, 520 - 12), detail);
        const QString narrow = fxlens::views::GraphCanvas::elideDetail(detail, fm, 200);
        QVERIFY2(narrow.startsWith(QStringLiteral("…")) && narrow.endsWith(QStringLiteral("BertEmbeddings, 5 ops · 5 weights")),
                 qPrintable(narrow));
        QVERIFY(fm.horizontalAdvance(narrow) <= 200);
        const QString tiny = fxlens::views::GraphCanvas::elideDetail(detail, fm, 80);
        QVERIFY2(tiny.startsWith(QStringLiteral("…Bert")) && fm.horizontalAdvance(tiny) <= 80, qPrintable(tiny));
    }

    /// A module box too narrow for its path keeps the path's end, which tells siblings apart
    /// (BERT's attention.self: "…self.query", "…self.value", not "…self.qu…" twice).
    void moduleBoxTitlesKeepTheirEnd()
    {
        fxlens::views::MainWindow w{testServices()};
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/bert_base_dynamo.json.gz")));
        auto *c = w.canvas();
        for (const char *m : {"model", "model.encoder", "model.encoder.layer", "model.encoder.layer.0", "model.encoder.layer.0.attention",
                              "model.encoder.layer.0.attention.self"})
            c->setExpanded(QString::fromLatin1(m), true);
        QFont f = c->font();
        f.setPixelSize(12); // as the canvas draws a box's first line
        const QFontMetrics fm(f);
        int modules = 0, narrow = 0;
        for (const auto &it : c->view().items) {
            if (it.kind != fxlens::layout::ViewItem::Kind::Module)
                continue;
            ++modules;
            const int width = int(it.w - 12);
            const QString title = fxlens::views::GraphCanvas::boxTitle(it, fm, width);
            const QString last = QString::fromStdString(it.label.substr(it.label.rfind('.') + 1));
            narrow += fm.horizontalAdvance(QString::fromStdString(it.label)) > width;
            QVERIFY2(fm.horizontalAdvance(title) <= width, qPrintable(title));
            QVERIFY2(title.endsWith(last), qPrintable(title + QStringLiteral(" for ") + QString::fromStdString(it.label)));
        }
        QVERIFY(modules >= 3);
        QVERIFY(narrow >= 2); // the query and value boxes are too narrow for their paths
    }

    /// After a fit no node lies under the minimap (it is hidden while the whole graph is in view);
    /// zoomed in, it is there, small, and the selected node the view moved to is not under it;
    /// nodes panned under it show through it.
    void minimapLeavesFittedDrawingFree()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("transformer_fx.json")));
        auto *c = w.canvas();
        c->expandAll();
        c->fitToView();
        const QRect mm = c->minimapRect();
        QVERIFY2(mm.isNull(), "nothing to navigate to: no minimap over the drawing");
        for (size_t i = 0; i < c->view().items.size(); ++i)
            QVERIFY2(!c->itemRect(int(i)).intersects(mm), c->view().items[i].label.c_str());
        c->zoomBy(4.0, QPointF(c->width() / 2.0, c->height() / 2.0));
        const QRect zoomed = c->minimapRect();
        QVERIFY(zoomed.isValid() && zoomed.width() <= 180 && zoomed.height() <= 110);
        QVERIFY(w.selectNode(QString::fromStdString(w.graph()->last()->prev()->name())));
        int selected = -1;
        for (size_t i = 0; i < c->view().items.size(); ++i)
            if (QString::fromStdString(c->view().items[i].label) == c->selectedLabel())
                selected = int(i);
        QVERIFY(selected >= 0);
        QVERIFY(!c->itemRect(selected).intersects(c->minimapRect()));
        // Panned so that nodes lie under it: they show through it (each pixel nearer to the node
        // drawn without the minimap than to the panel colour the minimap lays over it).
        const QRect under = c->minimapRect();
        bool covered = false;
        for (int step = 0; step < 40 && !covered; ++step) {
            for (size_t i = 0; i < c->view().items.size() && !covered; ++i)
                covered = c->itemRect(int(i)).intersects(under);
            if (!covered) { // dragged as a user pans
                const QPointF from(c->width() / 2.0, c->height() / 2.0), to = from + QPointF(30, 30);
                QMouseEvent press(QEvent::MouseButtonPress, from, c->mapToGlobal(from), Qt::LeftButton, Qt::LeftButton, {});
                QMouseEvent move(QEvent::MouseMove, to, c->mapToGlobal(to), Qt::NoButton, Qt::LeftButton, {});
                QMouseEvent release(QEvent::MouseButtonRelease, to, c->mapToGlobal(to), Qt::LeftButton, Qt::NoButton, {});
                for (QMouseEvent *e : {&press, &move, &release})
                    QApplication::sendEvent(c, e);
            }
        }
        QVERIFY(covered);
        const QImage with = c->grab().toImage();
        QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
        with.save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/minimap_over_nodes.png"));
        c->setMinimapVisible(false);
        const QImage without = c->grab().toImage();
        c->setMinimapVisible(true);
        // The node's detail (its text, border, fill against the canvas) shows through: the
        // lightness under the minimap follows the lightness without it.
        std::vector<double> a, b;
        for (int y = under.top(); y <= under.bottom(); ++y)
            for (int x = under.left(); x <= under.right(); ++x)
                a.push_back(without.pixelColor(x, y).lightnessF()), b.push_back(with.pixelColor(x, y).lightnessF());
        const auto mean = [](const std::vector<double> &v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); };
        const double ma = mean(a), mb = mean(b);
        double sab = 0, saa = 0, sbb = 0;
        for (size_t k = 0; k < a.size(); ++k)
            sab += (a[k] - ma) * (b[k] - mb), saa += (a[k] - ma) * (a[k] - ma), sbb += (b[k] - mb) * (b[k] - mb);
        QVERIFY(saa > 0 && sbb > 0);
        const double correlation = sab / std::sqrt(saa * sbb);
        QVERIFY2(correlation >= 0.6, qPrintable(QStringLiteral("correlation %1").arg(correlation)));
    }

    /// After a fit no node lies under the colour legend (the drawing goes above it or beside it),
    /// on a tall graph and on a wide one, in a small window and a large one.
    void legendLeavesFittedDrawingFree()
    {
        for (const char *file : {"transformer_fx.json", "resnet50_fx.json.gz", "tangle4_fx.json"})
            for (QSize size : {QSize(1200, 800), QSize(1600, 1000)}) {
                MainWindow w(testServices());
                QVERIFY(showWith(w, example(file)));
                w.resize(size);
                QCoreApplication::processEvents();
                auto *c = w.canvas();
                c->expandAll();
                c->fitToView();
                const QRect lg = c->legendRect();
                QVERIFY2(lg.isValid(), file);
                // The legend is a bar below the drawing area, and a drawing fitted whole lies in that
                // area (one too large for it runs off its edges, as at any zoom).
                const QRect area = c->sceneViewport();
                QVERIFY2(!area.intersects(lg), file);
                const bool whole = c->view().width * c->scale() <= area.width() + 1 && c->view().height * c->scale() <= area.height() + 1;
                for (size_t i = 0; whole && i < c->view().items.size(); ++i)
                    QVERIFY2(QRectF(area).adjusted(-1, -1, 1, 1).contains(c->itemRect(int(i))),
                             (std::string(file) + ": " + c->view().items[i].label).c_str());
            }
    }

    /// The pattern language is coloured: comments, keywords, settings, strings; a link names its docs.
    void patternEditorHighlights()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("tangle4_fx.json")));
        auto *editor = w.patternEditor();
        editor->setSource(QStringLiteral("# a comment with def inside\nname = \"my_cat\"\nbenefit = 3\n\n"
                                         "def pattern(x: Tensor, d: int):\n    y = torch.cat([x], d)  # trailing\n    return y\n\n"
                                         "def replacement(x):\n    return x\n"));
        QVERIFY2(editor->compiled(), qPrintable(editor->diagnostics()));
        QPlainTextEdit *edit = editor->editor();
        const auto *h = editor->highlighter();
        using T = fxlens::views::PatternHighlighter::Token;
        const auto colour = [&](T t) { return h->format(t).foreground().color(); };
        QCOMPARE(formatAt(edit, 0, 0).foreground().color(), colour(T::Comment));
        QCOMPARE(formatAt(edit, 0, 17).foreground().color(), colour(T::Comment)); // "def" in a comment stays a comment
        QCOMPARE(formatAt(edit, 1, 0).foreground().color(), colour(T::Setting));
        QCOMPARE(formatAt(edit, 1, 8).foreground().color(), colour(T::String));
        QCOMPARE(formatAt(edit, 2, 10).foreground().color(), colour(T::Number));
        QCOMPARE(formatAt(edit, 4, 0).foreground().color(), colour(T::Keyword));
        QCOMPARE(formatAt(edit, 4, 15).foreground().color(), colour(T::Type));     // Tensor
        QCOMPARE(formatAt(edit, 5, 8).foreground().color(), colour(T::Namespace)); // torch
        QCOMPARE(formatAt(edit, 5, 27).foreground().color(), colour(T::Comment));
        QCOMPARE(formatAt(edit, 6, 4).foreground().color(), colour(T::Keyword)); // return
        QVERIFY(!formatAt(edit, 5, 4).foreground().color().isValid() || formatAt(edit, 5, 4).foreground().color() != colour(T::Keyword));
        w.findChild<QDockWidget *>(QStringLiteral("patternEditorDock"))->raise();
        QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/pattern_editor_highlight.png")));
        auto *docs = editor->findChild<QLabel *>(QStringLiteral("patternDocs"));
        QVERIFY(docs && docs->text().contains(QStringLiteral("PATTERNS.md")) && docs->openExternalLinks());
        // Dark theme: colours for a dark background.
        const QColor light = colour(T::Keyword);
        w.setDarkTheme(true);
        QVERIFY(colour(T::Keyword) != light);
        QVERIFY(contrast(formatAt(edit, 4, 0).foreground().color(), edit->palette().color(QPalette::Base)) >= 4.5);
        w.setDarkTheme(false);
    }

    /// The Pattern Editor at the default window size: the template's lines whole in view; Return
    /// keeps a line's indent and indents four spaces after a line that opens a block (`def ...:`).
    void patternEditorTemplateAndIndent()
    {
        MainWindow w(testServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.findChild<QDockWidget *>(QStringLiteral("patternEditorDock"))->raise();
        QCoreApplication::processEvents();
        QPlainTextEdit *edit = w.patternEditor()->editor();
        const QFontMetrics fm(edit->font());
        for (const QString &line : edit->toPlainText().split(QLatin1Char('\n')))
            QVERIFY2(
                fm.horizontalAdvance(line) + 2 * edit->document()->documentMargin() <= edit->viewport()->width(),
                qPrintable(QStringLiteral("%1 px in %2: %3").arg(fm.horizontalAdvance(line)).arg(edit->viewport()->width()).arg(line)));
        edit->setPlainText(QStringLiteral("def pattern(x: Tensor):  # opens a block"));
        edit->moveCursor(QTextCursor::End);
        QTest::keyClick(edit, Qt::Key_Return);
        QTest::keyClicks(edit, QStringLiteral("y = x"));
        QTest::keyClick(edit, Qt::Key_Return);
        QTest::keyClicks(edit, QStringLiteral("return y"));
        QCOMPARE(edit->toPlainText(), QStringLiteral("def pattern(x: Tensor):  # opens a block\n    y = x\n    return y"));
    }

    /// A node picked on the canvas leaves exactly one table row selected, and the table is told
    /// (it repaints the row selected before).
    void nodeTableOneRow()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("tangle4_fx.json")));
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        QSignalSpy told(table->selectionModel(), &QItemSelectionModel::selectionChanged);
        for (const char *name : {"split", "x", "getitem"}) {
            QVERIFY(w.selection()->setCurrentNode(QString::fromLatin1(name), w.canvas()));
            QCOMPARE(table->selectionModel()->selectedRows().size(), 1);
            QCOMPARE(table->selectionModel()->selectedRows().first().data().toString(), QString::fromLatin1(name));
        }
        QVERIFY(told.size() >= 3);
        // The row selected before is in a deselected range the view repaints.
        bool deselectedX = false;
        for (const auto &args : told)
            for (const QModelIndex &i : args.at(1).value<QItemSelection>().indexes())
                deselectedX |= i.data().toString() == QStringLiteral("x");
        QVERIFY(deselectedX);
        // Profile panel rows are one line high, like the node table's.
        auto *profile = w.findChild<QTableView *>(QStringLiteral("profileTable"));
        QVERIFY(profile->verticalHeader()->defaultSectionSize() <= profile->fontMetrics().height() + 8);
    }

    /// After Apply the view shows what the step made (outlined, selected, in view, not under the
    /// minimap), not the next candidate; Skip is listed in the history and Undo takes it back.
    void applyShowsStepSkipUndoes()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("transformer_dynamo.json")));
        auto *d = w.debugger();
        QVERIFY(d->candidateCount() > 1);
        QVERIFY(d->applySelected());
        const QString diff = d->diffText(1);
        const QString current = w.selection()->currentNode();
        QVERIFY(!current.isEmpty());
        QVERIFY2(diff.contains(QStringLiteral("%") + current + QStringLiteral(" :")), qPrintable(current + " / " + diff));
        const QString next = d->candidateList()->model()->index(0, 0).data().toString();
        QVERIFY(!next.contains(QStringLiteral("@ ") + current + QStringLiteral(" ")));
        auto *c = w.canvas();
        int shown = -1;
        for (size_t i = 0; i < c->view().items.size(); ++i)
            if (c->view().items[i].node && QString::fromStdString(c->view().items[i].node->name()) == current)
                shown = int(i);
        QVERIFY(shown >= 0);
        QCOMPARE(c->highlightOf(shown), 2);
        QVERIFY(c->rect().contains(c->itemRect(shown).toAlignedRect()));
        QVERIFY(!c->itemRect(shown).intersects(c->minimapRect()));

        // Skip: listed under the version it was made at; Undo proposes it again, the version stays.
        const QString skipped = next.section(QStringLiteral(" — "), 0, 0);
        const int before = d->candidateCount();
        QVERIFY(d->skipSelected());
        QCOMPARE(d->candidateCount(), before - 1);
        QVERIFY2(d->historyList()->model()->index(1, 0).data().toString().contains(QStringLiteral("skipped ") + skipped),
                 qPrintable(d->historyList()->model()->index(1, 0).data().toString()));
        QVERIFY(d->undo());
        QCOMPARE(d->version(), 1);
        QCOMPARE(d->candidateCount(), before);
        QCOMPARE(d->candidateList()->model()->index(0, 0).data().toString(), next);
        QVERIFY(!d->historyList()->model()->index(1, 0).data().toString().contains(QStringLiteral("skipped")));
        QVERIFY(d->undo()); // then the step
        QCOMPARE(d->version(), 0);
    }

    /// One click on a history row goes to that version, as a debugger's call stack shows the frame
    /// clicked: the canvas draws that version's nodes, the status bar counts them, Undo / Redo and the
    /// bold row agree; the later versions stay (Redo, a click goes back to them).
    void historyClickGoesToVersion()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("transformer_dynamo.json")));
        auto *d = w.debugger();
        const size_t original = w.graph()->size();
        // What the canvas draws: its items' nodes (a module box counts those it holds).
        auto drawn = [&] {
            size_t n = 0;
            for (const auto &it : w.canvas()->view().items)
                n += it.node ? 1 : size_t(it.nodeCount);
            return n;
        };
        const size_t drawnOriginal = drawn();
        QVERIFY(d->applySelected() && d->applySelected() && d->applySelected());
        QVERIFY(w.graph()->size() != original);
        const size_t last = w.graph()->size();
        auto *stats = w.statusBar()->findChild<QLabel *>();
        QVERIFY(stats);
        QPushButton *undo = nullptr, *redo = nullptr;
        for (QPushButton *b : d->findChildren<QPushButton *>()) {
            if (b->text() == QStringLiteral("Undo"))
                undo = b;
            else if (b->text() == QStringLiteral("Redo"))
                redo = b;
        }
        QVERIFY(undo && redo);
        QListView *h = d->historyList();
        auto click = [&](int row) {
            const QRect r = h->visualRect(h->model()->index(row, 0));
            QTest::mouseClick(h->viewport(), Qt::LeftButton, {}, r.center());
        };
        const size_t drawnLast = drawn();
        QVERIFY(drawnLast != drawnOriginal);
        click(0);
        QCOMPARE(d->version(), 0);
        QCOMPARE(w.graph()->size(), original);
        QCOMPARE(drawn(), drawnOriginal);
        QVERIFY2(stats->text().startsWith(QStringLiteral("%1 nodes").arg(original)), qPrintable(stats->text()));
        QVERIFY(!undo->isEnabled() && redo->isEnabled());
        QVERIFY(h->model()->index(0, 0).data(Qt::FontRole).value<QFont>().bold());
        QCOMPARE(h->currentIndex().row(), 0);
        QCOMPARE(d->historySize(), 3); // nothing lost
        click(3);
        QCOMPARE(d->version(), 3);
        QCOMPARE(w.graph()->size(), last);
        QCOMPARE(drawn(), drawnLast);
        QVERIFY2(stats->text().startsWith(QStringLiteral("%1 nodes").arg(last)), qPrintable(stats->text()));
        QVERIFY(undo->isEnabled() && !redo->isEnabled());
    }

    /// After a run the history shows its last version whole, and still does when the list then
    /// gets shorter (the status text below it grows; the window is made smaller); once the user
    /// scrolls the list, it stays where the user left it.
    void historyKeepsTheCurrentVersionInView()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("tangle50_torch.json")));
        auto *d = w.debugger();
        d->setPreset(QStringLiteral("all"));
        QCOMPARE(d->run(), QStringLiteral("fixpoint"));
        QListView *h = d->historyList();
        const auto whole = [h] { return h->viewport()->rect().contains(h->visualRect(h->currentIndex())); };
        QCoreApplication::processEvents();
        QVERIFY(h->currentIndex().row() == d->version() && whole());
        for (const int height : {760, 640, 560}) {
            w.resize(w.width(), height);
            QCoreApplication::processEvents();
            QCoreApplication::processEvents();
            QVERIFY2(whole(),
                     qPrintable(QStringLiteral("window %1 px high: row at %2 in %3 px")
                                    .arg(height)
                                    .arg(h->visualRect(h->currentIndex()).top())
                                    .arg(h->viewport()->height())));
        }
        h->verticalScrollBar()->triggerAction(QAbstractSlider::SliderToMinimum);
        w.resize(w.width(), 700);
        QCoreApplication::processEvents();
        QCoreApplication::processEvents();
        QCOMPARE(h->verticalScrollBar()->value(), 0);
    }

    /// On BERT, after Apply and after Undo then Redo, the canvas shows the step's new node (selected,
    /// outlined, in view), not the next candidate; the next candidate is selected in the list and
    /// named in the status, and Ctrl+G goes to it.
    void applyAndRedoShowTheStep()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("bert_base_dynamo.json.gz")));
        auto *d = w.debugger();
        auto *c = w.canvas();
        QVERIFY(d->candidateCount() > 1);
        auto anchorOfNext = [&] {
            return QRegularExpression(QStringLiteral("@ (\\S+)")).match(d->candidateList()->currentIndex().data().toString()).captured(1);
        };
        auto showsStep = [&](const char *after) {
            QCoreApplication::processEvents();
            const QString current = w.selection()->currentNode();
            QVERIFY2(d->diffText(d->version()).contains(QStringLiteral("+ %") + current + QStringLiteral(" :")),
                     qPrintable(QStringLiteral("%1: %2 selected; step: %3").arg(QLatin1String(after), current, d->diffText(d->version()))));
            QVERIFY2(current != anchorOfNext(), after);
            int shown = -1;
            for (size_t i = 0; i < c->view().items.size(); ++i)
                if (c->view().items[i].node && QString::fromStdString(c->view().items[i].node->name()) == current)
                    shown = int(i);
            QVERIFY2(shown >= 0 && c->highlightOf(shown) == 2, after);
            QVERIFY2(c->rect().contains(c->itemRect(shown).toAlignedRect()), after);
            QVERIFY2(d->status().contains(QStringLiteral("Next: ")) && d->status().contains(anchorOfNext()), qPrintable(d->status()));
        };
        QVERIFY(d->applySelected());
        QVERIFY(d->applySelected());
        showsStep("Apply");
        QVERIFY(d->undo());
        QVERIFY(d->redo());
        showsStep("Redo");
        // Ctrl+G goes to the next candidate.
        const QString next = anchorOfNext();
        QTest::keyClick(&w, Qt::Key_G, Qt::ControlModifier);
        QCOMPARE(w.selection()->currentNode(), next);
    }

    /// Open… starts in the folder of the file open, also when it came from the command line as a
    /// path relative to the working directory (not in the working directory).
    void openStartsInTheFilesFolder()
    {
        MainWindow w(testServices());
        QCOMPARE(w.openDir(), QString());
        const QString cwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(QStringLiteral(FXLENS_EXAMPLES "/..")));
        const bool opened = w.openFile(QStringLiteral("examples/tangle4_fx.json"));
        QDir::setCurrent(cwd);
        QVERIFY(opened);
        QCOMPARE(QDir(w.openDir()).canonicalPath(), QDir(QStringLiteral(FXLENS_EXAMPLES)).canonicalPath());
    }

    /// A/B figures read as a user says them.
    void abRatiosInWords()
    {
        using fxlens::views::ProfilePanel;
        const QString faster = QStringLiteral("faster"), slower = QStringLiteral("slower");
        QCOMPARE(ProfilePanel::compareText(39.87, 0.369, faster, slower), QStringLiteral("108× faster"));
        QCOMPARE(ProfilePanel::compareText(4.0, 5.2, faster, slower), QStringLiteral("1.3× slower"));
        QCOMPARE(ProfilePanel::compareText(2202, 17, QStringLiteral("fewer kernels"), QStringLiteral("more kernels")),
                 QStringLiteral("130× fewer kernels"));
        QCOMPARE(ProfilePanel::compareText(10, 10.01, faster, slower), QStringLiteral("same"));
    }

    /// The Text tab follows the selection: the selected node's line is in view and marked.
    void textTabFollowsSelection()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, example("transformer_dynamo.json")));
        auto *tabs = w.findChild<QTabWidget *>(QStringLiteral("graphViews"));
        auto *text = w.findChild<QPlainTextEdit *>(QStringLiteral("graphText"));
        const QString last = QString::fromStdString(w.graph()->last()->prev()->name());
        QVERIFY(w.selectNode(last)); // before the tab is shown
        tabs->setCurrentWidget(text);
        QCoreApplication::processEvents();
        auto lineShown = [&](const QString &name) {
            const QTextCursor at = text->textCursor();
            return at.block().text().trimmed().startsWith(QStringLiteral("%") + name + QStringLiteral(" :")) &&
                text->viewport()->rect().contains(text->cursorRect(at).center()) && text->extraSelections().size() == 1;
        };
        QVERIFY2(lineShown(last), qPrintable(text->textCursor().block().text()));
        const QString first = QString::fromStdString(w.graph()->first()->name());
        QVERIFY(w.selectNode(first));
        QVERIFY2(lineShown(first), qPrintable(text->textCursor().block().text()));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestPanelDetails)
#include "tst_PanelDetails.moc"
