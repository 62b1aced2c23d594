// Inputs that warm workers map instead of reading from their pipe (docs/worker-protocol.md,
// "Inputs in gpuemu's file"): a memfd gpuemu owns, filled once per case and shared by op and reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::run {

// One anonymous shared-memory file (memfd_create), mapped read-write here. Workers open it by the
// name /proc/<our pid>/fd/<fd> and map it privately (copy-on-write), so an op that writes into its
// inputs changes neither the reference's nor ours. The file is sealed against shrinking
// (F_SEAL_SHRINK), so neither a worker's mapping nor ours can ever fault past its end.
class InputFile {
 public:
  static Expected<std::shared_ptr<InputFile>> create(std::uint64_t size);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  // What a worker opens: /proc/<pid>/fd/<fd>.
  const std::string& path() const { return path_; }
  std::byte* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  InputFile(int fd, std::byte* data, std::uint64_t size);
  int fd_ = -1;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::string path_;
};

// True when a storage's segment name is one of our input files (a tensor placed by InputArena),
// as opposed to a client's /dev/shm segment.
bool names_input_file(std::string_view segment);

// The input file of one OpSession: place() copies a case's inputs into it and returns views of them
// there, which encode_call_frame names instead of sending their bytes. The file is reused from case
// to case (its pages stay allocated) and replaced by a larger one when a case needs more, or by a
// new one while a tensor of an earlier case still views it. Used by one thread at a time.
class InputArena {
 public:
  // Off (every place() returns nothing) when GPUEMU_MAPPED_INPUTS is "0".
  InputArena();

  // Views of `inputs` in the file, in the same map; nothing when the file cannot be made (no
  // memfd_create, out of memory): the caller then sends the tensors themselves. Once that has
  // failed, place() does not try again.
  std::optional<tensor::NamedTensors> place(const tensor::NamedTensors& inputs);

  bool enabled() const { return enabled_; }

 private:
  bool enabled_ = true;
  std::shared_ptr<InputFile> file_;
};

}  // namespace gpuemu::run
