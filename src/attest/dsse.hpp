// DSSE (Dead Simple Signing Envelope, github.com/secure-systems-lab/dsse, protocol v1):
// the pre-authentication encoding, signing an envelope, and parsing one back.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attest/keys.hpp"
#include "util/error.hpp"

namespace gpuemu::attest {

// PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN in ASCII decimal
// bytes. This is exactly what the signature covers; the payload alone is never signed.
std::vector<std::byte> pae(std::string_view payload_type, std::span<const std::byte> body);

// Signs bytes and names the key. The seam lets tests make signing fail.
class Signer {
 public:
  virtual ~Signer() = default;
  virtual std::string key_id() const = 0;
  virtual Expected<std::vector<std::byte>> sign(std::span<const std::byte> message) const = 0;
};

// Ed25519 through EVP_DigestSign with no digest (PureEdDSA), the signer gpuemu ships.
class Ed25519Signer final : public Signer {
 public:
  explicit Ed25519Signer(const PrivateKey& key) : key_(key) {}
  std::string key_id() const override { return key_.key_id(); }
  Expected<std::vector<std::byte>> sign(std::span<const std::byte> message) const override {
    return key_.sign(message);
  }

 private:
  const PrivateKey& key_;
};

// {"payloadType", "payload": base64(body), "signatures": [{"keyid", "sig": base64}]}.
Expected<nlohmann::json> sign_envelope(std::string_view payload_type, std::span<const std::byte> body,
                                       const Signer& signer);

struct EnvelopeSignature {
  std::string keyid;  // may be empty: DSSE makes it an optional, unauthenticated hint
  std::vector<std::byte> sig;
};

struct Envelope {
  std::string payload_type;
  std::vector<std::byte> payload;
  std::vector<EnvelopeSignature> signatures;
};

// Decodes an envelope; both standard and URL-safe base64 are accepted, as DSSE requires.
// Errors name the field, e.g. "envelope: signatures[0].sig is not base64".
Expected<Envelope> parse_envelope(const nlohmann::json& envelope);

// Base64 with either alphabet and optional padding; nullopt when it is not base64.
std::optional<std::vector<std::byte>> decode_base64_any(std::string_view text);

inline std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text));
}
inline std::string_view text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace gpuemu::attest
