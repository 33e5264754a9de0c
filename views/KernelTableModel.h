// SPDX-License-Identifier: MIT
// KernelTableModel: a list of one profile's kernels (those of a node, or those in a measured
// range of the timeline), one row each: name (short: the function's name without its namespace,
// template arguments and parameters; the full one as tooltip), FX node, iteration, start and
// duration. Each cell has
// its text and the value it sorts by (SortRole), and column 0 a FilterRole text (kernel and node
// name) that a QSortFilterProxyModel filters by name on.
#pragma once

#include "profile/Profile.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace fxlens::views {

class KernelTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int FilterRole = Qt::UserRole + 1;
    static constexpr int KernelRole = Qt::UserRole + 2; ///< the kernel's index in the profile
    enum Column { NameCol, NodeCol, IterationCol, StartCol, DurationCol, ColumnCount };

    using QAbstractTableModel::QAbstractTableModel;

    /// Shows kernels `kernels` of `profile`, starts shifted by -`offsetUs` (the timeline's axis).
    void setKernels(std::shared_ptr<const prof::Profile> profile, std::vector<uint32_t> kernels, double offsetUs = 0);
    const std::vector<uint32_t> &kernels() const { return m_kernels; }
    /// "CatArrayBatchedCopy" for "void at::native::(anonymous namespace)::CatArrayBatchedCopy<...>(...)".
    static QString shortName(const std::string &name);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const prof::Profile> m_profile;
    std::vector<uint32_t> m_kernels;
    double m_offsetUs = 0;
};

} // namespace fxlens::views
