// Tests of attest/keys.hpp: key files and their modes, loading, key ids, and clear errors for
// keys that are not Ed25519 PEM. The openssl CLI cross-checks what we write.
#include "attest/keys.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "attest_test_util.hpp"

namespace gpuemu::attest {
namespace {

using testing::ScratchDir;

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Restores the process umask when a test changed it.
struct UmaskGuard {
  explicit UmaskGuard(mode_t mask) : old(::umask(mask)) {}
  ~UmaskGuard() { ::umask(old); }
  mode_t old;
};

TEST(Keys, GenerateWritesPrivateKey0600AndPublicKey) {
  ScratchDir dir;
  UmaskGuard umask_zero(0);  // with no umask, any mode wider than 0600 would show
  auto keys = generate_keys(dir.path() / "keys", Overwrite::refuse);
  ASSERT_TRUE(keys) << keys.error().message;
  EXPECT_EQ(keys->private_key, dir.path() / "keys/gpuemu.key");
  EXPECT_EQ(mode_of(keys->private_key), 0600u);
  EXPECT_EQ(mode_of(keys->public_key), 0644u);
  EXPECT_NE(testing::read_text(keys->private_key).find("-----BEGIN PRIVATE KEY-----"), std::string::npos);
  EXPECT_NE(testing::read_text(keys->public_key).find("-----BEGIN PUBLIC KEY-----"), std::string::npos);
  EXPECT_EQ(keys->key_id.size(), 16u);
}

// The private file has mode 0600 at the instant it is created, before a byte is written:
// there is no window in which another user could open it.
TEST(Keys, ExclusiveCreateIs0600BeforeAnyWriteAndRefusesExistingPaths) {
  ScratchDir dir;
  UmaskGuard umask_zero(0);
  fs::path path = dir.path() / "secret";
  auto fd = create_exclusive(path, 0600);
  ASSERT_TRUE(fd) << fd.error().message;
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_EQ(fs::file_size(path), 0u);
  ::close(*fd);

  auto again = create_exclusive(path, 0600);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, "'" + path.string() + "' already exists; refusing to overwrite it");

  // A planted symlink (even a dangling one) is not followed.
  fs::path link = dir.path() / "planted";
  fs::create_symlink(dir.path() / "elsewhere", link);
  EXPECT_FALSE(create_exclusive(link, 0600));
  EXPECT_FALSE(fs::exists(dir.path() / "elsewhere"));
}

TEST(Keys, RefusesToOverwriteUnlessForced) {
  ScratchDir dir;
  auto first = generate_keys(dir.path(), Overwrite::refuse);
  ASSERT_TRUE(first) << first.error().message;
  std::string original = testing::read_text(first->private_key);

  auto second = generate_keys(dir.path(), Overwrite::refuse);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, ErrorKind::usage);
  EXPECT_EQ(second.error().message, "'" + first->private_key.string() +
                                        "' already exists; keep it, choose another --out directory, or pass "
                                        "--force to replace the key pair");
  EXPECT_EQ(testing::read_text(first->private_key), original);

  auto forced = generate_keys(dir.path(), Overwrite::force);
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_NE(forced->key_id, first->key_id);
  EXPECT_EQ(mode_of(forced->private_key), 0600u);
}

TEST(Keys, RefusesWhenOnlyThePublicKeyExists) {
  ScratchDir dir;
  testing::write_text(dir.path() / "gpuemu.pub", "not ours");
  auto keys = generate_keys(dir.path(), Overwrite::refuse);
  ASSERT_FALSE(keys);
  EXPECT_FALSE(fs::exists(dir.path() / "gpuemu.key"));
}

TEST(Keys, LoadedKeysAgreeWithEachOtherAndWithOpenssl) {
  ScratchDir dir;
  auto keys = generate_keys(dir.path(), Overwrite::refuse);
  ASSERT_TRUE(keys) << keys.error().message;
  auto priv = load_private_key(keys->private_key, KeyAccess::owner_only);
  auto pub = load_public_key(keys->public_key);
  ASSERT_TRUE(priv) << priv.error().message;
  ASSERT_TRUE(pub) << pub.error().message;
  EXPECT_EQ(priv->key_id(), keys->key_id);
  EXPECT_EQ(pub->key_id(), keys->key_id);

  // Key id = first 16 hex digits of SHA-256 over the raw key: the last 32 bytes of the DER SPKI.
  auto id = testing::run_command(
      "openssl pkey -pubin -in gpuemu.pub -outform DER | tail -c 32 | openssl dgst -sha256 -r | cut -c1-16",
      dir.path());
  ASSERT_EQ(id.exit_code, 0) << id.output;
  EXPECT_EQ(id.output, keys->key_id + "\n");
  auto text = testing::run_command("openssl pkey -in gpuemu.key -noout -text", dir.path());
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("ED25519 Private-Key"), std::string::npos) << text.output;
}

TEST(Keys, APrivateKeyOthersCanReadIsRefusedUnlessAllowed) {
  ScratchDir dir;
  auto keys = generate_keys(dir.path(), Overwrite::refuse);
  ASSERT_TRUE(keys) << keys.error().message;
  for (const fs::perms mode : {fs::perms(0644), fs::perms(0640), fs::perms(0602)}) {
    fs::permissions(keys->private_key, mode);
    auto refused = load_private_key(keys->private_key, KeyAccess::owner_only);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::config);
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    const std::string path = keys->private_key.string();
    EXPECT_EQ(refused.error().message,
              "key file '" + path + "' has mode " + octal +
                  ": a private key must not be readable or writable by group or others; run `chmod 600 " +
                  path + "` (or pass --allow-shared-key if the directory itself is private)");
    auto allowed = load_private_key(keys->private_key, KeyAccess::any);
    ASSERT_TRUE(allowed) << allowed.error().message;
  }
  fs::permissions(keys->private_key, fs::perms(0400));
  EXPECT_TRUE(load_private_key(keys->private_key, KeyAccess::owner_only));
  // A public key is public: any mode.
  fs::permissions(keys->public_key, fs::perms(0644));
  EXPECT_TRUE(load_public_key(keys->public_key));
}

TEST(Keys, AKeyPathThatIsADeviceIsRefusedWithoutReadingIt) {
  auto priv = load_private_key("/dev/zero", KeyAccess::any);
  ASSERT_FALSE(priv);
  EXPECT_EQ(priv.error().message,
            "cannot read key file '/dev/zero': it is a character device, not a regular file; check the path");
}

TEST(Keys, GarbagePemGivesAClearError) {
  ScratchDir dir;
  fs::path path = dir.path() / "garbage.key";
  testing::write_text(path, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
  auto priv = load_private_key(path, KeyAccess::any);
  ASSERT_FALSE(priv);
  EXPECT_EQ(priv.error().kind, ErrorKind::config);
  EXPECT_EQ(priv.error().message, "key file '" + path.string() +
                                      "' is not a PEM private key (expected '-----BEGIN PRIVATE KEY-----', "
                                      "unencrypted PKCS#8 Ed25519): pass the gpuemu.key written by `gpuemu "
                                      "keygen`");
  auto pub = load_public_key(path);
  ASSERT_FALSE(pub);
  EXPECT_EQ(pub.error().message, "public key file '" + path.string() +
                                     "' is not a PEM public key (expected '-----BEGIN PUBLIC KEY-----', "
                                     "Ed25519): pass the gpuemu.pub written by `gpuemu keygen`");
  auto missing = load_public_key(dir.path() / "absent.pub");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::io);
}

TEST(Keys, NonEd25519KeysAreNamed) {
  ScratchDir dir;
  auto made = testing::run_command(
      "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.key 2>/dev/null && "
      "openssl pkey -in ec.key -pubout -out ec.pub",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto priv = load_private_key(dir.path() / "ec.key", KeyAccess::any);
  ASSERT_FALSE(priv);
  EXPECT_EQ(priv.error().message,
            "key file '" + (dir.path() / "ec.key").string() +
                "' holds a EC key; gpuemu signs with Ed25519: make one with `gpuemu keygen`");
  EXPECT_FALSE(load_public_key(dir.path() / "ec.pub"));
}

TEST(Keys, EncryptedKeysAreRejectedWithoutPrompting) {
  ScratchDir dir;
  auto made = testing::run_command(
      "openssl genpkey -algorithm ED25519 -aes-128-cbc -pass pass:secret -out enc.key </dev/null",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto priv = load_private_key(dir.path() / "enc.key", KeyAccess::any);
  ASSERT_FALSE(priv);
  EXPECT_NE(priv.error().message.find("unencrypted PKCS#8 Ed25519"), std::string::npos);
}

}  // namespace
}  // namespace gpuemu::attest
