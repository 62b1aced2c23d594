// util/seed: the one seed parser behind the CLI's --seed, the store's rows, gpuemu.toml's seed
// strings and the daemon's seed fields.
#include "util/seed.hpp"

#include <gtest/gtest.h>

namespace gpuemu::util {
namespace {

TEST(ParseSeed, AcceptsEveryUnsigned64BitDecimal) {
  EXPECT_EQ(parse_seed("0"), 0u);
  EXPECT_EQ(parse_seed("42"), 42u);
  EXPECT_EQ(parse_seed("007"), 7u);
  EXPECT_EQ(parse_seed("18446744073709551615"), 18446744073709551615u);
}

TEST(ParseSeed, RejectsAnythingElse) {
  for (const char* text : {"", "-1", "+1", " 1", "1 ", "1x", "0x10", "1e3", "18446744073709551616"}) {
    EXPECT_EQ(parse_seed(text), std::nullopt) << '"' << text << '"';
  }
}

}  // namespace
}  // namespace gpuemu::util
