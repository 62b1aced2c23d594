// A minimal reader for the zip archives GitHub serves artifacts in: the central directory,
// stored and deflated entries (through zlib), CRC-32 checks and limits against zip bombs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::remote {

// One file entry as its central directory describes it; its bytes stay in the archive until
// extract_zip_entry inflates them.
struct ZipEntry {
  std::string name;
  std::size_t size = 0;  // uncompressed, as declared (and checked when extracted)
  std::uint32_t method = 0;
  std::uint32_t crc = 0;
  std::size_t data_offset = 0;  // where the stored or deflated bytes start in the archive
  std::size_t packed = 0;       // how many bytes they take there
};

struct ZipLimits {
  std::size_t max_entry_bytes = 0;  // one entry, uncompressed
  std::size_t max_total_bytes = 0;  // all entries together, uncompressed
};

// The file entries of `archive` (directories are skipped), without inflating any. `what` names
// the archive in errors. Refused: an entry or the sum of entries above `limits`, entries whose
// bytes overlap or are not in the order of the central directory (the shape of a zip bomb that
// points many entries at one deflate stream), zip64, encryption, methods other than stored (0)
// and deflate (8).
Expected<std::vector<ZipEntry>> list_zip(std::string_view archive, std::string_view what,
                                         const ZipLimits& limits);

// The uncompressed bytes of one entry of `archive` (from list_zip on the same archive): exactly
// its declared size, or an error, and its CRC-32 checked.
Expected<std::string> extract_zip_entry(std::string_view archive, const ZipEntry& entry,
                                        std::string_view what);

}  // namespace gpuemu::remote
