// Helpers shared by the store's tests: a temporary directory, a failure record that exercises
// every field (u64 seeds above 2^63, NaN/Inf statistics, strided fp16 inputs), and raw SQLite.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "result/run_result.hpp"

namespace gpuemu::store::testing {

using ::gpuemu::testing::TempDir;

inline std::vector<char> file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::filesystem::path& file, const std::vector<char>& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs SQL on a plain connection (no gpuemu code involved); fails the test on error.
inline void raw_exec(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string error = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << error;
}

inline std::string raw_query_text(const std::filesystem::path& file, const std::string& sql) {
  // Read-write without CREATE, as a real second process would open it: a read-only connection
  // cannot run the WAL recovery that a kill -9 leaves for the next opener, and would see nothing.
  sqlite3* db = nullptr;
  std::string result;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    result = std::string("open failed: ") + sqlite3_errmsg(db);
  } else {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      result = std::string("prepare failed: ") + sqlite3_errmsg(db);
    } else if (sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = sqlite3_column_text(stmt, 0);
      result = text ? reinterpret_cast<const char*>(text) : "NULL";
    } else {
      result = std::string("no row: ") + sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return result;
}

inline tensor::Tensor random_tensor(tensor::DType dtype, tensor::Shape shape,
                                    std::vector<std::int64_t> strides, std::size_t bytes,
                                    std::uint32_t seed) {
  tensor::Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < bytes; ++i) t.data.push_back(static_cast<std::byte>(rng() & 0xff));
  return t;
}

// Inputs with a strided fp16 matrix (gaps in its buffer), a contiguous f32, a rank-0 int64 and
// an empty bool tensor.
inline tensor::NamedTensors sample_inputs() {
  tensor::NamedTensors inputs;
  // 3x5 fp16 with row stride 8: the buffer holds 2*8 + 5 = 21 elements.
  inputs["a"] = random_tensor(tensor::DType::float16, {3, 5}, {8, 1}, 21 * 2, 1);
  inputs["b"] = random_tensor(tensor::DType::float32, {5, 2}, {2, 1}, 10 * 4, 2);
  inputs["scale"] = random_tensor(tensor::DType::int64, {}, {}, 8, 3);
  inputs["mask"] = random_tensor(tensor::DType::bool_, {0, 3}, {3, 1}, 0, 4);
  return inputs;
}

inline constexpr std::uint64_t kBigSeed = 18446744073709551557ull;  // > 2^63, not representable in a double

inline result::CaseRecord sample_record(std::uint64_t seed = kBigSeed, std::string op = "matmul") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  result::CaseRecord r;
  r.op = std::move(op);
  r.seed = seed;
  r.params.dtype = tensor::DType::float16;
  r.params.layout = tensor::Layout::strided;
  r.params.distribution = rng::ValueDistribution::adversarial;
  r.dims = {{"M", 3}, {"K", 5}, {"N", 2}};
  r.shapes = {{"a", {3, 5}}, {"b", {5, 2}}, {"scale", {}}};
  r.tolerance = {1e-2, 2e-2};
  r.verdict.kind = check::FailureKind::nonfinite_mismatch;
  r.verdict.message = "out[1, 0]: got NaN, expected -inf";
  auto& s = r.verdict.stats;
  s.max_abs = inf;
  s.max_rel = nan;
  s.max_ulp = 1e300;
  s.mismatches = 7;
  s.elements = 15;
  s.mismatch_fraction = 7.0 / 15.0;
  s.tolerance_used = inf;
  s.worst = {{"out", {1, 0}, nan, -inf, inf, nan}, {"out", {2, 1}, 0.1, 0.30000000000000004, 0.2, -0.0}};
  r.stderr_tail = "Traceback (most recent call last):\n  bad byte \xff here\n";
  r.inputs = std::make_shared<const tensor::NamedTensors>(sample_inputs());
  return r;
}

// Exact double comparison where NaN equals NaN.
inline bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

inline void expect_same_tensors(const tensor::NamedTensors& got, const tensor::NamedTensors& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.contains(name)) << name;
    const auto& g = got.at(name);
    EXPECT_EQ(g.dtype, t.dtype) << name;
    EXPECT_EQ(g.shape, t.shape) << name;
    EXPECT_EQ(g.strides, t.strides) << name;
    EXPECT_EQ(g.data, t.data) << name;
  }
}

}  // namespace gpuemu::store::testing
