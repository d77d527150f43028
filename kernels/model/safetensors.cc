#include "kernels/model/safetensors.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"
#include "kernels/model/json_fields.h"
#include "kernels/printable.h"

namespace layerproof::kernels::model {
namespace {

using internal::DescribeJson;
using internal::GotWant;
using internal::Json;

// Dtypes of the safetensors spec that this project does not compute in.
constexpr std::string_view kOtherSpecDtypes[] = {
    "BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "F8_E8M0",
    "I16",  "U16", "I32", "U32",     "I64",     "U64",
    "F64",  "C64", "F4",  "F6_E2M3", "F6_E3M2"};

constexpr char kWantEntry[] =
    "an object {\"dtype\", \"shape\", \"data_offsets\"}";

std::string RangeText(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

StatusOr<DType> ParseDtype(const Json& v, const std::string& where) {
  if (!v.is_string()) {
    return InvalidArgument(GotWant(where, DescribeJson(v), "a string"));
  }
  const std::string s = v.get<std::string>();
  if (s == "F32") return DType::kF32;
  if (s == "BF16") return DType::kBF16;
  if (s == "F16") return DType::kF16;
  for (std::string_view other : kOtherSpecDtypes) {
    if (s == other) {
      return internal::UnimplementedError(
          GotWant(where, DescribeJson(v),
                  "BF16, F16 or F32 (dtype " + s + " is not supported)"));
    }
  }
  return InvalidArgument(
      GotWant(where, DescribeJson(v), "a safetensors dtype (BF16, F16, F32)"));
}

// A list of non-negative integers.
StatusOr<std::vector<uint64_t>> ParseCounts(const Json& v,
                                            const std::string& where,
                                            std::string_view want) {
  std::vector<uint64_t> out;
  if (!v.is_array())
    return InvalidArgument(GotWant(where, DescribeJson(v), want));
  for (const Json& e : v) {
    const std::optional<int64_t> n = internal::JsonInt(e);
    if (!n || *n < 0) {
      return InvalidArgument(GotWant(where, DescribeJson(v), want));
    }
    out.push_back(uint64_t(*n));
  }
  return out;
}

// One tensor entry; fills `out` (data and bytes relative to `data`) and its
// byte range within the data section.
Status ParseEntry(const std::string& file, const std::string& name,
                  const Json& entry, const unsigned char* data,
                  uint64_t data_size, TensorView* out) {
  const std::string where = file + ": " + name;
  if (name.empty()) {
    return InvalidArgument(file + ": a tensor has an empty name");
  }
  if (!entry.is_object()) {
    return InvalidArgument(GotWant(where, DescribeJson(entry), kWantEntry));
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) {
      return InvalidArgument(where + ": " + key + ": missing, want " +
                             kWantEntry);
    }
  }
  LP_ASSIGN_OR_RETURN(out->dtype,
                      ParseDtype(entry["dtype"], where + ": dtype"));
  LP_ASSIGN_OR_RETURN(std::vector<uint64_t> dims,
                      ParseCounts(entry["shape"], where + ": shape",
                                  "a list of non-negative integers"));
  uint64_t bytes = uint64_t(DTypeSize(out->dtype));
  for (uint64_t d : dims) {
    if (d != 0 && bytes > UINT64_MAX / d) {
      return InvalidArgument(GotWant(where + ": shape",
                                     DescribeJson(entry["shape"]),
                                     "a tensor size that fits in 64 bits"));
    }
    bytes *= d;
  }
  LP_ASSIGN_OR_RETURN(
      std::vector<uint64_t> offsets,
      ParseCounts(entry["data_offsets"], where + ": data_offsets",
                  "[begin, end], two non-negative integers"));
  const std::string offsets_where = where + ": data_offsets";
  const std::string got_offsets = DescribeJson(entry["data_offsets"]);
  if (offsets.size() != 2) {
    return InvalidArgument(GotWant(offsets_where, got_offsets,
                                   "[begin, end], two non-negative integers"));
  }
  const uint64_t begin = offsets[0], end = offsets[1];
  if (begin > end) {
    return InvalidArgument(GotWant(offsets_where, got_offsets, "begin <= end"));
  }
  if (end > data_size) {
    return InvalidArgument(
        GotWant(offsets_where, got_offsets,
                "end <= " + std::to_string(data_size) +
                    ", the data section's size (offsets past EOF)"));
  }
  if (end - begin != bytes) {
    return InvalidArgument(
        GotWant(offsets_where, got_offsets,
                "end - begin = " + std::to_string(bytes) + " (shape " +
                    DescribeJson(entry["shape"]) + " of " +
                    std::string(DTypeName(out->dtype)) + ")"));
  }
  out->name = name;
  out->shape.assign(dims.begin(), dims.end());
  out->data = data + begin;
  out->bytes = bytes;
  out->file = file;
  return OkStatus();
}

Status ParseMetadata(const std::string& file, const Json& v,
                     std::map<std::string, std::string>* metadata) {
  const std::string where = file + ": __metadata__";
  if (!v.is_object()) {
    return InvalidArgument(
        GotWant(where, DescribeJson(v), "an object of string values"));
  }
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) {
      return InvalidArgument(
          GotWant(where + ": " + key, DescribeJson(value), "a string"));
    }
    (*metadata)[key] = value.get<std::string>();
  }
  return OkStatus();
}

// Every tensor's bytes must be its own: sort the non-empty ranges by start
// and compare each with the furthest end seen so far. Gaps are allowed.
Status CheckNoOverlap(const std::string& file,
                      const std::map<std::string, TensorView>& tensors,
                      const unsigned char* data) {
  struct Range {
    uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Range> ranges;
  for (const auto& [name, t] : tensors) {
    if (t.bytes == 0) continue;
    const uint64_t begin = uint64_t(t.data - data);
    ranges.push_back({begin, begin + t.bytes, &name});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1, widest = 0; i < ranges.size(); ++i) {
    const Range& prev = ranges[widest];
    const Range& cur = ranges[i];
    if (cur.begin < prev.end) {
      return InvalidArgument(file + ": tensors " + *prev.name + " and " +
                             *cur.name + " overlap: data_offsets " +
                             RangeText(prev.begin, prev.end) + " and " +
                             RangeText(cur.begin, cur.end));
    }
    if (cur.end > prev.end) widest = i;
  }
  return OkStatus();
}

Status TooShort(const std::string& file, uint64_t size) {
  return InvalidArgument(file + ": file is " + std::to_string(size) +
                         " bytes, shorter than the 8-byte header length "
                         "(truncated file?)");
}

// Validates a whole file image.
Status ParseImage(const unsigned char* bytes, uint64_t size,
                  const std::string& file,
                  std::map<std::string, TensorView>* tensors,
                  std::map<std::string, std::string>* metadata) {
  if (size < 8) return TooShort(file, size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  if (n > kMaxSafetensorsHeaderBytes) {
    return InvalidArgument(
        GotWant(file + ": header length", std::to_string(n),
                "<= " + std::to_string(kMaxSafetensorsHeaderBytes) +
                    " (huge header length)"));
  }
  if (n > size - 8) {
    return InvalidArgument(
        GotWant(file + ": header length", std::to_string(n),
                "<= " + std::to_string(size - 8) +
                    ", the bytes after it (truncated file?)"));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes + 8),
                              size_t(n));
  LP_ASSIGN_OR_RETURN(Json header,
                      internal::ParseJson(text, file + ": header"));
  if (!header.is_object()) {
    return InvalidArgument(
        GotWant(file + ": header", DescribeJson(header), "a JSON object"));
  }
  const unsigned char* data = bytes + 8 + n;
  const uint64_t data_size = size - 8 - n;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      LP_RETURN_IF_ERROR(ParseMetadata(file, entry, metadata));
      continue;
    }
    TensorView t;
    LP_RETURN_IF_ERROR(ParseEntry(file, name, entry, data, data_size, &t));
    (*tensors)[name] = std::move(t);
  }
  return CheckNoOverlap(file, *tensors, data);
}

}  // namespace

StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(
    const std::string& path) {
  LP_ASSIGN_OR_RETURN(internal::MappedFile map,
                      internal::MappedFile::Open(path));
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  f->map_ = std::make_unique<const internal::MappedFile>(std::move(map));
  LP_RETURN_IF_ERROR(PrintableStatus(ParseImage(
      f->map_->data(), f->map_->size(), path, &f->tensors_, &f->metadata_)));
  return f;
}

StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::FromBytes(
    const unsigned char* bytes, uint64_t size, const std::string& name) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = name;
  LP_RETURN_IF_ERROR(PrintableStatus(
      ParseImage(bytes, size, name, &f->tensors_, &f->metadata_)));
  return f;
}

SafetensorsFile::~SafetensorsFile() = default;

}  // namespace layerproof::kernels::model
