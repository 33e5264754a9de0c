// SPDX-License-Identifier: MIT
// PostGradView: a compiled profile's post-grad graph (the compiler's graph after its own passes,
// saved beside the profile by `fxlens-cli profile --compiled`) on a canvas of its own, linked to the
// window's selection by the compiler's provenance (prof::Profile::postGradNodes): selecting FX nodes
// in the window outlines the post-grad nodes that came from them and brings them into view;
// selecting a post-grad node selects the FX nodes it came from in the window. The profile's kernels
// are outlined on their post-grad nodes (name and time), as the window's canvas outlines them on
// the FX nodes (the colour legend is the window canvas'); a kernel picked on either side is
// emphasised on both. It opens on the nodes linked to the window's selection, else fitted but
// never below a readable zoom (kReadable: a tall graph shows its start), and stays so as it is
// resized until the user moves it.
#pragma once

#include "ir/Graph.h"
#include "profile/Profile.h"

#include <QStringList>
#include <QWidget>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

class QLabel;

namespace fxlens::views {

class GraphCanvas;
class Selection;

class PostGradView : public QWidget {
    Q_OBJECT
public:
    /// `graph`: profile `p`'s post-grad graph; `selection`: the window's (its graph the version `p`
    /// was recorded on).
    PostGradView(std::unique_ptr<ir::Graph> graph, const prof::Profile &p, Selection &selection, QWidget *parent = nullptr);
    ~PostGradView() override;

    GraphCanvas *canvas() const { return m_canvas; }
    const ir::Graph &graph() const { return *m_graph; }
    /// The post-grad nodes that came from FX node `fx` (program order).
    std::vector<const ir::Node *> fromFx(const std::string &fx) const;
    /// The FX nodes post-grad node `name` came from (program order of the profiled graph).
    QStringList fxOf(const QString &name) const;
    /// The post-grad nodes outlined for the window's selection (empty: none came from it).
    const std::vector<const ir::Node *> &linked() const { return m_linked; }
    /// The width (pixels) that shows the breadth of the graph's nodes at the readable zoom.
    int readableWidth() const;
    /// The line above the canvas: what the selection maps to.
    QString caption() const;
    /// What a click on post-grad node `name` does: it is selected here and its FX nodes in the window.
    bool pickPostGrad(const QString &name);
    /// Emphasises the outline of kernel record `kernel` of the profile (-1: none), as the window's
    /// timeline selects it.
    void showKernel(int kernel);

Q_SIGNALS:
    /// A kernel's outline was clicked here: its first record in the profile.
    void kernelClicked(int kernel);

protected:
    /// Until the user moves the canvas, it stays fitted (or on the linked nodes) as it is resized.
    bool eventFilter(QObject *watched, QEvent *e) override;

private:
    /// The window's selection is these FX nodes: their post-grad nodes outlined and shown.
    void followWindow(const std::vector<std::string> &fx, const QString &what);
    /// The post-grad nodes of these FX nodes outlined (m_linked), the caption saying so.
    void link(const std::vector<std::string> &fx, const QString &what);
    /// The window's nodes in module `path` (and the modules inside it).
    std::vector<std::string> nodesOfModule(const QString &path) const;
    /// The linked nodes in view (readable zoom), or when there are none the whole graph fitted,
    /// at kReadable at least (then the graph's start: its inputs); no node cut at an edge.
    void showLinked();
    /// The least zoom this view shows at: node names legible.
    static constexpr double kReadable = 0.6;

    std::unique_ptr<ir::Graph> m_graph;
    Selection &m_selection;
    GraphCanvas *m_canvas = nullptr;
    QLabel *m_caption = nullptr;
    std::unordered_map<std::string, std::vector<std::string>> m_fxOf;        ///< post-grad node -> FX nodes
    std::unordered_map<std::string, std::vector<const ir::Node *>> m_fromFx; ///< FX node -> post-grad nodes
    std::vector<const ir::Node *> m_linked;
    std::vector<const ir::Node *> m_pushed; ///< what this view highlighted in the window (to drop it later)
    bool m_syncing = false;
    bool m_autoFit = true;
    bool m_refitQueued = false; ///< a resize's showLinked waits for the events queued with it
};

/// Why profile `p` has no post-grad graph to open ("" when it has one): no compiled profile, none
/// recorded, or its file is missing (named).
QString postGradUnavailable(const prof::Profile *p);
/// Reads `p`'s post-grad graph into a view linked to `selection`; nullptr with `error` (naming the
/// file) when it cannot be read.
PostGradView *openPostGradView(const prof::Profile &p, Selection &selection, QWidget *parent, QString *error);

} // namespace fxlens::views
