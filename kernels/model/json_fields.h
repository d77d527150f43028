// Strict JSON for every JSON file LayerProof reads (model files, and the
// nodes' role and registry files): parsing that never throws out of this
// module and refuses duplicate keys, and typed field access whose errors
// name the file and the field, e.g. "config.json: hidden_size: got "4096",
// want an integer in [1, 65536]".
//
// A JSON null counts as absent for the Optional* readers, as Hugging Face
// configs write null for unset fields. Thread safety: FieldReader reads a
// const object; distinct readers are independent. The names live in
// model::internal: they are the model loader's helpers, shared as they are
// with rpc/'s role files.
#ifndef LAYERPROOF_KERNELS_MODEL_JSON_FIELDS_H_
#define LAYERPROOF_KERNELS_MODEL_JSON_FIELDS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/status.h"

namespace layerproof::kernels::model::internal {

using Json = nlohmann::json;

// Parses `text`. On failure the error is "<where>: bad JSON: <the parser's
// message with its line and column>"; a key repeated within one object is
// also an error, since readers disagree on which copy wins.
StatusOr<Json> ParseJson(std::string_view text, std::string_view where);

// A short rendering of `v` for error messages: strings quoted, long values
// cut to about 60 characters.
std::string DescribeJson(const Json& v);

// The integer value of `v` when it is a JSON integer that fits int64_t.
std::optional<int64_t> JsonInt(const Json& v);

// Typed access to the fields of one JSON object. `where` prefixes every
// message ("config.json" or "config.json: rope_scaling").
class FieldReader {
 public:
  // `object` must be a JSON object and outlive the reader.
  FieldReader(const Json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  // The field, or nullptr when absent or null.
  const Json* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // True when the key is there at all, null included.
  bool Contains(std::string_view key) const {
    return object_.find(key) != object_.end();
  }
  // "<where>: <key>" for messages.
  std::string Where(std::string_view key) const;

  // Integers in [lo, hi].
  StatusOr<int64_t> RequiredInt(std::string_view key, int64_t lo,
                                int64_t hi) const;
  StatusOr<std::optional<int64_t>> OptionalInt(std::string_view key, int64_t lo,
                                               int64_t hi) const;
  // Finite numbers (integer or floating) in the open interval (lo, hi).
  StatusOr<std::optional<double>> OptionalNumber(std::string_view key,
                                                 double lo, double hi) const;
  StatusOr<std::optional<bool>> OptionalBool(std::string_view key) const;
  StatusOr<std::optional<std::string>> OptionalString(
      std::string_view key) const;

  // A RequiredInt-style error for a value already read.
  Status Error(std::string_view key, const Json& got,
               std::string_view want) const;

 private:
  const Json& object_;
  std::string where_;
};

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_JSON_FIELDS_H_
