// Encoding and decoding warm-worker frames (frames.hpp, docs/worker-protocol.md).
#include "wire/frames.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <map>

namespace gpuemu::wire {

namespace {

using nlohmann::json;

// The bytes one message may name in segments, in total: as much as a socket message may carry.
constexpr std::uint64_t kMaxSegmentBytes = std::uint64_t{4} << 30;

void put_u32(std::byte* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
void put_u64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
std::uint64_t get_le(const std::byte* in, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return v;
}

Expected<std::vector<std::int64_t>> ints(const json& j, const char* key, const std::string& what) {
  if (!j.contains(key) || !j[key].is_array()) {
    return fail(ErrorKind::parse, fmt::format("{}: \"{}\" must be a list of integers", what, key));
  }
  std::vector<std::int64_t> out;
  for (const auto& v : j[key]) {
    if (!v.is_number_integer())
      return fail(ErrorKind::parse, fmt::format("{}: \"{}\" must hold integers", what, key));
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

// A tensor's copy of its bytes from a segment, and the segment's name, which the view carries
// (Storage::segment) so the tensor can be passed on to a worker by name instead of by value.
struct SegmentCopy {
  std::shared_ptr<const std::byte[]> bytes;
  std::string path;
};

// Hands the lent segments a message named back to the worker once their bytes are copied, also
// when decoding fails half-way: nothing of ours points into them any more.
struct ReleaseLent {
  SegmentUse use;
  SegmentReleases* releases;
  std::vector<std::string> paths;
  ~ReleaseLent() {
    if (use != SegmentUse::lend || releases == nullptr) return;
    for (auto& path : paths) {
      try {
        releases->add(std::move(path));
      } catch (...) {  // out of memory: the worker makes a new segment instead
      }
    }
  }
};

}  // namespace

std::array<std::byte, kFramePrefixSize> encode_frame_prefix(const FramePrefix& prefix) {
  std::array<std::byte, kFramePrefixSize> out{};
  std::memcpy(out.data(), kFrameMagic.data(), 4);
  put_u32(out.data() + 4, kFrameVersion);
  put_u32(out.data() + 8, prefix.header_bytes);
  put_u64(out.data() + 12, prefix.payload_bytes);
  return out;
}

Expected<FramePrefix> decode_frame_prefix(std::span<const std::byte, kFramePrefixSize> bytes,
                                          const std::string& what) {
  if (std::memcmp(bytes.data(), kFrameMagic.data(), 4) != 0) {
    std::string start;
    for (int i = 0; i < 4; ++i) {
      auto c = static_cast<unsigned char>(bytes[i]);
      start += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    }
    return fail(ErrorKind::parse, fmt::format("{} wrote '{}' where a frame should start (expected 'GEMU'); "
                                              "is something in the worker printing to its stdout?",
                                              what, start));
  }
  auto version = static_cast<std::uint32_t>(get_le(bytes.data() + 4, 4));
  if (version != kFrameVersion) {
    return fail(ErrorKind::parse, fmt::format("{} speaks worker protocol version {}, this gpuemu speaks {}: "
                                              "install the gpuemu Python package of the same release",
                                              what, version, kFrameVersion));
  }
  FramePrefix prefix;
  prefix.header_bytes = static_cast<std::uint32_t>(get_le(bytes.data() + 8, 4));
  prefix.payload_bytes = get_le(bytes.data() + 12, 8);
  if (prefix.header_bytes > kMaxFrameHeader) {
    return fail(ErrorKind::parse, fmt::format("{} sent a frame header of {} bytes (the limit is {})", what,
                                              prefix.header_bytes, kMaxFrameHeader));
  }
  return prefix;
}

std::size_t OutgoingFrame::size() const {
  std::size_t n = head.size();
  for (const auto& s : payload) n += s.size();
  return n;
}

OutgoingFrame encode_call_frame(const std::string& op, tensor::DType case_dtype, const Tensors& inputs,
                                const std::vector<std::string>& order, const json& kwargs,
                                const std::vector<std::string>* released, InputFiles input_files,
                                const SharedFile* output_file, std::optional<std::uint64_t> seed) {
  std::vector<const std::pair<const std::string, tensor::Tensor>*> items;
  for (const auto& name : order) {
    auto it = inputs.find(name);
    if (it != inputs.end() && std::find(items.begin(), items.end(), &*it) == items.end())
      items.push_back(&*it);
  }
  for (const auto& entry : inputs) {
    if (std::find(order.begin(), order.end(), entry.first) == order.end()) items.push_back(&entry);
  }
  OutgoingFrame frame;
  json tensors = json::array();
  std::uint64_t offset = 0;
  for (const auto* item : items) {
    const tensor::Tensor& t = item->second;
    json entry = {
        {"name", item->first},
        {"dtype", tensor::dtype_name(t.dtype)},
        {"shape", t.shape},
        {"strides", t.strides.size() == t.shape.size() ? t.strides : tensor::contiguous_strides(t.shape)},
        {"offset", offset},
        {"nbytes", t.data.size()}};
    const bool in_input_file = names_input_file(t.data.segment());
    if (in_input_file && input_files == InputFiles::name_file) {
      // In our own input file (docs/worker-protocol.md "Inputs in gpuemu's file"): the worker maps it.
      entry["file"] = std::string(t.data.segment());
      entry["offset"] = t.data.segment_offset();
    } else if (!t.data.segment().empty() && !in_input_file) {
      // Already in a shared-memory segment (a client's): the worker reads a copy of it from there.
      entry["segment"] = std::string(t.data.segment());
      entry["offset"] = t.data.segment_offset();
    } else {
      frame.payload.emplace_back(t.data);
      offset += t.data.size();
    }
    tensors.push_back(std::move(entry));
  }
  json header = {{"type", "call"},
                 {"op", op},
                 {"dtype", tensor::dtype_name(case_dtype)},
                 {"kwargs", kwargs.is_null() ? json::object() : kwargs},
                 {"tensors", std::move(tensors)}};
  if (seed) header["seed"] = std::to_string(*seed);  // a uint64 may not fit a JSON number's double
  if (released != nullptr) {
    header["segments"] = true;  // large outputs may come back in a lent shared-memory segment
    header["released"] = *released;
  }
  if (output_file != nullptr) {  // docs/worker-protocol.md "Outputs in gpuemu's file"
    header["output_file"] = output_file->path();
    header["output_file_bytes"] = output_file->size();
  }
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  auto prefix = encode_frame_prefix({static_cast<std::uint32_t>(text.size()), offset});
  frame.head.reserve(prefix.size() + text.size());
  frame.head.append(reinterpret_cast<const char*>(prefix.data()), prefix.size());
  frame.head += text;
  return frame;
}

Expected<Tensors> decode_tensor_entries(const json& header, const TensorSource& source,
                                        const std::string& what, std::string_view noun) {
  const json& list = header.contains("tensors") ? header["tensors"] : json::array();
  if (!list.is_array()) return fail(ErrorKind::parse, fmt::format("{}: \"tensors\" must be a list", what));
  Tensors tensors;
  std::map<std::string, OpenSegment> segments;  // each file opened once per message
  std::uint64_t copied = 0;                     // bytes read from segments so far, within kMaxSegmentBytes
  ReleaseLent release{source.segments, source.releases.get(), {}};
  for (const auto& entry : list) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
      return fail(ErrorKind::parse, fmt::format("{} sent a tensor entry without a \"name\"", what));
    }
    const std::string name = entry["name"].get<std::string>();
    const std::string tensor_what = fmt::format("{} '{}' of {}", noun, name, what);
    tensor::Tensor t;
    auto dtype = entry.contains("dtype") && entry["dtype"].is_string()
                     ? tensor::parse_dtype(entry["dtype"].get<std::string>())
                     : std::nullopt;
    if (!dtype)
      return fail(ErrorKind::parse, fmt::format("{} has a missing or unknown \"dtype\"", tensor_what));
    t.dtype = *dtype;
    t.shape = TRY(ints(entry, "shape", tensor_what));
    t.strides = entry.contains("strides") ? TRY(ints(entry, "strides", tensor_what))
                                          : tensor::contiguous_strides(t.shape);
    auto non_negative = [&](const char* key) {
      return entry.contains(key) && entry[key].is_number_integer() && entry[key].get<std::int64_t>() >= 0;
    };
    if (!non_negative("offset") || !non_negative("nbytes")) {
      return fail(ErrorKind::parse,
                  fmt::format("{} needs non-negative integer \"offset\" and \"nbytes\"", tensor_what));
    }
    auto offset = entry["offset"].get<std::uint64_t>();
    auto nbytes = entry["nbytes"].get<std::uint64_t>();
    std::span<const std::byte> bytes = source.payload;
    std::shared_ptr<const void> keeper = source.keeper;
    if (entry.contains("file")) {
      // In the output file this call offered: read in place (docs/worker-protocol.md "Outputs in
      // gpuemu's file"). The file is ours and sealed against shrinking, so the view cannot fault.
      const SharedFile* file = source.output_file.get();
      if (file == nullptr || !entry["file"].is_string() || entry["file"].get<std::string>() != file->path()) {
        return fail(ErrorKind::parse,
                    fmt::format("{} names file {}, which is not the output file its call offered",
                                tensor_what, entry["file"].dump()));
      }
      if (offset > file->size() || nbytes > file->size() - offset) {
        return fail(ErrorKind::parse,
                    fmt::format("{} lies outside its output file's {} bytes (offset {}, nbytes {})",
                                tensor_what, file->size(), offset, nbytes));
      }
      t.data = tensor::Storage::view(source.output_file,
                                     {file->data() + offset, static_cast<std::size_t>(nbytes)});
    } else if (entry.contains("segment")) {
      if (!entry["segment"].is_string()) {
        return fail(ErrorKind::parse, fmt::format("{}: \"segment\" must be a file path", tensor_what));
      }
      const std::string path = entry["segment"].get<std::string>();
      auto it = segments.find(path);
      if (it == segments.end()) {
        it = segments.emplace(path, TRY(OpenSegment::open(path, source.segments, tensor_what))).first;
        release.paths.push_back(path);
      }
      if (nbytes > kMaxSegmentBytes - copied) {
        return fail(ErrorKind::parse,
                    fmt::format("{}: the message's segments name more than {} bytes in total "
                                "(docs/protocol.md \"Limits\")",
                                tensor_what, kMaxSegmentBytes));
      }
      copied += nbytes;
      // A copy of exactly the bytes the entry names: the sender may shrink or refill its file at any
      // time, and the tensor must neither fault nor change under us (docs/protocol.md).
      auto copy =
          std::make_shared<SegmentCopy>(SegmentCopy{TRY(it->second.read(offset, nbytes, tensor_what)), path});
      // A lent segment is refilled once released (now), so only a borrowed one is named on.
      const bool named = source.segments == SegmentUse::borrow;
      t.data = tensor::Storage::view(copy, {copy->bytes.get(), static_cast<std::size_t>(nbytes)},
                                     named ? std::string_view(copy->path) : std::string_view(), offset);
    } else {
      if (offset > bytes.size() || nbytes > bytes.size() - offset) {
        return fail(ErrorKind::parse,
                    fmt::format("{} lies outside the frame's {} payload bytes (offset {}, nbytes {})",
                                tensor_what, bytes.size(), offset, nbytes));
      }
      t.data = tensor::Storage::view(keeper, bytes.subspan(offset, nbytes));
    }
    TRY(tensor::validate_view(t, tensor_what));
    if (tensors.contains(name)) return fail(ErrorKind::parse, fmt::format("{} appears twice", tensor_what));
    tensors.emplace(name, std::move(t));
  }
  return tensors;
}

Expected<Tensors> decode_result_frame(const IncomingFrame& frame, const std::string& what,
                                      std::shared_ptr<SegmentReleases> releases,
                                      std::shared_ptr<SharedFile> output_file) {
  const json& list = frame.header.contains("tensors") ? frame.header["tensors"] : json();
  if (!list.is_array() || list.empty()) {
    return fail(ErrorKind::parse, fmt::format("{} sent a result frame without tensors", what));
  }
  const SegmentUse segments = releases ? SegmentUse::lend : SegmentUse::refuse;
  return decode_tensor_entries(
      frame.header,
      TensorSource{*frame.payload, frame.payload, segments, std::move(releases), std::move(output_file)},
      what, "output");
}

}  // namespace gpuemu::wire
