// SPDX-License-Identifier: MIT
// Autosave: the unsaved work on an open graph (the steps applied to the file, the version shown, the
// preset, breakpoints, the user's patterns, and that version's graph) written beside the user's data every few seconds
// after a change, so that a crash or a kill loses nothing. Opening the same file again offers it back.
#pragma once

#include "UserPatterns.h"

#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>

class QWidget;

namespace fxlens::views {

class GraphDocument;
class RewriteDebugger;

struct AutosaveState {
    QString file; ///< absolute path of the graph file the work started from
    QString preset;
    QStringList steps; ///< "pattern<TAB>anchor", in order (RewriteDebugger::stepRecord)
    int version = 0;   ///< the version shown (0 .. steps.size())
    QList<QPair<QString, QString>> breakpoints;
    std::string graph;                 ///< the graph of that version (JSON), for when the file changed since
    std::vector<UserPattern> patterns; ///< the user's patterns (steps may name them)
    QDateTime savedAt;
};

class Autosave {
public:
    /// $FXLENS_AUTOSAVE_DIR, else <app data>/autosave.
    static QString directory();
    /// Where the autosave of `file` lives (one per graph file, by its absolute path).
    static QString pathFor(const QString &file);
    /// Writes atomically (the previous autosave stays until the new one is complete).
    static bool write(const AutosaveState &s, QString *error = nullptr);
    /// The autosave of `file`, if there is a readable one.
    static std::optional<AutosaveState> read(const QString &file);
    static void remove(const QString &file);
    /// The unsaved work on `doc` as the debugger holds it (steps, version, preset, breakpoints, and
    /// the version's graph when it is small enough to serialize on the GUI thread).
    static AutosaveState capture(const GraphDocument &doc, const RewriteDebugger &debugger);
    /// Applies saved work to the document just opened: the user's patterns first, then the steps
    /// again (history and all), or, when the file changed so that they no longer apply, the saved
    /// version's graph. Returns what could not be restored (a pattern that no longer compiles).
    static QStringList restore(const AutosaveState &s, GraphDocument &doc, RewriteDebugger &debugger);
    /// Asks the user whether to recover `s` (Yes / No), saying what runs next (`then`: what the
    /// command line asked for, on the recovered version), if anything.
    static bool askToRecover(QWidget *parent, const AutosaveState &s, const QString &then = {});
    /// The question askToRecover asks.
    static QString recoverQuestion(const AutosaveState &s, const QString &then = {});
};

} // namespace fxlens::views
