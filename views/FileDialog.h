// SPDX-License-Identifier: MIT
// The app's open and save dialogs: Qt's own (in the app's palette, the dark one included), opened
// with the Size, Type and Date Modified columns whole (Qt opens them at widths measured on sample
// text that the app's font does not fit: "44….KiB", "Gzi…ive") and the dialog wide enough for
// them beside the names, as far as the screen allows.
#pragma once

#include <QString>

class QFileDialog;
class QWidget;

namespace fxlens::views {

/// The file picked to open ("" when cancelled); `dir` is where the dialog starts (a file in it is
/// selected), `filter` as QFileDialog takes it.
QString askOpenFile(QWidget *parent, const QString &caption, const QString &dir, const QString &filter);
/// The file to write ("" when cancelled); an existing file is confirmed first.
QString askSaveFile(QWidget *parent, const QString &caption, const QString &dir, const QString &filter);
/// Widens `dialog`'s detail columns to their contents (and the dialog to hold them) each time it
/// has read a folder: what askOpenFile and askSaveFile do to theirs.
void fitFileColumns(QFileDialog &dialog);

} // namespace fxlens::views
