// SPDX-License-Identifier: MIT
// A minimal safetensors reader/writer (the format of the exporter's weight files): an 8-byte header
// length, a JSON header {name: {dtype, shape, data_offsets}}, then the raw little-endian data.
#pragma once

#include "util/Diagnostic.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fxlens::io {

struct SafeTensor {
    /// safetensors spelling: F64, F32, F16, BF16, C64, I64, I32, I16, I8, U64, U32, U16, U8, BOOL,
    /// F8_E4M3, F8_E5M2, F8_E4M3FNUZ, F8_E5M2FNUZ, F8_E8M0, F4 (safetensorsDtype names each one's
    /// torch dtype).
    std::string dtype;
    /// The torch shape. F4 (float4_e2m1fn_x2: two 4-bit values a byte) counts 4-bit values in the
    /// file, so its last dimension is twice the torch one there; reader and writer convert.
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};

/// Reads every tensor of a safetensors file; errors name the file and what is wrong.
Result<std::map<std::string, SafeTensor>> readSafetensors(const std::string &path);
/// Writes the tensors; a tensor whose dtype is not a safetensors code (an empty one, or the torch
/// name of a dtype safetensors has no code for: complex128) or whose data does not fit its shape is
/// refused, naming it and why, before any byte of the file is written.
Status writeSafetensors(const std::map<std::string, SafeTensor> &tensors, const std::string &path);

/// fxlens dtype names ("float32") <-> safetensors names ("F32"); "" when unknown or when safetensors
/// has no code for the dtype (complex32, complex128, the quantized and bit types).
std::string safetensorsDtype(const std::string &fxlensDtype);
std::string fxlensDtype(const std::string &safetensorsDtype);
/// Bytes per torch element of a safetensors dtype (F4: 1, a pair of values); 0 when unknown.
size_t dtypeSize(const std::string &safetensorsDtype);
/// Why a tensor of this fxlens dtype cannot be stored in safetensors, with what to do instead
/// ("" when it can): "safetensors has no code for complex128 (...)".
std::string unstorableReason(const std::string &fxlensDtype);

} // namespace fxlens::io
