// The text side of one OpenAI-API request: the output ids decoded as the
// tokenizer decodes them (special tokens skipped), cut at the first `stop`
// string (which is not returned, as OpenAI's API does), and for a stream,
// the deltas that are safe to send: never text that a later token could
// still change (a trailing U+FFFD, the start of a character cut
// mid-sequence) or that could turn out to begin a stop string. The deltas
// of a stream add up to Text() of the same ids.
//
// Thread safety: none; one request's sink owns it.
#ifndef LAYERPROOF_OPENAI_TEXT_STREAM_H_
#define LAYERPROOF_OPENAI_TEXT_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "layerproof/v1/records.pb.h"
#include "text/tokenizer.h"

namespace layerproof::openai {

// Where the earliest of `stops` begins in `text`, or npos.
size_t FindStop(std::string_view text, const std::vector<std::string>& stops);

// The stop-string rule a client checks on its own receipt (the commitment
// cannot: stop strings stay between the client and the prover): replaying
// `output` through a TextStream, a stop string appears exactly at the last
// token, or not at all and the finish is not CANCELLED (a prover that
// cut the output short and blamed the client). DataLoss naming what broke.
absl::Status CheckStopStrings(const std::vector<int32_t>& output,
                              v1::FinishReason finish,
                              const std::vector<std::string>& stops,
                              const text::Tokenizer& tokenizer);

class TextStream {
 public:
  // `tokenizer` may be null (no text: every delta is empty); it must
  // outlive the stream.
  TextStream(const text::Tokenizer* tokenizer, std::vector<std::string> stops)
      : tokenizer_(tokenizer), stops_(std::move(stops)) {}

  // Adds one sampled id. True when a stop string now appears in the text:
  // generation should end here.
  bool Add(int32_t id);
  // The text not yet handed out that is safe to send now; after the last
  // Add, Flush() hands out the rest.
  std::string TakeDelta();
  std::string Flush();
  // The whole text: decoded, cut before the first stop string.
  const std::string& Text() const { return text_; }
  bool stopped() const { return stopped_; }
  const std::vector<int32_t>& ids() const { return ids_; }

 private:
  const text::Tokenizer* tokenizer_;
  std::vector<std::string> stops_;
  std::vector<int32_t> ids_;
  std::string text_;  // decoded, cut at a stop
  size_t sent_ = 0;   // bytes of text_ handed out
  bool stopped_ = false;
};

}  // namespace layerproof::openai

#endif  // LAYERPROOF_OPENAI_TEXT_STREAM_H_
