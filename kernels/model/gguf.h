// GGUF files: a strict, memory-mapped reader.
//
// Format (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md),
// little-endian: "GGUF", u32 version, u64 tensor_count, u64
// metadata_kv_count, the key/value pairs (string key, u32 value type,
// value), the tensor infos (string name, u32 n_dims, u64 ne[n_dims], u32
// ggml type, u64 offset), padding to general.alignment (default 32), then
// the data section. ne[0] is the innermost dimension (the row length).
//
// The reader checks everything before any byte is used: the magic, the
// version (3; 2 is accepted too, its little-endian layout being the same),
// every count and length against the bytes that remain (a count that would
// need more bytes than the file has is refused before anything is
// allocated) and against the caps below, every value type (nested arrays
// included), duplicate keys, general.alignment (a uint32 power of two),
// tensor names (unique, 1..63 bytes), 1 <= n_dims <= 4, every ne >= 1, the
// element count and byte size without overflow, ne[0] a multiple of the
// type's block size, offsets aligned and inside the data section, and no two
// tensors overlapping. Every error names the file and the key, tensor or
// field, e.g. "m.gguf: tensor blk.0.attn_q.weight: offset: got 7, want a
// multiple of the alignment 32". docs/model.md "GGUF files" lists the rules.
//
// Thread safety: a GgufFile is immutable after Open and may be read from
// any number of threads; the mapping (and every view into it) lives as long
// as the object.
#ifndef LAYERPROOF_KERNELS_MODEL_GGUF_H_
#define LAYERPROOF_KERNELS_MODEL_GGUF_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/model/safetensors.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

namespace internal {
class MappedFile;
}  // namespace internal

// Caps, far above every released model (a 262k-token vocabulary with its
// merges is ~10 MB of metadata), low enough that no hostile header makes the
// reader allocate much more than the file's own size.
inline constexpr uint64_t kMaxGgufMetadataBytes = 64ull << 20;  // all KVs
inline constexpr uint64_t kMaxGgufKvCount = 1ull << 20;
inline constexpr uint64_t kMaxGgufTensorCount = 1000000;
inline constexpr uint64_t kMaxGgufStringBytes = 16ull << 20;
inline constexpr uint64_t kMaxGgufArrayLength = 1ull << 24;
inline constexpr int kMaxGgufArrayDepth = 4;         // arrays of arrays of ...
inline constexpr uint64_t kMaxGgufKeyBytes = 65535;  // the spec's limit
inline constexpr uint64_t kMaxGgufTensorNameBytes = 63;  // GGML_MAX_NAME - 1
inline constexpr int kMaxGgufDims = 4;                   // GGML_MAX_DIMS
inline constexpr uint32_t kMaxGgufAlignment = 1u << 16;
inline constexpr uint32_t kGgufDefaultAlignment = 32;

// Metadata value types (gguf_metadata_value_type).
enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
// "uint8", ..., "float64"; "type N" for an unknown N.
std::string GgufValueTypeName(GgufValueType t);

// ggml tensor types this project computes in.
inline constexpr uint32_t kGgmlTypeF32 = 0;
inline constexpr uint32_t kGgmlTypeF16 = 1;
inline constexpr uint32_t kGgmlTypeQ4_0 = 2;
inline constexpr uint32_t kGgmlTypeQ8_0 = 8;
inline constexpr uint32_t kGgmlTypeQ4_K = 12;
inline constexpr uint32_t kGgmlTypeQ6_K = 14;
inline constexpr uint32_t kGgmlTypeBF16 = 30;

// The ggml type's name and number, e.g. "Q5_K (13)"; "unknown (57)".
std::string GgmlTypeName(uint32_t ggml_type);
// F32, F16, Q4_0, Q8_0, Q4_K, Q6_K and BF16; nullopt for any other type.
std::optional<DType> DTypeFromGgmlType(uint32_t ggml_type);
// The inverse, for every DType.
uint32_t GgmlTypeOf(DType t);

// One metadata value: a view into the file (valid while the GgufFile
// lives). Copyable; every accessor is O(1) except Elements.
class GgufValue {
 public:
  GgufValueType type() const { return type_; }
  // Arrays only: the element type and the number of elements.
  GgufValueType array_type() const { return array_type_; }
  uint64_t array_size() const { return count_; }

  // A scalar of any integer type whose value is >= 0 / fits in int64_t.
  std::optional<uint64_t> AsUint() const;
  std::optional<int64_t> AsInt() const;
  // float32 (widened exactly) or float64.
  std::optional<double> AsFloat() const;
  std::optional<bool> AsBool() const;
  std::optional<std::string_view> AsString() const;
  // An array's elements in order (views, like this one); empty otherwise.
  std::vector<GgufValue> Elements() const;

 private:
  friend class GgufParser;
  GgufValueType type_ = GgufValueType::kUint8;
  GgufValueType array_type_ = GgufValueType::kUint8;
  uint64_t count_ = 0;
  const unsigned char* payload_ = nullptr;  // the value / first element
  uint64_t payload_bytes_ = 0;              // string or array bytes
};

// A tensor as the file describes it, in file order.
struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;
  std::vector<int64_t> ne;  // ne[0] first: the row length
  uint64_t offset = 0;      // relative to the data section
};

class GgufFile {
 public:
  // Maps and validates `path`.
  static StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Validates an in-memory image (the malformed-file tests use it);
  // `bytes` must outlive the object.
  static StatusOr<std::unique_ptr<GgufFile>> FromBytes(
      const unsigned char* bytes, uint64_t size, const std::string& name);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  // Absolute offset of the data section in the file.
  uint64_t data_offset() const { return data_offset_; }
  // The start of the file image: TensorView::data - base() is a tensor's
  // absolute offset.
  const unsigned char* base() const { return base_; }

  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  // Tensor infos in file order, and the tensors as views sorted by name:
  // dtype from the ggml type, shape in Hugging Face order (ne reversed:
  // [ne1, ne0] for a matrix, [ne0] for a vector), data into the mapping.
  const std::vector<GgufTensorInfo>& tensor_infos() const {
    return tensor_infos_;
  }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }

  // Typed metadata getters. Each fails with InvalidArgument naming the file
  // and the key when the key is missing or has another type:
  // "m.gguf: llama.block_count: got string, want an unsigned integer".
  bool Has(const std::string& key) const { return metadata_.count(key) != 0; }
  StatusOr<std::string> GetString(const std::string& key) const;
  // Any integer type; the value must lie in [min, max].
  StatusOr<uint64_t> GetUint(const std::string& key, uint64_t min = 0,
                             uint64_t max = UINT64_MAX) const;
  StatusOr<int64_t> GetInt(const std::string& key) const;
  StatusOr<bool> GetBool(const std::string& key) const;
  // float32 or float64.
  StatusOr<double> GetFloat(const std::string& key) const;
  StatusOr<std::vector<std::string>> GetStringArray(
      const std::string& key) const;
  // Arrays of float32 or float64.
  StatusOr<std::vector<double>> GetFloatArray(const std::string& key) const;
  // Arrays of any integer type whose every element fits in int64_t.
  StatusOr<std::vector<int64_t>> GetIntArray(const std::string& key) const;

 private:
  friend class GgufParser;
  GgufFile() = default;
  StatusOr<const GgufValue*> Find(const std::string& key,
                                  std::string_view want) const;
  std::string path_;
  std::unique_ptr<const internal::MappedFile> map_;  // null for FromBytes
  const unsigned char* base_ = nullptr;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensorInfo> tensor_infos_;
  std::map<std::string, TensorView> tensors_;
};

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_GGUF_H_
