// SPDX-License-Identifier: MIT
#include "ProfileStore.h"

#include "GraphDocument.h"
#include "ir/GraphInfo.h"

#include <QFileInfo>

#include <algorithm>

namespace fxlens::views {

ProfileStore::ProfileStore(GraphDocument &doc) : QObject(&doc), m_doc(doc)
{
    // A version on screen that a profile was recorded on binds it (a profile set opened first, the
    // history walked later).
    connect(doc.history(), &RewriteHistory::versionChanged, this, [this] {
        if (bind())
            Q_EMIT changed();
    });
}

QString ProfileStore::fileFor(const QString &graphFile)
{
    QString stem = graphFile;
    for (const QString &ext : {QStringLiteral(".json.gz"), QStringLiteral(".json")})
        if (stem.endsWith(ext)) {
            stem.chop(ext.size());
            break;
        }
    return stem + QStringLiteral(".fxprof.json.gz");
}

void ProfileStore::loadBeside(const QString &graphFile)
{
    m_loadError.clear();
    const QString beside = fileFor(graphFile);
    if (QFileInfo::exists(beside)) {
        QString error;
        if (!open(beside, &error))
            m_loadError = error;
    }
    Q_EMIT changed();
}

void ProfileStore::rebind()
{
    for (auto &p : m_profiles) // the graph is another version
        p.versionId = 0;
    bind();
    Q_EMIT changed();
}

bool ProfileStore::saveBeside(const QString &graphFile, QString *error) const
{
    if (m_profiles.empty())
        return true;
    std::vector<const prof::Profile *> ps;
    for (const auto &p : m_profiles)
        ps.push_back(p.profile.get());
    if (auto w = prof::writeProfiles(ps, fileFor(graphFile).toStdString()); !w) {
        if (error)
            *error = QString::fromStdString(w.error().toString());
        return false;
    }
    return true;
}

/// The profile was recorded on `g` as it is: the same fingerprint, or (older files without one)
/// every node by name, op and target in program order.
static bool recordedOn(const prof::Profile &p, const ir::Graph &g, const std::string &hash)
{
    if (!p.graphHash.empty())
        return p.graphHash == hash;
    if (p.nodes.size() != g.size())
        return false;
    size_t i = 0;
    for (const ir::Node *n = g.first(); n; n = n->next(), ++i) {
        const auto &info = p.nodes[i];
        if (info.name != n->name() || info.op != ir::opKindName(n->op()) || info.target != n->target())
            return false;
    }
    return true;
}

bool ProfileStore::bind()
{
    // The fingerprint (every node printed) is taken only when an unbound profile has as many nodes
    // as the graph: walking the history with a profile set open stays cheap.
    const ir::Graph *graph = m_doc.graph();
    if (!graph || std::none_of(m_profiles.begin(), m_profiles.end(), [&](const DocProfile &p) {
            return p.versionId == 0 && p.profile->nodes.size() == graph->size();
        }))
        return false;
    const std::string hash = ir::fingerprintHex(*graph);
    bool bound = false;
    for (auto &p : m_profiles)
        if (p.versionId == 0 && recordedOn(*p.profile, *graph, hash)) {
            p.versionId = m_doc.history()->currentId();
            bound = true;
        }
    return bound;
}

int ProfileStore::open(const QString &path, QString *error)
{
    auto r = prof::readProfiles(path.toStdString());
    if (!r) {
        Diagnostic d = r.error();
        if (d.file.empty())
            d.file = path.toStdString();
        *error = QString::fromStdString(d.toString());
        return 0;
    }
    for (auto &p : r.value())
        m_profiles.push_back({std::make_shared<const prof::Profile>(std::move(p)), path, 0});
    bind();
    Q_EMIT changed();
    return int(r.value().size());
}

int ProfileStore::add(std::vector<prof::Profile> profiles, const std::vector<uint64_t> &versionIds)
{
    const int first = int(m_profiles.size());
    for (size_t i = 0; i < profiles.size(); ++i)
        m_profiles.push_back(
            {std::make_shared<const prof::Profile>(std::move(profiles[i])), QString(), i < versionIds.size() ? versionIds[i] : 0});
    if (!profiles.empty()) {
        m_doc.setModified(true); // profiles are saved with the document
        Q_EMIT changed();
    }
    return first;
}

void ProfileStore::close()
{
    if (m_profiles.empty())
        return;
    m_profiles.clear();
    Q_EMIT changed();
}

int ProfileStore::current() const
{
    const uint64_t id = m_doc.history()->currentId();
    for (int i = int(m_profiles.size()) - 1; i >= 0; --i)
        if (m_profiles[size_t(i)].versionId == id && id != 0)
            return i;
    return -1;
}

QString ProfileStore::boundText(int index) const
{
    if (index < 0 || size_t(index) >= m_profiles.size())
        return {};
    const auto &p = m_profiles[size_t(index)];
    const RewriteHistory *h = m_doc.history();
    if (p.versionId == 0)
        return tr("not recorded on this graph as it is now (another graph, or a version not on screen yet)");
    if (p.versionId == h->currentId())
        return tr("recorded on the version on screen");
    for (int v = 0; v <= h->historySize(); ++v)
        if (h->versionId(v) == p.versionId)
            return tr("recorded on version %1, not the one on screen").arg(v);
    return tr("recorded on a version of another branch");
}

} // namespace fxlens::views
