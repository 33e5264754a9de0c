// SPDX-License-Identifier: MIT
// History: steps, versions, branches and skips of a session.
#include "rewrite/History.h"

#include "util/Assert.h"

#include <algorithm>
#include <iterator>

namespace fxlens::rewrite {

void History::forkHere()
{
    if (m_cursor >= m_steps.size())
        return;
    m_branches.push_back({m_cursor, {std::make_move_iterator(m_steps.begin() + long(m_cursor)), std::make_move_iterator(m_steps.end())}});
    m_steps.resize(m_cursor);
}

void History::record(Step s)
{
    FXLENS_ASSERT(m_cursor <= m_steps.size(), "the version is inside the history");
    // A new step after going back: the steps it replaces are kept as a branch.
    forkHere();
    m_steps.push_back(std::move(s));
    ++m_cursor;
}

bool History::undo()
{
    if (m_cursor == 0)
        return false;
    FXLENS_ASSERT(m_cursor <= m_steps.size(), "the version is inside the history");
    Rewriter::undo(m_g, m_steps[m_cursor - 1].edits);
    --m_cursor;
    m_moved(m_steps[m_cursor], true);
    return true;
}

bool History::redo()
{
    if (m_cursor >= m_steps.size())
        return false;
    Rewriter::redo(m_g, m_steps[m_cursor].edits);
    ++m_cursor;
    m_moved(m_steps[m_cursor - 1], false);
    return true;
}

bool History::checkout(size_t v)
{
    if (v > m_steps.size())
        return false;
    while (m_cursor > v)
        undo();
    while (m_cursor < v)
        redo();
    return true;
}

bool History::switchBranch(size_t index)
{
    if (index >= m_branches.size())
        return false;
    Branch b = std::move(m_branches[index]);
    m_branches.erase(m_branches.begin() + long(index));
    checkout(b.fork);
    forkHere();
    // The branch's steps were recorded from this very version (undo restores nodes as they were).
    for (auto &step : b.steps)
        m_steps.push_back(std::move(step));
    return checkout(m_steps.size());
}

std::vector<std::pair<std::string, std::string>> History::skipped() const
{
    std::vector<std::pair<const std::string *, Node *>> live;
    for (const auto &[key, name] : m_skipped)
        if (Node *n = m_g.byId(key.second); n && !n->isErased())
            live.emplace_back(&name, n);
    m_g.renumber();
    std::sort(live.begin(), live.end(), [](const auto &a, const auto &b) {
        return *a.first != *b.first ? *a.first < *b.first : a.second->order() < b.second->order();
    });
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &[name, n] : live)
        out.emplace_back(*name, n->name());
    return out;
}

void History::rebindSkips(const std::function<const Pattern *(const std::string &)> &named)
{
    std::map<std::pair<const Pattern *, uint32_t>, std::string> kept;
    for (auto &[key, name] : m_skipped)
        if (const Pattern *p = named(name))
            kept.emplace(std::make_pair(p, key.second), std::move(name));
    m_skipped = std::move(kept);
}

} // namespace fxlens::rewrite
