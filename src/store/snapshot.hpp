// The input snapshot of a stored failure: NamedTensors as one self-describing blob, so a case
// replays from its bytes even when its values came from no seed (a minimized case).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::store {

// Stored in snapshots.format. Bump only with a new encoder; decode_snapshot keeps reading old ones.
inline constexpr std::int64_t kSnapshotFormat = 1;

// Format 1, all integers little-endian:
//   "GPUEMUS1"  8 bytes magic
//   u32         tensor count
//   per tensor: u32 name length, name bytes (UTF-8), u32 dtype (tensor::DType number),
//               u32 rank, rank x i64 shape, rank x i64 strides (elements), u64 byte length, bytes
// The data bytes are the tensor's storage buffer exactly as the op received it (gaps included).
std::vector<std::byte> encode_snapshot(const tensor::NamedTensors& tensors);

// Errors (ErrorKind::parse) name `what` (e.g. "snapshot of failure 12") and the first bad field.
Expected<tensor::NamedTensors> decode_snapshot(const std::vector<std::byte>& blob, const std::string& what);

}  // namespace gpuemu::store
