// SPDX-License-Identifier: MIT
// A library of custom operators with C++ kernels, as third-party libraries register them
// (TORCH_LIBRARY): the tests load it into Python (torch.ops.load_library) to export a graph that
// calls it, and into fxlens-cli (--load-library) to run that graph through the dispatcher.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor scaledShift(const at::Tensor &x, double k) { return x * k + 1; }

} // namespace

TORCH_LIBRARY(fxlens_test_cpp, m) { m.def("scaled_shift(Tensor x, float k) -> Tensor"); }

TORCH_LIBRARY_IMPL(fxlens_test_cpp, CompositeExplicitAutograd, m) { m.impl("scaled_shift", scaledShift); }
