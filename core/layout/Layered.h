// SPDX-License-Identifier: MIT
// The canvas' own layout for graphs of any size (Qt-free, Graphviz-free). A view of a graph shows
// the nodes of expanded modules and one box per call of a collapsed module (nn_module_stack);
// parameters, constants and what is computed from them alone are hidden by default (attached to
// their readers); inputs and outputs always show. The layered layout places it: layers by data
// flow (a box is ranked by its inputs, whatever its first node; small views also try network
// simplex layerings and keep the fewest crossings), dot-style median ordering with transposition
// within layers (long edges from one item bundled), coordinates; then every edge is routed
// through the gaps between items (routeEdges), so that no edge crosses a node. Graphviz `dot`
// needs seconds for 2k nodes and minutes for 20k; this takes milliseconds for 20k and about a
// second for 160k (docs/BENCHMARKS.md).
#pragma once

#include "ir/Graph.h"
#include "layout/Stacking.h"

#include <set>
#include <string>
#include <vector>

namespace fxlens::layout {

/// What a node does, for its colour and the legend.
enum class OpCategory : uint8_t {
    Input,         ///< placeholder (a model input)
    Output,        ///< the output node
    Constant,      ///< parameters, buffers, constants (get_attr, parameter placeholders)
    MatMulConv,    ///< linear, matmul, addmm, bmm, conv, attention
    Elementwise,   ///< arithmetic, activations, comparisons, casts
    Reduction,     ///< sum, mean, max, softmax, pooling
    ViewReshape,   ///< view, reshape, permute, transpose, expand, squeeze, slice
    DataMovement,  ///< split, cat, stack, getitem, chunk, unbind, index, copy
    Normalization, ///< layer/batch/group norm
    Module,        ///< a collapsed module box, or a call_module of another kind
    Other,
};
constexpr int kOpCategories = int(OpCategory::Other) + 1;
OpCategory opCategory(const ir::Node *n);
const char *opCategoryName(OpCategory c);
/// A parameter, buffer or constant: get_attr, or a placeholder that stands for one of the graph's
/// params (torch.export's p_/b_/c_ inputs).
bool isConstant(const ir::Node *n, const ir::Graph &g);
/// By node id: the nodes hidden while constants are (ViewOptions::showConstants off): constants
/// (isConstant) and what is computed from them alone (a post-grad graph's folded batch-norm
/// scales, an export's transposed weights, position ids from arange): constant folding's work,
/// attached to the first node that reads it, as Model Explorer and Netron show weights.
std::vector<uint8_t> constantNodes(const ir::Graph &g);

struct ViewItem {
    enum class Kind : uint8_t { Node, Module };
    Kind kind = Kind::Node;
    OpCategory category = OpCategory::Other;
    const ir::Node *node = nullptr;    ///< Node items
    std::string module;                ///< Module items: qualified path ("blocks.3"); Node items: innermost module
    std::string label;                 ///< node name or module path
    std::string detail;                ///< target, or "<type>, N nodes" for a module
    std::string value;                 ///< the node's recorded value ("f32[4, 14]"), "" when unknown
    size_t nodeCount = 1;              ///< Module items: the ops in the box (NodeCount::ops)
    size_t weights = 0;                ///< Module items: the weights in the box or read by it (NodeCount::weights)
    int call = 0;                      ///< a module called more than once: which call this box is (0 the first)
    int stack = -1;                    ///< a stack's box or lane: its index in ViewOptions::stacks
    size_t stacked = 0;                ///< a stack's box: the modules it stands for; a lane: its nodes
    std::string cluster;               ///< the innermost expanded module drawn around this item ("" at the root)
    size_t hiddenInputs = 0;           ///< parameters and constants read by this item, hidden from the view
    std::string hiddenSummary;         ///< "weight f32[64, 3, 7, 7], bias f32[64]" (the first few)
    double x = 0, y = 0, w = 0, h = 0; ///< top-left corner and size
    int layer = 0;
};

struct Point {
    double x = 0, y = 0;
};

struct ViewEdge {
    uint32_t from = 0, to = 0;
    const ir::Node *value = nullptr; ///< the node whose value the edge carries (the first, when several)
    uint32_t count = 1;              ///< node-to-node edges this item edge stands for
    bool back = false;               ///< goes against the layers (a cycle between module boxes)
    std::vector<Point> route;        ///< polyline from the source's bottom to the target's top
    std::vector<Point> via;          ///< where the layout left room for it in the layers it passes (routeEdges follows)
};

struct ViewGraph {
    std::vector<ViewItem> items;
    std::vector<ViewEdge> edges;
    double width = 0, height = 0;
    /// Item of a graph node (the node itself or the collapsed module that holds it).
    std::vector<int32_t> itemOfNode; ///< by node id; -1 for erased ids
    /// The expanded modules that hold items (prefixes of the items' clusters that are modules: a
    /// ModuleList such as "encoder.layer" is not one); empty: every prefix counts.
    std::set<std::string> modules;
};

/// The module chain a node is drawn in: its own, or for an input or parameter outside any module
/// (ATen exports) the chain of its first reader.
const std::vector<ir::ModuleFrame> &displayModules(const ir::Node *n);

/// How many nodes a module (or a graph) holds, as its box, the Inspector and the status bar say:
/// the ops (what the canvas draws, or draws as the box) and the weights (constantNodes:
/// parameters, buffers, constants and what is computed from them alone, hidden by default), a
/// weight counted in the module of the op it goes with (constantReaders) when every op that reads
/// it is in that module too (onlyReadIn).
struct NodeCount {
    size_t ops = 0, weights = 0;
    std::string text() const; ///< "30 ops · 18 weights"; "5 ops" without weights
};
/// By node id: the op each constant goes with: its first reader that is no constant (through the
/// constants computed from it, as the canvas attaches hidden inputs); nullptr for the others and
/// for a constant nothing reads.
std::vector<const ir::Node *> constantReaders(const ir::Graph &g, const std::vector<uint8_t> &constants);
/// Whether the node is drawn in module `path` (displayModules), or in one of the modules a range
/// path ("blocks.0–49") names.
bool inModule(const ir::Node *n, const std::string &path);
/// Whether every op that reads `constant` (directly or through constants computed from it) is in
/// module `path`: a weight is counted in a module only then (BERT's attention mask, read by all
/// twelve layers, counts in the encoder, not in layer 0 where it is first read).
bool onlyReadIn(const ir::Node *constant, const std::vector<uint8_t> &constants, const std::string &path);
/// The nodes module `path` holds, every call of it together.
NodeCount moduleNodeCount(const ir::Graph &g, const std::string &path);
/// The nodes of the whole graph (inputs and the output are ops).
NodeCount graphNodeCount(const ir::Graph &g);

struct ViewOptions {
    /// Show parameters, buffers and constants as items (hidden by default: each reader counts
    /// them in `hiddenInputs`).
    bool showConstants = false;
    /// Sibling modules drawn as one box each ("blocks.0–49 ×50", findStacks); a member that is
    /// expanded shows on its own. The nodes that feed a stack lane by lane are one item too.
    std::vector<ModuleStack> stacks;
};

/// The view for a set of expanded module paths ("" is the root and always expanded): a node whose
/// module chain has a collapsed module shows as that module's box (one box per call: a module
/// whose output was read outside it and that runs again gets a second box).
ViewGraph buildView(const ir::Graph &g, const std::set<std::string> &expanded, const ViewOptions &o = {});

/// Every module path of the graph (for "expand all").
std::set<std::string> allModules(const ir::Graph &g);

struct LayoutOptions {
    double layerGap = 36;
    double itemGap = 14;
    int sweeps = 2; ///< median sweeps (down, up, ...) for views over 20,000 slots (smaller ones: mincross)
    /// Layers wider than max(this, 2 * sqrt(scene area)) wrap onto further rows in views of more
    /// than `wrapItems` items (a wrapped layer's rows cross each other's edges: smaller views keep
    /// one row per layer and start at a readable zoom instead).
    double minWrapWidth = 2400;
    size_t wrapItems = 2000;
    /// How items get their layers. Auto: views up to `tryLayeringsItems` items are laid out with
    /// each layering below and keep the one with the fewest edge crossings; larger ones use
    /// LongestPath (linear time).
    enum class Layering { Auto, LongestPath, NetworkSimplex, NetworkSimplexBalanced };
    Layering layering = Layering::Auto;
    size_t tryLayeringsItems = 2000; // (larger views wrap their layers: the tries gain little there and cost seconds)
    /// Edges get lines of their own and straightened runs (routeEdges). Auto compares layerings
    /// on their plain routes and refines the one it keeps (unless that adds crossings): a
    /// refinement that removes a crossing does not make a layering win whose picture is
    /// otherwise worse.
    bool refineRoutes = true;
};
using Layering = LayoutOptions::Layering;

void layeredLayout(ViewGraph &v, const LayoutOptions &o = {});

/// What a step changed in a view laid out in place (placeStable).
struct StableResult {
    /// Items of the previous view whose nodes are all gone now (their positions; `node` is not
    /// valid); an item whose nodes other items show now (a stack regrouped) is none of them.
    std::vector<ViewItem> removed;
    std::vector<uint32_t> added; ///< items of the new view that the previous one did not have (none: laid out afresh)
};

/// The frame around an expanded module's items: one rectangle around its members (items in it or
/// in modules inside it, and the long edges between them) and the frames of its framed children,
/// kFramePad wide on the sides and below, with a kFrameTitle band on top for its name. The layout
/// leaves room for them: frames nest with a margin, and siblings and other items stay outside.
/// A module of one item gets no frame.
constexpr double kFramePad = 6, kFrameTitle = 16;
/// Edges keep this far from a frame's top and bottom where they turn, and from the side of a
/// frame they cross (routeEdges).
constexpr double kFrameClearance = 5;
/// An edge that runs beside a frame's side keeps this far from it, and from each side of the frames
/// nested there: the frames are widened for its lane (a long edge's dummy, Coordinates.cpp, or a
/// lane routeEdges gives it). 12 px on screen at the zoom the canvas lands at (0.6): an edge
/// nearer a side reads as part of the outline.
constexpr double kEdgeFrameGap = 20;
/// The room a frame's title takes at the left of its band (its path in the canvas' 11 px bold
/// font, at most 7 px a character): an edge entering the frame from above crosses the band
/// kFrameClearance right of it, so frames reach that far left of their entries.
inline double frameTitleWidth(const std::string &path) { return double(path.size()) * 7 + 4; }
struct ModuleFrame {
    std::string path;
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0; ///< outline, title band included
    int depth = 0;                         ///< dots in the path
    size_t members = 0;                    ///< items inside (at any depth)
};
/// Outermost first (by depth).
std::vector<ModuleFrame> moduleFrames(const ViewGraph &v);
/// Whether a placed view's frames (moduleFrames) tell the truth: no item in a frame of a module it
/// is not in, none in a frame's title band, and frames that do not nest apart (so no title meets
/// another's band). `why` says what is wrong otherwise. The layered layout keeps them so;
/// placeStable and placeInPlace lay out afresh where they would not.
bool framesTrue(const ViewGraph &v, std::string *why = nullptr);

/// Lays `v` out where `previous` was (the same graph before an edit): items the previous view had
/// (by label) keep their positions; new items go below their inputs, in the nearest free place
/// inside their module's frame, clear of other modules' frames and of title bands (never over a
/// kept item or where a removed one was; where there is none near, a row is opened under the
/// inputs and what lies below moves down); edges are routed again. When more than
/// `maxNewShare` of the items are new, or the removed items' area is more than `maxHoleShare` of
/// the kept ones' (it would leave holes), or the new items cannot be placed so that the frames stay
/// true (framesTrue, and no frame stretched to twice its kept area), `v` is laid out afresh
/// (layeredLayout) instead.
StableResult placeStable(ViewGraph &v, const ViewGraph &previous, double maxNewShare = 0.3, const LayoutOptions &o = {},
                         double maxHoleShare = 0.1);

/// Lays `v` out where `previous` was (the same graph with modules expanded or collapsed): every
/// other item keeps its position; an expanded box's contents are laid out on their own and take
/// its place (centred under its top, the top of the frames it opens, title bands included: its
/// module's and those around it that now frame more than the box, so that the row above keeps
/// its distance and edges turn above the frames, as in layeredLayout; what lies below moves
/// down, what shares its row moves aside); a collapsed module's box takes the top
/// of what it stood for (what lies below moves up). False, leaving `v` unplaced, when the views
/// differ otherwise or its frames would not be true (framesTrue): then use layeredLayout.
bool placeInPlace(ViewGraph &v, const ViewGraph &previous, const LayoutOptions &o = {});

/// Routes every edge through the free space of a laid-out view: items are grouped into rows (by
/// vertical overlap), an edge leaves its source downwards, crosses each row in between through the
/// gap between two items nearest its way, and enters its target from above; an edge going upwards
/// (a cycle) runs around the right side. No route crosses an item. Passages keep off frame sides
/// and the titles of frames opening at a row; an edge drops into a row straight down through the
/// title bands above it.
/// `refine`: lines of their own and straightened runs (LayoutOptions::refineRoutes).
void routeEdges(ViewGraph &v, double gap = 14, bool refine = true);
/// Routes the edges of a view whose items were placed freely (placeStable, placeInPlace): edges
/// that end above where they start are marked back edges, no via points are followed.
void routePlacedEdges(ViewGraph &v, double gap = 14);

/// How readable a laid-out view is: edges whose route crosses an item other than their ends, and
/// crossings between routes (segments of two edges that intersect away from shared ends).
struct LayoutQuality {
    size_t edgesThroughItems = 0;
    size_t crossings = 0;
    size_t backEdges = 0;
};
/// `maxSegments` bounds the crossing count's work (0 counts none).
LayoutQuality measureLayout(const ViewGraph &v, size_t maxSegments = 200000);

} // namespace fxlens::layout
