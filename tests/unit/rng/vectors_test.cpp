// Checks the C++ generator against tests/vectors/*.json, which python/tests/test_vectors.py also
// checks: a change on either side of the byte-identical contract fails here or there.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "rng/counter.hpp"
#include "rng/seeded_rng.hpp"
#include "rng/values.hpp"
#include "util/hash.hpp"

namespace gpuemu::rng {
namespace {

using nlohmann::json;

json load(const std::string& name) {
  std::ifstream in(std::string(GPUEMU_SOURCE_DIR) + "/tests/vectors/" + name);
  EXPECT_TRUE(in) << "missing tests/vectors/" << name << "; run python3 tests/vectors/generate.py";
  return json::parse(in);
}

std::uint64_t u64(const json& j) {
  return std::stoull(j.get<std::string>());
}

std::string hex_bits(double v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
  return buf;
}

std::string hex_bytes(std::span<const std::byte> data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::byte b : data) {
    out += kDigits[static_cast<unsigned>(b) >> 4];
    out += kDigits[static_cast<unsigned>(b) & 15];
  }
  return out;
}

double domain_end(const json& j) {
  if (j.is_string()) {
    return j.get<std::string>() == "inf" ? std::numeric_limits<double>::infinity()
                                         : -std::numeric_limits<double>::infinity();
  }
  return j.get<double>();
}

Domain parse_domain(const json& j) {
  if (j.is_string()) {
    return Domain{.lo = -1.0, .hi = 1.0, .any = true};
  }
  return Domain{.lo = domain_end(j[0]), .hi = domain_end(j[1]), .any = false};
}

tensor::Tensor generate(const json& c) {
  return generate_tensor(u64(c["seed"]), *tensor::parse_dtype(c["dtype"].get<std::string>()),
                         c["shape"].get<tensor::Shape>(), parse_domain(c["domain"]),
                         *parse_distribution(c["distribution"].get<std::string>()));
}

TEST(Vectors, ScalarSequences) {
  const json v = load("rng.json");
  for (const auto& s : v["sequences"]) {
    const std::uint64_t seed = u64(s["seed"]);
    SeededRng a(seed), b(seed), c(seed);
    for (std::size_t i = 0; i < 16; ++i) {
      EXPECT_EQ(a.next_u64(), u64(s["u64"][i])) << "seed " << seed << " draw " << i;
      EXPECT_EQ(hex_bits(b.next_f64()), s["f64_bits"][i].get<std::string>()) << "seed " << seed;
      const float f = c.next_f32();
      char buf[9];
      std::snprintf(buf, sizeof buf, "%08x", std::bit_cast<std::uint32_t>(f));
      EXPECT_EQ(std::string(buf), s["f32_bits"][i].get<std::string>()) << "seed " << seed;
    }
  }
}

TEST(Vectors, GenRange) {
  const json v = load("rng.json");
  for (const auto& r : v["gen_range"]) {
    SeededRng rng(u64(r["seed"]));
    for (const auto& expected : r["values"]) {
      EXPECT_EQ(rng.gen_range(u64(r["lo"]), u64(r["hi"])), u64(expected)) << r.dump();
    }
    EXPECT_EQ(rng.next_u64(), u64(r["next_u64"])) << "draw count differs for " << r["lo"] << ".." << r["hi"];
  }
}

TEST(Vectors, Normal) {
  const json v = load("rng.json");
  for (const auto& n : v["normal"]) {
    SeededRng rng(u64(n["seed"]));
    for (const auto& bits : n["bits"]) {
      EXPECT_EQ(hex_bits(rng.normal()), bits.get<std::string>()) << "seed " << n["seed"];
    }
  }
}

TEST(Vectors, DeriveSeedAndCounters) {
  const json v = load("rng.json");
  for (const auto& d : v["derive_seed"]) {
    EXPECT_EQ(derive_seed(u64(d["seed"]), d["domain"].get<std::string>()), u64(d["expected"])) << d.dump();
  }
  for (const auto& c : v["counter"]) {
    EXPECT_EQ(counter_u64(u64(c["stream_seed"]), u64(c["index"])), u64(c["value"])) << c.dump();
  }
}

TEST(Vectors, SmallTensorsByteForByte) {
  const json v = load("tensors.json");
  ASSERT_GT(v["cases"].size(), 500u);
  for (const auto& c : v["cases"]) {
    const tensor::Tensor t = generate(c);
    ASSERT_EQ(hex_bytes(t.data), c["hex"].get<std::string>()) << c.dump();
    EXPECT_EQ(t.shape, c["shape"].get<tensor::Shape>());
    EXPECT_EQ(describe_values(u64(c["seed"]), t.dtype, parse_domain(c["domain"]),
                              *parse_distribution(c["distribution"].get<std::string>())),
              c["describe"].get<std::string>())
        << c.dump();
  }
}

TEST(Vectors, LargeTensorsBySha256) {
  const json v = load("tensors.json");
  for (const auto& c : v["large"]) {
    const tensor::Tensor t = generate(c);
    EXPECT_EQ(util::sha256_hex(std::span<const std::byte>(t.data)), c["sha256"].get<std::string>())
        << c.dump();
  }
}

TEST(Vectors, InvalidDomainsAreRejected) {
  const json v = load("tensors.json");
  for (const auto& c : v["invalid_domains"]) {
    const auto dtype = *tensor::parse_dtype(c["dtype"].get<std::string>());
    const Domain domain = parse_domain(c["domain"]);
    const auto checked = check_domain(dtype, domain);
    ASSERT_FALSE(checked.has_value()) << c.dump();
    EXPECT_EQ(checked.error().kind, ErrorKind::config);
    EXPECT_THROW(generate_tensor(1, dtype, {2}, domain, ValueDistribution::regular), std::invalid_argument);
  }
}

}  // namespace
}  // namespace gpuemu::rng
