// The corner cases of an op: fixed shapes (every dim at its minimum, each dim alone at its minimum
// and at 1) that every test and fuzz run draws before any random case, and the seeds that name them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace gpuemu::fuzz {

struct CaseFilter;

// One corner: its dims (every schema dim) and a name for reports ("every dim at its minimum:
// M=1, N=1", "N alone at 1: M=33, N=1", "N at its tile 128 + 1: M=33, N=129").
struct Corner {
  std::string name;
  std::map<std::string, std::int64_t> dims;
};

// The size a dim takes in a corner that is about another dim: 33 (a tail past a 32-wide tile)
// clamped to a range; for candidates, the largest one up to 33, else the smallest.
inline constexpr std::int64_t kCornerOtherSize = 33;

// The op's corners in run order (docs/configuration.md, "Corner cases"): every dim at its minimum,
// each dim alone at its minimum and at 1, then each dim at each of its [ops.schema] tiles - 1, the tile
// and + 1. Empty for an op without a schema (its shapes are fixed). At most kMaxCorners; identical dim
// sets appear once.
std::vector<Corner> corners(const config::OpConfig& op);
inline constexpr std::size_t kMaxCorners = 256;

// A corner's case seed: bits 40-63 are kCornerTag, bits 32-39 the corner's index, bits 0-31 come
// from the master seed, so the values stay seeded while the seed alone names the shape.
inline constexpr std::uint64_t kCornerTag = 0xC0E4E5;
bool is_corner_seed(std::uint64_t seed);
std::optional<std::size_t> corner_index(std::uint64_t seed);
std::uint64_t corner_seed(const config::OpConfig& op, std::uint64_t master_seed, std::string_view stream,
                          std::size_t corner, const CaseFilter& filter);

// The index-th case seed of a test or fuzz run: the op's corners first, then case_seed(index), so
// the random cases keep the seeds they had before corners existed.
std::uint64_t run_case_seed(const config::OpConfig& op, std::uint64_t master_seed, std::string_view stream,
                            std::uint64_t index, const CaseFilter& filter);

// The corner a case seed names for `op`, or nullptr when the seed is not a corner's (or names one
// the op does not have: the config changed since).
const Corner* corner_of(const std::vector<Corner>& all, std::uint64_t seed);

}  // namespace gpuemu::fuzz
