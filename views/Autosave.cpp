// SPDX-License-Identifier: MIT
#include "Autosave.h"

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
    s.savedAt = QDateTime::fromString(o.value(QStringLiteral("saved_at")).toString(), Qt::ISODate);
    if (s.version < 0 || s.version > s.steps.size())
        s.version = int(s.steps.size());
    return s;
}

void Autosave::remove(const QString &file) { QFile::remove(pathFor(file)); }

} // namespace fxlens::views
