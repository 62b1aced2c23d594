// file:// baseline store: a directory of TAG.json files (or one named .json file), written
// atomically through a temporary file in the same directory, fsync and rename.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include "remote/backends/backends.hpp"
#include "util/atomic_file.hpp"
#include "util/read_file.hpp"

namespace gpuemu::remote {
namespace {

namespace fs = std::filesystem;

// A directory (TAG.json inside) or one .json file.
class FileStore final : public BaselineStore {
 public:
  FileStore(fs::path base, StoreOptions options) : base_(std::move(base)), options_(std::move(options)) {}

  Expected<std::optional<std::string>> get(const std::string& tag) override {
    TRY(check_tag(tag));
    const fs::path path = path_for(tag);
    // util's one reader: a FIFO or a device named TAG.json is refused before reading, and a file
    // above the body limit before a byte of it is read.
    std::optional<util::RegularFile> file = TRY(util::RegularFile::open_if_present(
        path, "baseline", {options_.limits.max_body_bytes, util::Symlinks::follow, ErrorKind::io}));
    if (!file) {
      warn_missing(options_, path.string(), "no such file");
      return std::optional<std::string>();
    }
    std::string bytes = TRY(file->read_all());
    if (options_.verbose) options_.verbose(fmt::format("read {} ({} bytes)", path.string(), bytes.size()));
    return std::optional<std::string>(std::move(bytes));
  }

  Expected<void> put(const std::string& tag, const std::string& bytes) override {
    TRY(check_tag(tag));
    const fs::path path = path_for(tag);
    TRY(util::write_file_atomically(path, bytes));
    if (options_.verbose) options_.verbose(fmt::format("wrote {} ({} bytes)", path.string(), bytes.size()));
    return {};
  }

  std::string describe() const override { return "file://" + base_.string(); }

 private:
  fs::path path_for(const std::string& tag) const {
    return base_.extension() == ".json" ? base_ : base_ / (tag + ".json");
  }
  fs::path base_;
  StoreOptions options_;
};

}  // namespace

Expected<std::unique_ptr<BaselineStore>> make_file_store(const std::string& url,
                                                         const StoreOptions& options) {
  std::string path = url;
  if (path.starts_with("file://")) {
    path = path.substr(7);
    if (!path.empty() && path.front() != '/') {
      return fail(ErrorKind::usage,
                  fmt::format("'{}' is not a local file URL: write file:///absolute/path (three "
                              "slashes) or a plain path",
                              url));
    }
  }
  if (path.empty())
    return fail(ErrorKind::usage, "empty baseline location: give a directory, a .json file or a URL");
  return std::unique_ptr<BaselineStore>(std::make_unique<FileStore>(fs::absolute(path), options));
}

void warn_missing(const StoreOptions& options, const std::string& location, const std::string& why) {
  if (options.warn) options.warn(fmt::format("no baseline at {}: {}", location, why));
}

}  // namespace gpuemu::remote
