// Tests of attest/dsse.hpp: the PAE test vector published with the DSSE protocol (including
// its ECDSA signature, checked with OpenSSL), envelope signing and parsing.
#include "attest/dsse.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "attest_test_util.hpp"
#include "util/base64.hpp"

namespace gpuemu::attest {
namespace {

std::string as_string(const std::vector<std::byte>& bytes) {
  return std::string(text_of(bytes));
}

// From protocol.md of github.com/secure-systems-lab/dsse, "Test Vectors".
constexpr std::string_view kVectorType = "http://example.com/HelloWorld";
constexpr std::string_view kVectorBody = "hello world";
constexpr std::string_view kVectorPae = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
constexpr const char* kVectorX =
    "46950820868899156662930047687818585632848591499744589407958293238635476079160";
constexpr const char* kVectorY =
    "5640078356564379163099075877009565129882514886557779369047442380624545832820";
constexpr std::string_view kVectorSig =
    "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA==";

TEST(Dsse, PaeMatchesThePublishedVector) {
  EXPECT_EQ(as_string(pae(kVectorType, bytes_of(kVectorBody))), kVectorPae);
  EXPECT_EQ(as_string(pae("", {})), "DSSEv1 0  0 ");
}

TEST(Dsse, PaeLengthsCountBytesNotCharacters) {
  // "é" is two UTF-8 bytes; LEN is the byte length.
  EXPECT_EQ(as_string(pae("t\xc3\xa9", bytes_of("\xc3\xa9\xc3\xa9"))),
            "DSSEv1 3 t\xc3\xa9 4 \xc3\xa9\xc3\xa9");
}

// Verifying the spec's own ECDSA P-256 signature over our PAE bytes proves they are the bytes
// the spec's reference implementation signed, not just the text printed in the document.
TEST(Dsse, PublishedSignatureVerifiesOverOurPae) {
  BIGNUM* x = nullptr;
  BIGNUM* y = nullptr;
  ASSERT_GT(BN_dec2bn(&x, kVectorX), 0);
  ASSERT_GT(BN_dec2bn(&y, kVectorY), 0);
  std::array<unsigned char, 65> point{0x04};
  ASSERT_EQ(BN_bn2binpad(x, point.data() + 1, 32), 32);
  ASSERT_EQ(BN_bn2binpad(y, point.data() + 33, 32), 32);
  BN_free(x);
  BN_free(y);

  OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
  OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
  OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(build);
  EVP_PKEY_CTX* from = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* key = nullptr;
  ASSERT_EQ(EVP_PKEY_fromdata_init(from), 1);
  ASSERT_EQ(EVP_PKEY_fromdata(from, &key, EVP_PKEY_PUBLIC_KEY, params), 1);

  // The vector's signature is raw r||s; OpenSSL wants DER.
  auto raw = util::base64_decode(kVectorSig);
  ASSERT_TRUE(raw && raw->size() == 64);
  auto* rs = reinterpret_cast<const unsigned char*>(raw->data());
  ECDSA_SIG* sig = ECDSA_SIG_new();
  ECDSA_SIG_set0(sig, BN_bin2bn(rs, 32, nullptr), BN_bin2bn(rs + 32, 32, nullptr));
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig, &der);

  auto message = pae(kVectorType, bytes_of(kVectorBody));
  auto verify_over = [&](const std::vector<std::byte>& bytes) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key);
    int ok = EVP_DigestVerify(ctx, der, static_cast<std::size_t>(der_len),
                              reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    EVP_MD_CTX_free(ctx);
    return ok == 1;
  };
  EXPECT_TRUE(verify_over(message));
  message.back() = std::byte{'D'};  // "hello worlD"
  EXPECT_FALSE(verify_over(message));

  OPENSSL_free(der);
  ECDSA_SIG_free(sig);
  EVP_PKEY_free(key);
  EVP_PKEY_CTX_free(from);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(build);
}

TEST(Dsse, ParsesThePublishedEnvelope) {
  auto envelope = parse_envelope(nlohmann::json{{"payload", "aGVsbG8gd29ybGQ="},
                                                {"payloadType", kVectorType},
                                                {"signatures", {{{"sig", kVectorSig}}}}});
  ASSERT_TRUE(envelope) << envelope.error().message;
  EXPECT_EQ(envelope->payload_type, kVectorType);
  EXPECT_EQ(as_string(envelope->payload), kVectorBody);
  EXPECT_EQ(envelope->signatures.at(0).keyid, "");
  EXPECT_EQ(envelope->signatures.at(0).sig.size(), 64u);
}

TEST(Dsse, AcceptsUrlSafeAndUnpaddedBase64) {
  auto standard = decode_base64_any("+/+/");
  auto url_safe = decode_base64_any("-_-_");
  ASSERT_TRUE(standard && url_safe);
  EXPECT_EQ(*standard, *url_safe);
  auto unpadded = decode_base64_any("aGVsbG8gd29ybGQ");
  ASSERT_TRUE(unpadded);
  EXPECT_EQ(as_string(*unpadded), "hello world");
  EXPECT_FALSE(decode_base64_any("not base64!"));
}

TEST(Dsse, SignedEnvelopeVerifiesWithEd25519AndNamesTheKey) {
  testing::ScratchDir dir;
  auto keys = generate_keys(dir.path(), Overwrite::refuse);
  ASSERT_TRUE(keys);
  auto priv = load_private_key(keys->private_key, KeyAccess::owner_only);
  auto pub = load_public_key(keys->public_key);
  ASSERT_TRUE(priv && pub);
  auto json = sign_envelope("application/vnd.in-toto+json", bytes_of("{\"a\":1}"), Ed25519Signer(*priv));
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_EQ((*json)["payloadType"], "application/vnd.in-toto+json");
  EXPECT_EQ((*json)["payload"], "eyJhIjoxfQ==");
  EXPECT_EQ((*json)["signatures"][0]["keyid"], keys->key_id);

  auto envelope = parse_envelope(*json);
  ASSERT_TRUE(envelope) << envelope.error().message;
  ASSERT_EQ(envelope->signatures.at(0).sig.size(), 64u);
  EXPECT_TRUE(pub->verifies(pae(envelope->payload_type, envelope->payload), envelope->signatures[0].sig));
  // The signature covers the PAE, not the bare payload.
  EXPECT_FALSE(pub->verifies(envelope->payload, envelope->signatures[0].sig));
  EXPECT_FALSE(pub->verifies(pae("application/json", envelope->payload), envelope->signatures[0].sig));
}

// A signer that fails, as an HSM or a revoked key might: the error reaches the caller.
class FailingSigner final : public Signer {
 public:
  std::string key_id() const override { return "0000000000000000"; }
  Expected<std::vector<std::byte>> sign(std::span<const std::byte>) const override {
    return fail(ErrorKind::environment, "signing device unavailable");
  }
};

TEST(Dsse, SignerFailurePassesUp) {
  auto json = sign_envelope("t", bytes_of("x"), FailingSigner());
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().message, "signing device unavailable");
}

TEST(Dsse, MalformedEnvelopesNameTheField) {
  auto message = [](const nlohmann::json& j) {
    auto e = parse_envelope(j);
    return e ? std::string("parsed") : e.error().message;
  };
  EXPECT_EQ(message(nlohmann::json::array()),
            "envelope: expected a JSON object with payloadType, payload and signatures");
  EXPECT_EQ(message({{"payload", "eA=="}, {"signatures", {{{"sig", "eA=="}}}}}),
            "envelope: payloadType is missing or not a string");
  EXPECT_EQ(message({{"payloadType", "t"}, {"payload", "e*=="}, {"signatures", {{{"sig", "eA=="}}}}}),
            "envelope: payload is not valid base64");
  EXPECT_EQ(message({{"payloadType", "t"}, {"payload", "eA=="}, {"signatures", nlohmann::json::array()}}),
            "envelope: signatures is missing or empty; the report is not signed");
  EXPECT_EQ(message({{"payloadType", "t"}, {"payload", "eA=="}, {"signatures", {{{"keyid", "k"}}}}}),
            "envelope: signatures[0].sig is missing or not a string");
  EXPECT_EQ(
      message({{"payloadType", "t"}, {"payload", "eA=="}, {"signatures", {{{"keyid", 7}, {"sig", "eA=="}}}}}),
      "envelope: signatures[0].keyid is not a string");
}

}  // namespace
}  // namespace gpuemu::attest
