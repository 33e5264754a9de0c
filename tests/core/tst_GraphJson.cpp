// SPDX-License-Identifier: MIT
// Tests of the graph file format: exact round trips of every bundled example and one specific
// diagnostic for each file of the malformed corpus.
#include "io/DotWriter.h"
#include "io/GraphJson.h"
#include "io/Safetensors.h"
#include "ir/GraphDiff.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace fxlens;

namespace {

/// Every dtype torch has (docs/FORMAT.md, "Dtypes"), with its safetensors code ("" when it has none).
const std::pair<const char *, const char *> kTorchDtypes[] = {
    {"float64", "F64"},
    {"float32", "F32"},
    {"float16", "F16"},
    {"bfloat16", "BF16"},
    {"complex32", ""},
    {"complex64", "C64"},
    {"complex128", ""},
    {"int8", "I8"},
    {"int16", "I16"},
    {"int32", "I32"},
    {"int64", "I64"},
    {"uint8", "U8"},
    {"uint16", "U16"},
    {"uint32", "U32"},
    {"uint64", "U64"},
    {"bool", "BOOL"},
    {"float8_e4m3fn", "F8_E4M3"},
    {"float8_e5m2", "F8_E5M2"},
    {"float8_e4m3fnuz", "F8_E4M3FNUZ"},
    {"float8_e5m2fnuz", "F8_E5M2FNUZ"},
    {"float8_e8m0fnu", "F8_E8M0"},
    {"float4_e2m1fn_x2", "F4"},
    {"qint8", ""},
    {"quint8", ""},
    {"qint32", ""},
    {"quint4x2", ""},
    {"quint2x4", ""},
    {"bits1x8", ""},
    {"bits2x4", ""},
    {"bits4x2", ""},
    {"bits8", ""},
    {"bits16", ""},
    {"int1", ""},
    {"int2", ""},
    {"int3", ""},
    {"int4", ""},
    {"int5", ""},
    {"int6", ""},
    {"int7", ""},
    {"uint1", ""},
    {"uint2", ""},
    {"uint3", ""},
    {"uint4", ""},
    {"uint5", ""},
    {"uint6", ""},
    {"uint7", ""},
};

/// The JSON header of a safetensors file.
std::string safetensorsHeader(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    uint8_t len[8] = {};
    in.read(reinterpret_cast<char *>(len), 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | len[i];
    std::string h(n, '\0');
    in.read(h.data(), std::streamsize(n));
    return h;
}

} // namespace

class TestGraphJson : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTripExamples_data()
    {
        QTest::addColumn<QString>("file");
        QDir dir(QStringLiteral(FXLENS_EXAMPLES));
        auto files = dir.entryList({QStringLiteral("*.json"), QStringLiteral("*.json.gz")}, QDir::Files, QDir::Name);
        files.removeIf([](const QString &f) { return f.contains(QStringLiteral(".fxprof.")); }); // saved profiles beside graphs
        QVERIFY2(files.size() >= 11, "bundled examples are missing");
        for (const auto &f : files)
            QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }

    void roundTripExamples()
    {
        QFETCH(QString, file);
        auto r = io::readGraphFile(file.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        ir::Graph &g = *r.value();
        QVERIFY(g.size() > 10);
        auto lint = g.lint();
        QVERIFY2(lint.empty(), lint.empty() ? "" : lint[0].toString().c_str());
        // Lint must also hold the meta we promise: every call_function whose value is read has a
        // value meta (checks such as aten._assert_tensor_metadata return None: nothing to describe).
        size_t withMeta = 0, calls = 0;
        for (auto *n = g.first(); n; n = n->next())
            if (n->op() == ir::OpKind::CallFunction && !n->users().empty()) {
                ++calls;
                withMeta += n->meta().val.kind != ir::ValueMeta::Kind::Unknown;
            }
        QCOMPARE(withMeta, calls);

        // Write, re-read: identical printed form, identical JSON, no diff, same module/param info.
        std::string json1 = io::writeGraphJson(g);
        QTemporaryDir tmp;
        std::string path = tmp.filePath(QStringLiteral("g.json.gz")).toStdString();
        QVERIFY(io::writeGraphFile(g, path).ok());
        auto r2 = io::readGraphFile(path);
        QVERIFY2(r2.ok(), r2.ok() ? "" : r2.error().toString().c_str());
        QCOMPARE(ir::printGraph(*r2.value()), ir::printGraph(g));
        QCOMPARE(io::writeGraphJson(*r2.value()), json1);
        QVERIFY(ir::diffGraphs(g, *r2.value()).empty());
        QCOMPARE(r2.value()->modules, g.modules);
        QCOMPARE(r2.value()->params, g.params);
        QCOMPARE(r2.value()->irLevel, g.irLevel);
        // Node meta survives in full (stack traces, module stacks, tuple outputs).
        for (auto *n = g.first(); n; n = n->next())
            QVERIFY2(r2.value()->find(n->name())->meta() == n->meta(), n->name().c_str());
    }

    void metaFieldsArePreserved()
    {
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle50_torch.json");
        QVERIFY(r.ok());
        ir::Graph &g = *r.value();
        QCOMPARE(g.source, std::string("dynamo"));
        ir::Node *split = g.find("split");
        QVERIFY(split);
        QCOMPARE(split->meta().val.kind, ir::ValueMeta::Kind::Sequence);
        QCOMPARE(split->meta().val.items.size(), size_t(50));
        QCOMPARE(split->meta().val.items[0].tensor.toString(), std::string("f32[64, 32]"));
        QCOMPARE(split->meta().val.items[1].tensor.stride, (std::vector<int64_t>{1600, 1}));
        ir::Node *lin = nullptr;
        for (auto *n = g.first(); n && !lin; n = n->next())
            if (n->target() == "torch.nn.functional.linear")
                lin = n;
        QVERIFY(lin);
        QCOMPARE(lin->meta().modulePath(), std::string("blocks.0.linear"));
        QVERIFY(lin->meta().stackTrace.find("forward") != std::string::npos);
        QCOMPARE(lin->meta().sourceFnTarget, std::string("torch.nn.modules.linear.Linear"));
        // Parameters are get_attr nodes with shapes in the file.
        ir::Node *w = lin->args()[1].toNode();
        QCOMPARE(w->op(), ir::OpKind::GetAttr);
        QCOMPARE(w->target(), std::string("blocks.0.linear.weight"));
        auto it = std::find_if(g.params.begin(), g.params.end(), [](auto &p) { return p.name == "blocks.0.linear.weight"; });
        QVERIFY(it != g.params.end());
        QCOMPARE(it->shape, (std::vector<int64_t>{32, 32}));
    }

    void everyArgumentKindRoundTrips()
    {
        const char *text = R"({"format":"fxlens-graph","version":1,"ir":"aten","nodes":[
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"val":{"tensor":{"shape":["s0",8],"dtype":"bfloat16","stride":[8,1],"requires_grad":true}}}},
{"name":"y","op":"call_function","target":"f","args":[{"node":"x"},null,true,-3,2.5,"s",[1,[2]],{"tuple":[{"float":"inf"},{"float":"-inf"},{"float":"nan"}]},{"slice":[null,4,2]},{"dict":{"b":1,"a":{"node":"x"}}}],"kwargs":{"dtype":{"dtype":"float16"},"device":{"device":"cuda:0"},"layout":{"layout":"strided"},"memory_format":{"memory_format":"channels_last"},"o":{"opaque":"<object>"}},"meta":{"val":{"seq":[{"scalar":3},null]},"provenance":{"pattern":"p","step":4,"replaced":["a","b"]}}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"y"}]}],"kwargs":{},"meta":{}}
]})";
        auto r = io::parseGraphJson(text, "inline");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        ir::Graph &g = *r.value();
        ir::Node *y = g.find("y");
        QCOMPARE(y->args().size(), size_t(10));
        QCOMPARE(y->args()[7].items()[2].toString(), std::string("nan"));
        QCOMPARE(y->args()[9].entries()[0].first, std::string("b")); // dict order kept
        QCOMPARE(y->kwargs()[0].first, std::string("dtype"));
        QCOMPARE(g.find("x")->meta().val.tensor.shape[0].symbol, std::string("s0"));
        QCOMPARE(g.find("x")->users(), std::vector<ir::Node *>{y}); // used twice, listed once
        QCOMPARE(y->meta().provenance->replaced, (std::vector<std::string>{"a", "b"}));
        auto again = io::parseGraphJson(io::writeGraphJson(g), "again");
        QVERIFY(again.ok());
        QCOMPARE(io::writeGraphJson(*again.value()), io::writeGraphJson(g));
        QCOMPARE(ir::printNode(*again.value()->find("y")), ir::printNode(*y));
    }

    /// Every torch dtype name survives the graph reader and writer: value meta, params and dtype arguments.
    void everyDtypeNameRoundTrips()
    {
        const std::string tensor = R"({"tensor":{"shape":[2],"dtype":"@","stride":[1],"requires_grad":false}})";
        const std::string graph = R"({"format":"fxlens-graph","version":1,"ir":"aten",
"params":[{"name":"w","kind":"buffer","shape":[2],"dtype":"@","requires_grad":false}],"nodes":[
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"val":T}},
{"name":"w","op":"get_attr","target":"w","args":[],"kwargs":{},"meta":{"val":T}},
{"name":"y","op":"call_function","target":"aten.view.dtype","args":[{"node":"x"},{"dtype":"@"}],"kwargs":{},"meta":{"val":T}},
{"name":"output","op":"output","target":"output","args":[[{"node":"y"},{"node":"w"}]],"kwargs":{},"meta":{}}]})";
        for (const auto &[name, code] : kTorchDtypes) {
            const std::string d = name;
            std::string text;
            for (char c : graph)
                text += c == 'T' ? tensor : std::string(1, c);
            for (size_t at; (at = text.find('@')) != std::string::npos;)
                text.replace(at, 1, d);
            auto r = io::parseGraphJson(text, d);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
            QCOMPARE(r.value()->params[0].dtype, d);
            QCOMPARE(r.value()->find("y")->args()[1].text(), d);
            QCOMPARE(r.value()->find("x")->meta().val.tensor.dtype, d);
            auto again = io::parseGraphJson(io::writeGraphJson(*r.value()), d);
            QVERIFY(again.ok());
            QCOMPARE(io::writeGraphJson(*again.value()), io::writeGraphJson(*r.value()));
        }
    }

    /// Every dtype safetensors has a code for is written and read back as it was (F4 with its last
    /// dimension counted in 4-bit values in the file); every other one, an empty dtype and data that
    /// does not fit its shape are refused by name before a byte is written.
    void safetensorsRoundTripsEveryDtype()
    {
        QTemporaryDir dir;
        std::map<std::string, io::SafeTensor> all;
        for (const auto &[name, code] : kTorchDtypes) {
            QCOMPARE(io::safetensorsDtype(name), std::string(code));
            QCOMPARE(io::unstorableReason(name).empty(), *code != 0);
            if (!*code) {
                QVERIFY2(io::unstorableReason(name).find(std::string("safetensors has no code for ") + name) == 0,
                         io::unstorableReason(name).c_str());
                continue;
            }
            QCOMPARE(io::fxlensDtype(code), std::string(name));
            io::SafeTensor t;
            t.dtype = code;
            t.shape = {2, 3};
            for (size_t i = 0; i < 6 * io::dtypeSize(code); ++i)
                t.data.push_back(uint8_t(i * 37 + std::strlen(name)));
            all["t:" + std::string(name)] = t;
        }
        QCOMPARE(all.size(), size_t(20));
        const std::string path = dir.filePath(QStringLiteral("all.safetensors")).toStdString();
        QVERIFY(io::writeSafetensors(all, path).ok());
        auto back = io::readSafetensors(path);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QCOMPARE(back.value().size(), all.size());
        for (const auto &[name, t] : all) {
            const io::SafeTensor &b = back.value().at(name);
            QCOMPARE(b.dtype, t.dtype);
            QCOMPARE(b.shape, t.shape);
            QVERIFY2(b.data == t.data, name.c_str());
        }
        QVERIFY(safetensorsHeader(path).find(R"("t:float4_e2m1fn_x2":{"data_offsets":[)") != std::string::npos);
        QVERIFY2(safetensorsHeader(path).find(R"("dtype":"F4","shape":[2,6]})") != std::string::npos, safetensorsHeader(path).c_str());

        // Refused before the file exists.
        const std::string refused = dir.filePath(QStringLiteral("refused.safetensors")).toStdString();
        auto refuse = [&](io::SafeTensor t, const std::string &expected) {
            std::map<std::string, io::SafeTensor> m = all;
            m["bad"] = std::move(t);
            auto w = io::writeSafetensors(m, refused);
            QVERIFY(!w.ok());
            QVERIFY2(w.error().message.rfind("tensor 'bad': " + expected, 0) == 0, w.error().message.c_str());
            QVERIFY(!std::filesystem::exists(refused));
            QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1); // no temporary file either
        };
        refuse({"", {2}, {0, 0, 0, 0, 0, 0, 0, 0}}, "safetensors has no code for a tensor without a dtype");
        refuse({"complex128", {1}, std::vector<uint8_t>(16)}, "safetensors has no code for complex128 (its one complex code is C64)");
        refuse({"qint8", {1}, std::vector<uint8_t>(1)}, "safetensors has no code for qint8 (a quantized dtype)");
        refuse({"C128", {1}, std::vector<uint8_t>(16)}, "safetensors has no code for C128 (it has F64, F32,");
        refuse({"float32", {1}, std::vector<uint8_t>(4)}, "dtype 'float32' is a torch name, not its safetensors code F32");
        refuse({"F32", {3}, std::vector<uint8_t>(8)}, "8 bytes of data for shape [3] of F32");
        refuse({"F4", {}, std::vector<uint8_t>(1)}, "a 0-dim float4_e2m1fn_x2 has no safetensors shape");

        // The reader names what it cannot read.
        auto readBack = [&](const std::string &header, size_t bytes) {
            std::string h = header;
            while (h.size() % 8)
                h += ' ';
            std::string file;
            for (int i = 0; i < 8; ++i)
                file.push_back(char((uint64_t(h.size()) >> (8 * i)) & 0xff));
            file += h + std::string(bytes, '\0');
            const std::string p = dir.filePath(QStringLiteral("crafted.safetensors")).toStdString();
            std::ofstream(p, std::ios::binary) << file;
            return io::readSafetensors(p);
        };
        auto odd = readBack(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})", 1);
        QVERIFY(!odd.ok());
        QVERIFY2(odd.error().message.find("tensor 'a': F4 shape [3] does not end in an even dimension") == 0, odd.error().message.c_str());
        auto f6 = readBack(R"({"a":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]}})", 3);
        QVERIFY(!f6.ok());
        QVERIFY2(f6.error().message.find("tensor 'a': unsupported dtype F6_E2M3 (fxlens reads F64,") == 0, f6.error().message.c_str());
        auto c64 = readBack(R"({"a":{"dtype":"C64","shape":[2],"data_offsets":[0,16]}})", 16);
        QVERIFY(c64.ok());
        QCOMPARE(c64.value().at("a").data.size(), size_t(16));
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("node");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("message");
        auto row = [](const char *f, const char *node, int line, const char *msg) {
            QTest::newRow(f) << QString::fromLatin1(f) << QString::fromLatin1(node) << line << QString::fromUtf8(msg);
        };
        row("empty.json", "", 1,
            "malformed JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
        row("truncated.json", "", 3,
            "malformed JSON: syntax error while parsing object key - invalid string: missing closing quote; last read: '\"targ'; expected "
            "string literal");
        row("trailing_comma.json", "", 5,
            "malformed JSON: syntax error while parsing value - unexpected ']'; expected '[', '{', or a literal");
        row("not_object.json", "", 0, "the top level must be an object, found array");
        row("wrong_format.json", "", 0, "not an fxlens graph file (\"format\" must be \"fxlens-graph\")");
        row("missing_version.json", "", 0, "missing integer \"version\"");
        row("version_99.json", "", 0, "unsupported schema version 99 (this fxlens reads version 1)");
        row("bad_ir.json", "", 0, "\"ir\" must be \"torch\" or \"aten\", found \"tosa\"");
        row("missing_nodes.json", "", 0, "missing array \"nodes\"");
        row("node_not_object.json", "", 0, "nodes[1] must be an object");
        row("node_without_name.json", "", 0, "nodes[1] has no \"name\"");
        row("duplicate_name.json", "y", 0, "duplicate node name (nodes[2])");
        row("unknown_op.json", "y", 0,
            "unknown op kind 'call_lambda' (expected placeholder, get_attr, call_function, call_method, call_module or output)");
        row("missing_target.json", "y", 0, "missing string \"target\"");
        row("target_not_string.json", "y", 0, "missing string \"target\"");
        row("dangling_ref.json", "y", 0, "references unknown node 'ghost' (dangling reference)");
        row("cycle.json", "a", 0, "is part of a cycle: a -> b -> a (following inputs)");
        row("forward_ref.json", "a", 0, "uses 'b' before it is defined (nodes must be in topological order)");
        row("no_output.json", "", 0, "a graph needs exactly one output node, found 0");
        row("two_outputs.json", "", 0, "a graph needs exactly one output node, found 2");
        row("output_not_last.json", "output", 0, "the output node must be the last node");
        row("unknown_tag.json", "y", 0,
            "unknown argument tag 'tensor' (expected node, tuple, dict, slice, float, dtype, device, layout, memory_format or opaque)");
        row("tag_two_keys.json", "y", 0, "a tagged argument object must have exactly one key, found 2");
        row("bad_dtype.json", "y", 0, "unknown dtype 'float33' in an argument");
        row("bad_meta_shape.json", "y", 0, "meta.val.tensor.shape holds a value of type object (expected int or symbol)");
        row("bad_meta_kind.json", "y", 0, "unknown meta.val kind 'tensorlist' (expected tensor, seq or scalar)");
        row("args_not_array.json", "y", 0, "\"args\" must be an array");
        row("bad_slice.json", "y", 0, "'slice' argument must have 3 items (start, stop, step), found 2");
        row("bad_float.json", "y", 0, "'float' argument must be \"inf\", \"-inf\" or \"nan\", found \"huge\"");
        row("param_missing_shape.json", "", 0, "each entry of \"params\" needs \"name\", \"shape\" and \"dtype\"");
        row("source_fn_shape.json", "y", 0, "meta.source_fn must be [name, target]");
        row("session_not_object.json", "", 0, "\"session\" must be an object, found array");
        row("session_version_2.json", "", 0, "\"session\": unsupported version 2 (this fxlens reads version 1)");
        row("session_step_without_anchor.json", "", 0, "\"session\": steps[1] needs non-empty strings \"pattern\" and \"anchor\"");
        row("session_paths_not_array.json", "", 0, "\"session\": \"pattern_paths\" must be an array of strings, found string");
        row("corrupt.json.gz", "", 0, "");
        row("no_such_file.json", "", 0, "cannot open file");
        row("number_overflow.json", "", 1, "malformed JSON: number overflow parsing '1e400'");
        row("nested_60000.json", "", 0, "malformed JSON: nesting deeper than 1024 levels");
        row("int_past_int64.json", "split", 0, "integer 18446744073709551615 is outside the int64 range fxlens keeps");
        row("gzip_bomb.json.gz", "", 0, "decompresses to more than 1000 times its 71415 bytes (a gzip bomb?)");
        row("long_string.json.gz", "", 0,
            "a string of 2097152 bytes (the limit is 1048576): \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
    }

    /// Every limit refuses with its own message (lowered here so that small inputs reach them).
    void limits()
    {
        const io::ReadLimits saved = io::readLimits();
        const std::string path = std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json";
        io::readLimits().maxFileBytes = 100;
        auto r = io::readGraphFile(path);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("(the limit is 100)") != std::string::npos, r.error().message.c_str());
        io::readLimits() = saved;
        io::readLimits().maxTextBytes = 1000;
        r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle200_torch.json.gz");
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().message), QStringLiteral("decompresses past 1000 bytes (the limit)"));
        io::readLimits() = saved;
        io::readLimits().maxNodes = 3;
        r = io::readGraphFile(path);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("nodes (the limit is 3)") != std::string::npos, r.error().message.c_str());
        io::readLimits() = saved;
        r = io::readGraphFile(std::string(FXLENS_TEST_DATA) + "/malformed");
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().message), QStringLiteral("is a directory, not a file"));
        QVERIFY(io::readGraphFile(path).ok());
    }

    void malformed()
    {
        QFETCH(QString, file);
        QFETCH(QString, node);
        QFETCH(int, line);
        QFETCH(QString, message);
        std::string path = std::string(FXLENS_TEST_DATA) + "/malformed/" + file.toStdString();
        auto r = io::readGraphFile(path);
        QVERIFY(!r.ok());
        const Diagnostic &d = r.error();
        QCOMPARE(QString::fromStdString(d.file), QString::fromStdString(path));
        QCOMPARE(QString::fromStdString(d.node), node);
        QCOMPARE(d.line, line);
        if (file == QLatin1String("corrupt.json.gz"))
            QVERIFY2(d.message.rfind("cannot read file (", 0) == 0, d.message.c_str());
        else
            QCOMPARE(QString::fromStdString(d.message), message);
        // The one-line form names the file (and the node, when there is one).
        QString text = QString::fromStdString(d.toString());
        QVERIFY(text.startsWith(QString::fromStdString(path)));
        if (!node.isEmpty())
            QVERIFY(text.contains(QStringLiteral("node '%1'").arg(node)));
    }

    /// A trace file's "session" is kept as read (fields and raw JSON), shown by GraphInfo, copied by
    /// clone(), and never written: a saved graph is a plain graph.
    void recordedSessionIsReadNotWritten()
    {
        auto plain = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        QVERIFY(plain.ok());
        QVERIFY(!plain.value()->session);
        QVERIFY(ir::computeGraphInfo(*plain.value()).toString().find("session:") == std::string::npos);
        std::string text = io::writeGraphJson(*plain.value());
        const std::string session = R"({"format":"fxlens-session","version":1,"tool":"fxlens.backend","preset":"all",)"
                                    R"("patterns":"","pattern_paths":["/abs/my.fxpat"],"future":{"x":1},)"
                                    R"("steps":[{"pattern":"cat_single","anchor":"cat"},{"pattern":"fold_view","anchor":"view_2"}]})";
        text.insert(1, "\"session\":" + session + ",");
        auto r = io::parseGraphJson(text, "trace.json");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const auto &s = r.value()->session;
        QVERIFY(s);
        QCOMPARE(s->tool, std::string("fxlens.backend"));
        QCOMPARE(s->preset, std::string("all"));
        QCOMPARE(s->patternPaths, std::vector<std::string>{"/abs/my.fxpat"});
        QCOMPARE(s->steps.size(), size_t(2));
        QCOMPARE(s->steps[1].pattern + "@" + s->steps[1].anchor, std::string("fold_view@view_2"));
        QCOMPARE(s->json, session); // compact, unknown keys kept
        QCOMPARE(s->summary(), std::string("recorded by fxlens.backend: preset all, 2 steps, 1 pattern path"));
        const std::string info = ir::computeGraphInfo(*r.value()).toString();
        QVERIFY2(info.find("session: recorded by fxlens.backend: preset all, 2 steps") != std::string::npos, info.c_str());
        QCOMPARE(r.value()->clone()->session, s);
        const std::string again = io::writeGraphJson(*r.value());
        QVERIFY(again.find("\"session\"") == std::string::npos);
        QCOMPARE(again, io::writeGraphJson(*plain.value()));
        // Shape errors name the file.
        text.replace(text.find("\"anchor\":\"cat\""), 14, "\"anchor\":\"\"");
        r = io::parseGraphJson(text, "trace.json");
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().toString()),
                 QStringLiteral("trace.json: error: \"session\": steps[0] needs non-empty strings \"pattern\" and \"anchor\""));
    }

    void malformedColumn()
    {
        auto r = io::parseGraphJson("{\n  \"format\": \"fxlens-graph\",\n  \"version\": 1,,\n}", "f.json");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().line, 3);
        QCOMPARE(r.error().column, 16);
        QCOMPARE(QString::fromStdString(r.error().toString()).left(12), QStringLiteral("f.json:3:16:"));
    }

    void dotHasClustersAndEdges()
    {
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        QVERIFY(r.ok());
        std::string dot = io::writeDot(*r.value());
        QVERIFY(dot.rfind("digraph \"tangle4\" {", 0) == 0);
        QVERIFY(dot.find("label=\"blocks.3\"") != std::string::npos);
        QVERIFY(dot.find("\"x\" -> \"split\" [label=\"f32[64, 128]\"];") != std::string::npos);
        size_t edges = 0;
        for (size_t p = dot.find(" -> "); p != std::string::npos; p = dot.find(" -> ", p + 1))
            ++edges;
        size_t expected = 0;
        for (auto *n = r.value()->first(); n; n = n->next())
            expected += n->inputNodes().size();
        QCOMPARE(edges, expected);
    }
};

QTEST_GUILESS_MAIN(TestGraphJson)
#include "tst_GraphJson.moc"
