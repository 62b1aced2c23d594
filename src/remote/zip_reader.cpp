// Zip reading per PKWARE's APPNOTE: end-of-central-directory record, central directory file
// headers, local headers for the data offset; deflate (raw, no zlib header) through inflate().
#include "remote/zip_reader.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cstdint>

namespace gpuemu::remote {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kDirectoryHeader = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;

std::uint32_t u16(std::string_view s, std::size_t at) {
  return static_cast<std::uint8_t>(s[at]) | (static_cast<std::uint8_t>(s[at + 1]) << 8);
}
std::uint32_t u32(std::string_view s, std::size_t at) {
  return u16(s, at) | (u16(s, at + 2) << 16);
}

Expected<std::string> inflate_raw(std::string_view input, std::size_t expected, std::string_view what) {
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) return fail(ErrorKind::internal, "zlib inflateInit2 failed");
  std::string out(expected, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&stream, Z_FINISH);
  const auto produced = stream.total_out;
  inflateEnd(&stream);
  if (rc != Z_STREAM_END || produced != expected) {
    return fail(ErrorKind::parse,
                fmt::format("{}: a deflated entry is corrupt (zlib {}); download it again", what, rc));
  }
  return out;
}

}  // namespace

Expected<std::vector<ZipEntry>> list_zip(std::string_view zip, std::string_view what,
                                         const ZipLimits& limits) {
  auto corrupt = [&](std::string_view why) {
    return fail(ErrorKind::parse, fmt::format("{} is not a readable zip archive: {}", what, why));
  };
  if (zip.size() < 22) return corrupt("too short");
  std::size_t eocd = std::string_view::npos;
  const std::size_t lowest = zip.size() > 22 + 65535 ? zip.size() - 22 - 65535 : 0;
  for (std::size_t at = zip.size() - 22;; --at) {
    if (u32(zip, at) == kEndOfDirectory) {
      eocd = at;
      break;
    }
    if (at == lowest) break;
  }
  if (eocd == std::string_view::npos) return corrupt("no end-of-central-directory record");
  const std::uint32_t count = u16(zip, eocd + 10);
  const std::uint32_t dir_size = u32(zip, eocd + 12);
  const std::uint32_t dir_offset = u32(zip, eocd + 16);
  if (count == 0xffff || dir_offset == 0xffffffff) return corrupt("zip64 archives are not supported");
  if (std::size_t(dir_offset) + dir_size > eocd)
    return corrupt("the central directory lies outside the file");
  std::vector<ZipEntry> entries;
  std::size_t total = 0;
  // Entries must follow each other in the file in directory order, each starting after the one
  // before ends: then no two entries can share bytes, and the archive's size bounds their number.
  std::size_t previous_end = 0;
  std::string previous_name;
  std::size_t at = dir_offset;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (at + 46 > eocd || u32(zip, at) != kDirectoryHeader)
      return corrupt("a central directory entry is damaged");
    const std::uint32_t flags = u16(zip, at + 8);
    const std::uint32_t method = u16(zip, at + 10);
    const std::uint32_t crc = u32(zip, at + 16);
    const std::size_t packed = u32(zip, at + 20);
    const std::size_t size = u32(zip, at + 24);
    const std::size_t name_len = u16(zip, at + 28);
    const std::size_t next = at + 46 + name_len + u16(zip, at + 30) + u16(zip, at + 32);
    const std::size_t local = u32(zip, at + 42);
    if (next > eocd) return corrupt("a central directory entry runs past its end");
    std::string name(zip.substr(at + 46, name_len));
    at = next;
    if (local + 30 > dir_offset || u32(zip, local) != kLocalHeader) {
      return corrupt(fmt::format("the local header of '{}' is missing", name));
    }
    if (local < previous_end) {
      return corrupt(
          fmt::format("entry '{}' overlaps entry '{}' or comes before it in the file; a zip "
                      "written by an archiver never does this, so it is refused",
                      name, previous_name));
    }
    const std::size_t data = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
    if (data + packed > dir_offset) return corrupt(fmt::format("the data of '{}' runs past the end", name));
    previous_end = data + packed;
    previous_name = name;
    if (name.ends_with('/')) continue;
    if (flags & 1u) return corrupt(fmt::format("entry '{}' is encrypted", name));
    if (method != 0 && method != 8) {
      return corrupt(fmt::format("entry '{}' uses compression method {}; only stored and deflate are read",
                                 name, method));
    }
    if (method == 0 && packed != size) {
      return corrupt(fmt::format("stored entry '{}' has two different sizes", name));
    }
    if (size > limits.max_entry_bytes) {
      return fail(ErrorKind::io, fmt::format("{}: entry '{}' is {} bytes, over the limit of {} bytes", what,
                                             name, size, limits.max_entry_bytes));
    }
    total += size;
    if (total > limits.max_total_bytes) {
      return fail(ErrorKind::io, fmt::format("{}: its entries hold more than {} bytes together, over the "
                                             "limit for one archive",
                                             what, limits.max_total_bytes));
    }
    entries.push_back({std::move(name), size, method, crc, data, packed});
  }
  return entries;
}

Expected<std::string> extract_zip_entry(std::string_view zip, const ZipEntry& entry, std::string_view what) {
  if (entry.data_offset + entry.packed > zip.size()) {
    return fail(ErrorKind::internal, fmt::format("{}: entry '{}' is not in this archive", what, entry.name));
  }
  const std::string_view raw = zip.substr(entry.data_offset, entry.packed);
  std::string content =
      entry.method == 0 ? std::string(raw)
                        : TRY(inflate_raw(raw, entry.size, fmt::format("{} entry '{}'", what, entry.name)));
  const auto actual =
      crc32(0L, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size()));
  if (actual != entry.crc) {
    return fail(
        ErrorKind::parse,
        fmt::format("{} is not a readable zip archive: entry '{}' fails its CRC-32 check", what, entry.name));
  }
  return content;
}

}  // namespace gpuemu::remote
