// Tests for backends/file_store.cpp and baseline_transfer.cpp over files: round trips, missing
// documents as warnings, atomic writes, and signed baselines verified (or ignored) on pull.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "attest/keys.hpp"
#include "remote/baseline_transfer.hpp"
#include "test_servers.hpp"

namespace gpuemu::remote {
namespace {

using testing::Captured;
using testing::RecordingSleeper;
using testing::TempDir;

const std::string kDocument = R"({"schema_version": 1, "tag": "main", "entries": []})";

TEST(FileStore, RoundTripThroughUrlAndPlainPath) {
  TempDir dir;
  Captured captured;
  RecordingSleeper sleeper(captured);
  PushOptions push{testing::test_options(captured, sleeper)};
  const auto where = push_baseline("file://" + (dir.path() / "baselines").string(), "main", kDocument, push);
  ASSERT_TRUE(where) << where.error().message;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "baselines" / "main.json"));
  // Only the document is left behind: the temporary file was renamed over it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() / "baselines"), {}), 1);

  FetchOptions fetch{testing::test_options(captured, sleeper)};
  const auto pulled = fetch_baseline((dir.path() / "baselines").string(), fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_EQ(pulled->bytes, kDocument);
  EXPECT_EQ(pulled->document->at("schema_version"), 1);
  EXPECT_TRUE(pulled->warnings.empty());

  // A second push replaces the first in place.
  const std::string second = R"({"schema_version": 1, "tag": "main", "entries": [1]})";
  ASSERT_TRUE(push_baseline((dir.path() / "baselines").string(), "main", second, push));
  EXPECT_EQ(fetch_baseline((dir.path() / "baselines").string(), fetch)->bytes, second);
}

TEST(FileStore, MissingDocumentIsAWarning) {
  TempDir dir;
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper)};
  fetch.tag = "release";
  const auto pulled = fetch_baseline((dir.path() / "nothing").string(), fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_EQ(pulled->warnings[0],
            "no baseline at " + (dir.path() / "nothing" / "release.json").string() + ": no such file");
}

// Issue 20 row 8: a main.json that is /dev/zero or a FIFO is refused before reading (no 2 GB
// read, no open() that waits for a writer for ever); one over the body limit from its size.
TEST(FileStore, ADeviceAFifoOrAHugeFileIsRefusedBeforeReading) {
  TempDir dir;
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper)};
  const auto main_json = dir.path() / "main.json";
  std::filesystem::create_symlink("/dev/zero", main_json);
  auto pulled = fetch_baseline(dir.path().string(), fetch);
  ASSERT_FALSE(pulled);
  EXPECT_EQ(pulled.error().kind, ErrorKind::io);
  EXPECT_EQ(pulled.error().message, "cannot read baseline '" + main_json.string() +
                                        "': it is a character device, not a regular file; check the path");

  std::filesystem::remove(main_json);
  ASSERT_EQ(::mkfifo(main_json.c_str(), 0600), 0);
  pulled = fetch_baseline(dir.path().string(), fetch);
  ASSERT_FALSE(pulled);
  EXPECT_NE(pulled.error().message.find("it is a FIFO, not a regular file"), std::string::npos);

  std::filesystem::remove(main_json);
  std::ofstream(main_json).close();
  std::filesystem::resize_file(main_json, 1ull << 30);
  fetch.store.limits.max_body_bytes = 1 << 20;
  pulled = fetch_baseline(dir.path().string(), fetch);
  ASSERT_FALSE(pulled);
  EXPECT_EQ(pulled.error().message, "cannot read baseline '" + main_json.string() +
                                        "': it is 1073741824 bytes, more than the limit of 1048576 bytes; "
                                        "check the path");
}

TEST(FileStore, RefusesToPushSomethingThatIsNotABaseline) {
  TempDir dir;
  const auto pushed = push_baseline(dir.path().string(), "main", "<html/>", PushOptions{});
  ASSERT_FALSE(pushed);
  EXPECT_NE(pushed.error().message.find("wrong content at the baseline 'main' to push"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "main.json"));
}

TEST(FileStore, WrongContentIsAnError) {
  TempDir dir;
  std::ofstream(dir.path() / "main.json") << "<!DOCTYPE html><html></html>";
  const auto pulled = fetch_baseline(dir.path().string(), FetchOptions{});
  ASSERT_FALSE(pulled);
  EXPECT_NE(pulled.error().message.find("wrong content at file://"), std::string::npos)
      << pulled.error().message;
}

// A fresh Ed25519 key pair, written by attest::generate_keys and loaded back.
struct Keys {
  attest::PrivateKey private_key;
  attest::PublicKey public_key;
  static Keys make() {
    TempDir dir;
    const auto generated = attest::generate_keys(dir.path() / "k", attest::Overwrite::refuse);
    auto priv = attest::load_private_key(generated->private_key, attest::KeyAccess::owner_only);
    auto pub = attest::load_public_key(generated->public_key);
    return Keys{std::move(*priv), std::move(*pub)};
  }
};

TEST(SignedBaselines, VerifiedWithTheRightKeyIgnoredOtherwise) {
  TempDir store;
  Keys keys = Keys::make();
  Keys other = Keys::make();
  PushOptions push;
  push.sign_key = &keys.private_key;
  ASSERT_TRUE(push_baseline(store.path().string(), "main", kDocument, push));

  FetchOptions fetch;
  fetch.public_key = &keys.public_key;
  const auto good = fetch_baseline(store.path().string(), fetch);
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->bytes, kDocument);
  EXPECT_EQ(good->signed_by, keys.public_key.key_id());

  fetch.public_key = &other.public_key;
  const auto wrong_key = fetch_baseline(store.path().string(), fetch);
  ASSERT_TRUE(wrong_key);
  EXPECT_FALSE(wrong_key->bytes);
  ASSERT_EQ(wrong_key->warnings.size(), 1u);
  EXPECT_NE(wrong_key->warnings[0].find("ignored: none of its 1 signature(s) verifies with key id " +
                                        other.public_key.key_id()),
            std::string::npos)
      << wrong_key->warnings[0];

  // One changed payload byte (a base64 character of the payload) breaks the signature.
  std::ifstream in(store.path() / "main.json");
  auto envelope = nlohmann::json::parse(in);
  std::string payload = envelope["payload"];
  payload[10] = payload[10] == 'A' ? 'B' : 'A';
  envelope["payload"] = payload;
  std::ofstream(store.path() / "main.json") << envelope.dump();
  fetch.public_key = &keys.public_key;
  const auto tampered = fetch_baseline(store.path().string(), fetch);
  ASSERT_TRUE(tampered);
  EXPECT_FALSE(tampered->bytes);
  EXPECT_EQ(tampered->warnings.size(), 1u);

  // Without a public key the envelope is unwrapped but nothing is claimed about it.
  ASSERT_TRUE(push_baseline(store.path().string(), "main", kDocument, push));
  const auto unchecked = fetch_baseline(store.path().string(), FetchOptions{});
  ASSERT_TRUE(unchecked);
  EXPECT_EQ(unchecked->bytes, kDocument);
  EXPECT_FALSE(unchecked->signed_by);
}

TEST(SignedBaselines, UnsignedBaselineIgnoredWhenAKeyIsGiven) {
  TempDir store;
  Keys keys = Keys::make();
  ASSERT_TRUE(push_baseline(store.path().string(), "main", kDocument, PushOptions{}));
  FetchOptions fetch;
  fetch.public_key = &keys.public_key;
  const auto pulled = fetch_baseline(store.path().string(), fetch);
  ASSERT_TRUE(pulled);
  EXPECT_FALSE(pulled->bytes);
  ASSERT_EQ(pulled->warnings.size(), 1u);
  EXPECT_EQ(pulled->warnings[0], "baseline at file://" + store.path().string() +
                                     " ignored: it is not signed, and a public key (key id " +
                                     keys.public_key.key_id() + ") was given");
}

}  // namespace
}  // namespace gpuemu::remote
