// SPDX-License-Identifier: MIT
// The open and save dialogs as the user first sees them: every menu's dialog (here Profile ▸ Open
// Profile…, in the examples folder, light and dark) shows the Size, Type and Date Modified
// columns whole beside the names, in the app's palette. A screenshot of each is written to
// build/screenshots/.
#include "MainWindow.h"
#include "TestServices.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileSystemModel>
#include <QHeaderView>
#include <QMenuBar>
#include <QScrollBar>
#include <QSettings>
#include <QStyle>
#include <QTimer>
#include <QTreeView>
#include <QtTest>

using fxlens::views::MainWindow;

namespace {

/// What the dialog showed once its folder was read.
struct Seen {
    bool opened = false;
    int rows = 0;
    QStringList cut; ///< the columns narrower than their contents or titles ("Size 52 < 61")
    int columns = 0, room = 0;
    QColor base;
    QImage image;
};

/// Triggers `action` and, in the dialog it opens, waits for the folder's rows, then looks and
/// cancels.
Seen openDialogOf(QAction *action)
{
    Seen seen;
    QElapsedTimer clock;
    clock.start();
    std::function<void()> look = [&] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        auto *tree = dialog ? dialog->findChild<QTreeView *>(QStringLiteral("treeView")) : nullptr;
        auto *model = dialog ? dialog->findChild<QFileSystemModel *>() : nullptr;
        const bool read = model && model->rowCount(model->index(dialog->directory().absolutePath())) > 0;
        if (!tree || !read || clock.elapsed() < 500) { // its folder read, and the dialog settled after
            if (clock.elapsed() < 10000)
                QTimer::singleShot(50, look);
            else if (dialog)
                dialog->reject();
            return;
        }
        seen.opened = true;
        seen.rows = model->rowCount(tree->rootIndex());
        QHeaderView *header = tree->header();
        // A cell's text and the item's margins (as the delegate draws it), and the column's title.
        const int margins = 2 * (tree->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, tree) + 1);
        for (int s = 1; s < header->count(); ++s) {
            int need = header->sectionSizeHint(s);
            for (int r = 0; r < seen.rows; ++r)
                need = std::max(need,
                                tree->fontMetrics().horizontalAdvance(model->index(r, s, tree->rootIndex()).data().toString()) + margins);
            if (!header->isSectionHidden(s) && header->sectionSize(s) < need)
                seen.cut << QStringLiteral("%1 %2 < %3")
                                .arg(model->headerData(s, Qt::Horizontal).toString())
                                .arg(header->sectionSize(s))
                                .arg(need);
        }
        seen.columns = header->length();
        seen.room = tree->viewport()->width();
        seen.base = tree->palette().color(QPalette::Base);
        seen.image = dialog->grab().toImage();
        dialog->reject();
    };
    QTimer::singleShot(0, look);
    action->trigger();
    return seen;
}

QAction *menuAction(MainWindow &w, const QString &menu, const QString &text)
{
    for (QAction *m : w.menuBar()->actions())
        if (m->text() == menu && m->menu())
            for (QAction *a : m->menu()->actions())
                if (a->text() == text)
                    return a;
    return nullptr;
}

} // namespace

class TestFileDialogs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_FileDialogs"));
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        QSettings().clear();
    }

    /// Profile ▸ Open Profile… in the examples folder (a graph of it open): Size ("44.2 KiB"),
    /// Type ("Gzip archive") and Date Modified whole, every column in the view beside the names;
    /// in the dark theme the dialog is dark too.
    void openProfileColumnsWhole_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::newRow("light") << false;
        QTest::newRow("dark") << true;
    }
    void openProfileColumnsWhole()
    {
        QFETCH(bool, dark);
        MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.setDarkTheme(dark);
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_dynamo.json")));
        QAction *open = menuAction(w, QStringLiteral("&Profile"), QStringLiteral("&Open Profile…"));
        QVERIFY(open);
        const Seen seen = openDialogOf(open);
        QVERIFY(seen.opened);
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(seen.image.save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/open_profile_dialog_%1.png").arg(dark ? "dark" : "light")));
        QVERIFY(seen.rows > 10); // the examples
        QVERIFY2(seen.cut.isEmpty(), qPrintable(seen.cut.join(QStringLiteral(", "))));
        QVERIFY2(seen.columns <= seen.room, qPrintable(QStringLiteral("columns %1 px, view %2 px").arg(seen.columns).arg(seen.room)));
        QCOMPARE(seen.base, w.palette().color(QPalette::Base));
        w.setDarkTheme(false);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestFileDialogs)
#include "tst_FileDialogs.moc"
