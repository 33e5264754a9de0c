// SPDX-License-Identifier: MIT
// The app's open and save dialogs (see FileDialog.h).
#include "FileDialog.h"

#include <QFileDialog>
#include <QFileSystemModel>
#include <QHeaderView>
#include <QScreen>
#include <QScrollBar>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <vector>

namespace fxlens::views {

namespace {

void fitNow(QFileDialog &dialog)
{
    auto *tree = dialog.findChild<QTreeView *>(QStringLiteral("treeView"));
    if (!tree || !tree->model() || tree->header()->count() == 0)
        return;
    QHeaderView *header = tree->header();
    // Size, Type and Date Modified whole (their widest cell shown, and their titles); the names
    // keep their width.
    std::vector<int> was;
    for (int s = 0; s < header->count(); ++s)
        was.push_back(header->sectionSize(s));
    header->resizeSections(QHeaderView::ResizeToContents);
    header->resizeSection(0, was[0]);
    for (int s = 1; s < header->count(); ++s)
        header->resizeSection(s, std::max(header->sectionSize(s), was[size_t(s)]));
    // The dialog widened by what the columns lack of the view's width, as far as the screen allows.
    int columns = tree->verticalScrollBar()->sizeHint().width() + 2 * tree->frameWidth();
    for (int s = 0; s < header->count(); ++s)
        columns += header->isSectionHidden(s) ? 0 : header->sectionSize(s);
    const int lack = columns - tree->width();
    const QScreen *screen = dialog.screen();
    const int most = screen ? screen->availableGeometry().width() : dialog.width() + lack;
    if (lack > 0 && dialog.width() < most)
        dialog.resize(std::min(most, dialog.width() + lack), dialog.height());
}

QString ask(QWidget *parent, const QString &caption, const QString &dir, const QString &filter, QFileDialog::AcceptMode mode)
{
    QFileDialog dialog(parent, caption, dir, filter);
    dialog.setOption(QFileDialog::DontUseNativeDialog);
    dialog.setAcceptMode(mode);
    dialog.setFileMode(mode == QFileDialog::AcceptOpen ? QFileDialog::ExistingFile : QFileDialog::AnyFile);
    dialog.setViewMode(QFileDialog::Detail);
    fitFileColumns(dialog);
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return {};
    return dialog.selectedFiles().constFirst();
}

} // namespace

void fitFileColumns(QFileDialog &dialog)
{
    // The folder's entries are read in the background: the columns fit once they are there (and
    // again for each folder the user goes to); the first fit once the dialog is laid out.
    if (auto *model = dialog.findChild<QFileSystemModel *>())
        QObject::connect(model, &QFileSystemModel::directoryLoaded, &dialog,
                         [&dialog] { QTimer::singleShot(0, &dialog, [&dialog] { fitNow(dialog); }); });
    QTimer::singleShot(0, &dialog, [&dialog] { fitNow(dialog); });
}

QString askOpenFile(QWidget *parent, const QString &caption, const QString &dir, const QString &filter)
{
    return ask(parent, caption, dir, filter, QFileDialog::AcceptOpen);
}

QString askSaveFile(QWidget *parent, const QString &caption, const QString &dir, const QString &filter)
{
    return ask(parent, caption, dir, filter, QFileDialog::AcceptSave);
}

} // namespace fxlens::views
