// expand_autotune_variants (autotune_variants.hpp): asks the load check which autotuned kernels each
// op reaches, then expands the op into one variant per config, as op_family.cpp expands implementations.
#include "engine/autotune_variants.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/load_ops.hpp"
#include "engine/op_session.hpp"

namespace gpuemu::engine {
namespace {

bool loads_in_python(const config::Runnable& r) {
  return r.kind == config::Runnable::Kind::callable ||
         (r.kind == config::Runnable::Kind::script && r.persistent);
}

bool names_op(const std::string& name, const config::OpConfig& op) {
  const std::string base = without_variant(name);
  return op.name == base || op.spec == base;
}

// The variant's label: the kernel's config label, or with several kernels "kernel:label;kernel:label".
std::string label_of(const std::vector<proc::AutotunedKernel>& kernels, std::size_t i) {
  if (kernels.size() == 1) return kernels.front().configs[i % kernels.front().configs.size()];
  std::string label;
  for (const auto& k : kernels) {
    label += (label.empty() ? "" : ";") + k.name + ":" + k.configs[i % k.configs.size()];
  }
  return label;
}

}  // namespace

std::string without_variant(const std::string& name) {
  if (name.empty() || name.back() != ']') return name;
  const auto open = name.find('[');
  return open == std::string::npos ? name : name.substr(0, open);
}

std::string autotune_pin(const std::string& name) {
  const std::string base = without_variant(name);
  return base.size() == name.size() ? std::string{}
                                    : name.substr(base.size() + 1, name.size() - base.size() - 2);
}

Expected<void> expand_autotune_variants(config::Config& config, const std::vector<std::string>& names) {
  std::vector<const config::OpConfig*> candidates;
  for (const auto& op : config.ops) {
    if (!autotune_pin(op.name).empty() || op.op_script.empty() || !loads_in_python(op.op_script)) continue;
    const bool named = std::ranges::any_of(names, [&](const std::string& n) { return names_op(n, op); });
    if (!names.empty() && !named) continue;
    // Under the interpreter every config is tested; on a GPU autotune benchmarks as usual unless a
    // variant is named (then its config is pinned there too).
    const bool pinned_by_name = std::ranges::any_of(
        names, [&](const std::string& n) { return n != without_variant(n) && names_op(n, op); });
    if (!runner_settings(config, op, "op").triton_interpret && !pinned_by_name) continue;
    candidates.push_back(&op);
  }
  if (candidates.empty()) return {};
  const auto found = TRY(preload_op_checks(config, candidates));

  std::vector<config::OpConfig> expanded;
  expanded.reserve(config.ops.size());
  for (const auto& op : config.ops) {
    const auto it = found.find(op.name);
    if (it == found.end() || it->second.empty()) {
      expanded.push_back(op);
      continue;
    }
    const auto& kernels = it->second;
    std::size_t count = 0;
    for (const auto& k : kernels) count = std::max(count, k.configs.size());
    for (std::size_t i = 0; i < count; ++i) {
      config::OpConfig variant = op;
      variant.name = op.name + "[" + label_of(kernels, i) + "]";
      expanded.push_back(std::move(variant));
    }
  }
  config.ops = std::move(expanded);
  return {};
}

}  // namespace gpuemu::engine
