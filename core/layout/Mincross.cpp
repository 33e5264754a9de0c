// SPDX-License-Identifier: MIT
// The layered layout's order within layers (see Mincross.h).
#include "layout/Mincross.h"

#include <algorithm>
#include <cstdint>

namespace fxlens::layout::layered {

Mincross::Mincross(const LayeredState &s)
    : m_s(s), m_n(s.n), m_layers(s.layers), m_idx(s.slots()), m_sum(s.chainOf.size()), m_cnt(s.chainOf.size()), m_key(s.slots()),
      m_key2(s.slots())
{
}

void Mincross::renumber(const Layers &bl)
{
    for (const auto &layer : bl)
        for (size_t k = 0; k < layer.size(); ++k)
            m_idx[layer[k]] = uint32_t(k);
}

void Mincross::group(std::vector<uint32_t> &layer)
{
    const auto &chainOf = m_s.chainOf;
    const auto &clusterId = m_s.clusterId;
    for (uint32_t i : layer)
        for (uint32_t c : chainOf[clusterId[i]])
            m_sum[c] = 0, m_cnt[c] = 0;
    for (uint32_t i : layer)
        for (uint32_t c : chainOf[clusterId[i]])
            m_sum[c] += m_idx[i], m_cnt[c] += 1;
    std::stable_sort(layer.begin(), layer.end(), [&](uint32_t a, uint32_t b) {
        const auto &x = chainOf[clusterId[a]], &y = chainOf[clusterId[b]];
        for (size_t k = 0; k < std::min(x.size(), y.size()); ++k) {
            if (x[k] == y[k])
                continue;
            const double ka = m_sum[x[k]] / m_cnt[x[k]], kb = m_sum[y[k]] / m_cnt[y[k]];
            if (ka != kb)
                return ka < kb;
            return x[k] < y[k];
        }
        const double ka = x.size() > y.size() ? m_sum[x[y.size()]] / m_cnt[x[y.size()]] : m_idx[a];
        const double kb = y.size() > x.size() ? m_sum[y[x.size()]] / m_cnt[y[x.size()]] : m_idx[b];
        return ka != kb ? ka < kb : m_idx[a] < m_idx[b];
    });
    for (size_t k = 0; k < layer.size(); ++k)
        m_idx[layer[k]] = uint32_t(k);
}

// Layer li sorted by the weighted median of each slot's neighbours in the layer before it (above
// when sweeping down); slots without neighbours there keep their place.
void Mincross::sortByMedian(std::vector<uint32_t> &layer, int li, bool downward)
{
    const auto &up = m_s.up, &down = m_s.down;
    const auto &layerOf = m_s.layerOf;
    const int from = li + (downward ? -1 : 1);
    std::vector<uint32_t> movable, places;
    for (size_t k = 0; k < layer.size(); ++k) {
        const uint32_t i = layer[k];
        m_near.clear();
        for (uint32_t j : downward ? up[i] : down[i])
            if (layerOf[j] == from)
                m_near.push_back(m_idx[j]);
        if (m_near.empty())
            continue; // keeps its place
        std::sort(m_near.begin(), m_near.end());
        const auto &near = m_near;
        const size_t m = near.size() / 2;
        double med;
        if (near.size() % 2 || near.size() == 2)
            med = near.size() == 2 ? (near[0] + near[1]) / 2.0 : near[m];
        else {
            const double l = near[m - 1] - near.front(), r = near.back() - near[m];
            med = l + r == 0 ? (near[m - 1] + near[m]) / 2.0 : (near[m - 1] * r + near[m] * l) / (l + r);
        }
        m_key[i] = med;
        // Ties go by the neighbours on the other side (a side chain joining the node its
        // neighbour joins stays on the side it leaves from).
        double other = 0, cnt = 0;
        for (uint32_t j : downward ? down[i] : up[i])
            if (layerOf[j] == li + (downward ? 1 : -1))
                other += m_idx[j], cnt += 1;
        m_key2[i] = cnt ? other / cnt : double(k); // (no neighbours there: its own place)
        movable.push_back(i);
        places.push_back(uint32_t(k));
    }
    std::stable_sort(movable.begin(), movable.end(),
                     [&](uint32_t a, uint32_t b) { return m_key[a] != m_key[b] ? m_key[a] < m_key[b] : m_key2[a] < m_key2[b]; });
    for (size_t k = 0; k < movable.size(); ++k)
        layer[places[k]] = movable[k];
    for (size_t k = 0; k < layer.size(); ++k)
        m_idx[layer[k]] = uint32_t(k);
}

void Mincross::sweep(Layers &bl, bool downward, bool grouped)
{
    for (int li = downward ? 1 : m_layers - 2; downward ? li < m_layers : li >= 0; li += downward ? 1 : -1) {
        auto &layer = bl[size_t(li)];
        sortByMedian(layer, li, downward);
        if (grouped)
            group(layer);
    }
}

// Crossings of the edges of two neighbours in a layer with the layers above and below, were
// `left` left of `right`.
size_t Mincross::pairCrossings(uint32_t left, uint32_t right) const
{
    size_t c = 0;
    for (const auto *nb : {&m_s.up, &m_s.down})
        for (uint32_t a : (*nb)[left])
            for (uint32_t b : (*nb)[right])
                c += m_s.layerOf[a] == m_s.layerOf[b] && m_idx[a] > m_idx[b];
    return c;
}

bool Mincross::inBranch(uint32_t node, uint32_t branch, size_t depth) const
{
    const auto &c = m_s.chainOf[m_s.clusterId[node]];
    return c.size() > depth && c[depth] == branch;
}

// The runs [k, m) and [m, r) may trade places when each holds all of its module's nodes in the
// layer below the module the two share: the nodes just outside them are of other branches.
bool Mincross::blockCanMove(const std::vector<uint32_t> &layer, size_t k, size_t m, size_t r) const
{
    const auto &ca = m_s.chainOf[m_s.clusterId[layer[k]]], &cb = m_s.chainOf[m_s.clusterId[layer[m]]];
    size_t d = 0;
    while (d < ca.size() && d < cb.size() && ca[d] == cb[d])
        ++d;
    bool ok = true;
    if (ca.size() > d)
        for (size_t j = k; j-- > 0;)
            if (layer[j] < m_n) {
                ok = !inBranch(layer[j], ca[d], d);
                break;
            }
    if (ok && cb.size() > d)
        for (size_t j = r; j < layer.size(); ++j)
            if (layer[j] < m_n) {
                ok = !inBranch(layer[j], cb[d], d);
                break;
            }
    return ok;
}

// In the grouped order, whole modules swap places too: two neighbouring runs of nodes (each all of
// its module's nodes in the layer, below the module the two share) trade places when that removes
// crossings.
bool Mincross::swapBlocks(std::vector<uint32_t> &layer)
{
    const auto &clusterId = m_s.clusterId;
    bool improved = false;
    const size_t size = layer.size();
    for (size_t k = 0; k < size;) {
        if (layer[k] >= m_n) {
            ++k;
            continue;
        }
        size_t m = k;
        while (m < size && layer[m] < m_n && clusterId[layer[m]] == clusterId[layer[k]])
            ++m;
        if (m >= size || layer[m] >= m_n) {
            k = m;
            continue;
        }
        size_t r = m;
        while (r < size && layer[r] < m_n && clusterId[layer[r]] == clusterId[layer[m]])
            ++r;
        if (blockCanMove(layer, k, m, r)) {
            size_t before = 0, after = 0;
            for (size_t a = k; a < m; ++a)
                for (size_t b = m; b < r; ++b) {
                    before += pairCrossings(layer[a], layer[b]);
                    after += pairCrossings(layer[b], layer[a]);
                }
            if (after < before) {
                std::rotate(layer.begin() + std::ptrdiff_t(k), layer.begin() + std::ptrdiff_t(m), layer.begin() + std::ptrdiff_t(r));
                for (size_t j = k; j < r; ++j)
                    m_idx[layer[j]] = uint32_t(j);
                improved = true;
                k += r - m;
                continue;
            }
        }
        k = m;
    }
    return improved;
}

// Transposition (as dot's): swap neighbours in a layer while that removes crossings with the
// layers above and below; in the grouped order a module's nodes stay together (dummies move
// freely: frames hold nodes only).
void Mincross::transpose(Layers &bl, bool grouped)
{
    const auto &clusterId = m_s.clusterId;
    for (int pass = 0; pass < 16; ++pass) {
        bool improved = false;
        for (auto &layer : bl)
            for (size_t k = 0; k + 1 < layer.size(); ++k) {
                const uint32_t u = layer[k], w = layer[k + 1];
                if (grouped && clusterId[u] != clusterId[w] && u < m_n && w < m_n)
                    continue;
                const size_t c0 = pairCrossings(u, w), c1 = pairCrossings(w, u);
                if (c1 < c0) {
                    std::swap(layer[k], layer[k + 1]);
                    std::swap(m_idx[u], m_idx[w]);
                    improved = true;
                }
            }
        if (grouped)
            for (auto &layer : bl)
                improved = swapBlocks(layer) || improved;
        if (!improved)
            break;
    }
}

// Crossings between adjacent layers: inversions of the edge pieces, counted with a Fenwick tree.
size_t Mincross::crossingsBelow(const Layers &bl, size_t li)
{
    size_t c = 0;
    m_pieces.clear();
    for (uint32_t a : bl[li])
        for (uint32_t b : m_s.down[a])
            if (m_s.layerOf[b] == int(li) + 1)
                m_pieces.emplace_back(m_idx[a], m_idx[b]);
    std::sort(m_pieces.begin(), m_pieces.end());
    const size_t width = bl[li + 1].size();
    m_fenwick.assign(width + 1, 0);
    size_t inserted = 0;
    for (size_t k = 0; k < m_pieces.size();) {
        size_t e = k;
        for (; e < m_pieces.size() && m_pieces[e].first == m_pieces[k].first; ++e) {
            size_t atMost = 0; // inserted pieces ending at or left of this one's end
            for (size_t f = m_pieces[e].second + 1; f > 0; f -= f & (~f + 1))
                atMost += m_fenwick[f];
            c += inserted - atMost;
        }
        for (; k < e; ++k, ++inserted)
            for (size_t f = m_pieces[k].second + 1; f <= width; f += f & (~f + 1))
                ++m_fenwick[f];
    }
    return c;
}

size_t Mincross::countCrossings(const Layers &bl)
{
    size_t c = 0;
    for (size_t li = 0; li + 1 < bl.size(); ++li)
        c += crossingsBelow(bl, li);
    return c;
}

size_t Mincross::crossingsOf(const Layers &bl)
{
    renumber(bl);
    return countCrossings(bl);
}

// A long bundle can lie on the wrong side of a whole run of blocks, which no swap of neighbours
// mends: each bundle of four dummies or more also tries the far left and the far right of its
// layers, and stays where the layers it passes have the fewest crossings.
void Mincross::placeTrunks(Layers &bl, size_t best)
{
    for (const auto &trunk : m_s.trunks) {
        const uint32_t first = trunk.first; // (plain names: lambdas below capture them)
        const int count = trunk.second;
        if (count < 4 || best == 0)
            continue;
        const size_t top = size_t(m_s.layerOf[first]), bottom = top + size_t(count) - 1;
        auto crossingsAround = [&]() {
            size_t c = 0;
            for (size_t l = top - 1; l <= bottom && l + 1 < bl.size(); ++l)
                c += crossingsBelow(bl, l);
            return c;
        };
        const size_t before = crossingsAround();
        size_t fewest = before;
        int side = 0; // 0: where it is, 1: far left, 2: far right
        std::vector<uint32_t> home(static_cast<size_t>(count));
        for (int k = 0; k < count; ++k)
            home[size_t(k)] = m_idx[first + uint32_t(k)];
        auto moveTo = [&](int where) {
            for (int k = 0; k < count; ++k) {
                const uint32_t d = first + uint32_t(k);
                auto &layer = bl[size_t(m_s.layerOf[d])];
                layer.erase(layer.begin() + std::ptrdiff_t(m_idx[d]));
                const size_t at = where == 1 ? 0 : where == 2 ? layer.size() : size_t(home[size_t(k)]);
                layer.insert(layer.begin() + std::ptrdiff_t(at), d);
                for (size_t j = 0; j < layer.size(); ++j)
                    m_idx[layer[j]] = uint32_t(j);
            }
        };
        for (int where : {1, 2}) {
            moveTo(where);
            if (const size_t c = crossingsAround(); c < fewest)
                fewest = c, side = where;
        }
        moveTo(side == 2 ? 2 : 0);
        if (side == 1)
            moveTo(1);
    }
}

// Sweeps from one starting order (alternating, the first one down or up), keeping the order with
// the fewest crossings; then the bundles try the sides of their layers.
size_t Mincross::mincrossFrom(Layers &bl, bool grouped, int iterations, bool downFirst)
{
    renumber(bl);
    if (grouped)
        for (auto &layer : bl)
            group(layer);
    transpose(bl, grouped);
    size_t best = countCrossings(bl);
    Layers kept = bl;
    for (int it = 0, stale = 0; it < iterations && best > 0 && stale < 6; ++it) {
        sweep(bl, (it % 2 == 0) == downFirst, grouped);
        transpose(bl, grouped);
        const size_t c = countCrossings(bl);
        stale = c < best ? 0 : stale + 1;
        if (c <= best) {
            best = c;
            kept = bl;
        }
    }
    bl = kept;
    renumber(bl);
    placeTrunks(bl, best);
    if (const size_t c = countCrossings(bl); c <= best) {
        best = c;
        kept = bl;
    }
    bl.swap(kept);
    return best;
}

Layers Mincross::depthFirstOrder() const
{
    const size_t slots = m_s.slots();
    const auto &up = m_s.up, &down = m_s.down;
    Layers depthFirst(static_cast<size_t>(m_layers));
    std::vector<uint8_t> seen(slots, 0);
    std::vector<uint32_t> stack;
    for (uint32_t s0 = 0; s0 < slots; ++s0) {
        if (seen[s0] || !up[s0].empty())
            continue;
        stack.push_back(s0);
        seen[s0] = 1;
        while (!stack.empty()) {
            const uint32_t i = stack.back();
            stack.pop_back();
            depthFirst[size_t(m_s.layerOf[i])].push_back(i);
            for (auto t = down[i].rbegin(); t != down[i].rend(); ++t)
                if (!seen[*t]) {
                    seen[*t] = 1;
                    stack.push_back(*t);
                }
        }
    }
    for (uint32_t i = 0; i < slots; ++i)
        if (!seen[i])
            depthFirst[size_t(m_s.layerOf[i])].push_back(i);
    return depthFirst;
}

// Two starting orders (program order, and dot's: depth first from the sources), each swept first
// down and first up; the best result is kept.
size_t Mincross::run(Layers &bl, bool grouped, int iterations)
{
    if (m_depthFirst.empty())
        m_depthFirst = depthFirstOrder();
    size_t best = SIZE_MAX;
    Layers result;
    for (const Layers *start : {&bl, &m_depthFirst})
        for (const bool downFirst : {true, false}) {
            Layers l = *start;
            const size_t c = mincrossFrom(l, grouped, iterations, downFirst);
            if (c < best) {
                best = c;
                result.swap(l);
            }
            if (best == 0)
                break;
        }
    bl.swap(result);
    renumber(bl);
    return best;
}

// Views of up to 20,000 slots: mincross, grouped by modules when that costs few crossings. Larger
// ones: a few median sweeps (fractions of a second at 100k items).
void orderLayers(LayeredState &s, const LayoutOptions &o)
{
    s.byLayer.assign(static_cast<size_t>(s.layers), {});
    for (size_t i = 0; i < s.slots(); ++i)
        s.byLayer[size_t(s.layerOf[i])].push_back(uint32_t(i));
    Mincross mc(s);
    if (s.slots() <= 20000) {
        const int iterations = s.slots() <= 5000 ? 24 : 8;
        if (s.framed) {
            Layers plain = s.byLayer;
            const size_t free = mc.run(plain, false, iterations);
            const size_t grouped = mc.run(s.byLayer, true, iterations);
            if (double(grouped) > double(free) * 1.25 + 8)
                s.byLayer.swap(plain);
        } else {
            mc.run(s.byLayer, false, iterations);
        }
    } else {
        mc.renumber(s.byLayer);
        for (int k = 0; k < o.sweeps; ++k)
            mc.sweep(s.byLayer, k % 2 == 0, false);
    }
}

} // namespace fxlens::layout::layered
