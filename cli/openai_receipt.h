// `layerproof verify-receipt` on what the OpenAI-compatible API returned: a
// saved response body (or the last chunk of its stream) carries a
// SavedReceipt in its `layerproof` object (openai/api_response.h). With the
// request body the client sent (--openai-request, plus --nonce for the
// X-LayerProof-Nonce header it sent and --model for a chat, whose prompt
// is the model's chat template), the GenerateRequest the receipt binds is
// derived again with the prover's own mapping (openai/api_request.h) and
// must be the same, so a prover cannot have run another prompt, other
// sampling or another seed than the ones asked for. With --model the stop
// strings are checked too (openai::CheckStopStrings): the output neither
// runs past one nor stops short of one.
#ifndef LAYERPROOF_CLI_OPENAI_RECEIPT_H_
#define LAYERPROOF_CLI_OPENAI_RECEIPT_H_

#include <string>

#include "absl/status/statusor.h"
#include "layerproof/v1/inference.pb.h"

namespace layerproof::cli {

// `text` (the file at `path`) as a SavedReceipt in the protobuf JSON
// mapping, or as an OpenAI API body with a layerproof.receipt.
// InvalidArgument naming the file when it is neither.
absl::StatusOr<v1::SavedReceipt> ParseSavedReceipt(const std::string& path,
                                                   const std::string& text);

// DataLoss naming the first field where the receipt's GenerateRequest
// differs from the one `request_body` maps to; InvalidArgument when the
// request body is malformed, or a chat comes without `model_dir`.
absl::Status CheckOpenAiRequest(const v1::SavedReceipt& saved,
                                const std::string& request_body,
                                const std::string& nonce_hex,
                                const std::string& model_dir);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_OPENAI_RECEIPT_H_
