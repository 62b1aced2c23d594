// Ed25519 key generation, PEM I/O and key ids through OpenSSL 3 (see keys.hpp).
// Private key files are created 0600 with O_EXCL, so no other user can ever open them.
#include "attest/keys.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "util/hash.hpp"
#include "util/read_file.hpp"

namespace gpuemu::attest {
namespace {

constexpr std::size_t kMaxPemBytes = 64 * 1024;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

// The most recent OpenSSL error as text, clearing the queue so later calls start clean.
std::string openssl_error() {
  unsigned long code = ERR_get_error();
  std::string text = "unknown OpenSSL error";
  if (code != 0) {
    std::array<char, 256> buffer{};
    ERR_error_string_n(code, buffer.data(), buffer.size());
    text = buffer.data();
  }
  ERR_clear_error();
  return text;
}

// Never prompt on a terminal for an encrypted key: report it instead.
int no_password(char*, int, int, void*) {
  return -1;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// Reads a PEM key through util's one file reader. A private key that group or others can read is
// refused unless the caller allows it, as ssh does: the file mode is the key's only protection.
Expected<std::string> read_pem_file(const fs::path& path, std::string_view what, KeyAccess access) {
  util::RegularFile file =
      TRY(util::RegularFile::open(path, what, {kMaxPemBytes, util::Symlinks::follow, ErrorKind::io}));
  const auto mode = static_cast<unsigned>(file.status().st_mode & 07777);
  if (access == KeyAccess::owner_only && (mode & 077) != 0) {
    return fail(ErrorKind::config,
                fmt::format("{} '{}' has mode {:04o}: a private key must not be readable or writable by "
                            "group or others; run `chmod 600 {}` (or pass --allow-shared-key if the "
                            "directory itself is private)",
                            what, path.string(), mode, path.string()));
  }
  return file.read_all();
}

Expected<void> require_ed25519(EVP_PKEY* key, std::string_view what) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_ED25519) {
    const char* type = EVP_PKEY_get0_type_name(key);
    return fail(ErrorKind::config, std::string(what) + " holds a " + (type ? type : "non-Ed25519") +
                                       " key; gpuemu signs with Ed25519: make one with `gpuemu keygen`");
  }
  return {};
}

Expected<void> write_all_and_close(int fd, const fs::path& path, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      return fail(ErrorKind::io, "cannot write '" + path.string() + "': " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return fail(ErrorKind::io, "cannot flush '" + path.string() + "': " + std::strerror(errno));
  }
  return {};
}

Expected<void> write_new_file(const fs::path& path, std::string_view data, unsigned mode) {
  int fd = TRY(create_exclusive(path, mode));
  auto written = write_all_and_close(fd, path, data);
  if (!written) {
    ::unlink(path.c_str());  // a half-written key is worse than none
  }
  return written;
}

Expected<void> refuse_existing(const fs::path& path) {
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
    return fail(ErrorKind::usage, "'" + path.string() +
                                      "' already exists; keep it, choose another --out directory, or pass "
                                      "--force to replace the key pair");
  }
  return {};
}

}  // namespace

void EvpPkeyFree::operator()(EVP_PKEY* key) const {
  EVP_PKEY_free(key);
}

std::string key_id_of(EVP_PKEY* key) {
  std::array<unsigned char, 32> raw{};
  std::size_t length = raw.size();
  if (EVP_PKEY_get_raw_public_key(key, raw.data(), &length) != 1) {
    ERR_clear_error();
    return "";
  }
  return util::sha256_hex(std::as_bytes(std::span(raw.data(), length))).substr(0, 16);
}

PublicKey::PublicKey(PkeyPtr key) : key_(std::move(key)), key_id_(key_id_of(key_.get())) {}

bool PublicKey::verifies(std::span<const std::byte> message, std::span<const std::byte> signature) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  // Ed25519 hashes internally (PureEdDSA), so no digest is named here.
  bool ok =
      ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) == 1 &&
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  ERR_clear_error();
  return ok;
}

PrivateKey::PrivateKey(PkeyPtr key) : key_(std::move(key)), key_id_(key_id_of(key_.get())) {}

Expected<std::vector<std::byte>> PrivateKey::sign(std::span<const std::byte> message) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  auto msg = reinterpret_cast<const unsigned char*>(message.data());
  std::size_t length = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length, msg, message.size()) != 1) {
    return fail(ErrorKind::internal, "Ed25519 signing could not start: " + openssl_error());
  }
  std::vector<std::byte> signature(length);
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length, msg,
                     message.size()) != 1) {
    return fail(ErrorKind::internal, "Ed25519 signing failed: " + openssl_error());
  }
  signature.resize(length);
  return signature;
}

Expected<std::string> PrivateKey::public_pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) {
    return fail(ErrorKind::internal, "cannot encode the public key as PEM: " + openssl_error());
  }
  return bio_text(bio.get());
}

Expected<int> create_exclusive(const fs::path& path, unsigned mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return fail(ErrorKind::usage, "'" + path.string() + "' already exists; refusing to overwrite it");
    }
    return fail(ErrorKind::io, "cannot create '" + path.string() + "': " + std::strerror(errno));
  }
  return fd;
}

Expected<GeneratedKeys> generate_keys(const fs::path& dir, Overwrite overwrite) {
  GeneratedKeys out{dir / kPrivateKeyFile, dir / kPublicKeyFile, ""};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return fail(ErrorKind::io, "cannot create key directory '" + dir.string() + "': " + ec.message());
  }
  if (overwrite == Overwrite::refuse) {
    TRY(refuse_existing(out.private_key));
    TRY(refuse_existing(out.public_key));
  } else {
    // Unlink rather than truncate: the new private key still gets a fresh 0600 inode.
    fs::remove(out.private_key, ec);
    fs::remove(out.public_key, ec);
  }

  PrivateKey key(PkeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")));
  if (!key.get()) {
    return fail(ErrorKind::environment, "cannot generate an Ed25519 key: " + openssl_error());
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  // PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted: the file mode is the protection.
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return fail(ErrorKind::internal, "cannot encode the private key as PEM: " + openssl_error());
  }
  TRY(write_new_file(out.private_key, bio_text(bio.get()), 0600));
  TRY(write_new_file(out.public_key, TRY(key.public_pem()), 0644));
  out.key_id = key.key_id();
  return out;
}

Expected<PrivateKey> private_key_from_pem(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_password, nullptr));
  if (!key) {
    ERR_clear_error();
    return fail(ErrorKind::config,
                std::string(what) +
                    " is not a PEM private key (expected '-----BEGIN PRIVATE KEY-----', unencrypted "
                    "PKCS#8 Ed25519): pass the gpuemu.key written by `gpuemu keygen`");
  }
  TRY(require_ed25519(key.get(), what));
  return PrivateKey(std::move(key));
}

Expected<PublicKey> public_key_from_pem(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, no_password, nullptr));
  if (!key) {
    ERR_clear_error();
    return fail(ErrorKind::config,
                std::string(what) +
                    " is not a PEM public key (expected '-----BEGIN PUBLIC KEY-----', Ed25519): pass the "
                    "gpuemu.pub written by `gpuemu keygen`");
  }
  TRY(require_ed25519(key.get(), what));
  return PublicKey(std::move(key));
}

Expected<PrivateKey> load_private_key(const fs::path& path, KeyAccess access) {
  std::string pem = TRY(read_pem_file(path, "key file", access));
  return private_key_from_pem(pem, "key file '" + path.string() + "'");
}

Expected<PublicKey> load_public_key(const fs::path& path) {
  std::string pem = TRY(read_pem_file(path, "public key file", KeyAccess::any));
  return public_key_from_pem(pem, "public key file '" + path.string() + "'");
}

}  // namespace gpuemu::attest
