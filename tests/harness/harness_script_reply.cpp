// libFuzzer harness for the script-protocol reply decoder (wire/script_protocol.hpp,
// docs/script-protocol.md): a script's stdout either decodes to valid tensors or is a parse error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wire/script_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto outputs = gpuemu::wire::decode_response(text, "reference harness_ref.py");
  if (!outputs) {
    if (outputs.error().message.empty()) std::abort();
    return 0;
  }
  // A decoded tensor is a valid view, and survives its own JSON encoding unchanged.
  for (const auto& [name, t] : *outputs) {
    if (!gpuemu::tensor::validate_view(t, name)) std::abort();
    auto again = gpuemu::wire::tensor_from_json(gpuemu::wire::tensor_to_json(t), name);
    if (!again || again->shape != t.shape || again->dtype != t.dtype || again->data != t.data) std::abort();
  }
  return 0;
}
