// SPDX-License-Identifier: MIT
// WindowMenus: the main window's menus, their keys and the Help menu (shortcuts, legend), built on
// the window's public operations; recent files live here too.
#pragma once

#include "CompareView.h"

#include <QObject>
#include <QStringList>

class QAction;
class QMenu;

namespace fxlens::views {

class MainWindow;

class WindowMenus : public QObject {
    Q_OBJECT
public:
    explicit WindowMenus(MainWindow &w);
    /// Every menu action with a key (rich text), as Help → Keyboard Shortcuts lists them.
    QString shortcutsText() const;
    static QStringList recentFiles();
    void rememberRecent(const QString &path);
    /// During a run: File and Rewrite are held (View and Help stay).
    void setRunning(bool running);

private:
    void fileMenu();
    void viewMenu();
    void rewriteMenu();
    void profileMenu();
    void helpMenu();
    void updateRecentMenu();
    /// Versions `a` and `b` side by side in a window of their own (or why not, in the status bar).
    void openCompare(VersionChoice a, VersionChoice b);
    /// Rewrite ▸ Tune… and File ▸ Export Report…, enabled as the document allows.
    void tuneActions();
    void updateTuneActions();

    MainWindow &m_w;
    QMenu *m_file = nullptr, *m_recent = nullptr, *m_rewrite = nullptr, *m_profile = nullptr;
    QAction *m_tune = nullptr, *m_exportReport = nullptr;
};

} // namespace fxlens::views
