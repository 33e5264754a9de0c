// SPDX-License-Identifier: MIT
// CompareView: two versions of a graph side by side (copies, so the document can move on), each
// on its own canvas, with the difference by provenance marked: a node of A whose name (in its
// module) is not in B was removed (red), a node of B whose name is not in A was added (green), a
// node in both whose op, target or arguments differ was changed (amber); the canvases' legends
// list the three colours.
//
// It opens on the first change, its modules expanded. The changes are grouped into regions
// (neighbours in program order), visited in order by Next / Previous change (N, F8 / Shift+N,
// Shift+F8); "All changes" (A) shows all of them. Whatever is shown is fitted in both panes at one
// zoom, never below kReadableScale, clear of the legends, and one node the two versions share (the
// one that lets both sides be shown largest) at the same place in both panes, so what did not
// change lines up (where no two nodes they share line up anywhere, a rewrite that replaced
// everything between the input and the output, the middles of the two sides at one place); while
// it stays readable, with the titles of the frames around it, and the unchanged nodes one pane
// shows among it shown by the other too (for a tenth of the zoom at most). Both panes are then
// placed together, what is fitted kept whole: of the zooms from the fit down and the moves within
// the room left (into the margins at a cost), the one that cuts the fewest nodes (a changed one
// most, then the boxes the changes sit beside) and titles at the panes' edges (each whole in view
// or out of it), leaves no band of a pane empty that the drawing could fill, and keeps the
// changes near the middle, zooming out costing too; aligned at another shared node near the
// changes where that keeps whole what the first alignment cuts (a box drawn further off the
// changes in one version than in the other) (views/ComparePlace.cpp). What does not fit at
// kReadableScale even into the margins is shown from its start (for "All changes": the first
// change, with a note that N / Shift+N step through the rest). The minimaps are off (M shows
// them). The panes stay in step: expanding or folding a module in one does it in the other (and
// both are fitted to the change again, until the user zooms or pans), and zooming or panning one
// shows the same node (the one at its centre, or its nearest common neighbour) at the same zoom in
// the other. Esc closes.
#pragma once

#include "ir/Graph.h"

#include <QDialog>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QWidget>

#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

class QLabel;
class QListView;

namespace fxlens::views {

class GraphCanvas;
class GraphDocument;
class HistoryModel;
class RewriteHistory;

/// A version to compare: `version` of the current line, or (branch >= 0) the last version of
/// that branch of the history.
struct VersionChoice {
    VersionChoice(int v = 0, int b = -1) : version(v), branch(b) {}
    int version = 0;
    int branch = -1;
};

class CompareView : public QWidget {
    Q_OBJECT
public:
    CompareView(std::unique_ptr<ir::Graph> a, const QString &labelA, std::unique_ptr<ir::Graph> b, const QString &labelB,
                QWidget *parent = nullptr);
    ~CompareView() override;

    /// The least zoom a change (or every change) is shown at: node names and ops read at a glance
    /// (their text about 6 px high; the canvas stops drawing text below 0.44).
    static constexpr double kReadableScale = 0.5;

    GraphCanvas *left() const { return m_left; }
    GraphCanvas *right() const { return m_right; }
    size_t removed() const { return m_removed; }
    size_t added() const { return m_added; }
    size_t changed() const { return m_changed; }
    QString summary() const;

    /// A region of the difference: changed nodes next to each other in program order, by side
    /// (A: removed and changed, B: added and changed); a side without any is shown at `context`,
    /// the unchanged node just before the region (in both graphs).
    struct Change {
        std::vector<const ir::Node *> a, b;
        std::string context;
    };
    const std::vector<Change> &changes() const { return m_changes; }
    /// The region shown (0 as the view opens; -1: every change, after "All changes").
    int currentChange() const { return m_current; }
    void nextChange();
    void previousChange();
    /// Both panes fitted to region `i` (its modules expanded) at one zoom, the region at the same
    /// place in both.
    void showChange(int i);
    /// Both panes fitted to every change (the union of the changed nodes), at one zoom, or when
    /// that is below kReadableScale, at kReadableScale from the first change (the position label
    /// says that N / Shift+N step through the rest).
    void fitToChanges();
    /// The nodes the panes are fitted to: the current change's (every change's when it is -1) in
    /// pane A or B, those drawn (a constant nobody reads is not); a side without changed nodes
    /// drawn in a change shows where the change is: the unchanged node before it.
    std::vector<const ir::Node *> shownNodes(bool inA) const;

protected:
    /// Until the user moves a pane, the panes stay fitted to what they show as they are resized
    /// (the window shown, laid out, maximised).
    bool eventFilter(QObject *watched, QEvent *e) override;

private:
    void markDifference();
    void follow(GraphCanvas *from, GraphCanvas *to, const ir::Graph &toGraph);
    void mirrorExpansion(GraphCanvas *to, const QString &module, bool expanded);
    /// A stack unstacked in one pane is unstacked in `to` too; then as mirrorExpansion.
    void mirrorUnstack(GraphCanvas *to, const QString &firstMember);
    /// After a pane mirrored the other: the change placed again, or `to` following the other pane.
    void afterMirror(GraphCanvas *to);
    /// The first view: the first change (its modules expanded), fitted.
    void openView();
    /// What change `k` shows in pane A or B (see shownNodes).
    std::vector<const ir::Node *> changeNodes(size_t k, bool inA) const;
    /// The members of the stacks (in either pane) that one change shown has nodes in most of (a
    /// rewrite over the members, not one that ends in one member and starts in the next).
    std::set<std::string> spannedStacks() const;
    /// Expands the modules that hold the nodes shown, in both panes; a stack whose members hold
    /// one change is folded again (its box shows the change) when the change does not fit at
    /// kReadableScale with them side by side.
    void reveal();
    /// Where the nodes of change `k` (-1: every change) go: A's and B's rectangles (scene), the
    /// shift from A's scene to B's at the node both show at one place (`anchor`, in A's scene),
    /// their union in A's scene, the part of the panes it is fitted in, and the zoom that fits it
    /// there (up to 1:1).
    struct Frame {
        QRectF a, b, both, area;
        QPointF shift, anchor;
        double fit = 1;
        /// Other alignments (a node near the change, its rectangle in A's scene, and the shift that
        /// puts it at one place in both panes), the placement may take instead.
        std::vector<std::pair<QRectF, QPointF>> others;
    };
    /// `alignAt`: aligned at the node of `others` with that shift instead.
    Frame frame(int k, const QPointF *alignAt = nullptr) const;
    /// f.both, f.area and f.fit for f.a and f.b (B's at f.shift).
    void fitFrame(Frame &f) const;
    /// f.a and f.b grown, while the fit stays readable, by the titles of the frames around the
    /// nodes shown (`inA`, `inB`), innermost first, then by the nodes both draw (`shared`: their
    /// rectangles in A's and B's scene) that one side has among what is fitted (at 0.9 of the zoom).
    void widen(Frame &f, const std::vector<const ir::Node *> &inA, const std::vector<const ir::Node *> &inB,
               const std::vector<std::pair<QRectF, QRectF>> &shared) const;
    /// Fits both panes to the nodes shown (frame(m_current)) at one zoom, never below kReadableScale (then
    /// from the start of what is shown).
    void placeCurrent();
    /// For what `f` fits: the zoom from the fit down, and the move slack finds at it, that cost
    /// least, with that cost.
    std::tuple<double, QPointF, double> zoomAndMove(const Frame &f) const;
    /// Where what `f` fits may go: its area, or up to 2 px from the panes' edges where the area is
    /// at the margin (at a cost).
    QRectF roomOf(const Frame &f) const;
    /// The zoom that fits what `f` fits in that room (f.fit or more).
    double roomFit(const Frame &f) const;
    /// How far both panes move (screen pixels) within the room the fit leaves at `scale`, and what
    /// that costs: the nodes (a changed one most) and frame titles cut at the panes' edges, the
    /// bands of a pane left empty that the drawing could fill, the way off the middle
    /// (views/ComparePlace.cpp).
    std::pair<QPointF, double> slack(const Frame &f, double scale, QPointF centre) const;
    void updatePosition();

    std::unique_ptr<ir::Graph> m_a, m_b;
    GraphCanvas *m_left = nullptr, *m_right = nullptr;
    QLabel *m_summary = nullptr, *m_position = nullptr;
    size_t m_removed = 0, m_added = 0, m_changed = 0;
    std::vector<Change> m_changes;
    int m_current = -1;
    bool m_syncing = false;
    bool m_autoFit = true;   ///< no pane moved by the user since the last fit or change shown
    bool m_opening = true;   ///< as opened: no change picked, no pane moved
    bool m_tooLarge = false; ///< what is shown does not fit at kReadableScale
    QPointF m_shift;         ///< frame().shift as last placed: where B shows what A shows
};

/// Compare Versions' chooser: the history's versions (each with its step) and its branches, once
/// for A and once for B. A starts at the original, B at the version on screen.
class CompareChooser : public QDialog {
    Q_OBJECT
public:
    CompareChooser(RewriteHistory &h, QWidget *parent = nullptr);
    QListView *listA() const { return m_listA; }
    QListView *listB() const { return m_listB; }
    VersionChoice a() const;
    VersionChoice b() const;

private:
    HistoryModel *m_model = nullptr;
    QListView *m_listA = nullptr, *m_listB = nullptr;
};

/// Opens versions `a` and `b` of the document's history side by side in a window of their own
/// (deleted when closed); nullptr with `error` for a version not in the history.
CompareView *compareVersions(GraphDocument &doc, VersionChoice a, VersionChoice b, QWidget *parent, QString *error);

} // namespace fxlens::views
