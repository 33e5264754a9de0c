// SPDX-License-Identifier: MIT
// Main window of the fxlens desktop app.
#include "MainWindow.h"

#include "NodeTableModel.h"
#include "GraphCanvas.h"
#include "io/GraphJson.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTabWidget>
#include <QSignalBlocker>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace fxlens::views {

namespace {
/// Matches a row if the name, target or module column contains the pattern.
class NodeFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const auto re = filterRegularExpression();
        if (re.pattern().isEmpty())
            return true;
        for (int col : {NodeTableModel::NameColumn, NodeTableModel::TargetColumn, NodeTableModel::ModuleColumn})
            if (re.match(sourceModel()->index(row, col, parent).data().toString()).hasMatch())
                return true;
        return false;
    }
};
} // namespace

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("fxlens"));
    setAcceptDrops(true);
    m_model = new NodeTableModel(this);
    m_proxy = new NodeFilter(this);
    m_proxy->setSourceModel(m_model);

    auto *left = new QWidget(this);
    auto *layout = new QVBoxLayout(left);
    layout->setContentsMargins(0, 0, 0, 0);
    m_search = new QLineEdit(left);
    m_search->setPlaceholderText(tr("Search name, target or module (/regex/)"));
    m_search->setClearButtonEnabled(true);
    layout->addWidget(m_search);
    m_table = new QTableView(left);
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table);

    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFont(QStringLiteral("monospace")));

    m_canvas = new GraphCanvas(this);
    m_canvas->setObjectName(QStringLiteral("graphCanvas"));
    m_views = new QTabWidget(this);
    m_views->addTab(m_canvas, tr("Graph"));
    m_views->addTab(m_text, tr("Text"));

    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(left);
    split->addWidget(m_views);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    setCentralWidget(split);

    auto *dock = new QDockWidget(tr("Inspector"), this);
    dock->setObjectName(QStringLiteral("inspectorDock"));
    m_inspector = new QTextBrowser(dock);
    dock->setWidget(m_inspector);
    addDockWidget(Qt::RightDockWidgetArea, dock);

    m_stats = new QLabel(this);
    m_stats->setMinimumWidth(320);
    m_stats->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    statusBar()->addPermanentWidget(m_stats);

    connect(m_search, &QLineEdit::textChanged, this, &MainWindow::setSearch);
    // Canvas and table select together.
    connect(m_canvas, &GraphCanvas::nodeSelected, this, [this](const QString &name) {
        int row = m_model->rowOf(name);
        if (row < 0)
            return;
        QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
        if (idx.isValid()) {
            QSignalBlocker block(m_table->selectionModel());
            m_table->setCurrentIndex(idx);
            m_table->scrollTo(idx);
        }
        showNode(m_model->nodeAt(row));
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &cur) { showNode(m_model->nodeAt(m_proxy->mapToSource(cur).row())); });
    createActions();

    QSettings settings;
    resize(1200, 800); // first start; a saved geometry wins
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open…"), this, [this] {
        QString path = QFileDialog::getOpenFileName(this, tr("Open FX graph"), QString(),
                                                    tr("fxlens graphs (*.json);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("Export View as &SVG…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export SVG"), QString(), tr("SVG (*.svg)"));
        if (!path.isEmpty() && !m_canvas->exportSvg(path))
            statusBar()->showMessage(tr("Cannot write %1").arg(path), 5000);
    });
    file->addAction(tr("Export View as &PNG…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export PNG"), QString(), tr("PNG (*.png)"));
        if (!path.isEmpty() && !m_canvas->exportPng(path))
            statusBar()->showMessage(tr("Cannot write %1").arg(path), 5000);
    });
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *fit = view->addAction(tr("&Fit to Window"), m_canvas, &GraphCanvas::fitToView);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addAction(tr("&Expand All Modules"), m_canvas, &GraphCanvas::expandAll);
    view->addAction(tr("&Collapse All Modules"), m_canvas, &GraphCanvas::collapseAll);
    QAction *find = new QAction(tr("Find"), this);
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, this, [this] { m_search->setFocus(); m_search->selectAll(); });
    addAction(find);
    updateRecentMenu();
}

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    for (const QString &f : recentFiles())
        m_recentMenu->addAction(f, this, [this, f] { openFile(f); });
    m_recentMenu->setEnabled(!m_recentMenu->isEmpty());
}

bool MainWindow::openFile(const QString &path)
{
    auto r = io::readGraphFile(path.toStdString());
    if (!r) {
        QString msg = QString::fromStdString(r.error().toString());
        statusBar()->showMessage(msg);
        Q_EMIT loadFailed(msg);
        return false;
    }
    m_model->setGraph(nullptr); // drop pointers into the old graph before it goes
    m_graph = std::move(r.value());
    m_file = path;
    m_model->setGraph(m_graph.get());
    m_text->setPlainText(QString::fromStdString(ir::printGraph(*m_graph)));
    m_canvas->setGraph(m_graph.get());
    m_inspector->clear();
    auto info = ir::computeGraphInfo(*m_graph);
    m_stats->setText(tr("%1 nodes · %2 edges · depth %3 · %4 IR")
                         .arg(info.nodes)
                         .arg(info.edges)
                         .arg(info.depth)
                         .arg(QString::fromStdString(m_graph->irLevel)));
    setWindowTitle(QStringLiteral("%1 — fxlens").arg(QFileInfo(path).fileName()));
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > 10)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
    statusBar()->showMessage(tr("Loaded %1").arg(path), 5000);
    Q_EMIT graphLoaded(path);
    return true;
}

void MainWindow::setSearch(const QString &text)
{
    if (m_search->text() != text)
        m_search->setText(text);
    QRegularExpression re;
    if (text.size() > 2 && text.startsWith(QLatin1Char('/')) && text.endsWith(QLatin1Char('/')))
        re = QRegularExpression(text.mid(1, text.size() - 2));
    else
        re = QRegularExpression(QRegularExpression::escape(text), QRegularExpression::CaseInsensitiveOption);
    m_proxy->setFilterRegularExpression(re);
}

int MainWindow::visibleNodeCount() const { return m_proxy->rowCount(); }

bool MainWindow::selectNode(const QString &name)
{
    int row = m_model->rowOf(name);
    if (row < 0)
        return false;
    QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!idx.isValid()) { // filtered out: clear the search so the node can be shown
        setSearch(QString());
        idx = m_proxy->mapFromSource(m_model->index(row, 0));
    }
    m_table->setCurrentIndex(idx);
    m_table->scrollTo(idx);
    showNode(m_model->nodeAt(row));
    m_canvas->selectNode(name);
    return true;
}

QString MainWindow::inspectorText() const { return m_inspector->toPlainText(); }

void MainWindow::showNode(const ir::Node *n)
{
    if (!n) {
        m_inspector->clear();
        return;
    }
    auto esc = [](const std::string &s) { return QString::fromStdString(s).toHtmlEscaped(); };
    QString html = QStringLiteral("<h3>%1</h3><table>").arg(esc(n->name()));
    auto row = [&](const QString &k, const QString &v) { html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v); };
    row(tr("op"), QString::fromLatin1(ir::opKindName(n->op())));
    row(tr("target"), esc(n->target()));
    QString args;
    for (const auto &a : n->args())
        args += esc(a.toString()) + QStringLiteral("<br>");
    row(tr("args"), args);
    QString kwargs;
    for (const auto &[k, v] : n->kwargs())
        kwargs += esc(k) + QStringLiteral(" = ") + esc(v.toString()) + QStringLiteral("<br>");
    row(tr("kwargs"), kwargs);
    QString users;
    for (const auto *u : n->users())
        users += esc(u->name()) + QStringLiteral(" ");
    row(tr("users"), users);
    row(tr("value"), esc(n->meta().val.toString()));
    if (n->meta().val.isTensor()) {
        QString stride;
        for (auto s : n->meta().val.tensor.stride)
            stride += QString::number(s) + QStringLiteral(" ");
        row(tr("stride"), stride);
    }
    row(tr("module"), esc(n->meta().modulePath()));
    if (n->meta().provenance)
        row(tr("provenance"), esc(n->meta().provenance->pattern) + QStringLiteral(" @ step ") +
                                  QString::number(n->meta().provenance->step));
    html += QStringLiteral("</table>");
    if (!n->meta().stackTrace.empty())
        html += QStringLiteral("<pre>%1</pre>").arg(esc(n->meta().stackTrace));
    m_inspector->setHtml(html);
}

void MainWindow::dragEnterEvent(QDragEnterEvent *e)
{
    if (e->mimeData()->hasUrls())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *e)
{
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        openFile(urls.first().toLocalFile());
}

} // namespace fxlens::views
