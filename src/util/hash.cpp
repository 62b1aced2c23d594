// SHA-256 through OpenSSL's EVP interface (see hash.hpp).
// EVP is used rather than the deprecated SHA256_* functions so OpenSSL 3 builds stay warning-free.
#include "util/hash.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

#include "util/read_file.hpp"

namespace gpuemu::util {
namespace {

struct DigestContext {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  DigestContext() { EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr); }
  void update(const void* data, std::size_t size) { EVP_DigestUpdate(ctx.get(), data, size); }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx.get(), digest.data(), &length);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
      out.push_back(kHex[digest[i] >> 4]);
      out.push_back(kHex[digest[i] & 15]);
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::string_view data) {
  DigestContext d;
  d.update(data.data(), data.size());
  return d.hex();
}

std::string sha256_hex(std::span<const std::byte> data) {
  DigestContext d;
  d.update(data.data(), data.size());
  return d.hex();
}

Expected<std::string> sha256_file_hex(const std::filesystem::path& path) {
  // Streamed, so no size cap; the one reader still refuses a FIFO or a device (which never ends).
  RegularFile file = TRY(RegularFile::open(
      path, "file to hash", {std::numeric_limits<std::uintmax_t>::max(), Symlinks::follow, ErrorKind::io}));
  DigestContext d;
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t got = ::read(file.fd(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return fail(ErrorKind::io, "error while reading '" + path.string() + "': " + std::strerror(errno));
    if (got == 0) break;
    d.update(buffer.data(), static_cast<std::size_t>(got));
  }
  return d.hex();
}

}  // namespace gpuemu::util
