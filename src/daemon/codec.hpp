// The daemon's message codec (docs/protocol.md "Message layout"): the warm-worker frame (20-byte
// prefix, JSON header, raw tensor payload) with tensors referenced from the header.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/request.hpp"
#include "wire/segment.hpp"

namespace gpuemu::daemon {

// Decodes one message. Every way the bytes can be wrong (length, magic, frame version, header
// JSON, tensor entries) is a bad_message error naming the problem. With a `keeper` that keeps
// `bytes` alive, tensors are views into them rather than copies; `segments` says whether tensors
// may live in shared-memory segments (requests: borrow; replies: refuse).
Result<Message> decode_message(std::span<const std::byte> bytes, std::shared_ptr<const void> keeper = nullptr,
                               wire::SegmentUse segments = wire::SegmentUse::refuse);

// Encodes a header and tensors (written back to back in the given order, entries appended to the
// header as "tensors"). The header is written compact with sorted keys; non-finite floats anywhere
// in it become "NaN", "Infinity" or "-Infinity", and invalid UTF-8 is replaced.
std::string encode_message(nlohmann::json header,
                           const std::vector<std::pair<std::string, const tensor::Tensor*>>& tensors = {});
std::string encode_message(nlohmann::json header,
                           const std::vector<std::pair<std::string, tensor::Tensor>>& tensors);

// Replaces non-finite floats in a JSON value by the protocol's strings (exposed for tests).
void make_finite(nlohmann::json& value);

}  // namespace gpuemu::daemon
