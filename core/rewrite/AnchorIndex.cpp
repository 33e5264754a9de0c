// SPDX-License-Identifier: MIT
// AnchorIndex: nodes by anchor key, updated in constant time per edit.
#include "rewrite/AnchorIndex.h"

namespace fxlens::rewrite {

const std::unordered_set<Node *> &AnchorIndex::nodesWithKey(const AnchorKey &k) const
{
    static const std::unordered_set<Node *> empty;
    auto it = m_index.find(k);
    return it == m_index.end() ? empty : it->second;
}

void AnchorIndex::update(Node *n)
{
    if (m_entryOf.size() <= n->id())
        m_entryOf.resize(size_t(m_g.idBound()) + 1024, nullptr);
    Entry *&entry = m_entryOf[n->id()];
    if (entry && !n->isErased() && entry->first.op == n->op() && entry->first.target == n->target())
        return; // the common case: args changed, the key did not
    if (entry)
        entry->second.erase(n);
    entry = nullptr;
    if (n->isErased())
        return;
    auto it = m_index.find({n->op(), n->target()});
    if (it != m_index.end()) {
        it->second.insert(n);
        entry = &*it;
    }
}

void AnchorIndex::remove(Node *n)
{
    // Called before the node is unlinked: drop it from its key by hand.
    if (n->id() < m_entryOf.size() && m_entryOf[n->id()]) {
        m_entryOf[n->id()]->second.erase(n);
        m_entryOf[n->id()] = nullptr;
    }
}

} // namespace fxlens::rewrite
