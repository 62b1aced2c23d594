// Encoding and decoding daemon messages (codec.hpp). The frame prefix and the tensor entries are
// the warm-worker protocol's (wire/frames.hpp), so both wire formats share one implementation.
#include "daemon/codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "result/run_result.hpp"
#include "wire/frames.hpp"

namespace gpuemu::daemon {
namespace {

constexpr const char* kWhat = "the message";
// JSON nested deeper than this is refused before parsing: writing such a value back out (an
// echoed "id", kwargs passed on to a script) would recurse that deep.
constexpr int kMaxJsonDepth = 64;

// The deepest [ or { nesting of JSON text, strings skipped.
int json_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

void make_finite(nlohmann::json& value) {
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (!std::isfinite(v)) value = result::json_number(v);
  } else if (value.is_structured()) {
    for (auto& item : value) make_finite(item);
  }
}

Result<Message> decode_message(std::span<const std::byte> bytes, std::shared_ptr<const void> keeper,
                               wire::SegmentUse segments) {
  if (bytes.size() < wire::kFramePrefixSize) {
    return reject(WireError::bad_message,
                  fmt::format("the message has {} bytes, fewer than the {}-byte prefix (docs/protocol.md)",
                              bytes.size(), wire::kFramePrefixSize));
  }
  if (std::memcmp(bytes.data(), wire::kFrameMagic.data(), wire::kFrameMagic.size()) != 0) {
    return reject(WireError::bad_message,
                  "the message does not start with 'GEMU': it is not a gpuemu protocol "
                  "message (docs/protocol.md)");
  }
  std::uint32_t version = 0;
  for (int i = 3; i >= 0; --i) version = (version << 8) | static_cast<std::uint8_t>(bytes[4 + i]);
  if (version != wire::kFrameVersion) {
    return reject(
        WireError::bad_message,
        fmt::format("the message has frame version {}, this daemon reads version {}: use a client of "
                    "the same gpuemu release",
                    version, wire::kFrameVersion));
  }
  auto prefix = wire::decode_frame_prefix(bytes.first<wire::kFramePrefixSize>(), "the client");
  if (!prefix) return reject(WireError::bad_message, prefix.error().message);
  const std::uint64_t body = bytes.size() - wire::kFramePrefixSize;
  if (prefix->header_bytes > body || prefix->payload_bytes != body - prefix->header_bytes) {
    return reject(
        WireError::bad_message,
        fmt::format("the message lengths do not add up: prefix 20 + header {} + payload {} bytes, but "
                    "the message has {} bytes",
                    prefix->header_bytes, prefix->payload_bytes, bytes.size()));
  }
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + wire::kFramePrefixSize);
  if (json_depth(std::string_view(header_begin, prefix->header_bytes)) > kMaxJsonDepth) {
    return reject(WireError::bad_message,
                  fmt::format("the message header nests JSON deeper than {} levels", kMaxJsonDepth));
  }
  Message message;
  message.header = nlohmann::json::parse(header_begin, header_begin + prefix->header_bytes, nullptr, false);
  if (message.header.is_discarded()) {
    return reject(WireError::bad_message, "the message header is not valid UTF-8 JSON");
  }
  if (!message.header.is_object()) {
    return reject(WireError::bad_message, "the message header must be a JSON object");
  }
  const auto payload = bytes.subspan(wire::kFramePrefixSize + prefix->header_bytes);
  auto tensors = wire::decode_tensor_entries(
      message.header, wire::TensorSource{payload, std::move(keeper), segments}, kWhat, "tensor");
  if (!tensors) return reject(WireError::bad_message, tensors.error().message);
  message.tensors = std::move(*tensors);
  return message;
}

std::string encode_message(nlohmann::json header,
                           const std::vector<std::pair<std::string, const tensor::Tensor*>>& tensors) {
  std::uint64_t offset = 0;
  if (!tensors.empty()) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [name, t] : tensors) {
      entries.push_back(
          {{"name", name},
           {"dtype", tensor::dtype_name(t->dtype)},
           {"shape", t->shape},
           {"strides",
            t->strides.size() == t->shape.size() ? t->strides : tensor::contiguous_strides(t->shape)},
           {"offset", offset},
           {"nbytes", t->data.size()}});
      offset += t->data.size();
    }
    header["tensors"] = std::move(entries);
  }
  make_finite(header);
  const std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto prefix = wire::encode_frame_prefix({static_cast<std::uint32_t>(text.size()), offset});
  std::string out;
  out.reserve(prefix.size() + text.size() + offset);
  out.append(reinterpret_cast<const char*>(prefix.data()), prefix.size());
  out += text;
  for (const auto& [name, t] : tensors)
    out.append(reinterpret_cast<const char*>(t->data.data()), t->data.size());
  return out;
}

std::string encode_message(nlohmann::json header,
                           const std::vector<std::pair<std::string, tensor::Tensor>>& tensors) {
  std::vector<std::pair<std::string, const tensor::Tensor*>> views;
  views.reserve(tensors.size());
  for (const auto& [name, t] : tensors) views.emplace_back(name, &t);
  return encode_message(std::move(header), views);
}

}  // namespace gpuemu::daemon
