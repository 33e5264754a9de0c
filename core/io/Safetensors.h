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
    std::string dtype; ///< safetensors spelling: F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};

/// Reads every tensor of a safetensors file; errors name the file and what is wrong.
Result<std::map<std::string, SafeTensor>> readSafetensors(const std::string &path);
Status writeSafetensors(const std::map<std::string, SafeTensor> &tensors, const std::string &path);

/// fxlens dtype names ("float32") <-> safetensors names ("F32"); "" when unknown.
std::string safetensorsDtype(const std::string &fxlensDtype);
std::string fxlensDtype(const std::string &safetensorsDtype);
size_t dtypeSize(const std::string &safetensorsDtype);

} // namespace fxlens::io
