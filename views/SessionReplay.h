// SPDX-License-Identifier: MIT
// SessionReplay: opening a trace file (a graph with a recorded rewrite session, the "session" key of
// docs/FORMAT.md, as the Python companion's torch.compile backend writes it) brings its history into
// the rewrite debugger. The user pattern files the session names are loaded (a missing one is a
// warning, not a failure), its preset is selected and its steps are replayed, so that every version
// is there to walk (undo to the original, redo, each step's diff) and the last one is shown. The
// document stays unmodified: the file still describes the original and its steps. Opening another
// file unloads the pattern files a previous session brought and puts back the preset it replaced.
#pragma once

#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <memory>
#include <string>

namespace fxlens::lang {
class PatternLibrary;
}

namespace fxlens::ir {
struct RecordedSession;
}

namespace fxlens::views {

class GraphDocument;
class RewriteDebugger;

class SessionReplay {
    Q_DECLARE_TR_FUNCTIONS(fxlens::views::SessionReplay)
public:
    SessionReplay(GraphDocument &doc, RewriteDebugger &debugger);
    ~SessionReplay();
    SessionReplay(const SessionReplay &) = delete;
    SessionReplay &operator=(const SessionReplay &) = delete;

    /// The document opened a file: what a previous file's session brought (its pattern files, the
    /// preset it replaced) goes, and the pattern files this file's session names are loaded.
    /// Nothing is replayed yet (a recovered autosave may come instead).
    void fileOpened();
    /// The open graph records a session.
    bool hasSession() const;
    /// Selects the recorded preset (or `all` when it lacks a recorded step's pattern) and replays
    /// the steps; the first that no longer applies stops the replay (the steps before it stay), and
    /// message() names it. The document is left unmodified. True when every step was replayed.
    bool replay();
    /// For the status line: "Replayed 12 steps recorded by fxlens.backend", or which step stopped the
    /// replay and why; then the warnings.
    QString message() const { return m_message; }
    /// Pattern paths that do not exist or did not load, a preset that was not known (each names the
    /// graph file).
    QStringList warnings() const { return m_warnings; }

private:
    void unloadPatterns();
    void loadPatterns(const ir::RecordedSession &s);
    /// The recorded preset when it holds every recorded step's pattern, else `all` when that does.
    QString choosePreset(const ir::RecordedSession &s);
    /// Runs `change` on the registry between the document's and the debugger's pattern brackets.
    template <typename F> void changePatterns(F &&change);
    QString fileName() const;

    GraphDocument &m_doc;
    RewriteDebugger &m_debugger;
    std::unique_ptr<lang::PatternLibrary> m_library; ///< the pattern files the open file's session loaded
    QString m_presetBefore;                          ///< the preset a replay replaced ("" when none)
    QString m_message;
    QStringList m_warnings;
};

} // namespace fxlens::views
