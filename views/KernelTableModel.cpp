// SPDX-License-Identifier: MIT
#include "KernelTableModel.h"

#include "TimelineTracks.h"

namespace fxlens::views {

QString KernelTableModel::shortName(const std::string &name)
{
    // "void at::native::(anonymous namespace)::CatArrayBatchedCopy<...>(...)" -> "CatArrayBatchedCopy"
    QString s = QString::fromStdString(name);
    if (s.startsWith(QLatin1String("void ")))
        s = s.mid(5);
    int depth = 0, cut = int(s.size());
    for (int i = 0; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c == QLatin1Char('(') && (i == 0 || s[i - 1] == QLatin1Char(':')))
            ++depth; // "(anonymous namespace)"
        else if (c == QLatin1Char(')') && depth > 0)
            --depth;
        else if (depth == 0 && (c == QLatin1Char('<') || (c == QLatin1Char('(') && i > 0 && s[i - 1] != QLatin1Char(' ')))) {
            cut = i;
            break;
        }
    }
    s = s.left(cut);
    const int colons = s.lastIndexOf(QLatin1String("::"));
    s = colons >= 0 ? s.mid(colons + 2) : s;
    return s.trimmed().isEmpty() ? QString::fromStdString(name) : s.trimmed();
}

void KernelTableModel::setKernels(std::shared_ptr<const prof::Profile> profile, std::vector<uint32_t> kernels, double offsetUs)
{
    beginResetModel();
    m_profile = std::move(profile);
    m_kernels = m_profile ? std::move(kernels) : std::vector<uint32_t>{};
    m_offsetUs = offsetUs;
    endResetModel();
}

int KernelTableModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_kernels.size()); }

int KernelTableModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant KernelTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const uint32_t ki = m_kernels[size_t(index.row())];
    const auto &k = m_profile->kernels[ki];
    const QString node = QString::fromStdString(prof::kernelNodeNames(*m_profile, k));
    if (role == KernelRole)
        return int(ki);
    if (role == FilterRole)
        return index.column() == NameCol ? QString::fromStdString(k.name) + QLatin1Char('\n') + node : QVariant();
    if (role == Qt::ToolTipRole && index.column() == NameCol)
        return QString::fromStdString(k.name);
    if (role == Qt::TextAlignmentRole && index.column() >= IterationCol)
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    const bool display = role == Qt::DisplayRole, sort = role == SortRole;
    switch (index.column()) {
    case NameCol: return display || sort ? QVariant(shortName(k.name)) : QVariant();
    case NodeCol: return display || sort ? QVariant(node) : QVariant();
    case IterationCol: return display || sort ? QVariant(k.iteration) : QVariant();
    case StartCol: return display ? QVariant(formatUs(k.startUs - m_offsetUs)) : sort ? QVariant(k.startUs) : QVariant();
    case DurationCol: return display ? QVariant(formatUs(k.durUs)) : sort ? QVariant(k.durUs) : QVariant();
    default: return {};
    }
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameCol: return tr("Kernel");
    case NodeCol: return tr("FX node");
    case IterationCol: return tr("Iter");
    case StartCol: return tr("Start");
    case DurationCol: return tr("Duration");
    default: return {};
    }
}

} // namespace fxlens::views
