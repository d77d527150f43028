#include "kernels/model/quantize_model.h"

#include <cctype>
#include <filesystem>

#include "kernels/model/gguf_model.h"
#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"
#include "kernels/model/model.h"

namespace layerproof::kernels::model {
namespace {

constexpr uint64_t kMaxTokenizerFileBytes = 256ull << 20;

// Copies dir/name to out_dir/name unless an identical copy is there.
// Returns whether it copied.
StatusOr<bool> CopyTokenizerFile(const std::string& dir,
                                 const std::string& out_dir,
                                 const std::string& name) {
  const std::string from = internal::JoinPath(dir, name);
  if (!internal::IsRegularFile(from)) return false;
  LP_ASSIGN_OR_RETURN(std::string text,
                      internal::ReadSmallFile(from, kMaxTokenizerFileBytes));
  const std::string to = internal::JoinPath(out_dir, name);
  if (internal::IsRegularFile(to)) {
    LP_ASSIGN_OR_RETURN(std::string there,
                        internal::ReadSmallFile(to, kMaxTokenizerFileBytes));
    if (there == text) return false;
    return internal::FailedPreconditionError(
        to + ": already exists and differs from " + from +
        "; write the GGUF into another directory");
  }
  LP_RETURN_IF_ERROR(internal::WriteFileAtomically(to, text));
  return true;
}

}  // namespace

std::optional<DType> QuantTypeFromName(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (DType t : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    std::string n(DTypeName(t));
    for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (n == lower) return t;
  }
  return std::nullopt;
}

StatusOr<QuantizeResult> QuantizeModelDir(
    const std::string& model_dir, DType type, const std::string& out_path,
    std::optional<GgufTokenizerKeys> tokenizer) {
  namespace fs = std::filesystem;
  if (!IsBlockQuantized(type)) {
    return InvalidArgument(std::string("type: ") +
                           std::string(DTypeName(type)) + ", want one of " +
                           kQuantTypeNames);
  }
  const fs::path out(out_path);
  if (out.extension() != ".gguf") {
    return InvalidArgument(out_path + ": the output must end in .gguf");
  }
  LoadOptions load;
  load.write_digest_cache = false;  // the source directory is not ours
  LP_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                      Model::Load(model_dir, load));
  if (!model->source().empty() && model->source() != model->dir()) {
    return InvalidArgument(model_dir +
                           ": already a GGUF file; quantize the Hugging "
                           "Face model it came from");
  }
  GgufExportOptions options;
  options.name = fs::path(model_dir).lexically_normal().filename().string();
  if (options.name.empty() || options.name == ".") options.name = "model";
  options.tokenizer = std::move(tokenizer);
  LP_RETURN_IF_ERROR(WriteGgufModel(*model, type, out_path, options));

  QuantizeResult result;
  result.tensors = int64_t(model->tensors().size());
  std::error_code ec;
  result.bytes = uint64_t(fs::file_size(out, ec));
  const std::string out_dir =
      out.parent_path().empty() ? "." : out.parent_path().string();
  for (const char* name : kTokenizerFiles) {
    LP_ASSIGN_OR_RETURN(const bool copied,
                        CopyTokenizerFile(model->dir(), out_dir, name));
    if (copied) result.copied.push_back(name);
  }
  return result;
}

}  // namespace layerproof::kernels::model
