// DSSE pre-authentication encoding and JSON envelope (see dsse.hpp).
// Follows protocol.md and envelope.md of github.com/secure-systems-lab/dsse, version 1.0.
#include "attest/dsse.hpp"

#include <optional>

#include "util/base64.hpp"

namespace gpuemu::attest {
namespace {

void append(std::vector<std::byte>& out, std::string_view text) {
  auto bytes = bytes_of(text);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

Expected<std::vector<std::byte>> base64_field(const nlohmann::json& object, const char* key,
                                              const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return fail(ErrorKind::parse, "envelope: " + where + key + " is missing or not a string");
  }
  auto decoded = decode_base64_any(it->get_ref<const std::string&>());
  if (!decoded) {
    return fail(ErrorKind::parse, "envelope: " + where + key + " is not valid base64");
  }
  return *std::move(decoded);
}

}  // namespace

std::vector<std::byte> pae(std::string_view payload_type, std::span<const std::byte> body) {
  std::vector<std::byte> out;
  out.reserve(payload_type.size() + body.size() + 32);
  append(out, "DSSEv1 ");
  append(out, std::to_string(payload_type.size()));
  append(out, " ");
  append(out, payload_type);
  append(out, " ");
  append(out, std::to_string(body.size()));
  append(out, " ");
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::optional<std::vector<std::byte>> decode_base64_any(std::string_view text) {
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (standard.size() % 4 != 0) standard.push_back('=');
  return util::base64_decode(standard);
}

Expected<nlohmann::json> sign_envelope(std::string_view payload_type, std::span<const std::byte> body,
                                       const Signer& signer) {
  auto signature = TRY(signer.sign(pae(payload_type, body)));
  return nlohmann::json{
      {"payloadType", payload_type},
      {"payload", util::base64_encode(body)},
      {"signatures", {{{"keyid", signer.key_id()}, {"sig", util::base64_encode(signature)}}}}};
}

Expected<Envelope> parse_envelope(const nlohmann::json& envelope) {
  if (!envelope.is_object()) {
    return fail(ErrorKind::parse,
                "envelope: expected a JSON object with payloadType, payload and signatures");
  }
  Envelope out;
  auto type = envelope.find("payloadType");
  if (type == envelope.end() || !type->is_string()) {
    return fail(ErrorKind::parse, "envelope: payloadType is missing or not a string");
  }
  out.payload_type = type->get<std::string>();
  out.payload = TRY(base64_field(envelope, "payload", ""));
  auto signatures = envelope.find("signatures");
  if (signatures == envelope.end() || !signatures->is_array() || signatures->empty()) {
    return fail(ErrorKind::parse, "envelope: signatures is missing or empty; the report is not signed");
  }
  for (std::size_t i = 0; i < signatures->size(); ++i) {
    const auto& entry = (*signatures)[i];
    std::string where = "signatures[" + std::to_string(i) + "].";
    if (!entry.is_object()) {
      return fail(ErrorKind::parse, "envelope: " + where.substr(0, where.size() - 1) + " is not an object");
    }
    EnvelopeSignature sig;
    if (auto keyid = entry.find("keyid"); keyid != entry.end()) {
      if (!keyid->is_string()) return fail(ErrorKind::parse, "envelope: " + where + "keyid is not a string");
      sig.keyid = keyid->get<std::string>();
    }
    sig.sig = TRY(base64_field(entry, "sig", where));
    out.signatures.push_back(std::move(sig));
  }
  return out;
}

}  // namespace gpuemu::attest
