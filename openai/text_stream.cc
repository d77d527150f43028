#include "openai/text_stream.h"

#include <algorithm>

#include "store/internal/str_cat.h"

namespace layerproof::openai {
namespace {

using store::internal::Cat;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the longest suffix of `text` that is a proper prefix of
// one of `stops`: those bytes may yet become a stop string.
size_t StopPrefixSuffix(std::string_view text,
                        const std::vector<std::string>& stops) {
  size_t longest = 0;
  for (const std::string& s : stops) {
    const size_t max = std::min(text.size(), s.size() - 1);
    for (size_t n = max; n > longest; --n) {
      if (text.substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

}  // namespace

size_t FindStop(std::string_view text, const std::vector<std::string>& stops) {
  size_t first = std::string_view::npos;
  for (const std::string& s : stops) {
    first = std::min(first, text.find(s));
  }
  return first;
}

absl::Status CheckStopStrings(const std::vector<int32_t>& output,
                              v1::FinishReason finish,
                              const std::vector<std::string>& stops,
                              const text::Tokenizer& tokenizer) {
  TextStream replay(&tokenizer, stops);
  for (size_t i = 0; i < output.size(); ++i) {
    if (replay.Add(output[i]) && i + 1 < output.size()) {
      return absl::DataLossError(
          Cat("the output ran past a stop string: it appears at output token ",
              i, " of ", output.size()));
    }
  }
  if (!replay.stopped() && finish == v1::FINISH_REASON_CANCELLED) {
    return absl::DataLossError(
        "the output was cut short: the finish reason is CANCELLED, but no "
        "stop string appears in its text");
  }
  return absl::OkStatus();
}

bool TextStream::Add(int32_t id) {
  ids_.push_back(id);
  if (tokenizer_ == nullptr || stopped_) return stopped_;
  // Decoding the whole output each time keeps the text exactly what one
  // Decode of all ids gives, whatever the decoder does at token joins.
  kernels::StatusOr<std::string> text =
      tokenizer_->Decode(ids_, /*skip_special=*/true);
  if (!text.ok()) return false;  // an id the tokenizer lacks: no text
  text_ = *std::move(text);
  const size_t stop = FindStop(text_, stops_);
  if (stop != std::string::npos) {
    text_.resize(stop);
    stopped_ = true;
  }
  return stopped_;
}

std::string TextStream::TakeDelta() {
  if (stopped_) return Flush();
  size_t end = text_.size();
  // A character cut mid-sequence decodes to U+FFFD until its last byte.
  while (end >= sent_ + kReplacement.size() &&
         std::string_view(text_).substr(end - kReplacement.size(),
                                        kReplacement.size()) == kReplacement) {
    end -= kReplacement.size();
  }
  end -= StopPrefixSuffix(std::string_view(text_).substr(0, end), stops_);
  if (end <= sent_) return "";
  std::string delta = text_.substr(sent_, end - sent_);
  sent_ = end;
  return delta;
}

std::string TextStream::Flush() {
  if (sent_ >= text_.size()) return "";
  std::string delta = text_.substr(sent_);
  sent_ = text_.size();
  return delta;
}

}  // namespace layerproof::openai
