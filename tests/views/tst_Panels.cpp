// SPDX-License-Identifier: MIT
// Panels as views of the document, without a window: the node table, the canvas and the inspector
// follow the document themselves (setDocument); the profile panel's node table is a model
// (ProfileTableModel) under QAbstractItemModelTester, sorted by its numbers, not their text.
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "Inspector.h"
#include "NodeList.h"
#include "ProfilePanel.h"
#include "ProfileTableModel.h"
#include "SourceServices.h"
#include "profile/Profile.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QHeaderView>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>

using namespace fxlens;
using views::ProfileTableModel;

namespace {

ProfileTableModel::Row row(const QString &node, double kernels, double us)
{
    return {node, node + QStringLiteral(" target"), {{QString::number(kernels), kernels}, {views::ProfilePanel::formatTime(us), us}}};
}

/// The node names of a model's first column, top to bottom.
QStringList names(const QAbstractItemModel &m)
{
    QStringList out;
    for (int r = 0; r < m.rowCount(); ++r)
        out << m.index(r, 0).data().toString();
    return out;
}

} // namespace

class TestPanels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test-panels")); }

    /// The panels connect themselves to the document: a new graph is shown (the search cleared,
    /// the inspector emptied), an edit lays the canvas out again.
    void panelsFollowDocument()
    {
        views::GraphDocument doc(test::sourceServices());
        views::NodeList nodes;
        views::GraphCanvas canvas;
        views::Inspector inspector;
        canvas.resize(800, 600);
        nodes.setDocument(&doc);
        canvas.setDocument(&doc);
        inspector.setDocument(&doc);
        QString error;
        QVERIFY2(doc.open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &error), qPrintable(error));
        QVERIFY(canvas.graph() == doc.graph());
        QVERIFY(!canvas.view().items.empty());
        QVERIFY(nodes.visibleCount() > 0);
        const int all = nodes.visibleCount();

        QSignalSpy searched(&nodes, &views::NodeList::searchChanged);
        QVERIFY(nodes.setSearch(QStringLiteral("split")) < all);
        inspector.setPlainText(QStringLiteral("split"));
        QVERIFY(doc.open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &error)); // a new graph
        QCOMPARE(nodes.searchField()->text(), QString());                              // a filter of the previous file would hide nodes
        QCOMPARE(nodes.visibleCount(), all);
        QCOMPARE(searched.last().at(0).toString(), QString());
        QVERIFY(canvas.graph() == doc.graph());
        QVERIFY(inspector.toPlainText().isEmpty());

        // An edit: the same graph, laid out again; the inspector is emptied, the search stays.
        nodes.setSearch(QStringLiteral("split"));
        const int hits = nodes.visibleCount();
        inspector.setPlainText(QStringLiteral("split"));
        canvas.setSearchHits({doc.graph()->first()});
        QVERIFY(canvas.isSearchHit(canvas.itemOf(doc.graph()->first())));
        doc.aboutToEdit();
        doc.edited();
        QVERIFY(canvas.graph() == doc.graph());
        QVERIFY(inspector.toPlainText().isEmpty());
        QCOMPARE(nodes.searchField()->text(), QStringLiteral("split"));
        QCOMPARE(nodes.visibleCount(), hits);
        for (size_t i = 0; i < canvas.view().items.size(); ++i) // an edit drops the search outline (nodes may be gone)
            QVERIFY(!canvas.isSearchHit(int(i)));
    }

    /// The model alone: consistent under QAbstractItemModelTester through resets; numbers sort by
    /// value ("9.0 µs" < "12.0 µs" < "1.50 ms"), not by their text.
    void tableModel()
    {
        ProfileTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSortFilterProxyModel sorted;
        sorted.setSortRole(ProfileTableModel::SortRole);
        sorted.setSourceModel(&model);
        QAbstractItemModelTester sortedTester(&sorted, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QStringList headers = {QStringLiteral("Node"), QStringLiteral("Kernels"), QStringLiteral("GPU time")};
        model.setTable(headers, {row(QStringLiteral("b"), 12, 12), row(QStringLiteral("a"), 3, 1500), row(QStringLiteral("c"), 100, 9)});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 3);
        QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("GPU time"));
        QCOMPARE(model.index(1, 2).data().toString(), QStringLiteral("1.50 ms"));
        QCOMPARE(model.index(1, 2).data(ProfileTableModel::SortRole).toDouble(), 1500.0);
        QCOMPARE(model.index(1, 0).data(Qt::ToolTipRole).toString(), QStringLiteral("a target"));
        QCOMPARE(Qt::Alignment(model.index(1, 1).data(Qt::TextAlignmentRole).value<Qt::Alignment>()), Qt::AlignRight | Qt::AlignVCenter);

        sorted.sort(ProfileTableModel::TimeCol, Qt::AscendingOrder);
        QCOMPARE(names(sorted), (QStringList{QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}));
        sorted.sort(ProfileTableModel::CountCol, Qt::DescendingOrder); // "100" > "12" > "3" as numbers
        QCOMPARE(names(sorted), (QStringList{QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}));
        sorted.sort(ProfileTableModel::CountCol, Qt::AscendingOrder);
        QCOMPARE(names(sorted), (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")}));
        sorted.sort(ProfileTableModel::NodeCol, Qt::DescendingOrder);
        QCOMPARE(names(sorted), (QStringList{QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}));

        model.setTable(headers, {row(QStringLiteral("z"), 1, 1)}); // a refill re-sorts the same way
        QCOMPARE(sorted.rowCount(), 1);
        model.clearRows();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), 3); // the columns stay
    }

    /// The panel over a document with a profile: its table is sorted by device time, a header click
    /// sorts by a number column, and a row picked asks for its node.
    void profileTable()
    {
        auto raw = prof::readRawEvents(FXLENS_TEST_DATA "/profile/raw_tangle4_cuda.json");
        QVERIFY(raw.ok());
        const auto profile = prof::buildProfile(raw.value().first, raw.value().second, "cuda");
        const QString path = QDir::temp().filePath(QStringLiteral("fxlens_panels_%1.json").arg(QCoreApplication::applicationPid()));
        QVERIFY(prof::writeProfile(profile, path.toStdString()).ok());

        views::GraphDocument doc(test::sourceServices());
        QString error;
        QVERIFY2(doc.open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &error), qPrintable(error));
        views::ProfilePanel panel(doc);
        QAbstractItemModelTester tester(panel.table()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester sourceTester(panel.tableModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY2(panel.openProfile(path), qPrintable(panel.status()));
        QFile::remove(path);
        const QAbstractItemModel &m = *panel.table()->model();
        QVERIFY(m.rowCount() > 10);
        QCOMPARE(m.columnCount(), 5);
        auto column = [&](int c) {
            std::vector<double> v;
            for (int r = 0; r < m.rowCount(); ++r)
                v.push_back(m.index(r, c).data(ProfileTableModel::SortRole).toDouble());
            return v;
        };
        const auto times = column(ProfileTableModel::TimeCol);
        QVERIFY(std::is_sorted(times.rbegin(), times.rend())); // by device time, the costliest first
        QVERIFY(times.front() > times.back());

        panel.table()->horizontalHeader()->setSortIndicator(ProfileTableModel::CountCol, Qt::AscendingOrder); // a header click
        const auto counts = column(ProfileTableModel::CountCol);
        QVERIFY(std::is_sorted(counts.begin(), counts.end()));
        QVERIFY(counts.front() < counts.back());

        QSignalSpy requested(&panel, &views::ProfilePanel::nodeRequested);
        panel.table()->setCurrentIndex(m.index(2, ProfileTableModel::TimeCol));
        QCOMPARE(requested.size(), 1);
        QCOMPARE(requested.at(0).at(0).toString(), m.index(2, ProfileTableModel::NodeCol).data().toString());

        panel.closeProfile(); // no rows; the table keeps its columns
        QCOMPARE(m.rowCount(), 0);
    }
};

QTEST_MAIN(TestPanels)
#include "tst_Panels.moc"
