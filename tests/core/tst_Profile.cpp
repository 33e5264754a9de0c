// SPDX-License-Identifier: MIT
// Profiles without a GPU: attribution of recorded CUDA events (captured on an H200 with
// `fxlens-cli profile --raw-events`), the profile file format and the Chrome trace export.
#include "io/GraphJson.h"
#include "profile/Profile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace fxlens;
using namespace fxlens::prof;

namespace {

std::pair<std::vector<RawEvent>, std::vector<NodeInfo>> recorded(const char *name)
{
    auto r = readRawEvents(std::string(FXLENS_TEST_DATA "/profile/") + name);
    if (!r)
        qFatal("%s", r.error().toString().c_str());
    return r.value();
}

RawEvent ev(RawEvent::Kind k, uint64_t s, uint64_t e)
{
    RawEvent r;
    r.kind = k;
    r.startNs = s;
    r.endNs = e;
    r.tid = 1;
    return r;
}

RawEvent nodeRange(int node, int iter, uint64_t s, uint64_t e, uint64_t corr = 0)
{
    RawEvent r = ev(RawEvent::Kind::NodeRange, s, e);
    r.node = node;
    r.iteration = iter;
    r.correlation = corr;
    r.name = "range";
    return r;
}

RawEvent device(uint64_t s, uint64_t e, uint64_t corr, uint64_t linked = 0)
{
    RawEvent r = ev(RawEvent::Kind::Kernel, s, e);
    r.name = "k" + std::to_string(corr);
    r.correlation = corr;
    r.linked = linked;
    r.device = 0;
    r.stream = 7;
    return r;
}

std::vector<NodeInfo> nodes(int n)
{
    std::vector<NodeInfo> v;
    for (int i = 0; i < n; ++i)
        v.push_back({"n" + std::to_string(i), "call_function", "torch.tanh", ""});
    return v;
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

} // namespace

class TestProfile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// A real H200 capture of tangle4 (2 iterations): every kernel lands on the node that launched it.
    void recordedCudaAttribution()
    {
        auto [events, infos] = recorded("raw_tangle4_cuda.json");
        size_t deviceEvents = 0;
        for (const auto &e : events)
            deviceEvents += e.kind == RawEvent::Kind::Kernel || e.kind == RawEvent::Kind::Memset || e.kind == RawEvent::Kind::Memcpy;
        QVERIFY(deviceEvents > 0);
        Profile p = buildProfile(events, infos, "cuda");
        QCOMPARE(p.iterations, 2);
        QCOMPARE(p.kernels.size(), deviceEvents);
        QCOMPARE(p.summary.unattributed, size_t(0));
        QCOMPARE(p.summary.kernelsPerIter, double(deviceEvents) / 2);
        QCOMPARE(p.iters.size(), size_t(2));
        QCOMPARE(p.iters[0].kernels, p.iters[1].kernels); // the same graph launches the same work
        std::map<int, const RangeRec *> rangeOf;          // (node, iteration 0)
        for (const auto &r : p.ranges)
            if (r.iteration == 0)
                rangeOf[r.node] = &r;
        size_t cats = 0, norms = 0, gemms = 0;
        for (const auto &k : p.kernels) {
            QVERIFY(k.node >= 0);
            const NodeInfo &n = p.nodes[size_t(k.node)];
            // The launch happened inside the node's own range.
            for (const auto &r : p.ranges)
                if (r.node == k.node && r.iteration == k.iteration)
                    QVERIFY2(k.launchUs >= r.startUs && k.launchUs <= r.startUs + r.durUs, k.name.c_str());
            QVERIFY(k.startUs >= k.launchUs); // a kernel starts after its launch
            if (n.target == "torch.cat") {
                QVERIFY2(k.name.find("Cat") != std::string::npos, k.name.c_str());
                ++cats;
            }
            if (n.target.find(".norm") != std::string::npos) {
                QVERIFY2(k.name.find("layer_norm") != std::string::npos, k.name.c_str());
                ++norms;
            }
            if (k.kind == "kernel" && (k.name.find("gemm") != std::string::npos || k.name.find("xmma") != std::string::npos)) {
                QVERIFY2(n.target.find("linear") != std::string::npos, n.target.c_str());
                ++gemms;
            }
            if (k.kind == "kernel") {
                QVERIFY(k.grid[0] > 0 && k.block[0] > 0);
                QVERIFY(k.stream >= 0);
            }
        }
        QVERIFY(cats > 0 && norms > 0 && gemms > 0);
        // Per-node statistics add up to the per-iteration totals.
        double sum = 0;
        for (const auto &s : p.nodeStats)
            sum += s.kernels;
        QCOMPARE(sum, p.summary.kernelsPerIter);
        QVERIFY(p.summary.gpuBusyUs > 0);
        double durations = 0;
        for (const auto &k : p.kernels)
            if (k.iteration == 0)
                durations += k.durUs;
        QVERIFY(p.iters[0].gpuBusyUs <= durations + 1e-6);
    }

    void linkedAndUnattributed()
    {
        std::vector<RawEvent> e;
        e.push_back(ev(RawEvent::Kind::IterRange, 1000, 9000));
        e.back().iteration = 0;
        e.push_back(nodeRange(0, 0, 1100, 2000, 501));
        e.push_back(nodeRange(1, 0, 2100, 3000, 502));
        RawEvent l = ev(RawEvent::Kind::Launch, 2200, 2300); // launch inside node 1
        l.correlation = 11;
        e.push_back(l);
        e.push_back(device(5000, 5500, 11));
        e.push_back(device(5600, 5700, 12, 501));               // no launch record, linked to node 0's range
        RawEvent late = ev(RawEvent::Kind::Launch, 8000, 8100); // between nodes: the executor's own work
        late.correlation = 13;
        e.push_back(late);
        e.push_back(device(8200, 8300, 13));
        Profile p = buildProfile(e, nodes(2), "cuda", {7.5});
        QCOMPARE(p.kernels.size(), size_t(3));
        std::map<std::string, const KernelRec *> byName;
        for (const auto &k : p.kernels)
            byName[k.name] = &k;
        QCOMPARE(byName["k11"]->node, 1);
        QCOMPARE(byName["k11"]->launchUs, 1.2); // relative to the first event (1000 ns)
        QCOMPARE(byName["k12"]->node, 0);
        QCOMPARE(byName["k13"]->node, -1);
        QCOMPARE(byName["k13"]->iteration, 0); // still inside iteration 0's host range
        QCOMPARE(p.summary.unattributed, size_t(1));
        QCOMPARE(p.summary.kernelsPerIter, 3.0);
        QCOMPARE(p.summary.wallUs, 7.5);
        QCOMPARE(p.summary.cpuUs, 8.0);
        QCOMPARE(p.summary.gpuBusyUs, 0.5 + 0.1 + 0.1);
        QVERIFY(formatProfile(p).find("unattributed kernels        1") != std::string::npos);
    }

    void cpuProfileCountsOutermostOps()
    {
        std::vector<RawEvent> e;
        e.push_back(ev(RawEvent::Kind::IterRange, 0, 10000));
        e.back().iteration = 0;
        e.push_back(nodeRange(0, 0, 100, 5000));
        auto op = [&](const char *name, uint64_t s, uint64_t t) {
            RawEvent r = ev(RawEvent::Kind::CpuOp, s, t);
            r.name = name;
            e.push_back(r);
        };
        op("aten::linear", 200, 4000);
        op("aten::addmm", 300, 3900); // called by linear: not a second "kernel"
        op("aten::tanh", 4100, 4900);
        op("aten::empty", 6000, 6100); // outside every node range
        Profile p = buildProfile(e, nodes(1), "cpu");
        QCOMPARE(p.kernels.size(), size_t(2));
        QCOMPARE(p.kernels[0].name, std::string("aten::linear"));
        QCOMPARE(p.kernels[1].name, std::string("aten::tanh"));
        QCOMPARE(p.kernels[0].kind, std::string("cpu_op"));
        QCOMPARE(p.nodeStats[0].kernels, 2.0);
        QCOMPARE(p.summary.unattributed, size_t(0));
    }

    /// Node figures and iteration totals are the same statistic (median over iterations): one slow
    /// iteration (a first call initializing a library) cannot make a node larger than an iteration.
    void nodeFiguresMatchIterationTotals()
    {
        std::vector<RawEvent> e;
        const uint64_t slow[] = {50000, 1000, 1000}; // ns of node 0's op per iteration
        uint64_t t = 0;
        for (int i = 0; i < 3; ++i) {
            const uint64_t span = slow[i] + 2000;
            e.push_back(ev(RawEvent::Kind::IterRange, t, t + span));
            e.back().iteration = i;
            e.push_back(nodeRange(0, i, t + 100, t + 100 + slow[i] + 200));
            e.push_back(nodeRange(1, i, t + slow[i] + 400, t + slow[i] + 1400));
            RawEvent a = ev(RawEvent::Kind::CpuOp, t + 200, t + 200 + slow[i]);
            a.name = "aten::baddbmm";
            RawEvent b = ev(RawEvent::Kind::CpuOp, t + slow[i] + 500, t + slow[i] + 1300);
            b.name = "aten::tanh";
            e.push_back(a);
            e.push_back(b);
            t += span + 1000;
        }
        Profile p = buildProfile(e, nodes(2), "cpu");
        QCOMPARE(p.iterations, 3);
        QCOMPARE(p.nodeStats[0].gpuUs, 1.0); // median of 50, 1, 1 µs
        QCOMPARE(p.nodeStats[1].gpuUs, 0.8);
        QCOMPARE(p.nodeStats[0].kernels, 1.0);
        QVERIFY(p.nodeStats[0].gpuUs <= p.summary.gpuBusyUs);
        QVERIFY(p.nodeStats[0].gpuUs + p.nodeStats[1].gpuUs <= p.summary.gpuBusyUs + 1e-9);
    }

    void fileRoundTrip()
    {
        auto [events, infos] = recorded("raw_tangle4_cuda.json");
        Profile p = buildProfile(events, infos, "cuda", {1500.0, 1600.0});
        p.graph = "tangle4_fx.json";
        p.version = "original";
        p.device = "cuda:0";
        p.deviceName = "NVIDIA H200";
        p.peakMemBytes = 123456789;
        p.frozenNodes = 4;
        p.warmup = 1;
        p.finish();
        QTemporaryDir tmp;
        const std::string path = tmp.filePath(QStringLiteral("p.json")).toStdString();
        QVERIFY(writeProfile(p, path).ok());
        QVERIFY(isProfileFile(path));
        auto q = readProfile(path);
        QVERIFY2(q.ok(), q.ok() ? "" : q.error().toString().c_str());
        QCOMPARE(q->kernels.size(), p.kernels.size());
        QCOMPARE(q->nodes.size(), p.nodes.size());
        QCOMPARE(q->ranges.size(), p.ranges.size());
        QCOMPARE(q->summary.kernelsPerIter, p.summary.kernelsPerIter);
        QCOMPARE(q->summary.wallUs, 1550.0);
        QCOMPARE(q->summary.peakMemBytes, int64_t(123456789));
        QCOMPARE(q->frozenNodes, int64_t(4));
        QCOMPARE(q->deviceName, std::string("NVIDIA H200"));
        for (size_t i = 0; i < p.kernels.size(); ++i) {
            QCOMPARE(q->kernels[i].name, p.kernels[i].name);
            QCOMPARE(q->kernels[i].node, p.kernels[i].node);
            QCOMPARE(q->kernels[i].grid, p.kernels[i].grid);
        }
        QCOMPARE(formatProfile(q.value()), formatProfile(p));
    }

    /// A compiled profile (fxlens-cli profile --compiled on the CPU, Inductor's C++ backend): every
    /// kernel covers FX nodes (its group), the fused layer norm covers the residual add too, node
    /// times share each kernel's time, and the provenance section survives a round trip.
    void compiledProfileGroups()
    {
        QVERIFY(isProfileFile(FXLENS_TEST_DATA "/profile/compiled_transformer_cpu.json")); // told apart by its first bytes
        auto r = readProfile(FXLENS_TEST_DATA "/profile/compiled_transformer_cpu.json");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const Profile &p = r.value();
        QVERIFY(p.compiled());
        QCOMPARE(p.backend, std::string("inductor"));
        QCOMPARE(p.summary.kernelsPerIter, 8.0);
        QCOMPARE(p.summary.unattributed, size_t(0));
        std::map<std::string, int> index;
        for (size_t i = 0; i < p.nodes.size(); ++i)
            index[p.nodes[i].name] = int(i);
        std::set<std::string> groups;
        for (const auto &k : p.kernels) {
            QVERIFY2(!k.nodes.empty() && !k.postGrad.empty(), k.name.c_str());
            QVERIFY(std::is_sorted(k.nodes.begin(), k.nodes.end()));
            QCOMPARE(k.node, k.nodes.back());
            if (k.iteration == 0)
                groups.insert(k.name + ": " + kernelNodeNames(p, k));
        }
        QVERIFY2(groups.count("cpp_fused_add_native_layer_norm_view_0: linear_1, add, x"), qPrintable(QString::number(groups.size())));
        QVERIFY(groups.count("cpp_fused_gelu_view_1: linear_2, gelu"));
        QVERIFY(groups.count("aten::addmm: linear"));
        const auto fused = std::find_if(p.kernels.begin(), p.kernels.end(),
                                        [](const KernelRec &k) { return k.name == "cpp_fused_add_native_layer_norm_view_0"; });
        QVERIFY(covers(*fused, index.at("add")) && covers(*fused, index.at("x")) && !covers(*fused, index.at("gelu")));
        // A kernel's time is shared by its nodes: the nodes' times add up to the busy time.
        double nodes = 0;
        for (const auto &s : p.nodeStats)
            nodes += s.gpuUs;
        QVERIFY(p.summary.gpuBusyUs > 0);
        QVERIFY2(std::abs(nodes - p.summary.gpuBusyUs) < 1e-6 * p.summary.gpuBusyUs, qPrintable(QString::number(nodes)));
        QTemporaryDir tmp;
        const std::string path = tmp.filePath(QStringLiteral("c.json")).toStdString();
        QVERIFY(writeProfile(p, path).ok());
        QVERIFY(isProfileFile(path));
        auto q = readProfile(path);
        QVERIFY(q.ok() && q->compiled());
        for (size_t i = 0; i < p.kernels.size(); ++i) {
            QCOMPARE(q->kernels[i].nodes, p.kernels[i].nodes);
            QCOMPARE(q->kernels[i].postGrad, p.kernels[i].postGrad);
        }
        QVERIFY(QString::fromStdString(formatProfile(p)).contains(QStringLiteral("compiled by inductor")));
    }

    /// What `python -m fxlens.compiled` writes, read onto a graph's nodes: names map to program
    /// order, a name the graph lacks and a kernel without provenance keep a reason.
    void compiledRunOntoGraphNodes()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("run.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "fxlens-compiled-run", "device": "cpu", "warmup": 1,
                    "iterations": [{"index": 0, "start_us": 0, "wall_us": 50}],
                    "kernels": [
                      {"name": "cpp_fused_mul_0", "kind": "kernel", "iteration": 0, "start_us": 1, "dur_us": 4,
                       "post_grad": ["mul", "add"], "nodes": ["c", "a"], "reason": ""},
                      {"name": "aten::mm", "kind": "extern", "iteration": 0, "start_us": 6, "dur_us": 2,
                       "post_grad": ["mm"], "nodes": ["gone"], "reason": ""},
                      {"name": "aten::copy_", "kind": "extern", "iteration": 0, "start_us": 9, "dur_us": 1,
                       "post_grad": [], "nodes": [], "reason": "no provenance record: Inductor did not generate this call"}],
                    "post_grad_graph": "run.post_grad.json",
                    "post_grad_nodes": {"mul": ["c", "a"], "mm": ["gone"], "add": ["a"]}})");
        f.close();
        auto r = readCompiledRun(path.toStdString(),
                                 {{"a", "call_function", "t", ""}, {"b", "call_function", "t", ""}, {"c", "call_function", "t", ""}});
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const Profile &p = r.value();
        QVERIFY(p.compiled() && p.mode == "cpu");
        QCOMPARE(p.kernels.size(), size_t(3));
        QCOMPARE(p.kernels[0].nodes, (std::vector<int>{0, 2}));
        QCOMPARE(p.kernels[0].node, 2);
        QCOMPARE(p.kernels[1].node, -1);
        QCOMPARE(p.kernels[1].reason, std::string("names node 'gone', which the graph file lacks"));
        QVERIFY(p.kernels[2].reason.find("Inductor did not generate") != std::string::npos);
        QCOMPARE(p.summary.unattributed, size_t(2));
        QCOMPARE(p.nodeStats[0].gpuUs, 2.0); // half of the fused kernel's 4 us
        // The post-grad graph beside the run, and its nodes' FX nodes (a name the graph lacks dropped).
        QCOMPARE(QString::fromStdString(p.postGradGraph), tmp.filePath(QStringLiteral("run.post_grad.json")));
        QCOMPARE(p.postGradNodes, (std::map<std::string, std::vector<int>>{{"add", {0}}, {"mul", {0, 2}}}));
    }

    /// A compiled profile's post-grad graph (saved beside it by profile --compiled): the file it
    /// names loads, and the mapping names nodes of both graphs; saved elsewhere, the profile names
    /// the same file relative to its new place.
    void compiledPostGradGraph()
    {
        const QString file = QStringLiteral(FXLENS_TEST_DATA "/profile/compiled_post_grad_cpu.json");
        auto r = readProfile(file.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const Profile &p = r.value();
        const QString graphFile = QStringLiteral(FXLENS_TEST_DATA "/profile/compiled_post_grad_cpu.post_grad.json");
        QCOMPARE(QFileInfo(QString::fromStdString(p.postGradGraph)).canonicalFilePath(), QFileInfo(graphFile).canonicalFilePath());
        auto g = io::readGraphFile(p.postGradGraph);
        QVERIFY2(g.ok(), g.ok() ? "" : g.error().toString().c_str());
        QVERIFY(p.postGradNodes.size() > 40);
        for (const auto &[post, fx] : p.postGradNodes) {
            QVERIFY2(g.value()->find(post), post.c_str());
            QVERIFY(!fx.empty());
        }
        // The GELU's erf came from the gelu node; every post-grad node of a kernel is in the graph.
        QCOMPARE(p.nodes[size_t(p.postGradNodes.at("erf").front())].name, std::string("gelu"));
        for (const auto &k : p.kernels)
            for (const auto &post : k.postGrad)
                QVERIFY2(g.value()->find(post), post.c_str());
        QTemporaryDir tmp;
        QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("a/b")));
        const std::string saved = tmp.filePath(QStringLiteral("a/b/saved.json")).toStdString();
        QVERIFY(writeProfile(p, saved).ok());
        QFile f(QString::fromStdString(saved));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY2(!text.contains(tmp.path().toUtf8()) && text.contains("compiled_post_grad_cpu.post_grad.json"), text.constData());
        auto q = readProfile(saved);
        QVERIFY(q.ok());
        QCOMPARE(QFileInfo(QString::fromStdString(q->postGradGraph)).canonicalFilePath(), QFileInfo(graphFile).canonicalFilePath());
        QCOMPARE(q->postGradNodes, p.postGradNodes);
    }

    void malformedProfiles_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << QByteArray("{\"format\": \"fxlens-profile\",") << QStringLiteral("not valid JSON");
        QTest::newRow("graph, not profile") << QByteArray("{\"nodes\": []}") << QStringLiteral("not an fxlens profile");
        QTest::newRow("newer") << QByteArray("{\"format\": \"fxlens-profile\", \"format_version\": 99}")
                               << QStringLiteral("profile format version 99 is newer than this fxlens reads (1)");
        QTest::newRow("missing field") << QByteArray("{\"format\": \"fxlens-profile\", \"format_version\": 1, \"mode\": \"cuda\"}")
                                       << QStringLiteral("malformed profile");
        QTest::newRow("bad node index")
            << QByteArray("{\"format\":\"fxlens-profile\",\"format_version\":1,\"mode\":\"cuda\",\"iterations\":1,\"nodes\":[],"
                          "\"ranges\":[],\"iteration_records\":[],\"kernel_columns\":[\"name\",\"kind\",\"device\",\"stream\","
                          "\"start_us\",\"dur_us\",\"launch_us\",\"iteration\",\"node\",\"correlation\",\"grid\",\"block\"],"
                          "\"kernels\":[[\"k\",\"kernel\",0,7,1.0,1.0,0.5,0,3,1,[1,1,1],[1,1,1]]]}")
            << QStringLiteral("kernel 'k' names node 3, but the profile has 0 nodes");
        QTest::newRow("compiled: bad node")
            << QByteArray("{\"format\":\"fxlens-profile\",\"format_version\":1,\"mode\":\"cpu\",\"iterations\":1,"
                          "\"nodes\":[[\"a\",\"call_function\",\"t\",\"\"]],"
                          "\"ranges\":[],\"iteration_records\":[],\"kernel_columns\":[\"name\",\"kind\",\"device\",\"stream\","
                          "\"start_us\",\"dur_us\",\"launch_us\",\"iteration\",\"node\",\"correlation\",\"grid\",\"block\"],"
                          "\"kernels\":[[\"k\",\"kernel\",-1,-1,1.0,1.0,-1,0,0,0,[0,0,0],[0,0,0]]],"
                          "\"provenance\":{\"backend\":\"inductor\",\"kernels\":[{\"nodes\":[0,4]}]}}")
            << QStringLiteral("provenance: kernel 'k' covers node 4, but the profile has 1 nodes");
        QTest::newRow("compiled: one entry short")
            << QByteArray("{\"format\":\"fxlens-profile\",\"format_version\":1,\"mode\":\"cpu\",\"iterations\":1,"
                          "\"nodes\":[[\"a\",\"call_function\",\"t\",\"\"]],"
                          "\"ranges\":[],\"iteration_records\":[],\"kernel_columns\":[\"name\",\"kind\",\"device\",\"stream\","
                          "\"start_us\",\"dur_us\",\"launch_us\",\"iteration\",\"node\",\"correlation\",\"grid\",\"block\"],"
                          "\"kernels\":[[\"k\",\"kernel\",-1,-1,1.0,1.0,-1,0,0,0,[0,0,0],[0,0,0]]],"
                          "\"provenance\":{\"backend\":\"inductor\",\"kernels\":[]}}")
            << QStringLiteral("provenance: 0 entries for 1 kernels");
        const QByteArray compiled = "{\"format\":\"fxlens-profile\",\"format_version\":1,\"mode\":\"cpu\",\"iterations\":1,"
                                    "\"nodes\":[[\"a\",\"call_function\",\"t\",\"\"]],"
                                    "\"ranges\":[],\"iteration_records\":[],\"kernel_columns\":[\"name\",\"kind\",\"device\",\"stream\","
                                    "\"start_us\",\"dur_us\",\"launch_us\",\"iteration\",\"node\",\"correlation\",\"grid\",\"block\"],"
                                    "\"kernels\":[],\"provenance\":{\"backend\":\"inductor\",\"kernels\":[],";
        QTest::newRow("compiled: post-grad node from a bad node")
            << compiled + "\"post_grad_graph\":\"p.json\",\"post_grad_nodes\":{\"mul\":[0,3]}}}"
            << QStringLiteral("provenance: post-grad node 'mul' comes from node 3, but the profile has 1 nodes");
        QTest::newRow("compiled: post-grad graph not a name")
            << compiled + "\"post_grad_graph\":7}}" << QStringLiteral("provenance: post_grad_graph is not a file name");
    }
    void malformedProfiles()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        QString path = tmp.filePath(QStringLiteral("bad.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        auto r = readProfile(path.toStdString());
        QVERIFY(!r.ok());
        const QString text = QString::fromStdString(r.error().toString());
        QVERIFY2(text.startsWith(path + QStringLiteral(": error: ")), qPrintable(text));
        QVERIFY2(text.contains(message), qPrintable(text));
    }

    /// The Chrome trace follows the Perfetto-safe subset: object form, X events in microseconds,
    /// named processes/threads, strictly nested slices per track, paired flows, join keys in args.
    void chromeTraceSchema()
    {
        auto [events, infos] = recorded("raw_tangle4_cuda.json");
        Profile a = buildProfile(events, infos, "cuda", {1500.0, 1600.0});
        a.version = "original";
        a.deviceName = "NVIDIA H200";
        Profile b = a;
        b.versionId = 1;
        b.version = "optimized";
        b.nodes[0].name = "x\"quoted\"\nnewline"; // strings are escaped
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("t.json"));
        QVERIFY(writeChromeTrace({&a, &b}, path.toStdString()).ok());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonParseError err;
        QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
        QCOMPARE(err.error, QJsonParseError::NoError);
        QVERIFY(doc.isObject());
        QJsonArray evs = doc.object().value(QStringLiteral("traceEvents")).toArray();
        QVERIFY(!evs.isEmpty());
        std::set<int> namedPids, usedPids;
        std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
        std::map<qint64, int> flowStarts, flowEnds;
        size_t kernels = 0, nodeRanges = 0;
        std::set<QString> versions;
        for (const auto &v : evs) {
            QJsonObject e = v.toObject();
            const QString ph = e.value(QStringLiteral("ph")).toString();
            QVERIFY2(QStringList({"X", "i", "s", "f", "M"}).contains(ph), qPrintable(ph));
            QVERIFY(e.value(QStringLiteral("pid")).isDouble());
            QVERIFY(e.value(QStringLiteral("tid")).isDouble());
            QVERIFY(e.value(QStringLiteral("name")).isString());
            const int pid = e.value(QStringLiteral("pid")).toInt(), tid = e.value(QStringLiteral("tid")).toInt();
            if (ph == QLatin1String("M")) {
                QVERIFY(e.value(QStringLiteral("args")).isObject());
                if (e.value(QStringLiteral("name")).toString() == QLatin1String("process_name"))
                    namedPids.insert(pid);
                continue;
            }
            usedPids.insert(pid);
            QVERIFY(e.value(QStringLiteral("ts")).isDouble());
            const double ts = e.value(QStringLiteral("ts")).toDouble();
            QVERIFY(ts >= 0);
            if (ph == QLatin1String("X")) {
                QVERIFY(e.value(QStringLiteral("dur")).isDouble());
                const double dur = e.value(QStringLiteral("dur")).toDouble();
                QVERIFY(dur >= 0);
                slices[{pid, tid}].push_back({ts, ts + dur});
                const QString cat = e.value(QStringLiteral("cat")).toString();
                QJsonObject args = e.value(QStringLiteral("args")).toObject();
                QVERIFY(args.contains(QStringLiteral("graph_version")));
                versions.insert(args.value(QStringLiteral("graph_version")).toString());
                if (cat == QLatin1String("kernel") || cat == QLatin1String("memset")) {
                    ++kernels;
                    QVERIFY(args.contains(QStringLiteral("fx_node")));
                    QVERIFY(args.contains(QStringLiteral("iteration")));
                    QVERIFY(args.contains(QStringLiteral("correlation")));
                    if (cat == QLatin1String("kernel"))
                        QCOMPARE(args.value(QStringLiteral("grid")).toArray().size(), 3);
                }
                if (cat == QLatin1String("fx_node")) {
                    ++nodeRanges;
                    QVERIFY(args.value(QStringLiteral("node_index")).isDouble());
                }
            } else if (ph == QLatin1String("s")) {
                flowStarts[qint64(e.value(QStringLiteral("id")).toDouble())]++;
            } else if (ph == QLatin1String("f")) {
                QCOMPARE(e.value(QStringLiteral("bp")).toString(), QStringLiteral("e"));
                flowEnds[qint64(e.value(QStringLiteral("id")).toDouble())]++;
            }
        }
        QCOMPARE(kernels, a.kernels.size() + b.kernels.size());
        QCOMPARE(nodeRanges, a.ranges.size() + b.ranges.size());
        QCOMPARE(versions, (std::set<QString>{QStringLiteral("v0 original"), QStringLiteral("v1 optimized")}));
        for (int pid : usedPids)
            QVERIFY2(namedPids.count(pid), "every process has a name");
        QCOMPARE(flowStarts.size(), kernels); // one arrow per attributed kernel
        for (const auto &[id, n] : flowStarts) {
            QCOMPARE(n, 1);
            QCOMPARE(flowEnds[id], 1);
        }
        // Slices on one track nest strictly (Perfetto sends overlaps to an overflow track).
        for (auto &[track, iv] : slices) {
            std::sort(iv.begin(), iv.end(), [](auto &x, auto &y) { return x.first != y.first ? x.first < y.first : x.second > y.second; });
            std::vector<double> open;
            for (const auto &[s, e] : iv) {
                while (!open.empty() && open.back() <= s)
                    open.pop_back();
                QVERIFY2(open.empty() || e <= open.back() + 1e-9, "overlapping slices on one track");
                open.push_back(e);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestProfile)
#include "tst_Profile.moc"
