// Tests for gpuemu's shared files (wire/shared_file.hpp) and warm workers that use them: the same input
// values reach the worker, an op's writes stay its own, a worker that cannot open a file gets the
// bytes, and outputs written into the offered file are read in place.
#include "wire/shared_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <gtest/gtest.h>

#include "platform/platform.hpp"
#include "platform/shared_memory_file.hpp"
#include "proc/warm_worker.hpp"
#include "proc_test_support.hpp"
#include "wire/frames.hpp"

namespace gpuemu::proc {
namespace {

using testing::callable;
using testing::vector_of;

tensor::NamedTensors two_inputs() {
  return {{"x", vector_of(tensor::DType::float32, {1, 2, 3})},
          {"y", vector_of(tensor::DType::float64, {4, 5})}};
}

TEST(InputArena, PlacesViewsOfTheSameBytesInAFileWorkersCanName) {
  wire::InputArena arena;
  ASSERT_TRUE(arena.enabled());
  const tensor::NamedTensors inputs = two_inputs();
  auto placed = arena.place(inputs);
  ASSERT_TRUE(placed.has_value());
  for (const auto& [name, t] : inputs) {
    const tensor::Tensor& view = placed->at(name);
    EXPECT_TRUE(view.data.is_view());
    EXPECT_TRUE(wire::names_input_file(view.data.segment())) << view.data.segment();
    EXPECT_EQ(view.data.segment_offset() % 64, 0u);
    EXPECT_EQ(view.shape, t.shape);
    EXPECT_EQ(view.strides, t.strides);
    EXPECT_EQ(view.to_doubles(), t.to_doubles());
  }
  EXPECT_NE(placed->at("x").data.segment_offset(), placed->at("y").data.segment_offset());
}

TEST(InputArena, ReusesItsFileOnlyWhenNoTensorViewsIt) {
  wire::InputArena arena;
  auto first = arena.place(two_inputs());
  ASSERT_TRUE(first.has_value());
  const std::string first_file(first->at("x").data.segment());
  // Still viewed: the next case gets another file and the first keeps its bytes.
  auto second = arena.place({{"x", vector_of(tensor::DType::float32, {7, 8, 9})}});
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(std::string(second->at("x").data.segment()), first_file);
  EXPECT_EQ(first->at("x").to_doubles(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(second->at("x").to_doubles(), (std::vector<double>{7, 8, 9}));
  // Once nothing views it, a file is refilled (its pages are already there).
  const std::string second_file(second->at("x").data.segment());
  first.reset();
  second.reset();
  auto third = arena.place({{"x", vector_of(tensor::DType::float32, {5})}});
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(std::string(third->at("x").data.segment()), second_file);
  EXPECT_EQ(third->at("x").to_doubles(), (std::vector<double>{5}));
}

// reserve(): room for tensors generated in place (OpSession's cases); the same rules as place().
TEST(InputArena, ReservesRoomWhoseBytesItsViewsShowAndKeepsAViewedFile) {
  wire::InputArena arena;
  auto room = arena.reserve({12, 0, 100});
  ASSERT_TRUE(room.has_value());
  ASSERT_EQ(room->size(), 3u);
  std::uint64_t last_offset = 0;
  for (std::size_t k = 0; k < room->size(); ++k) {
    const auto& [storage, bytes] = (*room)[k];
    EXPECT_TRUE(storage.is_view());
    EXPECT_TRUE(wire::names_input_file(storage.segment())) << storage.segment();
    EXPECT_EQ(storage.segment_offset() % 64, 0u);
    EXPECT_EQ(storage.data(), bytes);
    if (k > 0) {
      EXPECT_GE(storage.segment_offset(), last_offset);
    }
    last_offset = storage.segment_offset();
  }
  EXPECT_EQ((*room)[1].storage.size(), 0u);
  std::memset((*room)[2].bytes, 0x7F, 100);
  EXPECT_EQ(std::to_integer<int>((*room)[2].storage[99]), 0x7F);
  // A view still lives: the next reservation is in another file, and this one's bytes stay.
  const std::string first_file((*room)[0].storage.segment());
  auto next = arena.reserve({100});
  ASSERT_TRUE(next.has_value());
  EXPECT_NE(std::string((*next)[0].storage.segment()), first_file);
  std::memset((*next)[0].bytes, 0x01, 100);
  EXPECT_EQ(std::to_integer<int>((*room)[2].storage[0]), 0x7F);
}

TEST(InputArena, NoOneCanShrinkTheFileUnderTheMappings) {
  if (platform::implementations().shared_files != "memfd")
    GTEST_SKIP() << "the portable path's files cannot be sealed (docs/platforms.md)";
  wire::InputArena arena;
  auto placed = arena.place(two_inputs());
  ASSERT_TRUE(placed.has_value());
  const std::string path(placed->at("x").data.segment());
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // as a worker could, by the name it is given
  ASSERT_GE(fd, 0) << path;
  EXPECT_NE(::ftruncate(fd, 0), 0);
  EXPECT_EQ(errno, EPERM);
  ::close(fd);
  EXPECT_EQ(placed->at("x").to_doubles(), (std::vector<double>{1, 2, 3}));
}

TEST(InputArena, GrowsForALargerCase) {
  wire::InputArena arena;
  std::vector<double> big(600000, 1.5);  // 4.8 MB of float64, over the first file's 1 MiB
  auto small = arena.place(two_inputs());
  ASSERT_TRUE(small.has_value());
  small.reset();
  auto placed = arena.place({{"x", vector_of(tensor::DType::float64, big)}});
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->at("x").to_doubles(), big);
}

TEST(InputArena, OffWithTheEnvironmentSwitch) {
  ::setenv("GPUEMU_MAPPED_INPUTS", "0", 1);
  wire::InputArena arena;
  ::unsetenv("GPUEMU_MAPPED_INPUTS");
  EXPECT_FALSE(arena.enabled());
  EXPECT_FALSE(arena.place(two_inputs()).has_value());
}

TEST(InputFiles, ACallNamesTheFileOrCarriesTheBytes) {
  wire::InputArena arena;
  auto placed = arena.place(two_inputs());
  ASSERT_TRUE(placed.has_value());
  const std::vector<std::string> order = {"x", "y"};
  auto header_of = [](const wire::OutgoingFrame& f) {
    return nlohmann::json::parse(f.head.substr(wire::kFramePrefixSize));
  };
  const wire::OutgoingFrame named = wire::encode_call_frame("op", tensor::DType::float32, *placed, order, {},
                                                            nullptr, wire::InputFiles::name_file);
  EXPECT_TRUE(named.payload.empty());
  const auto entries = header_of(named)["tensors"];
  EXPECT_EQ(entries[0]["file"], std::string(placed->at("x").data.segment()));
  EXPECT_EQ(entries[1]["offset"], placed->at("y").data.segment_offset());
  EXPECT_FALSE(entries[0].contains("segment"));
  const wire::OutgoingFrame sent = wire::encode_call_frame("op", tensor::DType::float32, *placed, order, {},
                                                           nullptr, wire::InputFiles::send_bytes);
  ASSERT_EQ(sent.payload.size(), 2u);
  EXPECT_EQ(sent.payload[0].size(), 12u);
  const auto plain = header_of(sent)["tensors"];
  EXPECT_FALSE(plain[0].contains("file"));
  EXPECT_EQ(plain[1]["offset"], 12);
}

TEST(InputFiles, WorkerMapsTheFileAndItsWritesStayItsOwn) {
  wire::InputArena arena;
  // The reference's writes are its own and not checked (docs/worker-protocol.md, "Inputs the op writes
  // into").
  WarmWorkerRunner runner(callable("warm_mod", "scribble"), testing::settings("reference"));
  for (int i = 0; i < 3; ++i) {
    auto placed = arena.place({{"x", vector_of(tensor::DType::float32, {1.0 + i, 2, 3})}});
    ASSERT_TRUE(placed.has_value());
    const std::vector<std::string> order = {"x"};
    const nlohmann::json kwargs = nlohmann::json::object();
    RunOutcome out = runner.run(RunRequest{"testop", tensor::DType::float32, &*placed, &order, &kwargs});
    ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
    EXPECT_EQ(out.outputs.at("out").to_doubles(), (std::vector<double>{2.0 + 2 * i, 4, 6}));
    // The op wrote -99 into its (private) pages; the file, which the reference maps too, is unchanged.
    EXPECT_EQ(placed->at("x").to_doubles(), (std::vector<double>{1.0 + i, 2, 3}));
  }
  EXPECT_EQ(runner.workers_started(), 1);
}

TEST(InputFiles, AnOpThatWritesItsMappedInputFailsAsInputMutated) {
  wire::InputArena arena;
  WarmWorkerRunner runner(callable("warm_mod", "scribble"), testing::settings("op"));
  for (int i = 0; i < 2; ++i) {
    auto placed = arena.place({{"x", vector_of(tensor::DType::float32, {1.0 + i, 2, 3})}});
    ASSERT_TRUE(placed.has_value());
    const std::vector<std::string> order = {"x"};
    const nlohmann::json kwargs = nlohmann::json::object();
    RunOutcome out = runner.run(RunRequest{"testop", tensor::DType::float32, &*placed, &order, &kwargs});
    EXPECT_EQ(out.failure_kind, "input_mutated") << out.message << "\n" << out.stderr_tail;
    EXPECT_NE(out.message.find("op 'testop' wrote into its input 'x': 3 elements changed, the first at x[0]"),
              std::string::npos)
        << out.message;
    EXPECT_EQ(placed->at("x").to_doubles(), (std::vector<double>{1.0 + i, 2, 3}));
  }
  EXPECT_EQ(runner.workers_started(), 1);  // a judged call is no crash: the worker serves on
}

TEST(InputFiles, AWorkerThatCannotOpenTheFileGetsTheBytes) {
  // A view naming a descriptor no process has: the worker answers kind "input_file", and the runner
  // sends the same call with the bytes, then keeps doing so.
  const tensor::Tensor x = vector_of(tensor::DType::float32, {1, 2, 3});
  auto keeper = std::make_shared<std::vector<std::byte>>(x.data.begin(), x.data.end());
  // The portable path's: a name of ours whose file is gone (the temporary's is unlinked at once).
  const std::string missing = platform::implementations().shared_files == "memfd"
                                  ? "/proc/999999999/fd/3"
                                  : platform::SharedMemoryFile::create(1)->name();
  tensor::Tensor view = x;
  view.data = tensor::Storage::view(keeper, {keeper->data(), keeper->size()}, missing, 0);
  const tensor::NamedTensors inputs = {{"x", view}};
  const std::vector<std::string> order = {"x"};
  const nlohmann::json kwargs = nlohmann::json::object();
  WarmWorkerRunner runner(callable("warm_mod", "double"), testing::settings());
  for (int i = 0; i < 2; ++i) {
    RunOutcome out = runner.run(RunRequest{"testop", tensor::DType::float32, &inputs, &order, &kwargs});
    ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
    EXPECT_EQ(out.outputs.at("out").to_doubles(), (std::vector<double>{2, 4, 6}));
  }
  EXPECT_EQ(runner.workers_started(), 1);
}

// A file let go goes back to a pool and serves the next request it fits (from its size down to a
// quarter of it), pages and bytes as they were; a file still held, or one that does not fit, is not
// handed out.
TEST(SharedFilePool, AFileLetGoServesTheNextRequestItFits) {
  auto made = wire::SharedFile::reuse_or_create(40u << 20);
  ASSERT_TRUE(made) << made.error().message;
  std::shared_ptr<wire::SharedFile> first = std::move(*made);
  const wire::SharedFile* const first_file = first.get();
  EXPECT_GE(first->size(), 40u << 20);
  std::memset(first->data(), 0x5a, 64);
  auto while_held = wire::SharedFile::reuse_or_create(39u << 20);
  ASSERT_TRUE(while_held);
  EXPECT_NE(while_held->get(), first_file) << "a file someone holds is not handed out";
  while_held->reset();                                           // a 39 MiB file in the pool now
  first.reset();                                                 // and the 40 MiB one
  auto too_small = wire::SharedFile::reuse_or_create(9u << 20);  // both are over four times that
  ASSERT_TRUE(too_small);
  EXPECT_NE(too_small->get(), first_file);
  auto fits = wire::SharedFile::reuse_or_create((39u << 20) + 1);  // only the 40 MiB file is that large
  ASSERT_TRUE(fits);
  ASSERT_EQ(fits->get(), first_file);
  EXPECT_EQ((*fits)->data()[63], std::byte{0x5a});
}

TEST(OutputFiles, OffersAFileNoTensorViewsAndGrowsToWhatTheLastOutputsNeeded) {
  wire::OutputFiles files;
  std::shared_ptr<wire::SharedFile> first = files.offer();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(wire::names_input_file(first->path()));
  const wire::SharedFile* seen = first.get();
  first.reset();
  EXPECT_EQ(files.offer().get(), seen) << "nothing views it: the same file (its pages are there)";
  std::shared_ptr<wire::SharedFile> held = files.offer();
  EXPECT_NE(files.offer().get(), held.get()) << "an earlier case's outputs still view it";
  held.reset();
  files.needed(8u << 20);
  std::shared_ptr<wire::SharedFile> big = files.offer();
  ASSERT_NE(big, nullptr);
  EXPECT_GE(big->size(), 8u << 20);
}

wire::IncomingFrame result_naming(const std::string& file, std::uint64_t offset, std::uint64_t nbytes) {
  wire::IncomingFrame frame;
  frame.header = {{"type", "result"},
                  {"tensors",
                   {{{"name", "out"},
                     {"dtype", "float32"},
                     {"shape", {static_cast<std::int64_t>(nbytes / 4)}},
                     {"file", file},
                     {"offset", offset},
                     {"nbytes", nbytes}}}}};
  return frame;
}

TEST(OutputFiles, ResultEntriesInTheOfferedFileAreViewsOfIt) {
  wire::OutputFiles files;
  std::shared_ptr<wire::SharedFile> file = files.offer();
  ASSERT_NE(file, nullptr);
  const float values[3] = {1.5f, -2.0f, 3.25f};
  std::memcpy(file->data() + 64, values, sizeof values);
  auto outputs =
      wire::decode_result_frame(result_naming(file->path(), 64, 12), "reference m:f", nullptr, file);
  ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
  EXPECT_EQ(outputs->at("out").to_doubles(), (std::vector<double>{1.5, -2.0, 3.25}));
  EXPECT_EQ(std::as_const(*outputs).at("out").data.data(), file->data() + 64) << "read in place, not copied";
}

TEST(OutputFiles, ResultEntriesOutsideTheOfferedFileAreRefused) {
  wire::OutputFiles files;
  std::shared_ptr<wire::SharedFile> file = files.offer();
  ASSERT_NE(file, nullptr);
  auto other =
      wire::decode_result_frame(result_naming("/proc/1/fd/3", 0, 12), "reference m:f", nullptr, file);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().message,
            "output 'out' of reference m:f names file \"/proc/1/fd/3\", which is not the output file its "
            "call offered");
  auto none =
      wire::decode_result_frame(result_naming(file->path(), 0, 12), "reference m:f", nullptr, nullptr);
  EXPECT_FALSE(none.has_value());
  auto past = wire::decode_result_frame(result_naming(file->path(), file->size() - 8, 12), "reference m:f",
                                        nullptr, file);
  ASSERT_FALSE(past.has_value());
  EXPECT_NE(past.error().message.find("lies outside its output file"), std::string::npos)
      << past.error().message;
}

TEST(OutputFiles, AWorkerWritesLargeAndSmallOutputsIntoTheFile) {
  // Outputs of 8 MiB (over the first file's size: the first call uses the worker's own segment, the
  // next ones the grown file) and of 3 elements, many cases on one worker, always the right values.
  WarmWorkerRunner runner(callable("warm_mod", "double"), testing::settings());
  std::vector<double> big(1 << 20, 0.5);
  for (int i = 0; i < 4; ++i) {
    big[7] = i;
    testing::Case c = testing::case_x(
        vector_of(tensor::DType::float32, i % 2 == 0 ? big : std::vector<double>{1.0 * i, 2, 3}));
    RunOutcome out = runner.run(c.request());
    ASSERT_TRUE(out.ok()) << out.message << "\n" << out.stderr_tail;
    const std::vector<double> got = out.outputs.at("out").to_doubles();
    if (i % 2 == 0) {
      ASSERT_EQ(got.size(), big.size());
      EXPECT_EQ(got[7], 2.0 * i);
      EXPECT_EQ(got[8], 1.0);
    } else {
      EXPECT_EQ(got, (std::vector<double>{2.0 * i, 4, 6}));
    }
  }
  EXPECT_EQ(runner.workers_started(), 1);
}

}  // namespace
}  // namespace gpuemu::proc
