// SPDX-License-Identifier: MIT
// UserPatterns: the patterns a user wrote (the Pattern Editor's "Add to engine"), registered in the
// document's registry beside the built-in ones. Adding one keeps the rewrite history (the session
// plans its candidates again from the version on screen). The list is what the settings and the
// autosave keep, by source text, so that the patterns come back after a restart or a recovery.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <vector>

class QSettings;

namespace fxlens::views {

class GraphDocument;

/// One pattern as its author wrote it.
struct UserPattern {
    QString name;   ///< the pattern's name (as compiled; kept for a text that no longer compiles)
    QString source; ///< the pattern file's text
    QString file;   ///< the file name it is reported by ("untitled.fxpat" when never saved)
    bool operator==(const UserPattern &o) const = default;
};

class UserPatterns : public QObject {
    Q_OBJECT
public:
    explicit UserPatterns(GraphDocument &doc);

    /// Compiles `source` and registers it, replacing the user pattern of the same name. False with
    /// why in `error`: it does not compile, or a built-in pattern has its name. `name` gets its name.
    bool add(const QString &source, const QString &file, QString *error, QString *name = nullptr);
    /// The patterns registered, in the order they were first added.
    const std::vector<UserPattern> &list() const { return m_list; }
    /// Saved patterns that did not compile when they were restored (kept, so that the settings
    /// never lose a text; a pattern added under the same name takes its place).
    const std::vector<UserPattern> &broken() const { return m_broken; }
    /// Registers saved patterns (settings, autosave) that differ from what is registered under
    /// their names; returns one message per pattern that no longer compiles or is refused.
    QStringList restore(const std::vector<UserPattern> &saved);

    /// The settings' list (key "patterns/user"): what write() left, broken ones included.
    static std::vector<UserPattern> read(QSettings &settings);
    void write(QSettings &settings) const;

Q_SIGNALS:
    /// A pattern was added or replaced: presets and counts are stale.
    void changed();

private:
    bool addOne(const QString &source, const QString &file, QString *error, QString *name);

    GraphDocument &m_doc;
    std::vector<UserPattern> m_list;
    std::vector<UserPattern> m_broken;
};

} // namespace fxlens::views
