// Ed25519 keys for the signed report: generation into PEM files (the private key is 0600 from
// the moment it exists), loading, and the key id that names a key in envelopes and messages.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/types.h>

#include "util/error.hpp"

namespace gpuemu::attest {

namespace fs = std::filesystem;

// The file names `gpuemu keygen --out DIR` writes.
inline constexpr std::string_view kPrivateKeyFile = "gpuemu.key";
inline constexpr std::string_view kPublicKeyFile = "gpuemu.pub";

// Whether key generation may replace key files that already exist.
enum class Overwrite { refuse, force };

struct EvpPkeyFree {
  void operator()(EVP_PKEY* key) const;
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

// An Ed25519 public key and its key id.
class PublicKey {
 public:
  explicit PublicKey(PkeyPtr key);
  EVP_PKEY* get() const { return key_.get(); }
  const std::string& key_id() const { return key_id_; }
  // True when `signature` is this key's Ed25519 signature of `message`.
  bool verifies(std::span<const std::byte> message, std::span<const std::byte> signature) const;

 private:
  PkeyPtr key_;
  std::string key_id_;
};

// An Ed25519 private key; its public half is available for key ids and self-checks.
class PrivateKey {
 public:
  explicit PrivateKey(PkeyPtr key);
  EVP_PKEY* get() const { return key_.get(); }
  const std::string& key_id() const { return key_id_; }
  Expected<std::vector<std::byte>> sign(std::span<const std::byte> message) const;
  Expected<std::string> public_pem() const;

 private:
  PkeyPtr key_;
  std::string key_id_;
};

struct GeneratedKeys {
  fs::path private_key;  // DIR/gpuemu.key, mode 0600
  fs::path public_key;   // DIR/gpuemu.pub, mode 0644
  std::string key_id;
};

// Writes a fresh key pair into `dir` (created if missing). Refuses to replace either file
// unless `overwrite` is force; a replaced private key is unlinked first, never rewritten.
Expected<GeneratedKeys> generate_keys(const fs::path& dir, Overwrite overwrite);

// Creates `path` for writing with O_CREAT|O_EXCL|O_NOFOLLOW and the given mode, so the file
// never exists with wider permissions and never follows a planted symlink. Returns the fd.
Expected<int> create_exclusive(const fs::path& path, unsigned mode);

// Who may read a private key file: owner_only refuses a mode with any group/other bit (as ssh
// does); any is for callers whose keys come from places that cannot keep modes (docs/signed-report.md).
enum class KeyAccess { owner_only, any };

Expected<PrivateKey> load_private_key(const fs::path& path, KeyAccess access);
Expected<PublicKey> load_public_key(const fs::path& path);
// `what` names the source in error messages (a path, or "the built-in test key").
Expected<PrivateKey> private_key_from_pem(std::string_view pem, std::string_view what);
Expected<PublicKey> public_key_from_pem(std::string_view pem, std::string_view what);

// The key id: the first 16 hex digits of SHA-256 over the raw 32-byte Ed25519 public key.
std::string key_id_of(EVP_PKEY* key);

}  // namespace gpuemu::attest
