// libFuzzer harness for the two binary wire formats: the daemon's message decoder (daemon/codec.hpp,
// docs/protocol.md) and the warm worker's frames (wire/frames.hpp, docs/worker-protocol.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "daemon/codec.hpp"
#include "daemon/request_table.hpp"
#include "wire/frames.hpp"

namespace {

using namespace gpuemu;

// A message that decodes re-encodes to one that decodes to the same tensors.
void daemon_message(std::span<const std::byte> bytes) {
  (void)daemon::is_long_running(bytes);
  auto message = daemon::decode_message(bytes);
  if (!message) {
    if (message.error().message.empty()) std::abort();
    return;
  }
  std::vector<std::pair<std::string, const tensor::Tensor*>> tensors;
  for (const auto& [name, t] : message->tensors) tensors.emplace_back(name, &t);
  const std::string encoded = daemon::encode_message(message->header, tensors);
  auto again = daemon::decode_message(std::as_bytes(std::span(encoded)));
  if (!again || again->tensors.size() != message->tensors.size()) std::abort();
  for (const auto& [name, t] : message->tensors) {
    const auto it = again->tensors.find(name);
    if (it == again->tensors.end() || it->second.shape != t.shape || it->second.dtype != t.dtype)
      std::abort();
  }
}

// What the worker channel does with a reply (proc/worker_channel.cpp): the prefix, then a header
// that must be a JSON object, then the result frame's tensors.
void worker_frame(std::span<const std::byte> bytes) {
  if (bytes.size() < wire::kFramePrefixSize) return;
  auto prefix = wire::decode_frame_prefix(bytes.first<wire::kFramePrefixSize>(), "worker harness_op");
  if (!prefix) return;
  const auto body = bytes.subspan(wire::kFramePrefixSize);
  if (prefix->header_bytes > body.size() || prefix->payload_bytes != body.size() - prefix->header_bytes)
    return;
  wire::IncomingFrame frame;
  const auto* header = reinterpret_cast<const char*>(body.data());
  frame.header = nlohmann::json::parse(header, header + prefix->header_bytes, nullptr, false);
  if (frame.header.is_discarded() || !frame.header.is_object()) return;
  const auto payload = body.subspan(prefix->header_bytes);
  frame.payload->assign(payload.begin(), payload.end());
  auto outputs = wire::decode_result_frame(frame, "worker harness_op");
  if (!outputs) return;
  for (const auto& [name, t] : *outputs) {
    if (!tensor::validate_view(t, name)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  daemon_message(bytes);
  worker_frame(bytes);
  return 0;
}
