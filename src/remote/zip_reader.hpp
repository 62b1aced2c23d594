// A minimal reader for the zip archives GitHub serves artifacts in: the central directory,
// stored and deflated entries (through zlib), CRC-32 checks and a size limit against zip bombs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::remote {

struct ZipEntry {
  std::string name;
  std::string data;
};

// Every file entry of `archive` (directories are skipped). `what` names the archive in errors;
// an entry larger than `max_entry_bytes` uncompressed, zip64, encryption or any method other
// than stored (0) and deflate (8) is an error.
Expected<std::vector<ZipEntry>> read_zip(std::string_view archive, std::string_view what,
                                         std::size_t max_entry_bytes);

}  // namespace gpuemu::remote
