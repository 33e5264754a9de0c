// SPDX-License-Identifier: MIT
#include "layout/Layered.h"
#include "ir/ModuleRange.h"
#include "layout/LayeredPhases.h"
#include "util/Text.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace fxlens::layout {

std::set<std::string> allModules(const ir::Graph &g)
{
    std::set<std::string> out;
    for (ir::Node *n = g.first(); n; n = n->next())
        for (const auto &f : n->meta().moduleStack)
            if (!f.path.empty())
                out.insert(f.path);
    return out;
}

const std::vector<ir::ModuleFrame> &displayModules(const ir::Node *n)
{
    static const std::vector<ir::ModuleFrame> none;
    // Inputs and the output are always top-level items, never hidden in a module's box.
    if (n->op() == ir::OpKind::Placeholder || n->op() == ir::OpKind::Output)
        return none;
    const auto &own = n->meta().moduleStack;
    if (own.empty() && n->op() == ir::OpKind::GetAttr && !n->users().empty())
        return n->users().front()->meta().moduleStack;
    return own;
}

namespace {

/// The outermost collapsed module on the node's chain (the box that stands for it), or nullptr.
const ir::ModuleFrame *collapsedBox(const ir::Node *n, const std::set<std::string> &expanded)
{
    for (const auto &f : displayModules(n))
        if (!f.path.empty() && !expanded.count(f.path))
            return &f;
    return nullptr;
}

void sizeItem(ViewItem &i)
{
    if (i.kind == ViewItem::Kind::Module) {
        i.detail = (i.detail.empty() ? std::string() : i.detail + ", ") + NodeCount{i.nodeCount, i.weights}.text();
        i.h = 40;
    } else {
        i.h = 32;
    }
    const size_t chars = std::max(i.label.size(), std::min<size_t>(i.detail.size() + (i.value.empty() ? 0 : i.value.size() + 3), 40));
    i.w = std::clamp(double(chars) * 6.5 + 16, 60.0, 260.0);
}

/// The item of a node shown as itself.
ViewItem nodeItem(const ir::Node *n)
{
    ViewItem i;
    i.node = n;
    i.category = opCategory(n);
    i.module = n->meta().modulePath();
    for (const auto &f : displayModules(n))
        if (!f.path.empty())
            i.cluster = f.path;
    i.label = n->name();
    i.detail = n->op() == ir::OpKind::CallFunction || n->op() == ir::OpKind::CallMethod || n->op() == ir::OpKind::CallModule
        ? n->target()
        : std::string(ir::opKindName(n->op()));
    if (n->meta().val.kind != ir::ValueMeta::Kind::Unknown)
        i.value = n->meta().val.toString();
    return i;
}

/// A collapsed module's box for node `n` (the first of its call); a stack's box (`stack` >= 0) is
/// named by nameBoxes once its members are known.
ViewItem moduleBox(const ir::Node *n, const ir::ModuleFrame *box, int stack)
{
    ViewItem m;
    m.kind = ViewItem::Kind::Module;
    m.category = OpCategory::Module;
    m.module = box->path;
    m.stack = stack;
    for (const auto &f : displayModules(n)) { // the frames outside the box are expanded
        if (&f == box)
            break;
        if (!f.path.empty())
            m.cluster = f.path;
    }
    m.detail = box->type;
    m.nodeCount = 0;
    return m;
}

/// The box of a collapsed module's current call (or of a stack's current run of members).
struct Call {
    int32_t item = -1;
    bool over = false;
};

/// A node of a sibling module that is not in a stack's box (a member opened, a member unlike the
/// others) ends the box's run: the members after it get a box of their own.
void endRuns(const ir::Node *n, const StackIndex &stacks, std::unordered_map<std::string, Call> &calls)
{
    for (const auto &f : displayModules(n)) {
        if (f.path.empty())
            continue;
        const int own = stacks.stackOfBox(f.path);
        for (int s : stacks.stacksIn(ir::moduleParent(f.path)))
            if (s != own && stacks.range(s) != f.path) // a batched op's range path is that stack's box
                if (auto c = calls.find(stacks.range(s)); c != calls.end())
                    c->second.over = true;
    }
}

/// By box item: the collapsed modules whose nodes it holds.
using BoxMembers = std::unordered_map<int32_t, std::set<std::string>>;

/// Names the module boxes once every node is in one. A stack's box is named by the members it
/// holds, a run of them in program order: with layer 3 of twelve open, "layer.0–2 ×3" above it and
/// "layer.4–11 ×8" below, never one range across it; a box that holds one member is that
/// module's own. A module run more than once has a box per call, "relu (call 2 of 3)".
void nameBoxes(ViewGraph &v, const BoxMembers &members)
{
    std::unordered_map<std::string, int> calls;
    for (size_t i = 0; i < v.items.size(); ++i) {
        auto &m = v.items[i];
        if (m.kind != ViewItem::Kind::Module)
            continue;
        const std::set<std::string> &paths = members.at(int32_t(i));
        if (m.stack >= 0 && paths.size() >= 2) {
            m.module = ir::rangeLabel(ir::moduleParent(*paths.begin()), {paths.begin(), paths.end()});
            m.stacked = paths.size();
        } else {
            m.stack = -1;
        }
        m.call = calls[m.module]++;
    }
    for (auto &m : v.items) {
        if (m.kind != ViewItem::Kind::Module)
            continue;
        m.label = m.module;
        if (const int n = calls[m.module]; n > 1)
            m.label += " (call " + std::to_string(m.call + 1) + " of " + std::to_string(n) + ")";
        if (m.stacked)
            m.label += " \u00d7" + std::to_string(m.stacked);
    }
}

/// Hidden parameters and constants go with the op that reads them (constantReaders): selecting
/// one shows its reader's item; its tooltip lists them; a box counts them as its weights when no
/// op outside its module reads them (onlyReadIn).
void attachHiddenInputs(ViewGraph &v, const ir::Graph &g, const std::vector<uint8_t> &hidden)
{
    const std::vector<const ir::Node *> reader = constantReaders(g, hidden);
    for (ir::Node *n = g.last(); n; n = n->prev()) {
        const ir::Node *r = hidden[n->id()] ? reader[n->id()] : nullptr;
        if (!r || v.itemOfNode[r->id()] < 0)
            continue;
        v.itemOfNode[n->id()] = v.itemOfNode[r->id()];
        auto &item = v.items[size_t(v.itemOfNode[r->id()])];
        item.weights += item.kind == ViewItem::Kind::Module && onlyReadIn(n, hidden, item.module);
        if (++item.hiddenInputs <= 3) {
            std::string what = n->target().empty() || n->op() != ir::OpKind::GetAttr ? n->name() : n->target();
            if (n->meta().val.kind != ir::ValueMeta::Kind::Unknown)
                what += " " + n->meta().val.toString();
            item.hiddenSummary = what + (item.hiddenSummary.empty() ? "" : ", ") + item.hiddenSummary;
        }
    }
}

/// Edges between the items that stand for a node and its visible inputs (once each, with how many
/// node edges they stand for and the first value they carry).
void addEdges(ViewGraph &v, const ir::Graph &g, const std::vector<uint8_t> &hidden)
{
    struct Key {
        uint64_t key;
        const ir::Node *value;
    };
    std::vector<Key> keys;
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (hidden[n->id()])
            continue;
        const int32_t to = v.itemOfNode[n->id()];
        for (ir::Node *in : n->inputNodes()) {
            if (hidden[in->id()])
                continue;
            const int32_t from = v.itemOfNode[in->id()];
            if (from >= 0 && to >= 0 && from != to)
                keys.push_back({(uint64_t(uint32_t(from)) << 32) | uint32_t(to), in});
        }
    }
    std::stable_sort(keys.begin(), keys.end(), [](const Key &a, const Key &b) { return a.key < b.key; });
    for (size_t k = 0; k < keys.size();) {
        size_t e = k;
        while (e < keys.size() && keys[e].key == keys[k].key)
            ++e;
        ViewEdge edge;
        edge.from = uint32_t(keys[k].key >> 32);
        edge.to = uint32_t(keys[k].key & 0xffffffffu);
        edge.value = keys[k].value;
        edge.count = uint32_t(e - k);
        v.edges.push_back(std::move(edge));
        k = e;
    }
}

} // namespace

ViewGraph buildView(const ir::Graph &g, const std::set<std::string> &expanded, const ViewOptions &o)
{
    ViewGraph v;
    v.itemOfNode.assign(g.idBound(), -1);
    const std::vector<uint8_t> constants = constantNodes(g), hidden = o.showConstants ? std::vector<uint8_t>(g.idBound(), 0) : constants;
    // The box of each collapsed module's current call (a stack's members share one key); a call is
    // over once a node outside the box has read its output, and the module (or the stack's next
    // member) running again then gets a box of its own.
    std::unordered_map<std::string, Call> calls;
    std::unordered_map<int32_t, std::string> pathOfBox;
    BoxMembers members; // by box item: the stack members or the module it stands for
    const StackIndex stacks(g, o.stacks, expanded, hidden, &collapsedBox);
    std::vector<int32_t> laneItem(stacks.lanes(), -1);
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (hidden[n->id()])
            continue;
        int32_t item = -1;
        endRuns(n, stacks, calls);
        if (const ir::ModuleFrame *box = collapsedBox(n, expanded)) {
            const int stack = stacks.stackOfBox(box->path); // a stacked member: the stack's box
            const std::string key = stack >= 0 ? stacks.range(stack) : box->path;
            Call &c = calls[key];
            if (c.item < 0 || c.over) {
                v.items.push_back(moduleBox(n, box, stack));
                c.item = int32_t(v.items.size() - 1);
                c.over = false;
                pathOfBox[c.item] = key;
            }
            item = c.item;
            members[item].insert(box->path);
            ++(constants[n->id()] ? v.items[size_t(item)].weights : v.items[size_t(item)].nodeCount);
        } else if (const int lane = stacks.laneOf(n); lane >= 0 && laneItem[size_t(lane)] >= 0) {
            item = laneItem[size_t(lane)];
            ++v.items[size_t(item)].nodeCount;
        } else {
            v.items.push_back(nodeItem(n));
            item = int32_t(v.items.size() - 1);
            if (lane >= 0) { // the first node of a lane stands for all of them
                auto &it = v.items.back();
                it.stack = stacks.laneStack(lane);
                it.stacked = stacks.laneSize(lane);
                it.detail += " \u00d7" + std::to_string(it.stacked);
                laneItem[size_t(lane)] = item;
            }
        }
        v.itemOfNode[n->id()] = item;
        for (ir::Node *in : n->inputNodes()) {
            const int32_t from = hidden[in->id()] ? -1 : v.itemOfNode[in->id()];
            if (from < 0 || from == item)
                continue;
            if (auto p = pathOfBox.find(from); p != pathOfBox.end())
                if (Call &c = calls[p->second]; c.item == from)
                    c.over = true;
        }
    }
    nameBoxes(v, members);
    attachHiddenInputs(v, g, hidden);
    for (auto &i : v.items)
        sizeItem(i);
    // Expanded modules whose nodes run in one stretch of the program; one called at several places
    // (a ReLU used three times in a block) is no frame: it would hold its callers' other nodes.
    std::unordered_map<std::string, size_t> last;
    std::set<std::string> split;
    size_t t = 0;
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (hidden[n->id()] || v.itemOfNode[n->id()] < 0)
            continue;
        ++t;
        for (const auto &f : displayModules(n))
            if (!f.path.empty() && expanded.count(f.path)) {
                auto [at, fresh] = last.emplace(f.path, t);
                if (!fresh && at->second + 1 != t)
                    split.insert(f.path);
                at->second = t;
            }
    }
    for (const auto &[path, at] : last)
        if (!split.count(path))
            v.modules.insert(path);
    addEdges(v, g, hidden);
    return v;
}

namespace {

/// Layering::Auto: the layerings differ by view (the least total edge length is not always the
/// fewest crossings): small views try each and keep the picture with the fewest crossings.
void layOutBestLayering(ViewGraph &v, const LayoutOptions &o)
{
    LayoutOptions each = o;
    each.layering = Layering::LongestPath;
    if (v.items.size() > o.tryLayeringsItems || v.items.size() < 3) {
        layeredLayout(v, each);
        return;
    }
    ViewGraph best;
    Layering chosen = Layering::LongestPath;
    size_t fewest = SIZE_MAX;
    each.refineRoutes = false;
    for (const Layering l : {Layering::LongestPath, Layering::NetworkSimplex, Layering::NetworkSimplexBalanced}) {
        ViewGraph candidate = v;
        each.layering = l;
        layeredLayout(candidate, each);
        const size_t crossings = measureLayout(candidate).crossings;
        if (crossings < fewest) {
            fewest = crossings;
            best = std::move(candidate);
            chosen = l;
        }
        if (fewest == 0)
            break;
    }
    if (!o.refineRoutes) {
        v = std::move(best);
        return;
    }
    each.layering = chosen; // laid out again, its routes refined, kept where that adds no crossing
    each.refineRoutes = true;
    layeredLayout(v, each);
    if (measureLayout(v).crossings > fewest)
        v = std::move(best);
}

} // namespace

// The phases (layout/LayeredPhases.h): layers, slots with dummies for long edges, the order within
// layers, coordinates; then the routes.
void layeredLayout(ViewGraph &v, const LayoutOptions &o)
{
    if (v.items.empty()) {
        v.width = v.height = 0;
        return;
    }
    if (o.layering == Layering::Auto) {
        layOutBestLayering(v, o);
        return;
    }
    layered::LayeredState s(v);
    layered::rankItems(s, o.layering);
    layered::addSlots(s);
    layered::findClusters(s);
    layered::orderLayers(s, o);
    layered::placeSlots(s, o);
    routeEdges(v, o.itemGap, o.refineRoutes);
}

} // namespace fxlens::layout
