// RFC 4648 base64 with padding, table-driven in both directions (see base64.hpp). Decoding is
// strict about the alphabet and '=' placement but, like Python, ignores the unused bits of the
// last character, which canonical encoders always leave zero anyway.
#include "util/base64.hpp"

#include <array>
#include <cstdint>

namespace gpuemu::util {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::uint8_t kInvalid = 0xFF;  // any value with a bit above the low 6 would do

constexpr std::array<std::uint8_t, 256> make_decode_table() {
  std::array<std::uint8_t, 256> table{};
  table.fill(kInvalid);
  for (std::uint8_t i = 0; i < 64; ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = i;
  }
  return table;
}
constexpr auto kDecode = make_decode_table();

}  // namespace

std::string base64_encode(std::span<const std::byte> bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  char* o = out.data();
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3, o += 4) {
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8) | in[i + 2];
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = kAlphabet[(v >> 6) & 63];
    o[3] = kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (rest == 2 ? std::uint32_t{in[i + 1]} << 8 : 0);
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    if (rest == 2) {
      o[2] = kAlphabet[(v >> 6) & 63];
    }
  }
  return out;
}

std::optional<std::vector<std::byte>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') {
    padding = text[text.size() - 2] == '=' ? 2 : 1;
  }
  std::vector<std::byte> out(text.size() / 4 * 3 - padding);
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t full_groups = padding == 0 ? text.size() / 4 : text.size() / 4 - 1;
  std::byte* o = out.data();
  for (std::size_t g = 0; g < full_groups; ++g, in += 4, o += 3) {
    const std::uint32_t a = kDecode[in[0]], b = kDecode[in[1]], c = kDecode[in[2]], d = kDecode[in[3]];
    if (((a | b | c | d) & 0xC0) != 0) {
      return std::nullopt;  // a character outside the alphabet ('=' included: padding only ends the text)
    }
    const std::uint32_t v = (a << 18) | (b << 12) | (c << 6) | d;
    o[0] = static_cast<std::byte>(v >> 16);
    o[1] = static_cast<std::byte>(v >> 8);
    o[2] = static_cast<std::byte>(v);
  }
  if (padding > 0) {
    const std::uint32_t a = kDecode[in[0]], b = kDecode[in[1]];
    const std::uint32_t c = padding == 1 ? kDecode[in[2]] : 0;
    if (((a | b | c) & 0xC0) != 0) {
      return std::nullopt;
    }
    const std::uint32_t v = (a << 18) | (b << 12) | (c << 6);
    o[0] = static_cast<std::byte>(v >> 16);
    if (padding == 1) {
      o[1] = static_cast<std::byte>(v >> 8);
    }
  }
  return out;
}

}  // namespace gpuemu::util
