// SPDX-License-Identifier: MIT
// exec::Runner: prepares inputs and weights from a reference graph, then runs graph versions through
// their compiled plans (freezing, CUDA graph capture, observers around computing nodes).
#include "exec/RunnerImpl.h"

#include "io/GraphJson.h"
#include "ir/Target.h"
#include "rewrite/Freeze.h"
#include "rewrite/Mutation.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/core/InferenceMode.h>
#include <dlfcn.h>

#include <filesystem>
#include <unordered_set>

namespace fxlens::exec {

using namespace detail;

/// A side file a graph names (weights, inputs), resolved in the graph's folder; a name that leads
/// outside it (an absolute path, "..", a link) is refused.
static std::optional<std::string> sideFile(const std::string &dir, const std::string &name, std::string &error)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir)), ec);
    const fs::path full = fs::weakly_canonical(folder / name, ec);
    if (ec || fs::path(name).is_absolute() || full.parent_path() != folder) {
        error = "side file '" + name + "' named by the graph is outside the graph's folder; refused";
        return std::nullopt;
    }
    return full.string();
}

/// The number of rows of the smallest table a graph input indexes (embedding lookups, index_select,
/// reached through views, slices and dtype casts), so that random ids stay in range; nullopt when the
/// input indexes nothing.
static std::optional<int64_t> indexBound(const Node *input, const ir::Graph &g)
{
    auto rows = [&](const Node *w) -> std::optional<int64_t> {
        if (!w)
            return std::nullopt;
        if (w->meta().val.isTensor() && !w->meta().val.tensor.shape.empty() && w->meta().val.tensor.shape[0].isStatic())
            return w->meta().val.tensor.shape[0].value;
        for (const auto &p : g.params)
            if (w->op() == OpKind::GetAttr && p.name == w->target() && !p.shape.empty())
                return p.shape[0];
        return std::nullopt;
    };
    auto nodeArg = [](const Node *n, size_t i, const char *kw) -> const Node * {
        const Argument *a = n->arg(i, kw);
        return a && a->isNode() ? a->toNode() : nullptr;
    };
    std::optional<int64_t> best;
    auto take = [&](std::optional<int64_t> r) {
        if (r && *r > 0)
            best = best ? std::min(*best, *r) : *r;
    };
    std::vector<const Node *> work = {input};
    std::unordered_set<const Node *> seen;
    while (!work.empty()) {
        const Node *v = work.back();
        work.pop_back();
        if (!seen.insert(v).second || seen.size() > 4096)
            continue;
        for (const Node *u : v->users()) {
            const std::string &t = u->target();
            const ir::Target target = ir::Target::parse(t);
            const std::string base = target.base();
            if (u->op() == OpKind::CallModule) {
                if (const ir::ModuleInfo *m = g.module(t); m && m->type.find("Embedding") != std::string::npos)
                    for (const auto &p : g.params)
                        if (p.name == t + ".weight" && !p.shape.empty())
                            take(p.shape[0]);
                continue;
            }
            if (base == "embedding" || base == "embedding_bag") {
                if (target.isAten()) {
                    if (nodeArg(u, 1, "indices") == v)
                        take(rows(nodeArg(u, 0, "weight")));
                } else if (nodeArg(u, 0, "input") == v) {
                    take(rows(nodeArg(u, 1, "weight")));
                }
                continue;
            }
            if (base == "index_select" && nodeArg(u, 2, "index") == v) {
                take(rows(nodeArg(u, 0, u->op() == OpKind::CallMethod ? "" : "input")));
                continue;
            }
            if (rewrite::mayAliasInput(u) || base == "clone" || base == "_to_copy" || base == "convert_element_type")
                work.push_back(u);
        }
    }
    return best;
}

Runner::Runner(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Runner::~Runner() = default;

/// The folder a graph's side files are resolved in.
static std::string graphFolder(const ir::Graph &ref, const ExecOptions &opts)
{
    std::string dir = opts.graphDir;
    if (dir.empty() && !ref.sourcePath.empty())
        dir = std::filesystem::path(ref.sourcePath).parent_path().string();
    return dir;
}

/// Weights: an explicit file, the graph's side file, then seeded random values.
static std::optional<Diagnostic> loadWeights(Runner::Impl &impl, const ir::Graph &ref, const ExecOptions &opts, at::Generator &gen)
{
    std::map<std::string, io::SafeTensor> file;
    std::string wpath = opts.weightsFile;
    if (wpath.empty() && !ref.weightsFile.empty()) {
        std::string why;
        auto p = sideFile(graphFolder(ref, opts), ref.weightsFile, why);
        if (!p)
            return diag(why);
        wpath = *p;
    }
    if (!wpath.empty()) {
        auto r = io::readSafetensors(wpath);
        if (!r)
            return r.error();
        file = std::move(r.value());
    }
    auto lookup = [&](const std::string &name) -> const io::SafeTensor * {
        for (const std::string &k : {name, "weight:" + name}) {
            auto it = file.find(k);
            if (it != file.end())
                return &it->second;
        }
        return nullptr;
    };
    for (const auto &p : ref.params) {
        at::Tensor t;
        if (const auto *s = lookup(p.name)) {
            t = fromSafe(*s);
        } else {
            impl.randomized.push_back(p.name);
            auto st = scalarType(p.dtype).value_or(at::kFloat);
            const std::string &n = p.name;
            if (!at::isFloatingType(st))
                t = at::zeros(p.shape, at::TensorOptions().dtype(st));
            else if (n.size() >= 11 && n.compare(n.size() - 11, 11, "running_var") == 0)
                t = at::rand(p.shape, gen, at::TensorOptions().dtype(st)) + 0.5;
            else
                t = at::randn(p.shape, gen, at::TensorOptions().dtype(st)) * 0.1;
        }
        impl.params[p.name] = t.to(impl.device);
    }
    return std::nullopt;
}

/// Inputs: an explicit file, the example inputs saved with the graph, else random from each
/// placeholder's meta (ids kept below the tables they index).
static std::optional<Diagnostic> makeInputs(Runner::Impl &impl, const ir::Graph &ref, const ExecOptions &opts, at::Generator &gen)
{
    std::map<std::string, io::SafeTensor> in;
    std::string ipath = opts.inputsFile;
    if (ipath.empty() && !ref.inputsFile.empty() && !opts.randomInputs) {
        // The example inputs the exporter saved next to the graph.
        std::string why;
        auto p = sideFile(graphFolder(ref, opts), ref.inputsFile, why);
        if (!p)
            return diag(why);
        ipath = std::filesystem::exists(*p) ? *p : std::string();
    }
    if (!ipath.empty()) {
        auto r = io::readSafetensors(ipath);
        if (!r)
            return r.error();
        in = std::move(r.value());
    }
    size_t i = 0;
    for (Node *n = ref.first(); n; n = n->next()) {
        if (n->op() != OpKind::Placeholder)
            continue;
        std::string key = "input:" + std::to_string(i++);
        at::Tensor t;
        if (!in.empty()) {
            auto it = in.find(key);
            if (it != in.end())
                t = fromSafe(it->second);
            else if (n->args().empty())
                return diag("no tensor '" + key + "' in " + ipath, n->name());
            // else: a non-tensor input the exporter could not save; its default is used
        } else {
            const auto &val = n->meta().val;
            if (!val.isTensor() && !n->args().empty()) {
                impl.inputs.emplace_back(); // bound to the placeholder's default value
                continue;
            }
            if (!val.isTensor())
                return diag("placeholder has no tensor meta: cannot make a random input (pass --inputs)", n->name());
            auto sizes = val.tensor.sizes();
            for (auto s : sizes)
                if (s < 0)
                    return diag("placeholder has a symbolic shape: pass --inputs", n->name());
            auto st = scalarType(val.tensor.dtype).value_or(at::kFloat);
            if (auto high = indexBound(n, ref))
                // Ids into a table (also when carried in a float tensor and cast before the lookup).
                t = at::randint(0, *high, sizes, gen, at::TensorOptions().dtype(at::kLong)).to(st);
            else if (at::isFloatingType(st))
                t = at::randn(sizes, gen, at::TensorOptions().dtype(st));
            else if (st == at::kBool)
                t = at::randint(0, 2, sizes, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
            else {
                // Integer inputs are usually indices: keep them below the smallest embedding table.
                int64_t high = 16;
                for (const auto &p : ref.params)
                    if (p.shape.size() == 2 && p.name.find("emb") != std::string::npos)
                        high = std::min(high, p.shape[0]);
                t = at::randint(0, high, sizes, gen, at::TensorOptions().dtype(st));
            }
        }
        impl.inputs.push_back(t.defined() ? t.to(impl.device) : t);
    }
    return std::nullopt;
}

Result<std::unique_ptr<Runner>> Runner::create(const ir::Graph &ref, const ExecOptions &opts)
{
    for (const auto &lib : opts.libraries)
        if (!::dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
            const char *err = ::dlerror(); // read once: the next call returns nothing
            const std::string why = err ? firstLine(err) : std::string("unknown error");
            // torchvision's _C.so, for one, links PyTorch's Python bindings: only a Python process loads it.
            const std::string python = why.find("libtorch_python") != std::string::npos
                ? " (the library needs PyTorch's Python bindings, which only a Python process can load: run the graph in "
                  "Python with fxlens.load_graph(path, allow_namespaces=[...]))"
                : "";
            return diag(lib + ": cannot load the operator library: " + why + python);
        }
    auto impl = std::make_unique<Impl>();
    try {
        impl->device = at::Device(opts.device);
    } catch (const std::exception &) {
        return diag("unknown device '" + opts.device + "' (cpu, cuda, cuda:N)");
    }
    if (impl->device.is_cuda() && !(at::hasCUDA() && at::getNumGPUs() > 0))
        return diag("--device " + opts.device +
                    " asked for CUDA, but no CUDA device is usable here (no GPU, or no driver); "
                    "run on cpu or on a machine with a GPU");
    try {
        // Inference tensors (made in inference mode): the values computed from them carry no
        // autograd metadata either (views in particular), which is what makes runs cheap.
        c10::InferenceMode inference;
        auto gen = at::make_generator<at::CPUGeneratorImpl>(opts.seed);
        if (auto err = loadWeights(*impl, ref, opts, gen))
            return *err;
        if (auto err = makeInputs(*impl, ref, opts, gen))
            return *err;
    } catch (const std::exception &e) {
        return diag("preparing inputs and weights: " + firstLine(e.what()));
    }
    return std::unique_ptr<Runner>(new Runner(std::move(impl)));
}

/// A call that failed as written runs as the ATen ops PyTorch ran for it when it was exported
/// (Decomposition.cpp); without those, or when they fail too, the diagnostic names the node.
static std::optional<Diagnostic> decomposed(Interp &it, const Node *n, const std::string &why)
{
    try {
        if (auto v = it.runDecomposition(n)) {
            it.env[n->id()] = std::move(*v);
            return std::nullopt;
        }
    } catch (const CallError &e) {
        return diag(n->target() + ": " + why + "; " + e.message, n->name());
    } catch (const std::exception &e) {
        return diag(n->target() + ": " + why + "; " + firstLine(e.what()), n->name());
    }
    return diag(n->target() + ": " + why, n->name());
}

/// The value has the structure the file records for the node (one tensor, or a sequence of that
/// many items); unknown meta fits anything.
static bool structureFits(const IValue &v, const ir::ValueMeta &m)
{
    if (m.kind == ir::ValueMeta::Kind::Tensor)
        return v.isTensor();
    if (m.kind == ir::ValueMeta::Kind::Sequence)
        return (v.isTuple() || v.isList()) && Interp::items(v).size() == m.items.size();
    return true;
}

/// Evaluates one node into the environment; the diagnostic names the node when it fails. A call
/// whose ATen op answers with another structure than PyTorch's Python function did (unique_consecutive
/// without its flags: one tensor, not three) runs as the ops PyTorch recorded for it.
static std::optional<Diagnostic> evalOne(Interp &it, const Node *n)
{
    try {
        it.env[n->id()] = it.evalNode(n);
        t_slot = nullptr;
        if (n->meta().decomposition && !structureFits(it.env[n->id()], n->meta().val))
            if (auto v = it.runDecomposition(n))
                it.env[n->id()] = std::move(*v);
        return std::nullopt;
    } catch (const CallError &e) {
        t_slot = nullptr;
        return decomposed(it, n, e.message);
    } catch (const std::exception &e) {
        t_slot = nullptr;
        return decomposed(it, n, firstLine(e.what()));
    }
}

/// One step: its specialization when the values fit, else the interpreter (after which a call that
/// bound its own arguments becomes a Boxed step for the next runs).
static std::optional<Diagnostic> runOne(Plan &p, Step &s, Interp &it)
{
    if (s.kind != Step::Kind::Generic) {
        try {
            if (runStep(p, s, it))
                return std::nullopt;
        } catch (const CallError &e) {
            return diag(s.node->target() + ": " + e.message, s.node->name());
        } catch (const std::exception &e) {
            return diag(s.node->target() + ": " + firstLine(e.what()), s.node->name());
        }
    }
    if (auto err = evalOne(it, s.node))
        return err;
    if (s.kind == Step::Kind::Generic && s.boxable) {
        if (auto slot = it.slots.find(s.node); slot != it.slots.end())
            makeBoxed(s, slot->second, it);
        // One try per compiled plan: a call that did not bind its own arguments (a packed x.view(2, 3),
        // say) stays with the interpreter instead of being re-examined on every run.
        s.boxable = s.kind == Step::Kind::Boxed;
    }
    return std::nullopt;
}

Result<std::shared_ptr<Outputs>> Runner::run(const ir::Graph &g, NodeObserver *observer)
{
    DeviceScope deviceScope(m_impl->device);
    if (auto &c = m_impl->captured; c && c->of == &g && c->revision == g.revision()) {
        c->graph->replay();
        return c->outputs;
    }
    Plan &p = m_impl->planFor(g);
    Interp it = m_impl->interp(g, p.env);
    // Inference mode: no autograd bookkeeping (version counters, view metadata) on any value.
    c10::InferenceMode inference;
    auto out = std::make_shared<Outputs>();
    std::optional<Diagnostic> err;
    for (uint32_t index : p.hot) {
        Step &s = p.steps[index];
        const bool observed = observer && measured(s);
        if (observed)
            observer->before(index, *s.node);
        if (s.node->op() == OpKind::Output) {
            err = evalOne(it, s.node);
            if (!err)
                flattenOutputs(s.node->args()[0], p.env[s.id], out->tensors, out->nodes);
        } else {
            err = runOne(p, s, it);
        }
        for (uint32_t k = s.releaseBegin; k < s.releaseEnd; ++k)
            p.env[p.release[k]] = IValue();
        if (observed)
            observer->after(index, *s.node);
        if (err)
            break;
    }
    for (uint32_t index : p.hot) // what an error left behind, and the output
        p.env[p.steps[index].id] = IValue();
    if (err)
        return *err;
    return out;
}

std::string Runner::device() const { return m_impl->device.str(); }

/// Evaluates the weight-only nodes of `g` (`folded`, rewrite::weightOnlyNodes) once, in program
/// order, into `env` (by node id): what freeze() keeps and optimize --freeze writes.
static std::optional<Diagnostic> evalWeightOnly(Runner::Impl &impl, const ir::Graph &g, const std::vector<bool> &folded,
                                                std::vector<IValue> &env)
{
    env.assign(g.idBound(), IValue());
    Interp it = impl.interp(g, env);
    c10::InferenceMode inference;
    for (Node *n = g.first(); n; n = n->next())
        if (folded[n->id()])
            if (auto err = evalOne(it, n))
                return err;
    return std::nullopt;
}

Result<size_t> Runner::freeze(const ir::Graph &g)
{
    DeviceScope deviceScope(m_impl->device);
    unfreeze();
    const std::vector<bool> folded = rewrite::weightOnlyNodes(g);
    // Evaluate the folded nodes in program order (in an environment of their own); the steps of the
    // values that unfolded nodes read become those values, the others are skipped.
    Plan &p = m_impl->planFor(g);
    std::vector<IValue> env;
    if (auto err = evalWeightOnly(*m_impl, g, folded, env))
        return *err;
    size_t count = 0;
    std::vector<IValue> keep(g.idBound());
    for (Node *n = g.first(); n; n = n->next()) {
        if (!folded[n->id()])
            continue;
        bool read = false;
        for (Node *u : n->users())
            read = read || !folded[u->id()];
        if (read)
            keep[n->id()] = env[n->id()];
        count += n->op() != OpKind::GetAttr;
    }
    for (Step &s : p.steps) {
        // Dead calls (no reader, no effect) are dropped as well, as PyTorch's dead-code elimination would.
        const Node *n = s.node;
        if (!folded[s.id] && n->users().empty() && (n->op() == OpKind::CallFunction || n->op() == OpKind::CallMethod) &&
            !rewrite::hasSideEffects(n)) {
            s.kind = Step::Kind::Skip;
            ++count;
            continue;
        }
        if (!folded[s.id])
            continue;
        s.kind = keep[s.id].isNone() ? Step::Kind::Skip : Step::Kind::Value;
        s.value = std::move(keep[s.id]);
    }
    settle(p);
    p.frozen = true;
    return count;
}

Result<std::map<std::string, io::SafeTensor>> Runner::evaluateWeightNodes(const ir::Graph &g, const std::vector<std::string> &names)
{
    DeviceScope deviceScope(m_impl->device);
    const std::vector<bool> folded = rewrite::weightOnlyNodes(g);
    std::vector<IValue> env;
    if (auto err = evalWeightOnly(*m_impl, g, folded, env))
        return *err;
    std::map<std::string, io::SafeTensor> out;
    try {
        // A value with strides of its own (a permuted or broadcast result) is left out: written to a
        // file it would be a contiguous copy, and what reads it would round differently.
        for (const std::string &name : names)
            if (const Node *n = g.find(name); n && folded[n->id()] && env[n->id()].isTensor() && env[n->id()].toTensor().is_contiguous())
                out[name] = toSafe(env[n->id()].toTensor());
    } catch (const std::exception &e) {
        return diag("freezing: " + firstLine(e.what()));
    }
    return out;
}

std::map<std::string, io::SafeTensor> Runner::weightValues(const std::vector<std::string> &names) const
{
    std::map<std::string, io::SafeTensor> out;
    for (const auto &name : names)
        if (auto f = m_impl->params.find(name); f != m_impl->params.end()) {
            try {
                out[name] = toSafe(f->second);
            } catch (const std::exception &) { // no safetensors code: the writer refuses it by name
                out[name].dtype = dtypeName(f->second.scalar_type());
            }
        }
    return out;
}

std::vector<std::string> Runner::randomWeights() const { return m_impl->randomized; }

/// The names a fold graph gives its values: the nodes its output tuple returns.
static std::vector<std::string> foldOutputNames(const ir::Graph &fold)
{
    std::vector<std::string> names;
    const Node *out = fold.outputNode();
    if (!out || out->args().empty())
        return names;
    const Argument &ret = out->args()[0];
    if (ret.isNode())
        names.push_back(ret.toNode()->name());
    else if (ret.isSequence())
        for (const Argument &a : ret.items())
            names.push_back(a.isNode() ? a.toNode()->name() : std::string());
    return names;
}

Status Runner::computeFrozenWeights(const ir::Graph &frozen)
{
    const std::string where = frozen.sourcePath.empty() ? frozen.name : frozen.sourcePath;
    std::string first;
    for (Node *n = frozen.first(); n && first.empty(); n = n->next())
        if (n->op() == OpKind::GetAttr && n->target().rfind(rewrite::kFrozenPrefix, 0) == 0 && !m_impl->params.count(n->target()))
            first = n->target();
    if (first.empty())
        return {};
    if (frozen.foldFile.empty())
        return diag(where + ": reads the frozen weight '" + first + "' but names no fold graph that computes it");
    std::string why;
    auto path = sideFile(std::filesystem::path(frozen.sourcePath).parent_path().string(), frozen.foldFile, why);
    if (!path)
        return diag(where + ": " + why);
    auto read = io::readGraphFile(*path);
    if (!read)
        return read.error();
    ir::Graph &fold = *read.value();
    rewrite::keepOnlyOutputInputs(fold); // older versions could leave an unused input placeholder in it
    const std::vector<std::string> names = foldOutputNames(fold);
    auto out = run(fold);
    // The fold graph is read for this call only: its plan and bindings go with it.
    auto &plans = m_impl->plans;
    plans.erase(std::remove_if(plans.begin(), plans.end(), [&](const auto &p) { return p->graph == &fold; }), plans.end());
    for (Node *n = fold.first(); n; n = n->next())
        m_impl->slots.erase(n);
    if (!out) {
        Diagnostic d = out.error();
        d.message = "fold graph of " + where + ": " + d.message;
        d.file = *path;
        return d;
    }
    const auto &values = out.value()->tensors;
    if (values.size() != names.size() || std::count(names.begin(), names.end(), std::string()) > 0)
        return diag(*path + ": the fold graph returns " + std::to_string(values.size()) + " tensor(s) for " + std::to_string(names.size()) +
                    " output(s); expected a tuple of its nodes, one tensor each");
    for (size_t i = 0; i < names.size(); ++i)
        m_impl->params[rewrite::kFrozenPrefix + names[i]] = values[i];
    if (!m_impl->params.count(first))
        return diag(where + ": reads the frozen weight '" + first + "', which its fold graph " + *path + " does not return");
    return {};
}

Status Runner::captureCudaGraph(const ir::Graph &g)
{
    releaseCudaGraph();
    if (!m_impl->device.is_cuda())
        return diag("--cuda-graph needs a CUDA device (this runner executes on " + m_impl->device.str() + ")");
    std::shared_ptr<Outputs> outputs;
    auto body = [&]() -> std::string {
        auto r = run(g);
        if (!r)
            return r.error().toString();
        outputs = r.value();
        return {};
    };
    std::string error;
    DeviceScope deviceScope(m_impl->device);
    const int index = m_impl->device.has_index() ? m_impl->device.index() : int(at::accelerator::getDeviceIndex());
    auto graph = fxlens::exec::captureCudaGraph(index, 2, body, error);
    if (!graph)
        return diag(error);
    m_impl->captured = Impl::Captured{std::move(graph), &g, g.revision(), std::move(outputs)};
    return {};
}

void Runner::releaseCudaGraph() { m_impl->captured.reset(); }

std::shared_ptr<Outputs> Runner::snapshot(const Outputs &o) const
{
    auto copy = std::make_shared<Outputs>();
    for (const auto &t : o.tensors)
        copy->tensors.push_back(t.clone());
    copy->nodes = o.nodes;
    return copy;
}

void Runner::unfreeze()
{
    releaseCudaGraph();
    auto &plans = m_impl->plans;
    plans.erase(std::remove_if(plans.begin(), plans.end(), [](const auto &p) { return p->frozen; }), plans.end());
}

void Runner::synchronize() const
{
    if (m_impl->device.is_cuda())
        at::accelerator::synchronizeDevice(m_impl->device.has_index() ? m_impl->device.index() : at::accelerator::getDeviceIndex());
}

std::vector<OutputInfo> Runner::describe(const Outputs &o) const
{
    std::vector<OutputInfo> out;
    for (const auto &t : o.tensors) {
        OutputInfo i;
        i.dtype = dtypeName(t.scalar_type());
        i.shape = t.sizes().vec();
        i.absSum = absSum(t);
        out.push_back(i);
    }
    return out;
}

} // namespace fxlens::exec
