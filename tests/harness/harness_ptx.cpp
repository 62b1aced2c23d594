// libFuzzer harness for the PTX lexer and parser (artifact/ptx.hpp, docs/lint.md): any text either
// parses into a module or is a file:line parse error; a parsed entry also yields its metrics.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "artifact/metrics.hpp"
#include "artifact/ptx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto statements = gpuemu::artifact::split_ptx(text, "harness.ptx");
  auto module = gpuemu::artifact::parse_ptx(text, "harness.ptx");
  if (!module) {
    if (module.error().message.empty()) std::abort();
    return 0;
  }
  if (!statements) std::abort();  // the parser cannot accept what the lexer refused
  for (const auto* entry : module->entries()) {
    if (module->find(entry->name) == nullptr) std::abort();
    (void)gpuemu::artifact::ptx_metrics(*module, *entry);
  }
  return 0;
}
