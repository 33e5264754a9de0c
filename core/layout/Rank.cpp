// SPDX-License-Identifier: MIT
// Layers by network simplex (Gansner, Koutsofios, North, Vo: "A technique for drawing directed
// graphs", 1993; the ranking Graphviz dot uses): among all layerings that keep every edge pointing
// down, the one with the least total edge length, so that weight and side chains sit next to
// their readers and fewer long edges cross the picture.
#include "layout/Rank.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace fxlens::layout {

namespace {

struct Edge {
    uint32_t tail, head;
    int minlen, weight;
    bool tree = false;
    int cut = 0;
};

class Simplex {
public:
    Simplex(size_t n, std::vector<Edge> edges) : m_n(n), m_edges(std::move(edges)), m_out(n), m_in(n), m_rank(n, 0)
    {
        for (uint32_t e = 0; e < m_edges.size(); ++e) {
            m_out[m_edges[e].tail].push_back(e);
            m_in[m_edges[e].head].push_back(e);
        }
    }

    bool run(size_t maxIterations)
    {
        if (!initRank())
            return false;
        feasibleTree();
        computeRanges();
        computeCutValues();
        size_t search = 0;
        for (size_t it = 0; it < maxIterations; ++it) {
            const int leave = leaveEdge(search);
            if (leave < 0)
                return true;
            const int enter = enterEdge(uint32_t(leave));
            if (enter < 0)
                return true; // cannot improve (should not happen on a connected graph)
            m_edges[uint32_t(leave)].tree = false;
            m_edges[uint32_t(enter)].tree = true;
            rerankFromTree();
            computeRanges();
            computeCutValues();
        }
        return true; // the best found within the budget (feasible either way)
    }

    const std::vector<int> &ranks() const { return m_rank; }

private:
    int slack(const Edge &e) const { return m_rank[e.head] - m_rank[e.tail] - e.minlen; }

    /// Longest path from the sources (a feasible layering); false on a cycle.
    bool initRank()
    {
        std::vector<uint32_t> indeg(m_n), ready;
        for (uint32_t v = 0; v < m_n; ++v)
            if ((indeg[v] = uint32_t(m_in[v].size())) == 0)
                ready.push_back(v);
        size_t done = 0;
        while (!ready.empty()) {
            const uint32_t v = ready.back();
            ready.pop_back();
            ++done;
            for (uint32_t e : m_out[v]) {
                const Edge &ed = m_edges[e];
                m_rank[ed.head] = std::max(m_rank[ed.head], m_rank[v] + ed.minlen);
                if (--indeg[ed.head] == 0)
                    ready.push_back(ed.head);
            }
        }
        return done == m_n;
    }

    /// A spanning tree of tight edges (slack 0): grown from node 0; while it does not span, the
    /// tree moves by the slack of the tightest edge that leaves it.
    void feasibleTree()
    {
        std::vector<uint8_t> inTree(m_n, 0);
        std::vector<uint32_t> treeNodes, stack;
        inTree[0] = 1;
        treeNodes.push_back(0);
        auto grow = [&](size_t from) { // tight edges from the nodes treeNodes[from..]
            stack.assign(treeNodes.begin() + std::ptrdiff_t(from), treeNodes.end());
            while (!stack.empty()) {
                const uint32_t v = stack.back();
                stack.pop_back();
                for (const auto *list : {&m_out[v], &m_in[v]})
                    for (uint32_t e : *list) {
                        Edge &ed = m_edges[e];
                        const uint32_t w = ed.tail == v ? ed.head : ed.tail;
                        if (inTree[w] || slack(ed) != 0)
                            continue;
                        ed.tree = true;
                        inTree[w] = 1;
                        treeNodes.push_back(w);
                        stack.push_back(w);
                    }
            }
        };
        grow(0);
        while (treeNodes.size() < m_n) {
            int best = -1, bestSlack = INT_MAX;
            for (uint32_t e = 0; e < m_edges.size(); ++e) {
                const Edge &ed = m_edges[e];
                if (inTree[ed.tail] != inTree[ed.head] && slack(ed) < bestSlack)
                    bestSlack = slack(ed), best = int(e);
            }
            if (best < 0)
                break; // not connected (the caller connects the graph)
            const Edge &ed = m_edges[uint32_t(best)];
            const int delta = inTree[ed.head] ? -bestSlack : bestSlack;
            for (uint32_t v : treeNodes)
                m_rank[v] += delta;
            const size_t from = treeNodes.size();
            m_edges[uint32_t(best)].tree = true;
            const uint32_t w = inTree[ed.head] ? ed.tail : ed.head;
            inTree[w] = 1;
            treeNodes.push_back(w);
            grow(from);
        }
    }

    /// Postorder numbers of the tree rooted at node 0: the subtree under v holds exactly the nodes
    /// with low[v] <= lim[x] <= lim[v]; parentEdge[v] is the tree edge to v's parent.
    void computeRanges()
    {
        m_low.assign(m_n, 0);
        m_lim.assign(m_n, 0);
        m_parent.assign(m_n, -1);
        m_post.clear();
        std::vector<uint8_t> seen(m_n, 0);
        struct Frame {
            uint32_t v;
            size_t next;
            int low;
        };
        std::vector<Frame> stack{{0, 0, 1}};
        seen[0] = 1;
        int counter = 1;
        while (!stack.empty()) {
            Frame &f = stack.back();
            const size_t outs = m_out[f.v].size();
            bool descended = false;
            while (f.next < outs + m_in[f.v].size()) {
                const uint32_t e = f.next < outs ? m_out[f.v][f.next] : m_in[f.v][f.next - outs];
                ++f.next;
                const Edge &ed = m_edges[e];
                const uint32_t w = ed.tail == f.v ? ed.head : ed.tail;
                if (!ed.tree || seen[w])
                    continue;
                seen[w] = 1;
                m_parent[w] = int(e);
                stack.push_back({w, 0, counter});
                descended = true;
                break;
            }
            if (descended)
                continue;
            m_low[f.v] = f.low;
            m_lim[f.v] = counter++;
            m_post.push_back(f.v);
            stack.pop_back();
        }
    }

    bool inSubtree(uint32_t root, uint32_t x) const { return m_low[root] <= m_lim[x] && m_lim[x] <= m_lim[root]; }

    /// Cut values of the tree edges, leaves first (Graphviz's x_cutval).
    void computeCutValues()
    {
        for (uint32_t v : m_post) {
            if (m_parent[v] < 0)
                continue;
            Edge &f = m_edges[uint32_t(m_parent[v])];
            const int dir = f.tail == v ? 1 : -1;
            int sum = 0;
            for (const auto *list : {&m_out[v], &m_in[v]})
                for (uint32_t e : *list) {
                    const Edge &ed = m_edges[e];
                    const uint32_t other = ed.tail == v ? ed.head : ed.tail;
                    int rv;
                    bool outside;
                    if (!inSubtree(v, other)) {
                        outside = true;
                        rv = ed.weight;
                    } else {
                        outside = false;
                        rv = (ed.tree ? ed.cut : 0) - ed.weight;
                    }
                    int d = dir > 0 ? (ed.head == v ? 1 : -1) : (ed.tail == v ? 1 : -1);
                    if (outside)
                        d = -d;
                    sum += d < 0 ? -rv : rv;
                }
            f.cut = sum;
        }
    }

    /// A tree edge with a negative cut value (searched round-robin from the last one found).
    int leaveEdge(size_t &search) const
    {
        const size_t m = m_edges.size();
        int best = -1, bestCut = 0, found = 0;
        for (size_t k = 0; k < m; ++k) {
            const size_t e = (search + k) % m;
            const Edge &ed = m_edges[e];
            if (ed.tree && ed.cut < 0) {
                if (best < 0 || ed.cut < bestCut)
                    best = int(e), bestCut = ed.cut;
                if (++found >= 30) {
                    search = e;
                    break;
                }
            }
        }
        if (best >= 0 && found < 30)
            search = size_t(best);
        return best;
    }

    /// The non-tree edge with the least slack from the head's part to the tail's part left by
    /// removing the tree edge.
    int enterEdge(uint32_t leave) const
    {
        const Edge &l = m_edges[leave];
        // The part below the edge in the rooted tree.
        const bool tailBelow = m_lim[l.tail] < m_lim[l.head];
        const uint32_t sub = tailBelow ? l.tail : l.head;
        int best = -1, bestSlack = INT_MAX;
        for (uint32_t e = 0; e < m_edges.size(); ++e) {
            const Edge &ed = m_edges[e];
            if (ed.tree)
                continue;
            const bool t = inSubtree(sub, ed.tail), h = inSubtree(sub, ed.head);
            // From the head's part into the tail's (the way the negative cut value says to go).
            const bool ok = tailBelow ? (!t && h) : (t && !h);
            if (ok && slack(ed) < bestSlack)
                bestSlack = slack(ed), best = int(e);
        }
        return best;
    }

    /// Ranks again from the tree (every tree edge tight), from node 0.
    void rerankFromTree()
    {
        std::vector<uint8_t> seen(m_n, 0);
        std::vector<uint32_t> stack{0};
        seen[0] = 1;
        while (!stack.empty()) {
            const uint32_t v = stack.back();
            stack.pop_back();
            for (const auto *list : {&m_out[v], &m_in[v]})
                for (uint32_t e : *list) {
                    const Edge &ed = m_edges[e];
                    if (!ed.tree)
                        continue;
                    const uint32_t w = ed.tail == v ? ed.head : ed.tail;
                    if (seen[w])
                        continue;
                    seen[w] = 1;
                    m_rank[w] = ed.tail == v ? m_rank[v] + ed.minlen : m_rank[v] - ed.minlen;
                    stack.push_back(w);
                }
        }
    }

    size_t m_n;
    std::vector<Edge> m_edges;
    std::vector<std::vector<uint32_t>> m_out, m_in;
    std::vector<int> m_rank, m_low, m_lim, m_parent;
    std::vector<uint32_t> m_post;
};

} // namespace

std::vector<int> networkSimplexRanks(size_t n, const std::vector<std::pair<uint32_t, uint32_t>> &edges, size_t maxIterations, bool balance)
{
    if (n == 0)
        return {};
    // A root above every source (edges of weight 0 and length 0) makes the graph connected
    // without changing what is minimised.
    const uint32_t root = uint32_t(n);
    std::vector<Edge> all;
    all.reserve(edges.size() + n);
    std::vector<uint8_t> hasIn(n, 0);
    for (const auto &[a, b] : edges) {
        all.push_back({a, b, 1, 1});
        hasIn[b] = 1;
    }
    for (uint32_t v = 0; v < n; ++v)
        if (!hasIn[v])
            all.push_back({root, v, 0, 0});
    // Node 0 of the solver is the root: ids shift by one.
    for (auto &e : all) {
        e.tail = e.tail == root ? 0 : e.tail + 1;
        e.head = e.head + 1;
    }
    Simplex s(n + 1, std::move(all));
    if (!s.run(maxIterations))
        return {};
    std::vector<int> ranks(s.ranks().begin() + 1, s.ranks().end());
    const int low = *std::min_element(ranks.begin(), ranks.end());
    for (int &r : ranks)
        r -= low;
    if (!balance)
        return ranks;
    // Balance (as dot's): a node with as many edges in as out has the same total length anywhere
    // between its inputs and its readers; it goes to the least crowded layer there.
    const int top = *std::max_element(ranks.begin(), ranks.end());
    std::vector<int> count(size_t(top) + 1, 0), lo(n, 0), hi(n, top), in(n, 0), out(n, 0);
    for (int r : ranks)
        ++count[size_t(r)];
    for (const auto &[a, b] : edges) {
        ++out[a], ++in[b];
        lo[b] = std::max(lo[b], ranks[a] + 1);
        hi[a] = std::min(hi[a], ranks[b] - 1);
    }
    for (uint32_t v = 0; v < n; ++v) {
        if (in[v] != out[v] || in[v] == 0)
            continue;
        int best = ranks[v];
        for (int r = lo[v]; r <= hi[v]; ++r)
            if (count[size_t(r)] < count[size_t(best)])
                best = r;
        if (best == ranks[v])
            continue;
        --count[size_t(ranks[v])];
        ++count[size_t(best)];
        ranks[v] = best;
        // Neighbours' bounds follow the move.
        for (const auto &[a, b] : edges) {
            if (a == v)
                lo[b] = std::max(lo[b], best + 1);
            if (b == v)
                hi[a] = std::min(hi[a], best - 1);
        }
    }
    return ranks;
}

} // namespace fxlens::layout
