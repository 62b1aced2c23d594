// An op whose kernels use @triton.autotune is tested once per config (docs/configuration.md, "Autotuned
// kernels"): the load check lists each op's autotuned kernels and their configs, and each op becomes
// variants.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

// Replaces every op of `config` that a run of `names` (empty: every op) may select, whose op under test
// loads in Python (a callable or persistent script) and runs Triton under the interpreter (or is named
// with a variant, "softmax[BLOCK=64,num_warps=4]"), and whose code reaches @triton.autotune kernels,
// by one op per config, named "softmax[BLOCK=64,num_warps=4]", with everything else (spec, so case
// seeds, kwargs, source) the op's own; the name alone says which config the variant's worker pins
// (autotune_pin). With several autotuned kernels, variant i pins config i modulo each kernel's count,
// labelled "kernel:label;kernel:label", and there are as many variants as the longest config list. Runs the
// load check once for those ops (its answers serve check_op_loads later in the run); an op that does not load
// stays as it is, for check_op_loads to report. No Python starts when no op qualifies.
Expected<void> expand_autotune_variants(config::Config& config, const std::vector<std::string>& names);

// "softmax" for "softmax[BLOCK=64,num_warps=4]", the name itself when it names no variant (op names
// cannot hold '[' or ']': parse_ops refuses them).
std::string without_variant(const std::string& name);

// What an autotune variant's op worker pins (GPUEMU_AUTOTUNE_PIN): "BLOCK=64,num_warps=4" for
// "softmax[BLOCK=64,num_warps=4]"; empty for an op that is not a variant.
std::string autotune_pin(const std::string& name);

}  // namespace gpuemu::engine
