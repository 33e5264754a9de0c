// SPDX-License-Identifier: MIT
// CanvasOverlays: what the canvas draws over its items, one layer per kind: the highlighted match
// (its anchor emphasised), the marked candidate anchors, the profile's heat, the search hits and a
// diff's marks. Each layer is given by node (what stays true across a relayout) and mapped onto
// the items of the view on screen (a module box takes its nodes' values), so a new tint is one
// more Layer and its rule in map(), not another pair of members and accessors in the canvas.
#pragma once

#include "ir/Graph.h"
#include "layout/Layered.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace fxlens::views {

class CanvasOverlays {
public:
    enum class Layer : uint8_t {
        Highlight, ///< 1 part of the highlighted match, 2 its anchor
        Marked,    ///< 1 a candidate anchor
        Heat,      ///< 0..1 of the costliest item (a module box sums its nodes)
        Search,    ///< 1 a search hit
        Diff,      ///< a DiffMark: 1 added, 2 removed, 3 changed (a box holding several marks)
    };
    static constexpr size_t kLayers = 5;
    using NodeValues = std::vector<std::pair<const ir::Node *, double>>;

    /// Sets a layer by node and maps it onto `view`'s items; empty clears it.
    void set(Layer layer, NodeValues values, const layout::ViewGraph &view);
    /// Every node at value 1.
    void setNodes(Layer layer, const std::vector<const ir::Node *> &nodes, const layout::ViewGraph &view);
    /// The layer's value of an item (0 when none or out of range).
    double of(Layer layer, int item) const
    {
        const auto &v = m_layers[size_t(layer)].perItem;
        return item >= 0 && size_t(item) < v.size() ? v[size_t(item)] : 0.0;
    }
    /// What the layer was set to, by node.
    const NodeValues &source(Layer layer) const { return m_layers[size_t(layer)].source; }
    /// The nodes of a layer (its source without the values).
    std::vector<const ir::Node *> nodes(Layer layer) const;
    /// Maps every layer onto the items of a new view (after a relayout).
    void remap(const layout::ViewGraph &view);
    /// Drops a layer (by node and per item).
    void clear(Layer layer);
    void clearAll();

private:
    struct Data {
        NodeValues source;
        std::vector<double> perItem; ///< empty when no item has a value
    };
    void map(Layer layer, const layout::ViewGraph &view);

    std::array<Data, kLayers> m_layers;
};

} // namespace fxlens::views
