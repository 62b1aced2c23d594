// Shared-memory files gpuemu owns for its warm workers (docs/worker-protocol.md, "Inputs in gpuemu's
// file" and "Outputs in gpuemu's file"): inputs they map instead of reading a pipe, outputs they write.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "platform/shared_memory_file.hpp"
#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::wire {

// One shared-memory file (platform::SharedMemoryFile: a memfd on Linux), mapped read-write here.
// Workers open it by its name (/proc/<our pid>/fd/<fd> for a memfd): an input file they map privately
// (copy-on-write), so an op that writes into its inputs changes neither the reference's nor ours; an output
// file they map shared and write their outputs into, which we then read in place. A memfd is sealed against
// shrinking (F_SEAL_SHRINK), so neither a worker's mapping nor ours can ever fault past its end; a file of
// the portable path is not (docs/platforms.md).
class SharedFile {
 public:
  static Expected<std::shared_ptr<SharedFile>> create(std::uint64_t size);
  // A file of at least `size` bytes (at most four times that) that no one uses any more, else a new
  // one; either way it goes back to that pool when its last user lets it go. A run's ops come one
  // after another, each with input and output files of about the same sizes: a new file cost its
  // creation and every page allocated and zeroed again, in gpuemu and in the worker filling it. The
  // pool keeps at most 8 files and 128 MiB. Its bytes are whatever the last user left.
  // `most`, when given, is the largest pooled file taken instead of four times `size`.
  static Expected<std::shared_ptr<SharedFile>> reuse_or_create(std::uint64_t size, std::uint64_t most = 0);
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  ~SharedFile();

  // What a worker opens: /proc/<pid>/fd/<fd>, or the portable path's file.
  const std::string& path() const { return file_.name(); }
  std::byte* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  SharedFile(platform::SharedMemoryFile file, std::byte* data, std::uint64_t size);
  static Expected<SharedFile*> make(std::uint64_t size);
  platform::SharedMemoryFile file_;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

// True when a storage's segment name is one of our shared files (a tensor placed by InputArena),
// as opposed to a client's /dev/shm segment (platform::names_shared_memory_file).
bool names_input_file(std::string_view segment);

// The input file of one OpSession: place() copies a case's inputs into it and returns views of them
// there, which encode_call_frame names instead of sending their bytes. The file is reused from case
// to case (its pages stay allocated) and replaced by a larger one when a case needs more, or by a
// new one while a tensor of an earlier case still views it. Used by one thread at a time.
class InputArena {
 public:
  // Off (every place() returns nothing) when GPUEMU_MAPPED_INPUTS is "0".
  InputArena();

  // Views of `inputs` in the file, in the same map; nothing when the file cannot be made (out of
  // memory, no room in the portable path's directory): the caller then sends the tensors themselves. Once
  // that has failed, place() does not try again.
  std::optional<tensor::NamedTensors> place(const tensor::NamedTensors& inputs);
  // Room in the file for tensors of `sizes` bytes, in that order: for each, where to write it and
  // the storage that views it (what place() would give after copying). Nothing as for place().
  std::optional<std::vector<tensor::PlacedStorage>> reserve(const std::vector<std::size_t>& sizes);

  bool enabled() const { return enabled_; }

 private:
  // A file of at least `need` bytes that no tensor views (the current one, or a new one); false
  // when none can be made (off from then on).
  bool ready_for(std::uint64_t need);

  bool enabled_ = true;
  std::shared_ptr<SharedFile> file_;
};

// The output files of one warm runner: offer() returns a file of at least the bytes the worker's
// last outputs needed, which no tensor views any more. Two are kept, taken in turn while a case's
// outputs are judged as the next case's call runs (OpSession, cases started ahead); the worker keeps
// both mapped. Off, like InputArena, with GPUEMU_MAPPED_INPUTS=0 or when no file can be made.
class OutputFiles {
 public:
  OutputFiles();
  // Nothing when off or when no file can be made (the worker then lends its own segments).
  std::shared_ptr<SharedFile> offer();
  // The outputs of the last call took `bytes` (64-byte aligned each): the next offer holds them.
  void needed(std::uint64_t bytes) { want_ = std::max(want_, bytes); }

 private:
  bool enabled_ = true;
  std::uint64_t want_ = 0;
  std::array<std::shared_ptr<SharedFile>, 2> files_;
};

}  // namespace gpuemu::wire
