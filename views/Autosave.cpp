// SPDX-License-Identifier: MIT
#include "Autosave.h"
#include "Count.h"

#include "GraphDocument.h"
#include "RewriteDebugger.h"
#include "io/GraphJson.h"

#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

namespace fxlens::views {

namespace {
const char *kFormat = "fxlens-autosave";
}

QString Autosave::directory()
{
    const QByteArray env = qgetenv("FXLENS_AUTOSAVE_DIR");
    if (!env.isEmpty())
        return QString::fromLocal8Bit(env);
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/autosave");
}

QString Autosave::pathFor(const QString &file)
{
    const QString abs = QFileInfo(file).absoluteFilePath();
    const QByteArray hash = QCryptographicHash::hash(abs.toUtf8(), QCryptographicHash::Sha1).toHex().left(16);
    return directory() + QLatin1Char('/') + QFileInfo(file).fileName() + QLatin1Char('.') + QString::fromLatin1(hash) +
        QStringLiteral(".autosave.json");
}

bool Autosave::write(const AutosaveState &s, QString *error)
{
    QJsonObject o;
    o[QStringLiteral("format")] = QString::fromLatin1(kFormat);
    o[QStringLiteral("file")] = QFileInfo(s.file).absoluteFilePath();
    o[QStringLiteral("preset")] = s.preset;
    o[QStringLiteral("steps")] = QJsonArray::fromStringList(s.steps);
    o[QStringLiteral("version")] = s.version;
    QJsonArray bps;
    for (const auto &b : s.breakpoints)
        bps.append(QJsonArray{b.first, b.second});
    o[QStringLiteral("breakpoints")] = bps;
    o[QStringLiteral("graph")] = QString::fromStdString(s.graph);
    QJsonArray patterns;
    for (const UserPattern &p : s.patterns)
        patterns.append(
            QJsonObject{{QStringLiteral("name"), p.name}, {QStringLiteral("source"), p.source}, {QStringLiteral("file"), p.file}});
    o[QStringLiteral("patterns")] = patterns;
    o[QStringLiteral("saved_at")] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    QDir().mkpath(directory());
    QSaveFile f(pathFor(s.file));
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(o).toJson(QJsonDocument::Compact)) < 0 || !f.commit()) {
        if (error)
            *error = f.errorString();
        return false;
    }
    return true;
}

std::optional<AutosaveState> Autosave::read(const QString &file)
{
    QFile f(pathFor(file));
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    const QJsonObject o = doc.object();
    if (o.value(QStringLiteral("format")).toString() != QLatin1String(kFormat) ||
        o.value(QStringLiteral("file")).toString() != QFileInfo(file).absoluteFilePath())
        return std::nullopt;
    AutosaveState s;
    s.file = o.value(QStringLiteral("file")).toString();
    s.preset = o.value(QStringLiteral("preset")).toString();
    for (const auto &v : o.value(QStringLiteral("steps")).toArray())
        s.steps << v.toString();
    s.version = o.value(QStringLiteral("version")).toInt();
    for (const auto &v : o.value(QStringLiteral("breakpoints")).toArray()) {
        const QJsonArray b = v.toArray();
        if (b.size() == 2)
            s.breakpoints.append({b[0].toString(), b[1].toString()});
    }
    s.graph = o.value(QStringLiteral("graph")).toString().toStdString();
    for (const auto &v : o.value(QStringLiteral("patterns")).toArray()) {
        const QJsonObject p = v.toObject();
        s.patterns.push_back({p.value(QStringLiteral("name")).toString(), p.value(QStringLiteral("source")).toString(),
                              p.value(QStringLiteral("file")).toString()});
    }
    s.savedAt = QDateTime::fromString(o.value(QStringLiteral("saved_at")).toString(), Qt::ISODate);
    if (s.version < 0 || s.version > s.steps.size())
        s.version = int(s.steps.size());
    return s;
}

void Autosave::remove(const QString &file) { QFile::remove(pathFor(file)); }

AutosaveState Autosave::capture(const GraphDocument &doc, const RewriteDebugger &debugger)
{
    AutosaveState s;
    s.file = doc.file();
    s.preset = debugger.preset();
    s.steps = debugger.stepRecord();
    s.version = debugger.version();
    s.breakpoints = debugger.breakpointList();
    s.patterns = doc.userPatterns().list();
    constexpr size_t kSerializeLimit = 20000; // nodes: beyond, the steps alone (replayed from the file)
    if (doc.graph() && doc.graph()->size() <= kSerializeLimit)
        s.graph = io::writeGraphJson(*doc.graph());
    return s;
}

QStringList Autosave::restore(const AutosaveState &s, GraphDocument &doc, RewriteDebugger &debugger)
{
    const QStringList problems = doc.userPatterns().restore(s.patterns); // before the preset and steps that name them
    if (!s.preset.isEmpty())
        debugger.setPreset(s.preset);
    if (debugger.replay(s.steps)) {
        debugger.checkout(s.version);
    } else if (!s.graph.empty()) {
        if (auto g = io::parseGraphJson(s.graph, pathFor(doc.file()).toStdString()))
            doc.replaceGraph(std::move(g.value()));
    }
    for (const auto &b : s.breakpoints)
        debugger.addBreakpoint(b.first, b.second);
    doc.setModified(true);
    return problems;
}

QString Autosave::recoverQuestion(const AutosaveState &s, const QString &then)
{
    QString text = QObject::tr("%1 has unsaved work from %2 (%3) that was not saved when fxlens last closed. Recover it?")
                       .arg(QFileInfo(s.file).fileName(), QLocale().toString(s.savedAt.toLocalTime(), QLocale::ShortFormat),
                            counted(s.steps.size(), "rewrite step"));
    if (!then.isEmpty())
        text += QObject::tr("\n\n%1 then runs on the recovered version (after its %2), or on the original if you answer No.")
                    .arg(then, counted(s.steps.size(), "step"));
    return text;
}

bool Autosave::askToRecover(QWidget *parent, const AutosaveState &s, const QString &then)
{
    return QMessageBox::question(parent, QObject::tr("Recover unsaved work"), recoverQuestion(s, then), QMessageBox::Yes | QMessageBox::No,
                                 QMessageBox::Yes) == QMessageBox::Yes;
}

} // namespace fxlens::views
