// SPDX-License-Identifier: MIT
// AnchorIndex: the live nodes under each anchor key, kept current by the driver under every edit.
#pragma once

#include "rewrite/Pattern.h"

#include <map>
#include <unordered_set>
#include <vector>

namespace fxlens::rewrite {

/// Live nodes by anchor key (op, target) for a fixed set of keys: what graph-level patterns (horizontal
/// fusion, embedding batching) look their group up in, through MatchContext::nodesWithKey. The owner
/// reports every node whose key may have changed (update) and every node about to be unlinked (remove).
class AnchorIndex {
public:
    explicit AnchorIndex(const ir::Graph &g) : m_g(g) {}
    /// Indexes nodes under this key from now on (keys are added before the first node).
    void addKey(const AnchorKey &k) { m_index[k]; }
    /// Forgets every key and node (the patterns changed): keys are added again, then every node.
    void clear()
    {
        m_index.clear();
        m_entryOf.clear();
    }
    /// The live nodes under `k`; none for a key that is not indexed.
    const std::unordered_set<Node *> &nodesWithKey(const AnchorKey &k) const;
    /// Puts `n` under its current (op, target) key (or under none: erased, or not an indexed key).
    void update(Node *n);
    /// Drops `n`, which is about to be unlinked.
    void remove(Node *n);

private:
    using Entry = std::pair<const AnchorKey, std::unordered_set<Node *>>;
    const ir::Graph &m_g;
    std::map<AnchorKey, std::unordered_set<Node *>> m_index;
    std::vector<Entry *> m_entryOf; ///< by node id: the entry holding it (map nodes are stable)
};

} // namespace fxlens::rewrite
