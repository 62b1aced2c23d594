// base64 against RFC 4648's test vectors, round trips of every short length and random data,
// and strict rejection of characters and padding that no encoder produces.
#include "util/base64.hpp"

#include <gtest/gtest.h>

#include <random>

namespace gpuemu::util {
namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

TEST(Base64, Rfc4648Vectors) {
  const std::pair<std::string_view, std::string_view> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(bytes_of(plain)), encoded);
    EXPECT_EQ(base64_decode(encoded), bytes_of(plain)) << encoded;
  }
  const std::vector<std::byte> high{std::byte{0xFB}, std::byte{0xFF}, std::byte{0xBF}};
  EXPECT_EQ(base64_encode(high), "+/+/");
}

TEST(Base64, RoundTripsEveryLengthAndRandomData) {
  std::mt19937 gen(5);
  for (std::size_t len = 0; len <= 64; ++len) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<std::byte> data(len);
      for (auto& b : data) b = static_cast<std::byte>(gen());
      const std::string text = base64_encode(data);
      ASSERT_EQ(text.size(), (len + 2) / 3 * 4);
      ASSERT_EQ(base64_decode(text), data) << len;
    }
  }
  std::vector<std::byte> big(1 << 20);
  for (auto& b : big) b = static_cast<std::byte>(gen());
  EXPECT_EQ(base64_decode(base64_encode(big)), big);
}

TEST(Base64, RejectsGarbage) {
  const std::vector<std::string_view> garbage{
      "Zg=",   "Zg",   "Z===", "====",      "Zm9v====", "Zm=v",     "=m9v",    "Zm9v\n",
      " Zm9v", "Zm9-", "Zm9_", "Zm9v Zm9v", "Zg==Zm9v", "Zm8=Zm9v", "Zm9\xff", std::string_view("Zm\0v", 4)};
  for (std::string_view bad : garbage) {
    EXPECT_EQ(base64_decode(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace gpuemu::util
