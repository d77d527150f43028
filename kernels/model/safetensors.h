// Safetensors files: a strict, memory-mapped reader and a streaming writer.
//
// Format (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON {name: {dtype, shape, data_offsets}, and
// an optional "__metadata__": {str: str}}, then the data section. The reader
// checks everything before any byte is used: header length against the file
// size and a 100 MiB cap, the JSON, every field's type, known dtype, shape
// product times element size == end - begin, offsets inside the data
// section, and no two tensors overlapping. Every error names the file, the
// tensor and the field.
//
// Thread safety: a SafetensorsFile is immutable after Open and may be read
// from any number of threads; the mapping lives as long as the object.
#ifndef LAYERPROOF_KERNELS_MODEL_SAFETENSORS_H_
#define LAYERPROOF_KERNELS_MODEL_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

namespace internal {
class MappedFile;
class PartialFileWriter;
}  // namespace internal

// A tensor inside a mapped file. `data` points into the mapping.
struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const unsigned char* data = nullptr;
  uint64_t bytes = 0;
  std::string file;  // the file it lives in (for error messages)
};

// Largest header the reader accepts (HF's own limit is 100 MB).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

class SafetensorsFile {
 public:
  // Maps and validates `path`. Dtypes other than BF16, F16 and F32 are
  // refused (Unimplemented naming the tensor and dtype).
  static StatusOr<std::unique_ptr<SafetensorsFile>> Open(
      const std::string& path);

  // Validates an in-memory image (the fuzz and malformed-file tests use it);
  // `bytes` must outlive the object.
  static StatusOr<std::unique_ptr<SafetensorsFile>> FromBytes(
      const unsigned char* bytes, uint64_t size, const std::string& name);

  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // Sorted by name.
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const {
    return metadata_;
  }

 private:
  SafetensorsFile() = default;
  std::string path_;
  std::unique_ptr<const internal::MappedFile> map_;  // null for FromBytes
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Writes a safetensors file tensor by tensor, so a multi-GB model never
// needs to be in memory at once. Declare every tensor first (the header
// holds all offsets), then call WriteTensorData in declaration order.
// Tensors are laid out contiguously in declaration order; the header is
// padded with spaces to a multiple of 8 bytes, as Hugging Face's writer
// does. The bytes go to a temporary file beside the target, renamed over
// it by a successful Finish; a writer destroyed before a successful Finish
// removes that file and leaves the target as it was.
class SafetensorsWriter {
 public:
  SafetensorsWriter();
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  void Declare(const std::string& name, DType dtype,
               const std::vector<int64_t>& shape);
  void SetMetadata(const std::string& key, const std::string& value);
  // Creates the temporary file for `path` and writes the header. Fails on
  // I/O errors.
  Status Begin(const std::string& path);
  // Appends the next declared tensor's bytes; `bytes` must be exactly its
  // size. Fails out of order or with the wrong size.
  Status WriteTensorData(const void* data, uint64_t bytes);
  // Checks that every declared tensor was written, flushes, closes and
  // renames the file to `path`.
  Status Finish();

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t bytes;
  };
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
  // The file being written; null before Begin and after Finish.
  std::unique_ptr<internal::PartialFileWriter> file_;
  std::string path_;
  size_t next_ = 0;
  std::string misuse_;  // set by Declare / SetMetadata after Begin
};

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_SAFETENSORS_H_
