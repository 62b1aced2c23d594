// The NNG server over a real ipc socket: replies to pings from several client threads at once,
// answers garbage with error replies and keeps serving, and stops cleanly when asked.
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "daemon/client.hpp"
#include "daemon/server.hpp"

namespace gpuemu::daemon {
namespace {

namespace fs = std::filesystem;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = "ipc://" + (dir_ / "d.sock").string();
    auto state = DaemonState::open({dir_ / "d.sock", dir_ / "db" / "gpuemu.db", std::nullopt, {}});
    ASSERT_TRUE(state) << state.error().message;
    state_ = std::move(*state);
    auto server = Server::listen(*state_, {url_, 4, 0600});
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    server_->start();
  }
  void TearDown() override {
    if (state_) state_->stopping = true;
    if (server_) server_->join();
    server_.reset();
    state_.reset();
  }
  const gpuemu::testing::TempDir temp_{"gpuemu-server"};
  const fs::path dir_ = temp_.path();
  std::string url_;
  std::unique_ptr<DaemonState> state_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, SocketIsPrivate) {
  const auto perms = fs::status(dir_ / "d.sock").permissions();
  EXPECT_EQ(perms & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
}

TEST_F(ServerTest, ManyClientsAtOnce) {
  constexpr int kThreads = 8, kRequests = 40;
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto client = Client::connect(url_, 10000);
      if (!client) return;
      for (int i = 0; i < kRequests; ++i) {
        if (client->request({{"type", "ping"}})) ++answered;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(answered.load(), kThreads * kRequests);
}

TEST_F(ServerTest, GarbageGetsAnErrorReplyAndTheServerGoesOn) {
  auto client = Client::connect(url_, 10000);
  ASSERT_TRUE(client) << client.error().message;
  for (const std::string& garbage : {std::string(), std::string("hello"), std::string(5000, '\xff'),
                                     std::string("GEMU\x01\0\0\0\xff\xff\xff\x7f\0\0\0\0\0\0\0\0", 20)}) {
    const auto reply = client->exchange(garbage);
    ASSERT_TRUE(reply) << reply.error().message;
    const auto decoded = decode_message(std::as_bytes(std::span(reply->data(), reply->size())));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->header["error"]["kind"], "bad_message");
  }
  const auto pong = client->request({{"type", "ping"}});
  ASSERT_TRUE(pong) << pong.error().message;
  EXPECT_GE(pong->header["served"].get<int>(), 4);
}

TEST_F(ServerTest, ErrorRepliesBecomeErrorsNamingTheProblem) {
  auto client = Client::connect(url_, 10000);
  ASSERT_TRUE(client);
  const auto reply = client->request({{"type", "get_result"}, {"seed", 42}});
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, ErrorKind::usage);
  EXPECT_NE(reply.error().message.find("decimal string"), std::string::npos) << reply.error().message;
}

TEST(ClientTest, NoDaemonIsAClearError) {
  const auto client = Client::connect("ipc:///tmp/gpuemu-no-such-daemon.sock", 1000);
  ASSERT_FALSE(client);
  EXPECT_NE(client.error().message.find("gpuemu daemon start"), std::string::npos);
}

}  // namespace
}  // namespace gpuemu::daemon
