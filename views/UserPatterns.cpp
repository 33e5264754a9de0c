// SPDX-License-Identifier: MIT
// The patterns a user added to the engine (see UserPatterns.h).
#include "UserPatterns.h"

#include "GraphDocument.h"
#include "lang/PatternLang.h"

#include <QFileInfo>
#include <QSettings>

#include <algorithm>

namespace fxlens::views {

UserPatterns::UserPatterns(GraphDocument &doc) : QObject(&doc), m_doc(doc) {}

bool UserPatterns::addOne(const QString &source, const QString &file, QString *error, QString *name)
{
    const QString shown = file.isEmpty() ? QStringLiteral("untitled.fxpat") : QFileInfo(file).fileName();
    auto r = lang::compilePattern(source.toStdString(), shown.toStdString());
    if (!r) {
        *error = tr("does not compile: %1").arg(QString::fromStdString(r.error().toString()));
        return false;
    }
    const std::string n = r.value()->name;
    const QString qn = QString::fromStdString(n);
    if (name)
        *name = qn;
    auto mine = std::find_if(m_list.begin(), m_list.end(), [&](const UserPattern &p) { return p.name == qn; });
    rewrite::PatternRegistry &registry = m_doc.registry();
    if (registry.find(n) && mine == m_list.end()) {
        *error = tr("A built-in pattern is named '%1': rename this one").arg(qn);
        return false;
    }
    m_doc.aboutToChangePatterns(); // the workers that read patterns finish first
    if (mine != m_list.end())
        registry.remove(n);
    if (std::string err = registry.add(std::move(r.value())); !err.empty()) {
        if (mine != m_list.end())
            m_list.erase(mine);
        *error = QString::fromStdString(err);
        return false;
    }
    const UserPattern added{qn, source, shown};
    if (mine != m_list.end())
        *mine = added;
    else
        m_list.push_back(added);
    std::erase_if(m_broken, [&](const UserPattern &p) { return p.name == qn; });
    return true;
}

bool UserPatterns::add(const QString &source, const QString &file, QString *error, QString *name)
{
    if (!addOne(source, file, error, name))
        return false;
    m_doc.history()->reloadPatterns(); // the history stays; candidates planned again from this version
    m_doc.countMatches();
    Q_EMIT changed();
    return true;
}

QStringList UserPatterns::restore(const std::vector<UserPattern> &saved)
{
    QStringList problems;
    bool any = false;
    for (const UserPattern &p : saved) {
        if (std::find(m_list.begin(), m_list.end(), p) != m_list.end())
            continue; // registered as it is
        QString error;
        if (addOne(p.source, p.file, &error, nullptr)) {
            any = true;
            continue;
        }
        problems << tr("The saved pattern '%1' was not loaded: %2").arg(p.name, error);
        if (std::find(m_broken.begin(), m_broken.end(), p) == m_broken.end())
            m_broken.push_back(p);
    }
    if (any) {
        m_doc.history()->reloadPatterns();
        m_doc.countMatches();
        Q_EMIT changed();
    }
    return problems;
}

std::vector<UserPattern> UserPatterns::read(QSettings &settings)
{
    std::vector<UserPattern> out;
    const int n = settings.beginReadArray(QStringLiteral("patterns/user"));
    for (int i = 0; i < n; ++i) {
        settings.setArrayIndex(i);
        out.push_back({settings.value(QStringLiteral("name")).toString(), settings.value(QStringLiteral("source")).toString(),
                       settings.value(QStringLiteral("file")).toString()});
    }
    settings.endArray();
    return out;
}

void UserPatterns::write(QSettings &settings) const
{
    settings.remove(QStringLiteral("patterns/user"));
    settings.beginWriteArray(QStringLiteral("patterns/user"));
    int i = 0;
    for (const auto *list : {&m_list, &m_broken})
        for (const UserPattern &p : *list) {
            settings.setArrayIndex(i++);
            settings.setValue(QStringLiteral("name"), p.name);
            settings.setValue(QStringLiteral("source"), p.source);
            settings.setValue(QStringLiteral("file"), p.file);
        }
    settings.endArray();
}

} // namespace fxlens::views
