// Generates one test case of an op from its case seed alone: dtype, layout, value distribution,
// dims (boundary-aware from the schema) and input values. (op config, case seed) replays exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "rng/seeded_rng.hpp"
#include "rng/values.hpp"
#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::fuzz {

// The choices a case seed makes before any tensor is generated (cheap to compute).
struct CaseParams {
  tensor::DType dtype = tensor::DType::float32;
  tensor::Layout layout = tensor::Layout::contiguous;
  rng::ValueDistribution distribution = rng::ValueDistribution::regular;
};

// What a run may force; unset fields are free. Seeds are drawn until the params match.
struct CaseFilter {
  std::optional<tensor::DType> dtype;
  std::optional<tensor::Layout> layout;
  std::optional<rng::ValueDistribution> distribution;
};

struct Case {
  std::string op;
  std::uint64_t seed = 0;
  CaseParams params;
  std::map<std::string, std::int64_t> dims;  // resolved schema dims
  tensor::NamedTensors inputs;               // in the case's memory layout (what the op gets)
  std::vector<std::string> input_order;
  std::string corner;  // the corner's name (corners.hpp) when the seed names one, else ""
  std::map<std::string, tensor::Shape> shapes() const;
};

CaseParams case_params(const config::OpConfig& op, std::uint64_t case_seed);
bool case_matches(const CaseParams& params, const CaseFilter& filter);

// The index-th random case seed of a stream ("test" or "fuzz") under a master seed that satisfies
// the filter; never a corner's seed. Deterministic: same arguments, same seed. Runs take their
// seeds from run_case_seed (corners.hpp), which puts the op's corners first.
std::uint64_t case_seed(const config::OpConfig& op, std::uint64_t master_seed, std::string_view stream,
                        std::uint64_t index, const CaseFilter& filter);

// Where generate_case may write a case's inputs: given each input's size in bytes (in
// input_order), a writable place for each and the storage that views it, or nothing (generate_case
// then allocates them). OpSession writes them straight into the input file its workers map.
using InputPlacer =
    std::function<std::optional<std::vector<tensor::PlacedStorage>>(const std::vector<std::size_t>& sizes)>;

// Errors (ErrorKind::config) only for ops whose declared shapes cannot be resolved, or a corner's
// seed naming a corner the op no longer has. With `place`,
// a case in the contiguous layout gets its inputs where `place` says (same bytes either way).
Expected<Case> generate_case(const config::OpConfig& op, std::uint64_t case_seed,
                             const InputPlacer& place = {});

// Boundary-aware size choice from [lo, hi]: 1, the ends, powers of two and their neighbours,
// primes, and uniform draws. Exposed for tests.
std::int64_t choose_dim(rng::SeededRng& rng, std::int64_t lo, std::int64_t hi);

}  // namespace gpuemu::fuzz
