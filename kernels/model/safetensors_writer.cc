// SafetensorsWriter: the header first, then each tensor's bytes as the
// caller produces them.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"
#include "kernels/model/safetensors.h"

namespace layerproof::kernels::model {
namespace {

using internal::FailedPreconditionError;

}  // namespace

SafetensorsWriter::SafetensorsWriter() = default;
// An unfinished file_ removes its temporary file.
SafetensorsWriter::~SafetensorsWriter() = default;

void SafetensorsWriter::Declare(const std::string& name, DType dtype,
                                const std::vector<int64_t>& shape) {
  if (file_ != nullptr || !path_.empty()) {
    misuse_ = "Declare(" + name + ") after Begin";
    return;
  }
  // Negative dims and overflow are reported by Begin.
  entries_.push_back({name, dtype, shape, 0});
}

void SafetensorsWriter::SetMetadata(const std::string& key,
                                    const std::string& value) {
  if (file_ != nullptr || !path_.empty()) {
    misuse_ = "SetMetadata(" + key + ") after Begin";
    return;
  }
  metadata_[key] = value;
}

Status SafetensorsWriter::Begin(const std::string& path) {
  if (file_ != nullptr || !path_.empty()) {
    return FailedPreconditionError(path + ": Begin called twice");
  }
  // Validate and lay out every tensor before creating the file.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (Entry& e : entries_) {
    const std::string where = path + ": " + e.name;
    if (e.name.empty() || e.name == "__metadata__" ||
        !names.insert(e.name).second) {
      return InvalidArgument(where +
                             ": tensor name empty, reserved or "
                             "declared twice");
    }
    uint64_t bytes = uint64_t(DTypeSize(e.dtype));
    for (int64_t d : e.shape) {
      if (d < 0 || (d != 0 && bytes > UINT64_MAX / uint64_t(d))) {
        return InvalidArgument(where +
                               ": shape: a dimension is negative or "
                               "the size overflows");
      }
      bytes *= uint64_t(d);
    }
    if (offset > UINT64_MAX - bytes) {
      return InvalidArgument(where + ": the file would exceed 2^64 bytes");
    }
    e.bytes = bytes;
    nlohmann::ordered_json t;
    t["dtype"] = std::string(DTypeName(e.dtype));
    t["shape"] = e.shape;
    t["data_offsets"] = {offset, offset + bytes};
    header[e.name] = t;
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > kMaxSafetensorsHeaderBytes) {
    return InvalidArgument(path + ": header of " + std::to_string(text.size()) +
                           " bytes exceeds the readers' limit");
  }
  unsigned char length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = uint8_t(uint64_t(text.size()) >> (8 * i));

  LP_ASSIGN_OR_RETURN(file_, internal::PartialFileWriter::Create(path));
  path_ = path;
  LP_RETURN_IF_ERROR(file_->Write(length, 8, "header"));
  return file_->Write(text.data(), text.size(), "header");
}

Status SafetensorsWriter::WriteTensorData(const void* data, uint64_t bytes) {
  if (!misuse_.empty()) return FailedPreconditionError(path_ + ": " + misuse_);
  if (file_ == nullptr) {
    return FailedPreconditionError(
        "WriteTensorData before Begin or after "
        "Finish");
  }
  if (next_ >= entries_.size()) {
    return FailedPreconditionError(path_ + ": WriteTensorData: all " +
                                   std::to_string(entries_.size()) +
                                   " declared tensors are already written");
  }
  const Entry& e = entries_[next_];
  if (bytes != e.bytes) {
    return InvalidArgument(path_ + ": " + e.name + ": got " +
                           std::to_string(bytes) + " bytes, want " +
                           std::to_string(e.bytes));
  }
  LP_RETURN_IF_ERROR(file_->Write(data, bytes, e.name));
  ++next_;
  return OkStatus();
}

Status SafetensorsWriter::Finish() {
  if (!misuse_.empty()) return FailedPreconditionError(path_ + ": " + misuse_);
  if (file_ == nullptr) {
    return FailedPreconditionError("Finish before Begin or called twice");
  }
  if (next_ != entries_.size()) {
    return FailedPreconditionError(path_ + ": " + entries_[next_].name +
                                   ": declared but never written");
  }
  const std::unique_ptr<internal::PartialFileWriter> file = std::move(file_);
  return file->Commit();
}

}  // namespace layerproof::kernels::model
