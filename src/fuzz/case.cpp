// Case generation from a case seed (see case.hpp). Every choice draws from its own derived
// stream ("params", "dims", "input/NAME") so adding an input never shifts another's values.
#include "fuzz/case.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "config/default_shapes.hpp"
#include "fuzz/corners.hpp"
#include "rng/seeded_rng.hpp"

namespace gpuemu::fuzz {
namespace {

using config::DimRef;

constexpr std::array<rng::ValueDistribution, 3> kDistributions = {
    rng::ValueDistribution::regular, rng::ValueDistribution::boundary, rng::ValueDistribution::adversarial};

// Primes spread over the sizes kernels meet; tile bugs hide at sizes coprime with the block.
constexpr std::array<std::int64_t, 16> kPrimes = {2,  3,   5,   7,   13,  17,   31,   61,
                                                  97, 127, 193, 251, 509, 1021, 2039, 4093};

Expected<std::int64_t> resolve_dim(const DimRef& ref, const std::map<std::string, std::int64_t>& dims,
                                   const config::OpConfig& op, const std::string& input) {
  if (const auto* literal = std::get_if<std::int64_t>(&ref)) {
    return *literal;
  }
  const auto& name = std::get<std::string>(ref);
  auto it = dims.find(name);
  if (it == dims.end()) {
    return fail(ErrorKind::config,
                fmt::format("op '{}': input '{}' uses dim '{}', which [ops.schema] dims does "
                            "not declare; add it, e.g. {} = [1, 128]",
                            op.name, input, name, name));
  }
  return it->second;
}

// The shape used for an input that declares none (matches docs/configuration.md).
const tensor::Shape kDefaultShape = {4, 64};

}  // namespace

bool case_matches(const CaseParams& p, const CaseFilter& f) {
  return (!f.dtype || *f.dtype == p.dtype) && (!f.layout || *f.layout == p.layout) &&
         (!f.distribution || *f.distribution == p.distribution);
}

std::map<std::string, tensor::Shape> Case::shapes() const {
  std::map<std::string, tensor::Shape> out;
  for (const auto& [name, t] : inputs) out[name] = t.shape;
  return out;
}

CaseParams case_params(const config::OpConfig& op, std::uint64_t case_seed) {
  rng::SeededRng r(rng::derive_seed(case_seed, "params"));
  CaseParams p;
  if (!op.dtypes.empty()) p.dtype = op.dtypes[r.gen_range(0, op.dtypes.size())];
  if (!op.layouts.empty()) p.layout = op.layouts[r.gen_range(0, op.layouts.size())];
  p.distribution = kDistributions[r.gen_range(0, kDistributions.size())];
  return p;
}

std::uint64_t case_seed(const config::OpConfig& op, std::uint64_t master_seed, std::string_view stream,
                        std::uint64_t index, const CaseFilter& filter) {
  // Rejection keeps "the seed alone determines the case" while letting runs force a dtype,
  // layout or distribution. Callers check the filter is satisfiable; the bound is a backstop.
  // Seeds come from the op's spec name, so every implementation of an op meets the same cases
  // (for an op without implementations the spec name is its name, as before).
  const std::string& family = op.spec.empty() ? op.name : op.spec;
  std::uint64_t seed = 0;
  for (std::uint64_t attempt = 0; attempt < 100000; ++attempt) {
    seed = rng::derive_seed(master_seed, fmt::format("{}/{}/{}/{}", stream, family, index, attempt));
    // A seed that looks like a corner's (1 in 2^24) would replay as that corner: draw again.
    if (!is_corner_seed(seed) && case_matches(case_params(op, seed), filter)) break;
  }
  return seed;
}

std::int64_t choose_dim(rng::SeededRng& r, std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  // 60% of draws come from the boundary set, the rest uniformly from the range.
  if (r.gen_range(0, 10) >= 6) {
    return lo + static_cast<std::int64_t>(r.gen_range(0, static_cast<std::uint64_t>(hi - lo) + 1));
  }
  std::vector<std::int64_t> special = {lo, hi};
  if (lo <= 1 && 1 <= hi) special.push_back(1);
  for (std::int64_t p = 2; p <= hi && p > 0; p *= 2) {
    for (std::int64_t v : {p - 1, p, p + 1}) {
      if (v >= lo && v <= hi) special.push_back(v);
    }
  }
  for (std::int64_t p : kPrimes) {
    if (p >= lo && p <= hi) special.push_back(p);
  }
  std::sort(special.begin(), special.end());
  special.erase(std::unique(special.begin(), special.end()), special.end());
  return special[r.gen_range(0, special.size())];
}

Expected<Case> generate_case(const config::OpConfig& op, std::uint64_t seed, const InputPlacer& place) {
  // Two or more inputs that all took the default shape: no case of them is worth making (a matmul's
  // would fail in the user's own code, before gpuemu could say why).
  if (auto problem = config::undeclared_input_shapes(op)) return fail(ErrorKind::config, *problem);
  Case c;
  c.op = op.name;
  c.seed = seed;
  c.params = case_params(op, seed);

  if (const auto k = corner_index(seed)) {
    // A corner's seed names its shape (corners.hpp); only its values come from the seed.
    const auto all = corners(op);
    const Corner* corner = corner_of(all, seed);
    if (corner == nullptr) {
      return fail(ErrorKind::config,
                  fmt::format("case seed {} names corner case {} of op '{}', which has {} corner cases: the "
                              "op's [ops.schema] dims changed since the seed was made; rerun test or fuzz",
                              seed, *k, op.name, all.size()));
    }
    c.dims = corner->dims;
    c.corner = corner->name;
  } else if (op.schema) {
    rng::SeededRng dim_rng(rng::derive_seed(seed, "dims"));
    for (const auto& dim : op.schema->dims) {
      c.dims[dim.name] = dim.candidates.empty() ? choose_dim(dim_rng, dim.min, dim.max)
                                                : dim.candidates[dim_rng.gen_range(0, dim.candidates.size())];
    }
  }

  // Each input's shape, dtype and domain first, so its bytes can be placed before they are generated.
  struct Planned {
    const std::string* name;
    tensor::Shape shape;
    tensor::DType dtype;
    rng::Domain domain;
  };
  std::vector<Planned> planned;
  std::vector<std::size_t> sizes;
  c.input_order = op.input_names;
  for (const auto& name : op.input_names) {
    tensor::Shape shape;
    const std::vector<DimRef>* refs = nullptr;
    if (op.schema) {
      for (const auto& [input, dims] : op.schema->inputs) {
        if (input == name) refs = &dims;
      }
    }
    auto spec_it = op.inputs.find(name);
    const config::InputSpec* spec = spec_it == op.inputs.end() ? nullptr : &spec_it->second;
    if (!refs && spec && !spec->shape.empty()) refs = &spec->shape;
    if (refs) {
      for (const auto& ref : *refs) shape.push_back(TRY(resolve_dim(ref, c.dims, op, name)));
    } else {
      shape = kDefaultShape;
    }
    const tensor::DType dtype = spec && spec->dtype ? *spec->dtype : c.params.dtype;
    sizes.push_back(static_cast<std::size_t>(std::max<std::int64_t>(0, tensor::shape_numel(shape))) *
                    tensor::dtype_size(dtype));
    planned.push_back({&name, std::move(shape), dtype, spec ? spec->domain : rng::Domain{}});
  }

  // Another layout rewrites the bytes into its own storage: only the contiguous one is placed.
  std::optional<std::vector<tensor::PlacedStorage>> placed;
  if (place && c.params.layout == tensor::Layout::contiguous) placed = place(sizes);
  for (std::size_t k = 0; k < planned.size(); ++k) {
    const Planned& p = planned[k];
    tensor::Tensor values =
        rng::generate_tensor(rng::derive_seed(seed, "input/" + *p.name), p.dtype, p.shape, p.domain,
                             c.params.distribution, placed ? &(*placed)[k] : nullptr);
    c.inputs[*p.name] = c.params.layout == tensor::Layout::contiguous
                            ? std::move(values)
                            : tensor::with_layout(values, c.params.layout);
  }
  return c;
}

}  // namespace gpuemu::fuzz
