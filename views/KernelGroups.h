// SPDX-License-Identifier: MIT
// KernelGroups: a compiled profile's kernels as the groups of FX nodes they cover (Inductor's
// provenance), one group per kernel call of an iteration: what the canvas outlines, with the
// kernel's name and its time per iteration.
#pragma once

#include "ir/Graph.h"
#include "profile/Profile.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace fxlens::views {

struct KernelGroup {
    QString name;                        ///< the kernel ("cpp_fused_gelu_view_1", "aten::addmm")
    double usPerIteration = 0;           ///< its time per timed iteration (mean)
    std::vector<const ir::Node *> nodes; ///< the FX nodes it covers, in program order (a getitem after its tuple)
    std::vector<uint32_t> kernels;       ///< its records in the profile (one per iteration)
};

/// The groups of a compiled profile on `graph` (the version it was recorded on), in the order the
/// kernels run; kernels without FX nodes (unattributed) form none. Empty for an eager profile. A
/// group holds the getitems of its nodes too (a tuple's elements: no kernel of their own).
std::vector<KernelGroup> kernelGroups(const prof::Profile &p, const ir::Graph &graph);
/// The same kernels as groups of the post-grad graph's nodes (each kernel's postGrad names, looked
/// up in `postGrad`, with their getitems), in the order the kernels run; a kernel none of whose
/// post-grad nodes is in `postGrad` forms none.
std::vector<KernelGroup> postGradKernelGroups(const prof::Profile &p, const ir::Graph &postGrad);
/// The group holding kernel record `kernel`, -1 when none.
int groupOfKernel(const std::vector<KernelGroup> &groups, uint32_t kernel);
/// "cpp_fused_gelu_view_1 · 2.8 µs": the label on a group's outline.
QString groupLabel(const KernelGroup &g);

} // namespace fxlens::views
