// SPDX-License-Identifier: MIT
// ProfileStore: the profiles of a GraphDocument, each bound to the version it was recorded on (by
// the version's fingerprint, never by node names) or to none. The document owns it and tells it
// when its graph is opened, replaced or saved; views read it and follow its changed() signal.
#pragma once

#include "profile/Profile.h"

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

namespace fxlens::views {

class GraphDocument;

/// A profile of the document: bound to the version it was recorded on, or to none (another graph,
/// or a version not reached yet).
struct DocProfile {
    std::shared_ptr<const prof::Profile> profile;
    QString source;         ///< the file it came from ("" when profiled in this window)
    uint64_t versionId = 0; ///< RewriteHistory's version id; 0 when bound to no version
};

class ProfileStore : public QObject {
    Q_OBJECT
public:
    /// Binds profiles as `doc`'s history walks onto the versions they were recorded on.
    explicit ProfileStore(GraphDocument &doc);

    size_t size() const { return m_profiles.size(); }
    bool empty() const { return m_profiles.empty(); }
    const DocProfile &operator[](size_t i) const { return m_profiles[i]; }
    std::vector<DocProfile>::const_iterator begin() const { return m_profiles.begin(); }
    std::vector<DocProfile>::const_iterator end() const { return m_profiles.end(); }

    /// Reads a profile or profile set; each profile is bound to the version on screen when it was
    /// recorded on it (its fingerprint), else kept unbound (listed, never tinting the canvas).
    /// Returns how many were added (0 with `error`).
    int open(const QString &path, QString *error);
    /// Profiles recorded here on the versions with these ids (same order); returns the first index.
    /// The document becomes modified (profiles are saved with it).
    int add(std::vector<prof::Profile> profiles, const std::vector<uint64_t> &versionIds);
    void close();
    /// The latest profile bound to the version on screen, -1 when none.
    int current() const;
    /// The profile's version as text: "version 3 (step …)", "another version", "another graph".
    QString boundText(int index) const;
    /// Why the profiles saved beside the graph did not load ("" when they did or there were none).
    QString loadError() const { return m_loadError; }
    /// Profile files beside a graph file: "model.json.gz" -> "model.fxprof.json.gz".
    static QString fileFor(const QString &graphFile);

    // --- what the document tells it ---
    /// Drops every profile without a signal (a new graph is coming).
    void reset() { m_profiles.clear(); }
    /// A graph file was opened: the profiles saved beside it are read.
    void loadBeside(const QString &graphFile);
    /// The graph was replaced by another version of it (a recovered autosave): bound afresh.
    void rebind();
    /// Writes every profile beside a graph file (nothing when there are none).
    bool saveBeside(const QString &graphFile, QString *error) const;

Q_SIGNALS:
    /// Profiles were added, removed or bound to a version.
    void changed();

private:
    /// Binds unbound profiles recorded on the version on screen; true when one was.
    bool bind();

    GraphDocument &m_doc;
    std::vector<DocProfile> m_profiles;
    QString m_loadError;
};

} // namespace fxlens::views
