// The unit tests' one temporary-directory helper: a fresh, private directory under the system temp
// dir (mkdtemp), removed with everything in it when the object goes away.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace gpuemu::testing {

class TempDir {
 public:
  // `prefix` names the directory (prefix-XXXXXX), so one left behind by a crash says whose it is.
  explicit TempDir(std::string_view prefix = "gpuemu-test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace gpuemu::testing
