// An op whose kernels use @triton.autotune is tested once per config (docs/configuration.md, "Autotuned
// kernels"): the load check lists each op's autotuned kernels and their configs, and each op becomes
// variants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

// Replaces every op of `config` that a run of `names` (empty: every op) may select, whose op under test
// loads in Python (a callable or persistent script) and runs Triton under the interpreter (or is named
// with a variant, "softmax[BLOCK=64,num_warps=4]"), and whose code reaches @triton.autotune kernels,
// by one op per config (autotune_variant): its typed field `autotune` says which config the variant's
// worker pins, and its name is rendered from it. With several autotuned kernels, variant i pins config i
// modulo each kernel's count, labelled "kernel:label;kernel:label", and there are as many variants as the
// longest config list. Runs the load check once for those ops (its answers serve check_op_loads later in the
// run); an op that does not load stays as it is, for check_op_loads to report. No Python starts when no op
// qualifies.
Expected<void> expand_autotune_variants(config::Config& config, const std::vector<std::string>& names);

// `op` tested at one autotune config: op.autotune = {op.name, config}, its name rendered from that
// ("softmax[BLOCK=64,num_warps=4]"), everything else (spec, so case seeds, kwargs, source) the op's own.
config::OpConfig autotune_variant(const config::OpConfig& op, std::string config);

// "OF[CONFIG]": a variant's name in results, plans and --op.
std::string variant_name(const config::AutotuneVariant& variant);

// A name the user gave (--op NAME, a run request's ops): an op, "op/implementation", or one variant
// "op[CONFIG]" split into its op and config. The one place a variant's name is read back; op names
// cannot hold '[' or ']' (parse_ops refuses them).
struct OpName {
  std::string op;
  std::optional<std::string> config;  // set when the name is a variant's
};
OpName parse_op_name(const std::string& name);

}  // namespace gpuemu::engine
