// SPDX-License-Identifier: MIT
// GraphCanvas: draws a graph laid out by the canvas' own layered layout (core/layout/Layered.h),
// modules collapsed into boxes until expanded (double-click), with level-of-detail painting (boxes
// only when zoomed out, text once legible), zoom around the cursor, pan, fit, selection, match
// highlights and SVG/PNG export. Painting visits only the items a grid index finds in view, so
// graphs of any size stay interactive.
#pragma once

#include "CanvasOverlays.h"
#include "KernelGroups.h"
#include "ir/Graph.h"
#include "layout/Layered.h"

#include <QFontMetrics>
#include <QImage>
#include <QLineF>
#include <QPainterPath>
#include <QPolygonF>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <set>
#include <string>
#include <vector>

class QStatusBar;

namespace fxlens::views {

class GraphDocument;
class Selection;

class GraphCanvas : public QWidget {
    Q_OBJECT
    using Layer = CanvasOverlays::Layer;

public:
    explicit GraphCanvas(QWidget *parent = nullptr);

    /// Shows a graph (nullptr clears), every module collapsed, fitted to the widget.
    void setGraph(const ir::Graph *g);
    const ir::Graph *graph() const { return m_graph; }
    /// Shows the selection (centred, expanding its modules) and its highlight; a click selects.
    void setSelection(Selection *selection);
    /// Follows the document: its graph shown (setGraph), laid out again after an edit (graphEdited).
    void setDocument(GraphDocument *doc);
    /// A busy bar and a Cancel button in `bar` while a Graphviz layout runs off the GUI thread, and
    /// how it ended.
    void addLayoutStatus(QStatusBar *bar);
    /// The graph was edited (a rewrite step, undo): lays it out again, keeping expansions and the
    /// point under the centre; highlights are dropped (they may name erased nodes).
    void graphEdited();
    const layout::ViewGraph &view() const { return m_view; }

    void setExpanded(const QString &module, bool expanded);
    bool isExpanded(const QString &module) const { return m_expanded.count(module.toStdString()) > 0; }
    void expandAll();
    void collapseAll();

    /// Outlines the nodes of a match (the anchor emphasised); empty clears.
    void setHighlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);
    /// Marks candidate anchor nodes (a dot on their item).
    void setMarked(const std::vector<const ir::Node *> &nodes);
    /// A measured cost per node (a profile's device time): items are tinted red by their share of
    /// the largest item's cost (a module box sums its nodes). Empty clears it.
    void setHeat(const std::vector<std::pair<const ir::Node *, double>> &values);
    /// 0..1: the item's cost relative to the costliest item.
    double heatOf(int item) const { return m_overlays.of(Layer::Heat, item); }
    /// The item that shows a node (-1 when none).
    int itemOf(const ir::Node *n) const;
    /// Selects the item that shows `name` (expanding its modules) and centres it.
    bool selectNode(const QString &name);
    /// Expands the modules that hide these nodes (one layout, in place): each gets an item of its own.
    void revealNodes(const std::vector<const ir::Node *> &nodes);
    /// Folds these modules and the modules inside them (one layout, in place): folded members of a
    /// stack show as its box again.
    void foldModules(const std::set<std::string> &modules);
    QString selectedLabel() const;
    /// 0 none, 1 part of the highlighted match, 2 its anchor.
    int highlightOf(int item) const { return int(m_overlays.of(Layer::Highlight, item)); }
    /// On a collapsed box that holds the candidate's anchor: the note drawn at its top right that
    /// names it ("contains r_49"; on a stack, "r_49 in blocks.49") and where (scene); empty when
    /// the item is no such box or the note has no room beside the box's title.
    std::pair<QString, QRectF> anchorNote(int item) const;
    void paintAnchorNote(QPainter &p, int item) const; ///< anchorNote, in the anchor's red (small font set)
    bool isMarked(int item) const { return m_overlays.of(Layer::Marked, item) != 0; }

    /// After a step (graphEdited), what stayed keeps its place, new nodes are marked green and the
    /// removed ones are red ghosts where they were (on by default; off: every edit lays out afresh).
    void setStableLayout(bool on) { m_stable = on; }
    /// The nodes the last step removed, drawn as ghosts (cleared by relayoutFresh()).
    const std::vector<layout::ViewItem> &ghosts() const { return m_ghosts; }
    /// Drops the ghosts (the step that removed them is no longer the one on screen); what stays
    /// keeps its place.
    void clearGhosts();
    /// Lays the view out afresh (View ▸ Re-layout): no ghosts, no step marks.
    void relayoutFresh();
    /// The whole scene in the widget (Ctrl+0); small graphs are enlarged up to 2×. A scene too wide
    /// or tall for that is shown at kMinFitScale, centred across and from its start along its long
    /// side (the minimap shows the rest): never a sliver of a few pixels.
    void fitToView();
    static constexpr double kMinFitScale = 0.3;
    /// The least zoom landOn() zooms out to, to show a node's whole frame.
    static constexpr double kLandScale = 0.6;
    /// The view fitted again after the widget changed size (a dock took room): the selected item
    /// shown as a selection is (landOn), else the initial readable view.
    void refit();
    /// The scene rectangle of the items showing these nodes (empty when none has one).
    QRectF nodesRect(const std::vector<const ir::Node *> &nodes) const;
    /// These nodes' items (none: the whole drawing) in view at the zoom that fits them, between
    /// `least` and 1:1, centred; along an axis where they do not fit, their start (left end, top).
    /// Then settled (settle()); where an item or kernel label is still cut at an edge, zoomed out
    /// a few percent a step, down to `least`, to the zoom that cuts the fewest.
    void showNodes(const std::vector<const ir::Node *> &nodes, double least);
    /// The items of `module` (its nodes and boxes, at any depth) fitted in the widget, at most 1:1;
    /// where that is below kLandScale, at kLandScale from their start (left end, top: the frame's
    /// title); then settled. False when nothing of it is drawn.
    bool showModule(const QString &module);
    /// Where a drawing of `content`'s size is fitted in a widget of `widget`'s size whose legend is
    /// at `legend` (empty: none): inside a margin, above the legend or beside it, whichever shows
    /// the drawing larger, so that at first sight no node lies under the legend.
    static QRectF fitArea(QSizeF widget, const QRect &legend, QSizeF content);
    /// Repeated sibling modules show as one box each ("blocks.0–49 ×50": layout::findStacks), found
    /// again after every edit; double-click or the context menu unstacks one (for this file).
    const std::vector<layout::ModuleStack> &stacks() const { return m_viewOptions.stacks; }
    /// Draws the members of stack `index` (of stacks()) as their own boxes again.
    void unstack(int index);
    /// Unstacks the stack whose first member is `firstMember`; false when none is drawn.
    bool unstackMembersOf(const QString &firstMember);
    /// The initial view: fitted, or for a tall graph too small to read whole, fitted to its width
    /// at the top.
    void readableView();
    void zoomBy(double factor, QPointF around);
    double scale() const { return m_scale; }
    /// Item under a widget position, -1 for none.
    int itemAt(QPointF pos) const;
    QRectF itemRect(int item) const; ///< in widget coordinates
    /// What edge `e` covers (scene): its ends' items and its route.
    QRectF edgeBounds(size_t e) const;

    enum class Engine { Layered, Graphviz };
    /// Graphviz `dot` runs off the GUI thread for views up to kGraphvizLimit items (the layered
    /// layout shows meanwhile); larger views always use the layered layout.
    void setEngine(Engine e);
    Engine engine() const { return m_engine; }
    static constexpr size_t kGraphvizLimit = 1500;
    /// Edges are drawn while at most this many items are in view.
    static constexpr size_t kEdgeItemLimit = 6000;
    /// Up to this many edges, those that cross the view with both ends off it are drawn too.
    static constexpr size_t kCrossingEdgeLimit = 60000;
    /// Screen pixels of edges one frame draws at most (long strokes are what frames cost).
    static constexpr double kEdgePixelBudget = 6e5;
    /// The height of edge labels' text in scene pixels.
    static constexpr int kEdgeLabelPixels = 9;
    /// The least zoom at which edge labels are drawn.
    static constexpr double kEdgeLabelScale = 0.7;
    bool layoutRunning() const { return m_job != 0; }
    /// Drops the running Graphviz layout (its result is discarded when it arrives).
    void cancelLayout();
    /// Keeps the view true across resizes (the window or a dock beside it resized): a drawing shown
    /// whole is fitted again, else the scene point at the centre stays at the centre, settled so that
    /// nothing is left cut at the new edges. Off by default: hosts that place their canvases on a
    /// resize themselves (compare, post-grad) leave it off.
    void setFollowResize(bool on) { m_followResize = on; }
    void setMinimapVisible(bool on);
    /// Where the minimap is drawn (widget coordinates); empty while it is hidden or the whole scene
    /// is in view (nothing to find: it would only cover the drawing).
    QRect minimapRect() const;
    /// The minimap's opacity where it lies over nodes (else 0.85, on a panel-coloured plate): they
    /// show through it.
    static constexpr double kFaintMinimap = 0.25;
    /// Whether a node lies under the minimap at `minimap` (widget coordinates).
    bool minimapOverItems(const QRect &minimap) const;
    /// Where the view lies inside a frame whose title is scrolled out of view above (the
    /// innermost frame across the viewport's top edge, its name hidden): that frame's path on a
    /// plate at the viewport's top-left, as an editor keeps the enclosing scope's header; a
    /// click scrolls the title into view. The frame (-1: none) and the plate (widget coordinates).
    std::pair<int, QRect> contextTitle() const;

    /// The whole scene as SVG; the current view as PNG.
    bool exportSvg(const QString &path);
    bool exportPng(const QString &path);
    /// The whole scene as PNG at `scale` (1: a scene pixel per image pixel), capped at 16k pixels a
    /// side (the scale is lowered to fit; `usedScale` says what it was).
    bool exportScenePng(const QString &path, double scale = 1.0, double *usedScale = nullptr);

    /// Parameters and constants as items (off: hidden, counted on their readers).
    void setShowConstants(bool on);
    bool showConstants() const { return m_viewOptions.showConstants; }
    /// The colour legend (the op categories in view): a bar along the canvas' bottom edge, below
    /// the drawing (sceneViewport()), so that it never covers a node.
    void setLegendVisible(bool on);
    bool legendVisible() const { return m_legend; }
    /// A box's fill reddened by `h` (0..1, its share of the hottest node's device time).
    static QColor heatTint(QColor fill, double h);
    /// The fill the profile's tint scale starts from (legend, profile panel's scale).
    static QColor tintBase(bool dark) { return dark ? QColor(80, 80, 90) : QColor(244, 239, 238); }
    struct LegendRow {
        QString name;
        QColor colour;
        QColor to = {}; ///< valid: the swatch is a ramp from colour to it (the profile's tint)
    };
    /// What the legend lists: the op categories in the view, then the diff colours (removed, added,
    /// changed) while items are marked or ghosts drawn.
    std::vector<LegendRow> legendRows() const;
    /// Where the legend is drawn (widget coordinates): the bottom bar; empty when it is hidden.
    QRect legendRect() const;
    /// The part of the widget that shows the drawing (all of it less the legend's bar): what is
    /// fitted, centred and painted; a click outside it selects nothing.
    QRect sceneViewport() const;
    /// The fill of an op category (light or dark theme): what nodes are drawn in and the legend shows.
    static QColor categoryColour(layout::OpCategory c, bool dark);
    /// A box's second line in `width` pixels: whole when it fits; else a dotted class path loses its
    /// leading packages first ("…modeling_bert.BertEmbeddings, 5 nodes"), then the end is elided.
    static QString elideDetail(const QString &detail, const QFontMetrics &fm, int width);
    /// A box's first line in `width` pixels: a node's name elided at its end; a module's path loses
    /// its leading modules first (elideDetail), so the end that tells siblings apart stays
    /// ("…attention.self.query").
    static QString boxTitle(const layout::ViewItem &it, const QFontMetrics &fm, int width);
    /// The tooltip text at a widget position: an item (node, module, hidden inputs) or an edge
    /// (its ends and the value it carries); "" when nothing is there.
    QString toolTipAt(QPointF pos) const;
    /// The edge whose route passes within a few pixels of a widget position, -1 for none.
    int edgeAt(QPointF pos) const;
    /// The frame of an expanded module: around its items (and its expanded children's frames),
    /// with its name in a title band on top; double-clicking the frame collapses the module.
    struct Frame {
        std::string path;
        QRectF rect; ///< bounding box (scene coordinates, title band included)
        int depth = 0;
        size_t members = 0;
        QPainterPath shape; ///< the outline (the rectangle): never around another module's node
        /// Where its name is drawn: the top-left band inside its outline, above its contents.
        QRectF titleRect() const;
        /// The plate its name is painted on (the name's width in `titleFont`, at the band's left):
        /// no edge crosses it at the title's own size (11 px; zoomed out the title grows in scene
        /// pixels and its plate covers the edges under it).
        QRectF titlePlate(int pixels = 11) const;
        static QFont titleFont(int pixels = 11);
    };
    const std::vector<Frame> &frames() const { return m_frames; }
    /// An edge's value label where it is drawn (scene coordinates): placed edge by edge, top to
    /// bottom, beside the edge's last or first stretch where it overlaps no item, frame title or
    /// other label, nor a frame's side, and no edge or kernel outline runs through it; an edge
    /// with no such place has none (its tooltip says it).
    struct EdgeLabel {
        size_t edge = 0;
        QRectF rect;
        QString text;
    };
    const std::vector<EdgeLabel> &edgeLabels() const { return m_edgeLabels; }
    /// The innermost frame at a widget position, -1 for none.
    int frameAt(QPointF pos) const;
    /// How a node differs from another version (a side-by-side comparison, a step's diff).
    enum class DiffMark : uint8_t { None = 0, Added = 1, Removed = 2, Changed = 3 };
    /// Tints the items of these nodes: added green, removed red, changed amber (empty clears).
    void setDiffMarks(const std::vector<std::pair<const ir::Node *, DiffMark>> &marks);
    /// The fill of a diff mark (light or dark theme): what marked items are drawn in and the legend shows.
    static QColor diffColour(DiffMark d, bool dark);
    DiffMark diffOf(int item) const { return DiffMark(int(m_overlays.of(Layer::Diff, item))); }
    /// Zoom and the scene point at the widget's centre (synchronized views).
    void setView(double scale, QPointF sceneCentre);
    QPointF viewCentre() const;
    /// Nodes matching the search, outlined on the canvas (empty clears).
    void setSearchHits(const std::vector<const ir::Node *> &nodes);
    bool isSearchHit(int item) const { return m_overlays.of(Layer::Search, item) != 0; }
    /// Every overlay by node and per item (highlight, marks, heat, search hits, diff).
    const CanvasOverlays &overlays() const { return m_overlays; }

    // --- a compiled profile's kernels (CanvasKernels.cpp) ---
    /// Outlines each kernel's group of nodes, the kernel's name and time on the outline: one outline
    /// shaped around its items (never around another's), an outline sharing items with another
    /// wider around them, so both stay visible; empty clears.
    void setKernelGroups(std::vector<KernelGroup> groups);
    const std::vector<KernelGroup> &kernelGroups() const { return m_kernelGroups; }
    /// Emphasises group `g` (-1: none): its outline bold, its nodes' items outlined.
    void setSelectedKernelGroup(int g);
    int selectedKernelGroup() const { return m_kernelGroup; }
    /// Where group `g`'s outline is drawn (scene coordinates); empty when no node of it has an item.
    QRectF kernelGroupRect(int g) const;
    /// Group `g`'s outline as drawn (scene coordinates): its items' rectangles with a margin, joined
    /// across the gaps between them where no other item lies; empty when it has none.
    QPainterPath kernelOutline(int g) const;
    /// Where group `g`'s label is drawn (scene coordinates); empty when it has none (no room that
    /// overprints no item and no other label: its tooltip names it).
    QRectF kernelLabelRect(int g) const;
    /// The lines of group `g`'s label as drawn (empty: it has no place).
    QStringList kernelLabelLines(int g) const;
    /// The kernel labels are drawn at this zoom (legible).
    bool kernelLabelsDrawn() const;
    /// The group whose label or outline is at a widget position (the innermost), -1 for none.
    int kernelGroupAt(QPointF pos) const;

Q_SIGNALS:
    /// A node's item was clicked; "" for a click on nothing (nothing is selected now).
    void nodeSelected(const QString &name);
    /// A collapsed module's box was clicked (its qualified path).
    void moduleSelected(const QString &path);
    void moduleToggled(const QString &module, bool expanded);
    /// A stack was unstacked (its first member's path).
    void stackUnstacked(const QString &firstMember);
    void layoutStarted();
    /// `applied` is false when the layout was cancelled or superseded.
    void layoutFinished(bool applied, const QString &error);
    /// The user zoomed or panned (or the view was fitted, or moved to a selection).
    void viewChanged();
    /// A kernel's outline or label was clicked (its group).
    void kernelGroupClicked(int group);

protected:
    bool event(QEvent *e) override;
    void paintEvent(QPaintEvent *) override;
    void wheelEvent(QWheelEvent *e) override;
    void mousePressEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    void mouseDoubleClickEvent(QMouseEvent *e) override;
    void keyPressEvent(QKeyEvent *e) override;
    /// On a stack's box: unstack it, or expand one of its members (the rest stay stacked).
    void contextMenuEvent(QContextMenuEvent *e) override;
    /// A palette change (the dark theme) repaints in the new colours and keeps the layout, the
    /// expanded modules, the selection and the highlights.
    void changeEvent(QEvent *e) override;
    void resizeEvent(QResizeEvent *e) override;

private:
    /// How relayout() places the new view: afresh, where the previous version of the graph was
    /// (a rewrite step: layout::placeStable), or with modules opened or closed in place (nothing
    /// else moves: layout::placeInPlace, else afresh). True when it was placed in place.
    enum class Placement { Fresh, StableStep, InPlace };
    bool relayout(bool keepCenter, Placement placement = Placement::Fresh);
    void rebuildIndex();
    std::vector<int> itemsIn(const QRectF &sceneRect) const;
    void paintScene(QPainter &p, const QRectF &sceneRect, double scale, bool everything);
    void paintEdges(QPainter &p, const std::vector<int> &items, const QRectF &sceneRect, double scale, bool everything, const QColor &edge);
    /// m_edgesOf and m_edgeBounds for the view as laid out.
    void indexEdges();
    /// The edges of `items` to draw (each once, within the zoom's budget of edge pixels unless
    /// `everything`), then the edges that cross the view with both ends off it, their segments
    /// appended to `lines`.
    std::vector<size_t> edgesToDraw(const std::vector<int> &items, const QRectF &sceneRect, double scale, bool everything,
                                    QVector<QLineF> &lines) const;
    void paintArrowheads(QPainter &p, const std::vector<size_t> &shown, const QRectF &sceneRect, bool everything, const QColor &edge) const;
    void paintSelectedEdges(QPainter &p, double scale) const;
    void paintEdgeLabels(QPainter &p, const std::vector<size_t> &shown, const QRectF &sceneRect, bool everything) const;
    /// The value an edge carries as its label ("f32[8, 64] ×2"); "" for a tuple.
    QString edgeLabel(size_t e) const;
    void paintPixels(QImage &image, const QTransform &t, const std::vector<int> &items, bool dark);
    void paintLegend(QPainter &p);
    void paintContextTitle(QPainter &p) const;
    /// A press on the context title's plate scrolls its frame's title into view (true).
    bool scrollToContextTitle(QPoint pos);
    /// The kernel outlines for the view on screen (m_kernelOutlines; placeLabels places their labels).
    void placeKernelGroups();
    /// Each outline's label placed (m_kernelOutlines' label and lines), once the outlines are.
    void placeKernelLabels();
    /// The edge labels placed, then the kernel labels (once the frames and kernel outlines are).
    void placeLabels();
    void measureContent(); ///< m_content, after the labels are placed (placeLabels)
    void paintKernelGroups(QPainter &p, double scale) const;
    QString kernelToolTip(int g) const;
    /// The frames of the expanded modules (m_frames); the scene grows to hold them.
    void computeFrames();
    void paintFrames(QPainter &p, const QRectF &sceneRect, double scale, bool everything);
    /// The frames' titles, painted over the edges (each on a plate of its frame's colour).
    void paintFrameTitles(QPainter &p, const QRectF &sceneRect, double scale, bool everything);
    static std::pair<QColor, QColor> frameColors(const Frame &fr, bool dark);
    /// m_edgeLabels for the laid-out view, its frames and kernel outlines: no label crossed by an
    /// edge or an outline.
    void placeEdgeLabels();
    /// An edge's polyline (its route, or the straight line when it has none).
    QPolygonF edgeLine(size_t e) const;
    QPointF toScene(QPointF w) const { return (w - m_offset) / m_scale; }
    /// Where a scene rectangle is drawn (widget coordinates), at the view's zoom and pan.
    QRectF onScreen(const QRectF &scene) const { return QRectF(scene.topLeft() * m_scale + m_offset, scene.size() * m_scale); }
    QPointF viewportCentre() const { return QRectF(sceneViewport()).center(); }
    void startGraphviz();
    /// The stacks of the graph (layout::findStacks) less those unstacked, into m_viewOptions.
    void findStacks();
    /// The first selection on a view nobody moved since it opened (the first candidate): the whole
    /// view when it fits with its text legible and `item` in view, else the drawing from its start
    /// down to `item` (across to it in a wide one) when that fits at kLandScale or more, zoomed
    /// out from the view it opened with (true); else nothing changes.
    bool revealInOverview(int item);
    /// Brings `item` into view after an action (a selection, a candidate, a run), at 0.8 zoom or
    /// more (text legible): its innermost frame whole (and its enclosing frames that also fit at
    /// that zoom) when it fits there or at a zoom still readable (kLandScale), else the item with
    /// its frame's title where both fit, all inside a margin: centred, or `fromHere` panned the
    /// least from the view as it is; then settled (settle()).
    void landOn(int item, bool fromHere = false);
    /// As fitToView, with `least` for kMinFitScale.
    void fitWhole(double least);
    /// How a landing settles: holding the view still as far as it can (an expand, a step), or
    /// showing also where the drawing starts or ends when the focus allows it (a selection).
    enum class Settle { Hold, Context };
    /// The one last pan of every landing: along x, then y (then x again), the least pan that
    /// leaves the fewest items, ghosts, kernel labels, frame titles and frames that fit whole cut
    /// by an edge of the viewport, and the titles of the frames around `focus` (scene; null: none) in view,
    /// never moving `focus` out of view.
    /// Where the least pans leave an item or kernel label cut, the pans that leave none cut when
    /// there are (settlePan with `hideCut`: what one axis cuts is moved out of view along the other).
    void settle(const QRectF &focus, Settle how);
    void settlePan(const QRectF &focus, Settle how, bool hideCut);
    /// What settlePan keeps whole (viewport rectangles), with what cutting each costs.
    struct SettleMark {
        QRectF r;
        int weight;
        bool inView = false; ///< to be in view, else whole or out of view
    };
    std::vector<SettleMark> settleMarks(const QRectF &focus) const;
    /// What a landing on `module` keeps in view (scene): its frame when it fits, else the frame's
    /// title; its box when collapsed.
    QRectF focusOf(const std::string &module) const;
    /// The kernel and edge labels drawn (viewport rectangles) that meet `area` (viewport).
    std::vector<QRectF> labelsIn(const QRectF &area) const;
    /// Pans the least that brings `focus` (scene) whole into view, or its start where it does not fit.
    void bringIn(const QRectF &focus);
    /// What the minimap covers, with its frame (viewport; empty while it is hidden).
    QRectF minimapCover() const;
    /// The items (3 each) and labels (1, unless `labels` is false) an edge of the viewport cuts or
    /// the minimap covers.
    int cutAtEdges(bool labels = true) const;
    void renderMinimap();

    const ir::Graph *m_graph = nullptr;
    std::set<std::string> m_expanded;
    layout::ViewGraph m_view;
    std::vector<std::vector<uint32_t>> m_edgesOf; ///< per item: edges touching it
    std::vector<QRectF> m_edgeBounds;             ///< per edge: its ends' items and its route (scene)
    // Grid index over scene coordinates.
    double m_cell = 512;
    int m_cols = 0, m_rows = 0;
    std::vector<std::vector<uint32_t>> m_grid;
    mutable std::vector<uint32_t> m_stamp;
    mutable uint32_t m_stampNow = 0;

    double m_scale = 1;
    QPointF m_offset;
    QPoint m_dragFrom;
    bool m_dragging = false;
    bool m_afterDoubleClick = false; ///< the next left release ends a double-click
    int m_selected = -1;
    CanvasOverlays m_overlays;
    std::string m_anchorName, m_anchorModule; ///< the candidate's anchor (setHighlight), for anchorNote
    struct KernelOutline {
        QRectF rect, label; ///< rect: around the outline
        QRectF top;         ///< the outline's top row: where its label goes
        QString text;
        QStringList lines;      ///< the label as drawn: the text broken after '_' where it is too wide, else elided
        std::vector<int> items; ///< the items it is drawn around
        QPainterPath shape;     ///< the outline
    };
    /// Outline `o` shaped around its items at `margin` (its shape, rect and top row).
    void shapeOutline(KernelOutline &o, double margin) const;
    std::vector<KernelGroup> m_kernelGroups;
    std::vector<KernelOutline> m_kernelOutlines; ///< per group, placed on the view
    int m_kernelGroup = -1;
    Engine m_engine = Engine::Layered;
    uint64_t m_job = 0, m_jobs = 0; ///< running Graphviz job id (0: none), ids handed out
    bool m_minimap = true;
    QImage m_minimapImage;
    QImage m_frame; ///< reused frame for pixel-sized items
    std::vector<QRgb> m_pixelColor;
    layout::ViewOptions m_viewOptions;
    bool m_legend = true;
    std::vector<Frame> m_frames; ///< outermost first
    QRectF m_content;            ///< what is drawn (scene): a fit shows it whole and centred
    std::vector<EdgeLabel> m_edgeLabels;
    bool m_stable = true;
    std::vector<layout::ViewItem> m_ghosts;
    std::set<std::string> m_unstacked; ///< first members of the stacks the user unstacked
    bool m_untouched = false;          ///< the view is as it opened: no selection, zoom or pan since
    bool m_followResize = false;       ///< see setFollowResize
    struct BeforeResize {
        bool whole;      ///< the drawing was whole in view
        QPointF centre;  ///< the scene point at the viewport's centre
        QRectF selected; ///< the selected item (scene) where it was in view, else null
        QPointF offset;  ///< the view then: when it has been placed since, it stays as placed
        double scale;
    };
    std::optional<BeforeResize> m_beforeResize; ///< set by the first of a batch of resize events
};

} // namespace fxlens::views
