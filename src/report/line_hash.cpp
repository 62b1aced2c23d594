// primaryLocationLineHash as upload-sarif computes it (line_hash.hpp). The hash runs over UTF-16
// code units (JavaScript's charCodeAt) in 64-bit wrapping arithmetic (the "long" package's Long), so
// the text is decoded from UTF-8 first; the test vectors of codeql-action's fingerprints.test.ts pin it.
#include "report/line_hash.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "util/read_file.hpp"

namespace gpuemu::report {
namespace {

constexpr int kBlockSize = 100;
constexpr std::uint64_t kMod = 37;
constexpr std::uint32_t kEof = 65535;  // the end marker fingerprints.ts feeds after the text

// UTF-16 code units of UTF-8 text; a byte that starts no valid sequence becomes U+FFFD (as Node's
// utf8 decoding does).
std::vector<std::uint32_t> utf16_units(std::string_view text) {
  std::vector<std::uint32_t> out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    int extra = byte < 0x80 ? 0 : (byte >> 5) == 6 ? 1 : (byte >> 4) == 14 ? 2 : (byte >> 3) == 30 ? 3 : -1;
    std::uint32_t code = extra == 0   ? byte
                         : extra == 1 ? byte & 0x1F
                         : extra == 2 ? byte & 0x0F
                                      : byte & 0x07;
    bool valid = extra >= 0 && i + static_cast<std::size_t>(extra) < text.size();
    for (int k = 1; valid && k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next >> 6) == 2;
      code = (code << 6) | (next & 0x3F);
    }
    if (!valid || code > 0x10FFFF) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    if (code >= 0x10000) {
      code -= 0x10000;
      out.push_back(0xD800 + (code >> 10));
      out.push_back(0xDC00 + (code & 0x3FF));
    } else {
      out.push_back(code);
    }
    i += static_cast<std::size_t>(extra) + 1;
  }
  return out;
}

}  // namespace

std::string primary_location_line_hash(std::string_view text, int line) {
  std::array<std::uint32_t, kBlockSize> window{};
  std::array<int, kBlockSize> line_numbers;
  line_numbers.fill(-1);
  std::uint64_t hash = 0;
  std::uint64_t first_mod = 1;
  for (int i = 0; i < kBlockSize; ++i) first_mod *= kMod;
  int index = 0;
  int line_number = 0;
  bool line_start = true;
  bool prev_cr = false;
  std::map<std::uint64_t, int> counts;
  std::string found;

  auto output = [&] {
    const int n = ++counts[hash];
    if (line_numbers[index] == line) found = fmt::format("{:x}:{}", hash, n);
    line_numbers[index] = -1;
  };
  auto update = [&](std::uint32_t current) {
    const std::uint32_t begin = window[index];
    window[index] = current;
    hash = kMod * hash + current - first_mod * begin;  // wraps modulo 2^64, as Long does
    index = (index + 1) % kBlockSize;
  };
  auto process = [&](std::uint32_t current) {
    if (current == ' ' || current == '\t' || (prev_cr && current == '\n')) {
      prev_cr = false;
      return;
    }
    prev_cr = current == '\r';
    if (prev_cr) current = '\n';
    if (line_numbers[index] != -1) output();
    if (line_start) {
      line_start = false;
      line_numbers[index] = ++line_number;
    }
    if (current == '\n') line_start = true;
    update(current);
  };

  for (std::uint32_t unit : utf16_units(text)) process(unit);
  process(kEof);
  for (int i = 0; i < kBlockSize; ++i) {
    if (line_numbers[index] != -1) output();
    update(0);
  }
  return found;
}

std::optional<SourceLineFacts> source_line_facts(const std::filesystem::path& file, int line) {
  const auto text = util::read_text_file(file, "the source file");
  if (!text || line < 1) return std::nullopt;
  // The line's bytes; line endings as the hash counts them ("\r\n", "\r" and "\n").
  std::size_t begin = 0;
  for (int n = 1; n < line; ++n) {
    const std::size_t end = text->find_first_of("\r\n", begin);
    if (end == std::string::npos) return std::nullopt;
    begin = end + ((*text)[end] == '\r' && end + 1 < text->size() && (*text)[end + 1] == '\n' ? 2 : 1);
  }
  const std::size_t end = std::min(text->find_first_of("\r\n", begin), text->size());
  const std::string_view bytes = std::string_view(*text).substr(begin, end - begin);
  SourceLineFacts facts;
  int column = 1;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte: not a code point of its own
    const bool blank = c == ' ' || c == '\t';
    if (facts.start_column == 0 && !blank) facts.start_column = column;
    ++column;
    if (!blank) facts.end_column = column;
  }
  if (facts.start_column == 0) return std::nullopt;
  facts.line_hash = primary_location_line_hash(*text, line);
  return facts;
}

}  // namespace gpuemu::report
