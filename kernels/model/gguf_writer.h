// GgufWriter: writes a GGUF v3 file tensor by tensor, so a multi-GB model
// never needs to be in memory at once.
//
// Set the metadata and declare every tensor first (the header holds all
// offsets), then Begin, then write each tensor's bytes in declaration order
// (in one WriteTensorData call or in pieces with AppendTensorData), then
// Finish. The writer always writes general.alignment (uint32) first, then
// the other keys in the order they were first set (setting a key again
// replaces its value in place); each tensor starts at a multiple of the
// alignment, and is followed by zero padding to the next one, as ggml
// writes it. The bytes go to a temporary file beside the target, renamed
// over it by a successful Finish; a writer destroyed before a successful
// Finish removes that file and leaves the target as it was. Shapes are
// given in Hugging Face order ([rows, cols]) and written reversed
// (ne[0] = cols), as GgufFile reads them back.
//
// Thread safety: none; one thread drives a writer.
#ifndef LAYERPROOF_KERNELS_MODEL_GGUF_WRITER_H_
#define LAYERPROOF_KERNELS_MODEL_GGUF_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/model/gguf.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

namespace internal {
class PartialFileWriter;
}  // namespace internal

class GgufWriter {
 public:
  // `alignment`: a power of two in [1, kMaxGgufAlignment] (Begin checks).
  explicit GgufWriter(uint32_t alignment = kGgufDefaultAlignment);
  ~GgufWriter();
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // Metadata, before Begin. "general.alignment" is the writer's own key.
  void SetUint8(const std::string& key, uint8_t v);
  void SetInt8(const std::string& key, int8_t v);
  void SetUint16(const std::string& key, uint16_t v);
  void SetInt16(const std::string& key, int16_t v);
  void SetUint32(const std::string& key, uint32_t v);
  void SetInt32(const std::string& key, int32_t v);
  void SetUint64(const std::string& key, uint64_t v);
  void SetInt64(const std::string& key, int64_t v);
  void SetFloat32(const std::string& key, float v);
  void SetFloat64(const std::string& key, double v);
  void SetBool(const std::string& key, bool v);
  void SetString(const std::string& key, std::string_view v);
  void SetStringArray(const std::string& key,
                      const std::vector<std::string>& v);
  void SetInt32Array(const std::string& key, const std::vector<int32_t>& v);
  void SetUint32Array(const std::string& key, const std::vector<uint32_t>& v);
  void SetFloat32Array(const std::string& key, const std::vector<float>& v);
  // Any value already encoded as GGUF bytes (type, then payload), for
  // types the setters do not cover (nested arrays); the caller vouches for
  // the encoding, which Begin does not parse.
  void SetEncoded(const std::string& key, GgufValueType type,
                  std::string payload);

  // A tensor of `dtype` and `shape` (Hugging Face order, 1 to 4 dims, each
  // >= 1, the last a multiple of BlockElems(dtype)). Begin checks.
  void Declare(const std::string& name, DType dtype,
               const std::vector<int64_t>& shape);

  // Creates the temporary file for `path` and writes the header, metadata
  // and tensor infos. Fails on a bad declaration or metadata key, or on I/O
  // errors.
  Status Begin(const std::string& path);
  // The next declared tensor's bytes: exactly its size, in one call.
  Status WriteTensorData(const void* data, uint64_t bytes);
  // Part of the current tensor's bytes; the next tensor begins once the
  // current one is complete. Fails when `bytes` runs past its end.
  Status AppendTensorData(const void* data, uint64_t bytes);
  // Checks that every declared tensor was written, flushes, closes and
  // renames the file to `path`.
  Status Finish();

  // Bytes of a declared tensor's data (0 when its shape is invalid).
  static uint64_t TensorBytes(DType dtype, const std::vector<int64_t>& shape);

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t bytes = 0;
  };
  void Set(const std::string& key, GgufValueType type, std::string payload);
  Status Write(const void* data, uint64_t bytes, const std::string& what);
  Status PadTo(uint64_t alignment);

  uint32_t alignment_;
  std::vector<std::pair<std::string, std::string>> kvs_;  // key, type+value
  std::map<std::string, size_t> kv_index_;
  std::vector<Entry> entries_;
  // The file being written; null before Begin and after Finish.
  std::unique_ptr<internal::PartialFileWriter> file_;
  std::string path_;
  uint64_t written_ = 0;       // bytes of the file so far
  size_t next_ = 0;            // the tensor being written
  uint64_t next_written_ = 0;  // its bytes so far
  std::string misuse_;         // set by a setter or Declare after Begin
};

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_GGUF_WRITER_H_
