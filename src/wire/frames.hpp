// Warm-worker frames (docs/worker-protocol.md): a fixed 20-byte prefix, a JSON header and raw
// tensor bytes. Encoding a call and decoding a result frame; the I/O lives in worker_channel.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "wire/script_protocol.hpp"
#include "wire/segment.hpp"
#include "wire/shared_file.hpp"

namespace gpuemu::wire {

inline constexpr std::array<char, 4> kFrameMagic = {'G', 'E', 'M', 'U'};
inline constexpr std::uint32_t kFrameVersion = 1;
inline constexpr std::size_t kFramePrefixSize = 20;  // magic, u32 version, u32 header len, u64 payload len
inline constexpr std::uint32_t kMaxFrameHeader = 64u << 20;

struct FramePrefix {
  std::uint32_t header_bytes = 0;
  std::uint64_t payload_bytes = 0;
};

std::array<std::byte, kFramePrefixSize> encode_frame_prefix(const FramePrefix& prefix);
// Checks magic, version and the header bound; `what` names the sender in errors.
Expected<FramePrefix> decode_frame_prefix(std::span<const std::byte, kFramePrefixSize> bytes,
                                          const std::string& what);

// A frame ready to write: prefix + header bytes, then payload segments that point into the
// caller's tensors (not copied), in order.
struct OutgoingFrame {
  std::string head;  // prefix and JSON header
  std::vector<std::span<const std::byte>> payload;
  std::size_t size() const;
};

// A frame as read: its parsed header and its payload.
struct IncomingFrame {
  nlohmann::json header;
  std::shared_ptr<std::vector<std::byte>> payload = std::make_shared<std::vector<std::byte>>();
};

// What encode_call_frame does with an input that lies in one of our input files (shared_file.hpp).
enum class InputFiles {
  send_bytes,  // put its bytes in the payload (a worker that does not map input files)
  name_file,   // name the file ("file": path, "offset"): the worker maps it
};

// {"type": "call", "op", "dtype", "kwargs", "tensors": [{name, dtype, shape, strides, offset,
// nbytes}]} with the tensors' storage buffers as payload, inputs in `order` first.
// With `released`, the call says it accepts outputs in lent segments ("segments": true) and hands
// back the segments listed ("released").
// With `output_file`, the call offers it for the outputs ("output_file", "output_file_bytes").
// With `seed`, the call carries the case seed ("seed": a decimal string).
OutgoingFrame encode_call_frame(const std::string& op, tensor::DType case_dtype, const Tensors& inputs,
                                const std::vector<std::string>& order, const nlohmann::json& kwargs,
                                const std::vector<std::string>* released = nullptr,
                                InputFiles input_files = InputFiles::send_bytes,
                                const SharedFile* output_file = nullptr,
                                std::optional<std::uint64_t> seed = std::nullopt);

// Where decoded tensors' bytes come from. With a `keeper` (something that keeps `payload` alive)
// tensors are views into the payload, else copies. An entry with "segment": PATH indexes that
// shared-memory file instead of the payload, used as `segments` says (segment.hpp).
struct TensorSource {
  std::span<const std::byte> payload;
  std::shared_ptr<const void> keeper;
  SegmentUse segments = SegmentUse::refuse;
  std::shared_ptr<SegmentReleases> releases;  // for SegmentUse::lend: where a segment goes when unused
  // The output file the call offered: an entry with "file" (its path) is a view of its bytes here.
  std::shared_ptr<SharedFile> output_file;
};

// The tensors a frame header lists ({"name", "dtype", "shape", "strides", "offset", "nbytes"},
// optionally "segment"), validated like a script's output; errors name "<noun> 'NAME' of <what>".
// No "tensors" key means none. Also the daemon's messages (docs/protocol.md).
Expected<Tensors> decode_tensor_entries(const nlohmann::json& header, const TensorSource& source,
                                        const std::string& what, std::string_view noun);

// The tensors of a "result" frame, each validated like a script's output. Outputs the worker
// lent in segments are handed back through `releases` once unused; without it segments are refused.
// Outputs in `output_file` (the file the call offered) are views of it, not copies.
Expected<Tensors> decode_result_frame(const IncomingFrame& frame, const std::string& what,
                                      std::shared_ptr<SegmentReleases> releases = nullptr,
                                      std::shared_ptr<SharedFile> output_file = nullptr);

}  // namespace gpuemu::wire
