// SPDX-License-Identifier: MIT
// A recorded rewrite session replayed into the debugger (see SessionReplay.h).
#include "SessionReplay.h"
#include "Count.h"

#include "GraphDocument.h"
#include "RewriteDebugger.h"
#include "ir/Graph.h"
#include "lang/PatternLang.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <set>

namespace fxlens::views {

SessionReplay::SessionReplay(GraphDocument &doc, RewriteDebugger &debugger) : m_doc(doc), m_debugger(debugger) {}

SessionReplay::~SessionReplay() = default;

QString SessionReplay::fileName() const { return QFileInfo(m_doc.file()).fileName(); }

bool SessionReplay::hasSession() const { return m_doc.graph() && m_doc.graph()->session; }

template <typename F> void SessionReplay::changePatterns(F &&change)
{
    m_doc.aboutToChangePatterns(); // the match counter reads patterns: it finishes first
    change(m_doc.registry());
    m_debugger.reloadPatterns(); // presets listed again; candidates planned again, the history kept
    m_doc.countMatches();
}

void SessionReplay::fileOpened()
{
    m_message.clear();
    m_warnings.clear();
    unloadPatterns();
    if (!m_presetBefore.isEmpty()) {
        m_debugger.setPreset(m_presetBefore);
        m_presetBefore.clear();
    }
    if (hasSession())
        loadPatterns(*m_doc.graph()->session);
}

void SessionReplay::unloadPatterns()
{
    if (!m_library)
        return;
    changePatterns([this](rewrite::PatternRegistry &reg) {
        for (const auto &f : m_library->files())
            if (!f.pattern.empty())
                reg.remove(f.pattern);
        m_library.reset();
    });
}

void SessionReplay::loadPatterns(const ir::RecordedSession &s)
{
    if (s.patternPaths.empty())
        return;
    // Paths are absolute as the backend writes them; a relative one is taken from the graph's folder.
    const QDir base = QFileInfo(m_doc.file()).absoluteDir();
    QStringList paths;
    for (const auto &p : s.patternPaths) {
        const QString path = base.absoluteFilePath(QString::fromStdString(p));
        if (QFileInfo::exists(path))
            paths << path;
        else
            m_warnings
                << tr("%1: the recorded session's pattern path %2 does not exist; its patterns are not loaded").arg(fileName(), path);
    }
    if (paths.isEmpty())
        return;
    m_library = std::make_unique<lang::PatternLibrary>();
    changePatterns([&](rewrite::PatternRegistry &reg) {
        for (const QString &path : paths) {
            if (QFileInfo(path).isDir())
                m_library->loadDirectory(path.toStdString(), reg);
            else
                m_library->loadFile(path.toStdString(), reg);
        }
    });
    for (const auto &f : m_library->files())
        if (!f.diagnostic.empty()) // the first line names the file, line and column
            m_warnings << tr("%1: a pattern file of the recorded session did not load: %2")
                              .arg(fileName(), QString::fromStdString(f.diagnostic.substr(0, f.diagnostic.find('\n'))));
}

QString SessionReplay::choosePreset(const ir::RecordedSession &s)
{
    std::set<std::string> needed;
    for (const auto &step : s.steps)
        needed.insert(step.pattern);
    auto covers = [&](const std::string &preset) {
        std::string error;
        std::set<std::string> names;
        for (const auto *p : m_doc.registry().preset(preset, error))
            names.insert(p->name);
        return error.empty() && std::includes(names.begin(), names.end(), needed.begin(), needed.end());
    };
    if (covers(s.preset))
        return QString::fromStdString(s.preset);
    std::string error;
    m_doc.registry().preset(s.preset, error);
    if (!error.empty())
        m_warnings << tr("%1: the recorded preset is not known here (%2); replaying with preset all")
                          .arg(fileName(), QString::fromStdString(error));
    else if (covers("all"))
        m_warnings << tr("%1: preset %2 lacks a pattern of the recorded steps (the run chose them by name or added "
                         "pattern files); replaying with preset all")
                          .arg(fileName(), QString::fromStdString(s.preset));
    else // neither holds them all: the replay stops at the first step whose pattern is missing
        return QString::fromStdString(s.preset);
    return QStringLiteral("all");
}

bool SessionReplay::replay()
{
    if (!hasSession())
        return false;
    const ir::RecordedSession &s = *m_doc.graph()->session;
    const QString preset = choosePreset(s);
    if (m_debugger.preset() != preset) {
        if (m_presetBefore.isEmpty())
            m_presetBefore = m_debugger.preset();
        m_debugger.setPreset(preset);
    }
    QStringList steps;
    for (const auto &step : s.steps)
        steps << QString::fromStdString(step.pattern) + QLatin1Char('\t') + QString::fromStdString(step.anchor);
    const bool ok = m_debugger.replay(steps);
    m_doc.setModified(false); // the file describes the original and these steps: nothing to save
    const QString tool = s.tool.empty() ? tr("an unnamed tool") : QString::fromStdString(s.tool);
    const auto count = [](qsizetype n) { return counted(n, "step"); };
    if (ok)
        m_message = tr("Replayed %1 recorded by %2").arg(count(steps.size()), tool);
    else
        m_message = tr("%1: replayed %2 of the %3 recorded by %4. %5")
                        .arg(fileName())
                        .arg(m_debugger.historySize())
                        .arg(count(steps.size()), tool, m_debugger.status());
    for (const QString &w : std::as_const(m_warnings))
        m_message += QStringLiteral(" — ") + w;
    return ok;
}

} // namespace fxlens::views
