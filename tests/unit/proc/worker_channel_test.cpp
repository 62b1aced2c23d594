// Tests for WorkerChannel (proc/worker_channel.hpp) against real child processes that write frame
// bytes by hand: a well-formed reply, and prefixes whose lengths must be refused before any read.
#include "proc/worker_channel.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpuemu::proc {
namespace {

using namespace std::chrono_literals;

// A child that writes one frame prefix (header and payload lengths as given) and `body`, then waits.
std::unique_ptr<WorkerChannel> worker_writing(std::uint64_t header_bytes, std::uint64_t payload_bytes,
                                              const std::string& body) {
  const std::string code = fmt::format(
      "import struct, sys, time\n"
      "sys.stdout.buffer.write(b'GEMU' + struct.pack('<IIQ', 1, {}, {}) + b'{}')\n"
      "sys.stdout.flush()\n"
      "time.sleep(30)\n",
      header_bytes, payload_bytes, body);
  SpawnSpec spec;
  spec.argv = {"python3", "-c", code};
  auto channel = WorkerChannel::start(spec, 4096, "worker test_op");
  EXPECT_TRUE(channel) << channel.error().message;
  return channel ? std::move(*channel) : nullptr;
}

TEST(WorkerChannel, ReadsAWholeFrame) {
  auto channel = worker_writing(17, 3, "{\"type\": \"ready\"}abc");
  ASSERT_TRUE(channel);
  wire::IncomingFrame reply;
  ASSERT_EQ(channel->exchange(nullptr, reply, WorkerChannel::Clock::now() + 20s, 1 << 20),
            WorkerChannel::Status::ok)
      << channel->error();
  EXPECT_EQ(reply.header["type"], "ready");
  EXPECT_EQ(reply.payload->size(), 3u);
}

TEST(WorkerChannel, APayloadLengthOverTheCapIsAnOverflow) {
  auto channel = worker_writing(2, (1 << 20) + 1, "{}");
  ASSERT_TRUE(channel);
  wire::IncomingFrame reply;
  EXPECT_EQ(channel->exchange(nullptr, reply, WorkerChannel::Clock::now() + 20s, 1 << 20),
            WorkerChannel::Status::overflow);
}

// Header 2 + payload 2^64 - 1 wrapped around to 1 byte, passed the cap, and the payload buffer
// was then resized to 2^64 - 1 bytes: std::length_error out of the runner.
TEST(WorkerChannel, APayloadLengthThatWrapsTheSumIsAnOverflow) {
  auto channel = worker_writing(2, UINT64_MAX, "{}");
  ASSERT_TRUE(channel);
  wire::IncomingFrame reply;
  EXPECT_EQ(channel->exchange(nullptr, reply, WorkerChannel::Clock::now() + 20s, 1 << 20),
            WorkerChannel::Status::overflow);
}

}  // namespace
}  // namespace gpuemu::proc
