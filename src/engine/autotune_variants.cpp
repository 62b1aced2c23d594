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

bool names_op(const OpName& name, const config::OpConfig& op) {
  return op.name == name.op || op.spec == name.op;
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

std::string variant_name(const config::AutotuneVariant& variant) {
  return variant.of + "[" + variant.config + "]";
}

config::OpConfig autotune_variant(const config::OpConfig& op, std::string config) {
  config::OpConfig variant = op;
  variant.autotune = config::AutotuneVariant{op.name, std::move(config)};
  variant.name = variant_name(*variant.autotune);
  return variant;
}

OpName parse_op_name(const std::string& name) {
  const auto open = name.find('[');
  if (name.empty() || name.back() != ']' || open == std::string::npos) return {name, std::nullopt};
  return {name.substr(0, open), name.substr(open + 1, name.size() - open - 2)};
}

Expected<void> expand_autotune_variants(config::Config& config, const std::vector<std::string>& names) {
  std::vector<OpName> named;
  for (const std::string& name : names) named.push_back(parse_op_name(name));
  std::vector<const config::OpConfig*> candidates;
  for (const auto& op : config.ops) {
    if (op.autotune || op.op_script.empty() || !loads_in_python(op.op_script)) continue;
    if (!named.empty() && !std::ranges::any_of(named, [&](const OpName& n) { return names_op(n, op); }))
      continue;
    // Under the interpreter every config is tested; on a GPU autotune benchmarks as usual unless a
    // variant is named (then its config is pinned there too).
    const bool pinned_by_name =
        std::ranges::any_of(named, [&](const OpName& n) { return n.config && names_op(n, op); });
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
    for (std::size_t i = 0; i < count; ++i) expanded.push_back(autotune_variant(op, label_of(kernels, i)));
  }
  config.ops = std::move(expanded);
  return {};
}

}  // namespace gpuemu::engine
