#include "kernels/model/gguf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <set>
#include <utility>

#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"
#include "kernels/printable.h"

namespace layerproof::kernels::model {
namespace {

using internal::GotWant;

constexpr uint64_t kHeaderBytes = 24;  // magic, version, two counts
// The fewest bytes a KV or tensor info can take: an 8-byte length and a
// 1-byte key, a 4-byte type, a 1-byte value; an 8-byte length and a 1-byte
// name, n_dims, one dim, the type and the offset.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

uint64_t LoadLe(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool IsValueType(uint32_t t) { return t <= uint32_t(GgufValueType::kFloat64); }

// Bytes of a fixed-size value type; 0 for string and array.
uint64_t FixedSize(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

// The fewest bytes one value of type t takes.
uint64_t MinSize(GgufValueType t) {
  if (t == GgufValueType::kString) return 8;
  if (t == GgufValueType::kArray) return 12;
  return FixedSize(t);
}

bool IsInteger(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
      return true;
    default:
      return false;
  }
}

bool IsSigned(GgufValueType t) {
  return t == GgufValueType::kInt8 || t == GgufValueType::kInt16 ||
         t == GgufValueType::kInt32 || t == GgufValueType::kInt64;
}

// Bytes of the value of type t at p, walking nested arrays; nullopt when it
// would run past `end` (never for a validated file).
std::optional<uint64_t> Extent(GgufValueType t, const unsigned char* p,
                               const unsigned char* end) {
  const uint64_t avail = uint64_t(end - p);
  if (const uint64_t n = FixedSize(t); n != 0) {
    return n <= avail ? std::optional<uint64_t>(n) : std::nullopt;
  }
  if (t == GgufValueType::kString) {
    if (avail < 8) return std::nullopt;
    const uint64_t len = LoadLe(p, 8);
    if (len > avail - 8) return std::nullopt;
    return 8 + len;
  }
  if (avail < 12) return std::nullopt;
  const uint32_t et = uint32_t(LoadLe(p, 4));
  const uint64_t count = LoadLe(p + 4, 8);
  if (!IsValueType(et)) return std::nullopt;
  uint64_t used = 12;
  const GgufValueType elem = GgufValueType(et);
  if (const uint64_t n = FixedSize(elem); n != 0) {
    if (count > (avail - used) / n) return std::nullopt;
    return used + count * n;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const std::optional<uint64_t> e = Extent(elem, p + used, end);
    if (!e) return std::nullopt;
    used += *e;
  }
  return used;
}

// "uint32 7", "string \"llama\"", "array of 3 float32".
std::string Describe(const GgufValue& v) {
  const GgufValueType t = v.type();
  if (t == GgufValueType::kArray) {
    return "array of " + std::to_string(v.array_size()) + " " +
           GgufValueTypeName(v.array_type());
  }
  std::string s = GgufValueTypeName(t) + " ";
  if (t == GgufValueType::kString) {
    std::string_view text = *v.AsString();
    const bool cut = text.size() > 40;
    if (cut) text = text.substr(0, 40);
    return s + "\"" + std::string(text) + (cut ? "\"..." : "\"");
  }
  if (t == GgufValueType::kBool) return s + (*v.AsBool() ? "true" : "false");
  if (IsSigned(t)) return s + std::to_string(*v.AsInt());
  if (IsInteger(t)) return s + std::to_string(*v.AsUint());
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", *v.AsFloat());
  return s + buf;
}

Status TooShort(const std::string& file, uint64_t size) {
  return InvalidArgument(file + ": file is " + std::to_string(size) +
                         " bytes, shorter than the 24-byte GGUF header "
                         "(truncated file?)");
}

}  // namespace

std::string GgufValueTypeName(GgufValueType t) {
  static constexpr const char* kNames[] = {
      "uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const uint32_t n = uint32_t(t);
  if (n < std::size(kNames)) return kNames[n];
  return "type " + std::to_string(n);
}

std::string GgmlTypeName(uint32_t ggml_type) {
  // ggml.h's enum ggml_type; null where a number was retired.
  static constexpr const char* kNames[] = {
      "F32",   "F16",   "Q4_0",    "Q4_1",   nullptr,   nullptr, "Q5_0",
      "Q5_1",  "Q8_0",  "Q8_1",    "Q2_K",   "Q3_K",    "Q4_K",  "Q5_K",
      "Q6_K",  "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL",
      "IQ3_S", "IQ2_S", "IQ4_XS",  "I8",     "I16",     "I32",   "I64",
      "F64",   "IQ1_M", "BF16",    nullptr,  nullptr,   nullptr, "TQ1_0",
      "TQ2_0", nullptr, nullptr,   nullptr,  "MXFP4",   "NVFP4", "Q1_0"};
  const char* name =
      ggml_type < std::size(kNames) ? kNames[ggml_type] : nullptr;
  return std::string(name ? name : "unknown") + " (" +
         std::to_string(ggml_type) + ")";
}

// The ggml types this project computes in, and their DTypes.
constexpr struct {
  uint32_t ggml;
  DType dtype;
} kTypeMap[] = {{kGgmlTypeF32, DType::kF32},   {kGgmlTypeF16, DType::kF16},
                {kGgmlTypeBF16, DType::kBF16}, {kGgmlTypeQ8_0, DType::kQ8_0},
                {kGgmlTypeQ4_0, DType::kQ4_0}, {kGgmlTypeQ4_K, DType::kQ4_K},
                {kGgmlTypeQ6_K, DType::kQ6_K}};

std::optional<DType> DTypeFromGgmlType(uint32_t ggml_type) {
  for (const auto& m : kTypeMap) {
    if (m.ggml == ggml_type) return m.dtype;
  }
  return std::nullopt;
}

uint32_t GgmlTypeOf(DType t) {
  for (const auto& m : kTypeMap) {
    if (m.dtype == t) return m.ggml;
  }
  return kGgmlTypeF32;
}

// --- GgufValue -------------------------------------------------------------

std::optional<uint64_t> GgufValue::AsUint() const {
  if (!IsInteger(type_)) return std::nullopt;
  if (IsSigned(type_)) {
    const std::optional<int64_t> v = AsInt();
    if (!v || *v < 0) return std::nullopt;
    return uint64_t(*v);
  }
  return LoadLe(payload_, int(FixedSize(type_)));
}

std::optional<int64_t> GgufValue::AsInt() const {
  if (!IsInteger(type_)) return std::nullopt;
  const int n = int(FixedSize(type_));
  const uint64_t raw = LoadLe(payload_, n);
  if (!IsSigned(type_)) {
    if (raw > uint64_t(INT64_MAX)) return std::nullopt;
    return int64_t(raw);
  }
  // Sign-extend the n-byte two's complement value.
  const int shift = 64 - 8 * n;
  return int64_t(raw << shift) >> shift;
}

std::optional<double> GgufValue::AsFloat() const {
  if (type_ == GgufValueType::kFloat32) {
    return double(BitsToFloat(uint32_t(LoadLe(payload_, 4))));
  }
  if (type_ == GgufValueType::kFloat64) {
    const uint64_t bits = LoadLe(payload_, 8);
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  return std::nullopt;
}

std::optional<bool> GgufValue::AsBool() const {
  if (type_ != GgufValueType::kBool) return std::nullopt;
  return payload_[0] != 0;
}

std::optional<std::string_view> GgufValue::AsString() const {
  if (type_ != GgufValueType::kString) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(payload_),
                          size_t(payload_bytes_));
}

std::vector<GgufValue> GgufValue::Elements() const {
  std::vector<GgufValue> out;
  if (type_ != GgufValueType::kArray) return out;
  const unsigned char* p = payload_;
  const unsigned char* end = payload_ + payload_bytes_;
  out.reserve(size_t(count_));
  for (uint64_t i = 0; i < count_; ++i) {
    const std::optional<uint64_t> n = Extent(array_type_, p, end);
    if (!n) break;  // unreachable for a validated file
    GgufValue e;
    e.type_ = array_type_;
    if (array_type_ == GgufValueType::kString) {
      e.payload_ = p + 8;
      e.payload_bytes_ = *n - 8;
    } else if (array_type_ == GgufValueType::kArray) {
      e.array_type_ = GgufValueType(uint32_t(LoadLe(p, 4)));
      e.count_ = LoadLe(p + 4, 8);
      e.payload_ = p + 12;
      e.payload_bytes_ = *n - 12;
    } else {
      e.payload_ = p;
      e.payload_bytes_ = *n;
    }
    out.push_back(e);
    p += *n;
  }
  return out;
}

// --- Parsing ---------------------------------------------------------------

// Reads one file image into a GgufFile, checking as it goes.
class GgufParser {
 public:
  GgufParser(const unsigned char* bytes, uint64_t size, GgufFile* out)
      : b_(bytes), size_(size), out_(out), file_(out->path_) {}

  Status Parse() {
    out_->base_ = b_;
    LP_RETURN_IF_ERROR(ParseHeader());
    LP_RETURN_IF_ERROR(ParseMetadata());
    LP_RETURN_IF_ERROR(ParseAlignment());
    LP_RETURN_IF_ERROR(ParseTensorInfos());
    return PlaceTensors();
  }

 private:
  uint64_t Remaining() const { return size_ - pos_; }

  // Fails unless n more bytes follow the cursor.
  Status Need(uint64_t n, const std::string& what) const {
    if (n <= Remaining()) return OkStatus();
    return InvalidArgument(
        file_ + ": " + what + ": needs " + std::to_string(n) +
        " bytes at offset " + std::to_string(pos_) + ", the file has " +
        std::to_string(Remaining()) + " left (truncated file?)");
  }
  uint64_t Take(int n) {
    const uint64_t v = LoadLe(b_ + pos_, n);
    pos_ += uint64_t(n);
    return v;
  }

  // A u64 length and that many bytes, the length at most `max`.
  StatusOr<std::string_view> ReadString(const std::string& what, uint64_t max) {
    LP_RETURN_IF_ERROR(Need(8, what + ": length"));
    const uint64_t len = Take(8);
    if (len > max) {
      return InvalidArgument(GotWant(file_ + ": " + what + ": length",
                                     std::to_string(len),
                                     "<= " + std::to_string(max)));
    }
    LP_RETURN_IF_ERROR(Need(len, what));
    const std::string_view s(reinterpret_cast<const char*>(b_ + pos_),
                             size_t(len));
    pos_ += len;
    return s;
  }

  Status ParseHeader() {
    if (size_ < kHeaderBytes) return TooShort(file_, size_);
    if (std::memcmp(b_, "GGUF", 4) != 0) {
      return InvalidArgument(file_ +
                             ": magic: want \"GGUF\" (not a GGUF file)");
    }
    pos_ = 4;
    const uint32_t version = uint32_t(Take(4));
    if (version != 2 && version != 3) {
      std::string why = "3";
      if (version == 1) {
        why += " (GGUF v1, with 32-bit counts, is not supported)";
      } else if ((version & 0xFFFF) == 0) {
        why += " (a big-endian GGUF file? only little-endian is supported)";
      }
      return internal::UnimplementedError(
          GotWant(file_ + ": version", std::to_string(version), why));
    }
    out_->version_ = version;
    tensor_count_ = Take(8);
    kv_count_ = Take(8);
    if (tensor_count_ > kMaxGgufTensorCount ||
        tensor_count_ > Remaining() / kMinTensorInfoBytes) {
      return InvalidArgument(GotWant(
          file_ + ": tensor_count", std::to_string(tensor_count_),
          "<= " +
              std::to_string(std::min(kMaxGgufTensorCount,
                                      Remaining() / kMinTensorInfoBytes)) +
              " (each tensor info takes >= 33 bytes; the file has " +
              std::to_string(Remaining()) + " after the header)"));
    }
    if (kv_count_ > kMaxGgufKvCount || kv_count_ > Remaining() / kMinKvBytes) {
      return InvalidArgument(
          GotWant(file_ + ": metadata_kv_count", std::to_string(kv_count_),
                  "<= " +
                      std::to_string(std::min(kMaxGgufKvCount,
                                              Remaining() / kMinKvBytes)) +
                      " (each key/value takes >= 14 bytes; the file has " +
                      std::to_string(Remaining()) + " after the header)"));
    }
    return OkStatus();
  }

  // "<file>: <where>: got <got>, want <want>".
  Status Error(const std::string& where, const std::string& got,
               const std::string& want) const {
    return InvalidArgument(GotWant(file_ + ": " + where, got, want));
  }

  // One value of type t at the cursor; `where` (the key, and the index of
  // each array level) names it in errors.
  Status ReadValue(GgufValueType t, const std::string& where, int depth,
                   GgufValue* v) {
    v->type_ = t;
    if (const uint64_t n = FixedSize(t); n != 0) {
      LP_RETURN_IF_ERROR(Need(n, where));
      v->payload_ = b_ + pos_;
      v->payload_bytes_ = n;
      if (t == GgufValueType::kBool && b_[pos_] > 1) {
        return Error(where, std::to_string(b_[pos_]), "a bool, 0 or 1");
      }
      pos_ += n;
      return OkStatus();
    }
    if (t == GgufValueType::kString) {
      LP_ASSIGN_OR_RETURN(std::string_view s,
                          ReadString(where, kMaxGgufStringBytes));
      v->payload_ = reinterpret_cast<const unsigned char*>(s.data());
      v->payload_bytes_ = s.size();
      return OkStatus();
    }
    // An array: element type, count, elements.
    if (depth >= kMaxGgufArrayDepth) {
      return InvalidArgument(file_ + ": " + where +
                             ": arrays nested deeper than " +
                             std::to_string(kMaxGgufArrayDepth) + " levels");
    }
    LP_RETURN_IF_ERROR(Need(12, where + ": array header"));
    const uint32_t et = uint32_t(Take(4));
    if (!IsValueType(et)) {
      return Error(where + ": array element type", std::to_string(et),
                   "a GGUF value type in [0, 12]");
    }
    const GgufValueType elem = GgufValueType(et);
    const uint64_t count = Take(8);
    const uint64_t fit = Remaining() / MinSize(elem);
    if (count > kMaxGgufArrayLength || count > fit) {
      return Error(where + ": array length", std::to_string(count),
                   "<= " + std::to_string(std::min(kMaxGgufArrayLength, fit)) +
                       " (" + std::to_string(Remaining()) + " bytes left for " +
                       GgufValueTypeName(elem) + " elements)");
    }
    v->array_type_ = elem;
    v->count_ = count;
    v->payload_ = b_ + pos_;
    const uint64_t start = pos_;
    if (const uint64_t n = FixedSize(elem); n != 0) {
      if (elem == GgufValueType::kBool) {
        for (uint64_t i = 0; i < count; ++i) {
          if (b_[pos_ + i] > 1) {
            return Error(where + "[" + std::to_string(i) + "]",
                         std::to_string(b_[pos_ + i]), "a bool, 0 or 1");
          }
        }
      }
      pos_ += count * n;  // count <= fit: inside the file
    } else {
      for (uint64_t i = 0; i < count; ++i) {
        GgufValue e;
        LP_RETURN_IF_ERROR(ReadValue(
            elem, where + "[" + std::to_string(i) + "]", depth + 1, &e));
      }
    }
    v->payload_bytes_ = pos_ - start;
    return OkStatus();
  }

  Status ParseMetadata() {
    const uint64_t start = pos_;
    for (uint64_t i = 0; i < kv_count_; ++i) {
      const std::string what = "metadata key #" + std::to_string(i);
      LP_ASSIGN_OR_RETURN(std::string_view key,
                          ReadString(what, kMaxGgufKeyBytes));
      if (key.empty()) {
        return InvalidArgument(file_ + ": " + what + ": empty key");
      }
      const std::string k(key);
      if (out_->metadata_.count(k)) {
        return InvalidArgument(file_ + ": " + k + ": duplicate key");
      }
      LP_RETURN_IF_ERROR(Need(4, k + ": value type"));
      const uint32_t t = uint32_t(Take(4));
      if (!IsValueType(t)) {
        return Error(k + ": value type", std::to_string(t),
                     "a GGUF value type in [0, 12]");
      }
      GgufValue v;
      LP_RETURN_IF_ERROR(ReadValue(GgufValueType(t), k, 0, &v));
      if (pos_ - start > kMaxGgufMetadataBytes) {
        return InvalidArgument(file_ +
                               ": metadata: " + std::to_string(pos_ - start) +
                               " bytes by key " + k + ", over the limit of " +
                               std::to_string(kMaxGgufMetadataBytes));
      }
      out_->metadata_.emplace(k, v);
    }
    return OkStatus();
  }

  Status ParseAlignment() {
    const auto it = out_->metadata_.find("general.alignment");
    if (it == out_->metadata_.end()) return OkStatus();
    const GgufValue& v = it->second;
    const std::string where = file_ + ": general.alignment";
    if (v.type() != GgufValueType::kUint32) {
      return InvalidArgument(GotWant(where, Describe(v), "a uint32"));
    }
    const uint64_t a = *v.AsUint();
    if (a == 0 || (a & (a - 1)) != 0 || a > kMaxGgufAlignment) {
      return InvalidArgument(
          GotWant(where, std::to_string(a),
                  "a power of two <= " + std::to_string(kMaxGgufAlignment)));
    }
    out_->alignment_ = uint32_t(a);
    return OkStatus();
  }

  Status ParseTensorInfos() {
    if (tensor_count_ > Remaining() / kMinTensorInfoBytes) {
      return InvalidArgument(
          GotWant(file_ + ": tensor_count", std::to_string(tensor_count_),
                  "<= " + std::to_string(Remaining() / kMinTensorInfoBytes) +
                      " (each tensor info takes >= 33 bytes; " +
                      std::to_string(Remaining()) + " follow the metadata)"));
    }
    out_->tensor_infos_.reserve(size_t(tensor_count_));
    std::set<std::string_view> names;
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      const std::string what = "tensor info #" + std::to_string(i);
      LP_ASSIGN_OR_RETURN(std::string_view name,
                          ReadString(what + ": name", kMaxGgufTensorNameBytes));
      if (name.empty()) {
        return InvalidArgument(file_ + ": " + what + ": empty name");
      }
      const std::string where = file_ + ": tensor " + std::string(name);
      if (!names.insert(name).second) {
        return InvalidArgument(where + ": duplicate tensor name");
      }
      GgufTensorInfo t;
      t.name = std::string(name);
      const std::string rel = "tensor " + t.name;
      LP_RETURN_IF_ERROR(Need(4, rel + ": n_dims"));
      const uint32_t n_dims = uint32_t(Take(4));
      if (n_dims < 1 || n_dims > uint32_t(kMaxGgufDims)) {
        return InvalidArgument(GotWant(where + ": n_dims",
                                       std::to_string(n_dims),
                                       "1 to " + std::to_string(kMaxGgufDims)));
      }
      LP_RETURN_IF_ERROR(Need(8ull * n_dims + 12, rel + ": ne, type, offset"));
      uint64_t elements = 1;
      for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t ne = Take(8);
        const std::string field = where + ": ne[" + std::to_string(d) + "]";
        if (ne < 1 || ne > uint64_t(INT64_MAX)) {
          return InvalidArgument(
              GotWant(field, std::to_string(ne), "an integer in [1, 2^63)"));
        }
        if (elements > uint64_t(INT64_MAX) / ne) {
          return InvalidArgument(
              GotWant(field, std::to_string(ne),
                      "an element count (product of ne) that fits in 63 bits"));
        }
        elements *= ne;
        t.ne.push_back(int64_t(ne));
      }
      t.ggml_type = uint32_t(Take(4));
      t.offset = Take(8);
      LP_RETURN_IF_ERROR(CheckType(t, where, elements));
      out_->tensor_infos_.push_back(std::move(t));
    }
    return OkStatus();
  }

  // The type is one we compute in, ne[0] a whole number of blocks, and the
  // byte size fits; records it in bytes_.
  Status CheckType(const GgufTensorInfo& t, const std::string& where,
                   uint64_t elements) {
    const std::optional<DType> dtype = DTypeFromGgmlType(t.ggml_type);
    if (!dtype) {
      const std::string want = "F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K";
      const std::string got = GgmlTypeName(t.ggml_type);
      if (got.rfind("unknown", 0) == 0) {
        return InvalidArgument(
            GotWant(where + ": type", got, "a ggml type: " + want));
      }
      return internal::UnimplementedError(GotWant(
          where + ": type", got, want + " (this type is not supported)"));
    }
    const uint64_t block = uint64_t(BlockElems(*dtype));
    if (uint64_t(t.ne[0]) % block != 0) {
      return InvalidArgument(
          GotWant(where + ": ne[0]", std::to_string(t.ne[0]),
                  "a multiple of " + std::to_string(block) + ", the " +
                      std::string(DTypeName(*dtype)) + " block size"));
    }
    const uint64_t blocks = elements / block;
    const uint64_t block_bytes = uint64_t(BlockBytes(*dtype));
    if (blocks > UINT64_MAX / block_bytes) {
      return InvalidArgument(where + ": ne: the byte size overflows 64 bits");
    }
    dtypes_.push_back(*dtype);
    bytes_.push_back(blocks * block_bytes);
    return OkStatus();
  }

  Status PlaceTensors() {
    const uint64_t a = out_->alignment_;
    const uint64_t data = pos_ % a == 0 ? pos_ : pos_ + (a - pos_ % a);
    out_->data_offset_ = data;
    if (tensor_count_ > 0 && data > size_) {
      return InvalidArgument(
          file_ + ": data section: starts at " + std::to_string(data) +
          " (after the tensor infos, aligned to " + std::to_string(a) +
          "), past the end of the file (" + std::to_string(size_) +
          " bytes; truncated file?)");
    }
    const uint64_t data_size = data < size_ ? size_ - data : 0;
    struct Range {
      uint64_t begin, end;
      const std::string* name;
    };
    std::vector<Range> ranges;
    ranges.reserve(out_->tensor_infos_.size());
    for (size_t i = 0; i < out_->tensor_infos_.size(); ++i) {
      const GgufTensorInfo& t = out_->tensor_infos_[i];
      const std::string where = file_ + ": tensor " + t.name + ": offset";
      if (t.offset % a != 0) {
        return InvalidArgument(
            GotWant(where, std::to_string(t.offset),
                    "a multiple of the alignment " + std::to_string(a)));
      }
      const uint64_t bytes = bytes_[i];
      if (t.offset > data_size || bytes > data_size - t.offset) {
        return InvalidArgument(
            GotWant(where,
                    std::to_string(t.offset) + " with " +
                        std::to_string(bytes) + " bytes",
                    "the tensor inside the data section of " +
                        std::to_string(data_size) +
                        " bytes (offset past EOF or truncated file?)"));
      }
      ranges.push_back({t.offset, t.offset + bytes, &t.name});
      TensorView v;
      v.name = t.name;
      v.dtype = dtypes_[i];
      v.shape.assign(t.ne.rbegin(), t.ne.rend());
      v.data = b_ + data + t.offset;
      v.bytes = bytes;
      v.file = file_;
      out_->tensors_.emplace(t.name, std::move(v));
    }
    std::sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) {
      return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
    });
    for (size_t i = 1, widest = 0; i < ranges.size(); ++i) {
      const Range& prev = ranges[widest];
      const Range& cur = ranges[i];
      if (cur.begin < prev.end) {
        return InvalidArgument(
            file_ + ": tensors " + *prev.name + " and " + *cur.name +
            " overlap: bytes [" + std::to_string(prev.begin) + ", " +
            std::to_string(prev.end) + ") and [" + std::to_string(cur.begin) +
            ", " + std::to_string(cur.end) + ") of the data section");
      }
      if (cur.end > prev.end) widest = i;
    }
    return OkStatus();
  }

  const unsigned char* b_;
  uint64_t size_;
  GgufFile* out_;
  const std::string file_;
  uint64_t pos_ = 0;
  uint64_t tensor_count_ = 0, kv_count_ = 0;
  std::vector<DType> dtypes_;    // per tensor info
  std::vector<uint64_t> bytes_;  // per tensor info
};

// --- GgufFile --------------------------------------------------------------

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  LP_ASSIGN_OR_RETURN(internal::MappedFile map,
                      internal::MappedFile::Open(path));
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->map_ = std::make_unique<const internal::MappedFile>(std::move(map));
  GgufParser p(f->map_->data(), f->map_->size(), f.get());
  LP_RETURN_IF_ERROR(PrintableStatus(p.Parse()));
  return f;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::FromBytes(
    const unsigned char* bytes, uint64_t size, const std::string& name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = name;
  GgufParser p(bytes, size, f.get());
  LP_RETURN_IF_ERROR(PrintableStatus(p.Parse()));
  return f;
}

GgufFile::~GgufFile() = default;

StatusOr<const GgufValue*> GgufFile::Find(const std::string& key,
                                          std::string_view want) const {
  const auto it = metadata_.find(key);
  if (it == metadata_.end()) {
    return InvalidArgument(path_ + ": " + key + ": missing, want " +
                           std::string(want));
  }
  return &it->second;
}

StatusOr<std::string> GgufFile::GetString(const std::string& key) const {
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, "a string"));
  const std::optional<std::string_view> s = v->AsString();
  if (!s)
    return InvalidArgument(
        GotWant(path_ + ": " + key, Describe(*v), "a string"));
  return std::string(*s);
}

StatusOr<uint64_t> GgufFile::GetUint(const std::string& key, uint64_t min,
                                     uint64_t max) const {
  const std::string want = "an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "]";
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, want));
  const std::optional<uint64_t> u = v->AsUint();
  if (!u || *u < min || *u > max) {
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), want));
  }
  return *u;
}

StatusOr<int64_t> GgufFile::GetInt(const std::string& key) const {
  constexpr char kWant[] = "an integer that fits in int64";
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, kWant));
  const std::optional<int64_t> i = v->AsInt();
  if (!i)
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), kWant));
  return *i;
}

StatusOr<bool> GgufFile::GetBool(const std::string& key) const {
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, "a bool"));
  const std::optional<bool> b = v->AsBool();
  if (!b)
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), "a bool"));
  return *b;
}

StatusOr<double> GgufFile::GetFloat(const std::string& key) const {
  constexpr char kWant[] = "a float32 or float64";
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, kWant));
  const std::optional<double> d = v->AsFloat();
  if (!d)
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), kWant));
  return *d;
}

StatusOr<std::vector<std::string>> GgufFile::GetStringArray(
    const std::string& key) const {
  constexpr char kWant[] = "an array of string";
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, kWant));
  if (v->type() != GgufValueType::kArray ||
      v->array_type() != GgufValueType::kString) {
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), kWant));
  }
  std::vector<std::string> out;
  out.reserve(size_t(v->array_size()));
  for (const GgufValue& e : v->Elements()) out.emplace_back(*e.AsString());
  return out;
}

StatusOr<std::vector<double>> GgufFile::GetFloatArray(
    const std::string& key) const {
  constexpr char kWant[] = "an array of float32 or float64";
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, kWant));
  if (v->type() != GgufValueType::kArray ||
      (v->array_type() != GgufValueType::kFloat32 &&
       v->array_type() != GgufValueType::kFloat64)) {
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), kWant));
  }
  std::vector<double> out;
  out.reserve(size_t(v->array_size()));
  for (const GgufValue& e : v->Elements()) out.push_back(*e.AsFloat());
  return out;
}

StatusOr<std::vector<int64_t>> GgufFile::GetIntArray(
    const std::string& key) const {
  constexpr char kWant[] = "an array of integers that fit in int64";
  LP_ASSIGN_OR_RETURN(const GgufValue* v, Find(key, kWant));
  if (v->type() != GgufValueType::kArray || !IsInteger(v->array_type())) {
    return InvalidArgument(GotWant(path_ + ": " + key, Describe(*v), kWant));
  }
  std::vector<int64_t> out;
  out.reserve(size_t(v->array_size()));
  for (const GgufValue& e : v->Elements()) {
    const std::optional<int64_t> i = e.AsInt();
    if (!i) {
      return InvalidArgument(
          GotWant(path_ + ": " + key + "[" + std::to_string(out.size()) + "]",
                  Describe(e), kWant));
    }
    out.push_back(*i);
  }
  return out;
}

}  // namespace layerproof::kernels::model
