// The corner cases of an op and the seeds that name them (see corners.hpp). A bug that only shows
// at size 1 (a reduction over one element, a variance divided by n - 1) is met on every run.
#include "fuzz/corners.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "fuzz/case.hpp"
#include "rng/seeded_rng.hpp"

namespace gpuemu::fuzz {
namespace {

constexpr std::uint64_t kIndexMask = 0xFF;
constexpr std::uint64_t kLowMask = 0xFFFFFFFFull;

std::int64_t other_size(const config::DimSpec& dim) {
  if (dim.candidates.empty()) return std::clamp(kCornerOtherSize, dim.min, dim.max);
  std::optional<std::int64_t> best;
  for (auto c : dim.candidates) {
    if (c <= kCornerOtherSize && (!best || c > *best)) best = c;
  }
  return best ? *best : *std::min_element(dim.candidates.begin(), dim.candidates.end());
}

bool allows(const config::DimSpec& dim, std::int64_t size) {
  if (dim.candidates.empty()) return dim.min <= size && size <= dim.max;
  return std::find(dim.candidates.begin(), dim.candidates.end(), size) != dim.candidates.end();
}

std::string spelled(const config::OpSchema& schema, const std::map<std::string, std::int64_t>& dims) {
  std::string out;
  for (const auto& dim : schema.dims)
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", dim.name, dims.at(dim.name));
  return out;
}

}  // namespace

std::vector<Corner> corners(const config::OpConfig& op) {
  std::vector<Corner> out;
  if (!op.schema || op.schema->dims.empty()) return out;
  const auto& dims = op.schema->dims;
  const auto add = [&](std::string what, std::map<std::string, std::int64_t> sizes) {
    if (out.size() >= kMaxCorners) return;
    if (std::ranges::any_of(out, [&](const Corner& c) { return c.dims == sizes; })) return;
    out.push_back({fmt::format("{}: {}", what, spelled(*op.schema, sizes)), std::move(sizes)});
  };
  std::map<std::string, std::int64_t> minimum, others;
  for (const auto& dim : dims) {
    minimum[dim.name] =
        dim.candidates.empty() ? dim.min : *std::min_element(dim.candidates.begin(), dim.candidates.end());
    others[dim.name] = other_size(dim);
  }
  add("every dim at its minimum", minimum);
  for (const auto& dim : dims) {
    auto alone = others;
    alone[dim.name] = minimum[dim.name];
    add(fmt::format("{} alone at its minimum", dim.name), alone);
    if (minimum[dim.name] != 1 && allows(dim, 1)) {
      alone[dim.name] = 1;
      add(fmt::format("{} alone at 1", dim.name), alone);
    }
  }
  for (const auto& dim : dims) {
    for (const std::int64_t tile : dim.tiles) {
      for (const std::int64_t offset : {-1, 0, 1}) {
        if (!allows(dim, tile + offset)) continue;
        auto edge = others;
        edge[dim.name] = tile + offset;
        add(offset == 0 ? fmt::format("{} at its tile {}", dim.name, tile)
                        : fmt::format("{} at its tile {} {} 1", dim.name, tile, offset < 0 ? "-" : "+"),
            edge);
      }
    }
  }
  return out;
}

bool is_corner_seed(std::uint64_t seed) {
  return (seed >> 40) == kCornerTag;
}

std::optional<std::size_t> corner_index(std::uint64_t seed) {
  if (!is_corner_seed(seed)) return std::nullopt;
  return static_cast<std::size_t>((seed >> 32) & kIndexMask);
}

std::uint64_t corner_seed(const config::OpConfig& op, std::uint64_t master_seed, std::string_view stream,
                          std::size_t corner, const CaseFilter& filter) {
  // As case_seed: rejection until the seed's params match the filter; the family keeps every
  // implementation of an op on the same corner values.
  const std::string& family = op.spec.empty() ? op.name : op.spec;
  const std::uint64_t head = (kCornerTag << 40) | ((static_cast<std::uint64_t>(corner) & kIndexMask) << 32);
  std::uint64_t seed = head;
  for (std::uint64_t attempt = 0; attempt < 100000; ++attempt) {
    const auto low =
        rng::derive_seed(master_seed, fmt::format("corner/{}/{}/{}/{}", stream, family, corner, attempt));
    seed = head | (low & kLowMask);
    if (case_matches(case_params(op, seed), filter)) break;
  }
  return seed;
}

std::uint64_t run_case_seed(const config::OpConfig& op, std::uint64_t master_seed, std::string_view stream,
                            std::uint64_t index, const CaseFilter& filter) {
  const auto count = corners(op).size();
  if (index < count) return corner_seed(op, master_seed, stream, static_cast<std::size_t>(index), filter);
  return case_seed(op, master_seed, stream, index, filter);
}

const Corner* corner_of(const std::vector<Corner>& all, std::uint64_t seed) {
  const auto k = corner_index(seed);
  return k && *k < all.size() ? &all[*k] : nullptr;
}

}  // namespace gpuemu::fuzz
