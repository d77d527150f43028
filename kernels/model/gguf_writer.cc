#include "kernels/model/gguf_writer.h"

#include <cstring>
#include <set>
#include <utility>

#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"

namespace layerproof::kernels::model {
namespace {

using internal::FailedPreconditionError;

constexpr char kAlignmentKey[] = "general.alignment";

void PutLe(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(char(uint8_t(v >> (8 * i))));
}

void PutString(std::string* out, std::string_view s) {
  PutLe(out, s.size(), 8);
  out->append(s.data(), s.size());
}

template <typename T>
std::string ScalarPayload(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  std::string out;
  PutLe(&out, bits, int(sizeof(T)));
  return out;
}

// An array's payload: element type, count, elements (fixed-size).
template <typename T>
std::string ArrayPayload(GgufValueType elem, const std::vector<T>& v) {
  std::string out;
  PutLe(&out, uint32_t(elem), 4);
  PutLe(&out, v.size(), 8);
  for (const T& e : v) out += ScalarPayload(e);
  return out;
}

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {}

// An unfinished file_ removes its temporary file.
GgufWriter::~GgufWriter() = default;

void GgufWriter::Set(const std::string& key, GgufValueType type,
                     std::string payload) {
  if (!path_.empty()) {
    misuse_ = "metadata " + key + " set after Begin";
    return;
  }
  if (key == kAlignmentKey) {
    misuse_ = std::string(kAlignmentKey) +
              " is the writer's own key: pass the alignment to the "
              "constructor";
    return;
  }
  std::string value;
  PutLe(&value, uint32_t(type), 4);
  value += payload;
  const auto it = kv_index_.find(key);
  if (it != kv_index_.end()) {
    kvs_[it->second].second = std::move(value);
    return;
  }
  kv_index_[key] = kvs_.size();
  kvs_.emplace_back(key, std::move(value));
}

void GgufWriter::SetUint8(const std::string& k, uint8_t v) {
  Set(k, GgufValueType::kUint8, ScalarPayload(v));
}
void GgufWriter::SetInt8(const std::string& k, int8_t v) {
  Set(k, GgufValueType::kInt8, ScalarPayload(v));
}
void GgufWriter::SetUint16(const std::string& k, uint16_t v) {
  Set(k, GgufValueType::kUint16, ScalarPayload(v));
}
void GgufWriter::SetInt16(const std::string& k, int16_t v) {
  Set(k, GgufValueType::kInt16, ScalarPayload(v));
}
void GgufWriter::SetUint32(const std::string& k, uint32_t v) {
  Set(k, GgufValueType::kUint32, ScalarPayload(v));
}
void GgufWriter::SetInt32(const std::string& k, int32_t v) {
  Set(k, GgufValueType::kInt32, ScalarPayload(v));
}
void GgufWriter::SetUint64(const std::string& k, uint64_t v) {
  Set(k, GgufValueType::kUint64, ScalarPayload(v));
}
void GgufWriter::SetInt64(const std::string& k, int64_t v) {
  Set(k, GgufValueType::kInt64, ScalarPayload(v));
}
void GgufWriter::SetFloat32(const std::string& k, float v) {
  Set(k, GgufValueType::kFloat32, ScalarPayload(v));
}
void GgufWriter::SetFloat64(const std::string& k, double v) {
  Set(k, GgufValueType::kFloat64, ScalarPayload(v));
}
void GgufWriter::SetBool(const std::string& k, bool v) {
  Set(k, GgufValueType::kBool, std::string(1, v ? '\1' : '\0'));
}
void GgufWriter::SetString(const std::string& k, std::string_view v) {
  std::string payload;
  PutString(&payload, v);
  Set(k, GgufValueType::kString, std::move(payload));
}
void GgufWriter::SetStringArray(const std::string& k,
                                const std::vector<std::string>& v) {
  std::string payload;
  PutLe(&payload, uint32_t(GgufValueType::kString), 4);
  PutLe(&payload, v.size(), 8);
  for (const std::string& s : v) PutString(&payload, s);
  Set(k, GgufValueType::kArray, std::move(payload));
}
void GgufWriter::SetInt32Array(const std::string& k,
                               const std::vector<int32_t>& v) {
  Set(k, GgufValueType::kArray, ArrayPayload(GgufValueType::kInt32, v));
}
void GgufWriter::SetUint32Array(const std::string& k,
                                const std::vector<uint32_t>& v) {
  Set(k, GgufValueType::kArray, ArrayPayload(GgufValueType::kUint32, v));
}
void GgufWriter::SetFloat32Array(const std::string& k,
                                 const std::vector<float>& v) {
  Set(k, GgufValueType::kArray, ArrayPayload(GgufValueType::kFloat32, v));
}
void GgufWriter::SetEncoded(const std::string& k, GgufValueType type,
                            std::string payload) {
  Set(k, type, std::move(payload));
}

void GgufWriter::Declare(const std::string& name, DType dtype,
                         const std::vector<int64_t>& shape) {
  if (!path_.empty()) {
    misuse_ = "Declare(" + name + ") after Begin";
    return;
  }
  entries_.push_back({name, dtype, shape, 0});
}

uint64_t GgufWriter::TensorBytes(DType dtype,
                                 const std::vector<int64_t>& shape) {
  if (!IsKnownDType(dtype) || shape.empty() ||
      shape.size() > size_t(kMaxGgufDims)) {
    return 0;
  }
  const int64_t cols = shape.back();
  if (cols < 1 || cols % BlockElems(dtype) != 0) return 0;
  // Bytes = row bytes x rows, every factor >= 1, kept below 2^63.
  const uint64_t blocks = uint64_t(cols / BlockElems(dtype));
  const uint64_t block_bytes = uint64_t(BlockBytes(dtype));
  if (blocks > uint64_t(INT64_MAX) / block_bytes) return 0;
  uint64_t bytes = blocks * block_bytes;
  for (size_t i = 0; i + 1 < shape.size(); ++i) {
    if (shape[i] < 1 || bytes > uint64_t(INT64_MAX) / uint64_t(shape[i])) {
      return 0;
    }
    bytes *= uint64_t(shape[i]);
  }
  return bytes;
}

Status GgufWriter::Begin(const std::string& path) {
  if (!path_.empty()) {
    return FailedPreconditionError(path + ": Begin called twice");
  }
  if (!misuse_.empty()) return FailedPreconditionError(path + ": " + misuse_);
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0 ||
      alignment_ > kMaxGgufAlignment) {
    return InvalidArgument(
        path + ": alignment " + std::to_string(alignment_) +
        ": want a power of two <= " + std::to_string(kMaxGgufAlignment));
  }
  // The header, validated and laid out before the file is created.
  std::string header("GGUF", 4);
  PutLe(&header, 3, 4);
  PutLe(&header, entries_.size(), 8);
  PutLe(&header, kvs_.size() + 1, 8);
  const size_t metadata_start = header.size();
  PutString(&header, kAlignmentKey);
  PutLe(&header, uint32_t(GgufValueType::kUint32), 4);
  PutLe(&header, alignment_, 4);
  for (const auto& [key, value] : kvs_) {
    if (key.empty() || key.size() > kMaxGgufKeyBytes) {
      return InvalidArgument(path + ": metadata key \"" + key.substr(0, 64) +
                             "\": want 1 to " +
                             std::to_string(kMaxGgufKeyBytes) + " bytes");
    }
    PutString(&header, key);
    header += value;
  }
  if (header.size() - metadata_start > kMaxGgufMetadataBytes) {
    return InvalidArgument(path + ": metadata of " +
                           std::to_string(header.size() - metadata_start) +
                           " bytes exceeds the readers' limit");
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (Entry& e : entries_) {
    const std::string where = path + ": " + e.name;
    if (e.name.empty() || e.name.size() > kMaxGgufTensorNameBytes ||
        !names.insert(e.name).second) {
      return InvalidArgument(where +
                             ": tensor name empty, longer than 63 bytes or "
                             "declared twice");
    }
    e.bytes = TensorBytes(e.dtype, e.shape);
    if (e.bytes == 0) {
      return InvalidArgument(
          where +
          ": shape: want 1 to 4 dimensions, each >= 1, the last a "
          "multiple of " +
          std::to_string(BlockElems(e.dtype)) + " (the " +
          std::string(DTypeName(e.dtype)) +
          " block size), and a size that fits in 63 bits");
    }
    PutString(&header, e.name);
    PutLe(&header, e.shape.size(), 4);
    for (auto it = e.shape.rbegin(); it != e.shape.rend(); ++it) {
      PutLe(&header, uint64_t(*it), 8);
    }
    PutLe(&header, GgmlTypeOf(e.dtype), 4);
    PutLe(&header, offset, 8);
    const uint64_t padded =
        (e.bytes + alignment_ - 1) / alignment_ * alignment_;
    if (offset > uint64_t(INT64_MAX) - padded) {
      return InvalidArgument(where + ": the file would exceed 2^63 bytes");
    }
    offset += padded;
  }
  LP_ASSIGN_OR_RETURN(file_, internal::PartialFileWriter::Create(path));
  path_ = path;
  LP_RETURN_IF_ERROR(Write(header.data(), header.size(), "header"));
  return PadTo(alignment_);
}

Status GgufWriter::Write(const void* data, uint64_t bytes,
                         const std::string& what) {
  LP_RETURN_IF_ERROR(file_->Write(data, bytes, what));
  written_ += bytes;
  return OkStatus();
}

Status GgufWriter::PadTo(uint64_t alignment) {
  static const char kZeros[kMaxGgufAlignment] = {};
  const uint64_t pad = (alignment - written_ % alignment) % alignment;
  return Write(kZeros, pad, "padding");
}

Status GgufWriter::WriteTensorData(const void* data, uint64_t bytes) {
  if (file_ != nullptr && next_ < entries_.size()) {
    const Entry& e = entries_[next_];
    if (next_written_ != 0) {
      return FailedPreconditionError(path_ + ": " + e.name +
                                     ": WriteTensorData after AppendTensorData "
                                     "wrote " +
                                     std::to_string(next_written_) +
                                     " of its " + std::to_string(e.bytes) +
                                     " bytes");
    }
    if (bytes != e.bytes) {
      return InvalidArgument(path_ + ": " + e.name + ": got " +
                             std::to_string(bytes) + " bytes, want " +
                             std::to_string(e.bytes));
    }
  }
  return AppendTensorData(data, bytes);
}

Status GgufWriter::AppendTensorData(const void* data, uint64_t bytes) {
  if (!misuse_.empty()) return FailedPreconditionError(path_ + ": " + misuse_);
  if (file_ == nullptr) {
    return FailedPreconditionError(
        "GGUF tensor data written before Begin or after Finish");
  }
  if (next_ >= entries_.size()) {
    return FailedPreconditionError(path_ + ": tensor data: all " +
                                   std::to_string(entries_.size()) +
                                   " declared tensors are already written");
  }
  const Entry& e = entries_[next_];
  if (bytes > e.bytes - next_written_) {
    return InvalidArgument(
        path_ + ": " + e.name + ": got " + std::to_string(bytes) +
        " more bytes, want at most " + std::to_string(e.bytes - next_written_));
  }
  LP_RETURN_IF_ERROR(Write(data, bytes, e.name));
  next_written_ += bytes;
  if (next_written_ == e.bytes) {
    LP_RETURN_IF_ERROR(PadTo(alignment_));
    ++next_;
    next_written_ = 0;
  }
  return OkStatus();
}

Status GgufWriter::Finish() {
  if (!misuse_.empty()) return FailedPreconditionError(path_ + ": " + misuse_);
  if (file_ == nullptr) {
    return FailedPreconditionError("Finish before Begin or called twice");
  }
  if (next_ != entries_.size()) {
    return FailedPreconditionError(path_ + ": " + entries_[next_].name +
                                   ": declared but never fully written");
  }
  const std::unique_ptr<internal::PartialFileWriter> file = std::move(file_);
  return file->Commit();
}

}  // namespace layerproof::kernels::model
