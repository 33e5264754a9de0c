// SPDX-License-Identifier: MIT
// Executor: runs any graph version natively through LibTorch (no Python at run time), and verifies
// that two versions compute the same outputs. No LibTorch type appears in this header.
#pragma once

#include "io/Safetensors.h"
#include "ir/Graph.h"
#include "util/Diagnostic.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fxlens::exec {

struct ExecOptions {
    std::string device = "cpu"; ///< "cpu", "cuda", "cuda:1"
    uint64_t seed = 0;          ///< random inputs and (missing) weights
    /// safetensors with parameter values by name ("<name>" or "weight:<name>"). Empty: the graph's
    /// own side file when it has one, else seeded random values from the recorded shapes.
    std::string weightsFile;
    /// safetensors with inputs "input:0", "input:1", ... in placeholder order. Empty: seeded random
    /// tensors from each placeholder's meta.
    std::string inputsFile;
    /// Ignore the example inputs saved with the graph: seeded random inputs (index ranges respected).
    bool randomInputs = false;
    /// Directory the graph file was read from (resolves the graph's relative weights file).
    std::string graphDir;
    /// Shared libraries loaded before the run (dlopen): custom operators registered with
    /// TORCH_LIBRARY in C++ (torchvision's _C.so) become callable through the dispatcher.
    std::vector<std::string> libraries;
};

/// One output of a run, summarized (the values stay inside the executor).
struct OutputInfo {
    std::string dtype;
    std::vector<int64_t> shape;
    double absSum = 0;
};

struct OutputDiff {
    size_t index = 0;
    std::string dtype;
    std::vector<int64_t> shape;
    double maxAbs = 0, maxRel = 0;
    double atol = 0, rtol = 0;
    bool pass = false;
    std::string note; ///< why it failed when not by value (shape, dtype, count)
};

struct VerifyReport {
    bool pass = false;
    std::vector<OutputDiff> outputs;
    std::string summary() const; ///< one line per output plus a verdict
};

class Outputs;

/// Called around every node a run evaluates (the profiler's NVTX and record-function ranges).
/// `index` is the node's position in program order.
class NodeObserver {
public:
    virtual ~NodeObserver() = default;
    virtual void before(size_t index, const ir::Node &n) = 0;
    virtual void after(size_t index, const ir::Node &n) = 0;
};

/// Holds one set of inputs and weights (prepared from a reference graph) and runs graph versions on
/// them. Every failure (unknown op, bad arguments, kernel error, missing CUDA) is a Diagnostic that
/// names the node and target; nothing throws.
class Runner {
public:
    static Result<std::unique_ptr<Runner>> create(const ir::Graph &reference, const ExecOptions &opts);
    ~Runner();

    /// Runs one version. Values are freed after their last use, as in a Python GraphModule.
    Result<std::shared_ptr<Outputs>> run(const ir::Graph &g, NodeObserver *observer = nullptr);
    /// The device the runner executes on ("cpu", "cuda:0").
    std::string device() const;
    /// Weight freezing (inference): evaluates once the nodes of `g` that depend on weights and
    /// constants only (e.g. the stacks of per-layer weights a batched linear reads) and makes later
    /// runs of `g` reuse those values, as Inductor's freezing does. Returns how many nodes were
    /// folded (and dead calls, which later runs skip). Valid until unfreeze() or until `g` is edited;
    /// random and in-place ops are never folded.
    Result<size_t> freeze(const ir::Graph &g);
    void unfreeze();
    /// Values of the named nodes of `g`, which depend on weights and constants only
    /// (rewrite::weightOnlyNodes), evaluated once from this runner's weights; a node whose value is
    /// not a tensor, or not contiguous (a file would hold another layout), is left out (optimize
    /// --freeze writes these as new weights).
    Result<std::map<std::string, io::SafeTensor>> evaluateWeightNodes(const ir::Graph &g, const std::vector<std::string> &names);
    /// This runner's weights of these names (loaded, or seeded random); unknown names are left out.
    std::map<std::string, io::SafeTensor> weightValues(const std::vector<std::string> &names) const;
    /// Names of the weights this runner made up (seeded random values: no weights file, or one
    /// that lacks them), in the reference graph's order.
    std::vector<std::string> randomWeights() const;
    /// The `_frozen_*` weights that `frozen` (a frozen graph: optimize --freeze, freeze=True) reads
    /// and this runner lacks, computed by its fold graph (`frozen.foldFile`, in the folder of
    /// `frozen.sourcePath`) from this runner's weights, the original ones: a runner prepared from the
    /// original graph then runs the frozen one too (verify original frozen). The diagnostic names
    /// the frozen or fold file.
    Status computeFrozenWeights(const ir::Graph &frozen);
    /// CUDA graph capture (run/profile --cuda-graph): runs `g` on a side stream, then captures one
    /// run; later runs of `g` (same revision) replay it, with no per-node host work: their outputs
    /// are the same tensors, overwritten by each replay (snapshot() keeps a copy), and an observer
    /// sees no node. Freeze first so that weight-only work is not replayed. A graph that cannot be
    /// captured (an op that synchronizes with the host), a CPU runner or a build without CUDA give a
    /// Diagnostic and runs stay as they were.
    Status captureCudaGraph(const ir::Graph &g);
    void releaseCudaGraph();
    /// A copy of outputs that later runs do not overwrite.
    std::shared_ptr<Outputs> snapshot(const Outputs &o) const;
    /// Waits for the device's queued work (timing on CUDA).
    void synchronize() const;
    std::vector<OutputInfo> describe(const Outputs &o) const;
    /// Dtype-aware comparison: float32 rtol 1e-4 / atol 1e-5 (scaled by the output's magnitude),
    /// float16/bfloat16 1e-2, integers and bools exact.
    VerifyReport compare(const Outputs &expected, const Outputs &actual) const;
    /// Compares with tensors "output:0", ... of a safetensors file (ground truth from PyTorch).
    Result<VerifyReport> compareWithFile(const Outputs &actual, const std::string &path) const;
    /// Writes outputs as "output:i" tensors (float32 etc. as they are) to a safetensors file.
    Status saveOutputs(const Outputs &o, const std::string &path) const;

    struct Impl;

private:
    explicit Runner(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// Runs `a` and `b` on the same inputs and weights (prepared from `a`) and compares their outputs.
Result<VerifyReport> verifyGraphs(const ir::Graph &a, const ir::Graph &b, const ExecOptions &opts);

/// A per-step check for the rewrite engine: runs the original graph once now, then compares every
/// later version with it. Returns "" when the version passes, else the reason. nullptr + `error` when
/// the original graph cannot run.
std::function<std::string(const ir::Graph &)> makeStepVerifier(const ir::Graph &original, const ExecOptions &opts, std::string &error);

} // namespace fxlens::exec
