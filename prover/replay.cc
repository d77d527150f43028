#include "prover/replay.h"

#include <algorithm>
#include <utility>

#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::prover {
namespace {

namespace model = kernels::model;

class CapturingTap : public model::LayerTap {
 public:
  CapturingTap(ReplayedLayers& out, std::unique_ptr<RowsTamper> tamper)
      : out_(out), tamper_(std::move(tamper)) {}

  void OnLayerRows(model::SequenceId, int64_t layer, int64_t pos0,
                   const float* rows, int64_t n, int64_t width) override {
    const float* src = rows;
    if (tamper_ != nullptr) {
      scratch_.assign(rows, rows + n * width);
      tamper_->Tamper(layer, pos0, scratch_.data(), n, width);
      src = scratch_.data();
    }
    auto it = std::lower_bound(out_.layers.begin(), out_.layers.end(),
                               static_cast<uint32_t>(layer));
    if (it == out_.layers.end() || *it != layer) return;
    std::vector<float>& dst = out_.rows[it - out_.layers.begin()];
    dst.insert(dst.end(), src, src + n * width);
  }

 private:
  ReplayedLayers& out_;
  std::unique_ptr<RowsTamper> tamper_;
  std::vector<float> scratch_;
};

}  // namespace

absl::StatusOr<std::vector<int32_t>> ReplayTokens(
    const v1::JournalEntry& entry) {
  if (entry.prompt_token_ids().empty() || entry.output_token_ids().empty()) {
    return absl::InvalidArgumentError(store::internal::Cat(
        "journal entry: ", entry.prompt_token_ids_size(), " prompt and ",
        entry.output_token_ids_size(), " output tokens, want >= 1 each"));
  }
  std::vector<int32_t> tokens(entry.prompt_token_ids().begin(),
                              entry.prompt_token_ids().end());
  tokens.insert(tokens.end(), entry.output_token_ids().begin(),
                entry.output_token_ids().end() - 1);
  return tokens;
}

absl::StatusOr<ReplayedLayers> ReplayLayers(
    const model::Engine& engine, const v1::JournalEntry& entry,
    const std::vector<uint32_t>& layers, std::unique_ptr<RowsTamper> tamper) {
  LP_ASSIGN_OR_RETURN(std::vector<int32_t> tokens, ReplayTokens(entry));
  ReplayedLayers out;
  out.positions = static_cast<int64_t>(tokens.size());
  out.width = engine.model().config().hidden_size;
  out.layers = layers;
  out.rows.resize(layers.size());
  for (std::vector<float>& r : out.rows) {
    r.reserve(static_cast<size_t>(out.positions * out.width));
  }
  CapturingTap tap(out, std::move(tamper));
  LP_RETURN_IF_ERROR(store::ToAbslStatus(
      engine.Forward(tokens, &tap, /*seq=*/0, /*logits=*/nullptr)));
  for (size_t i = 0; i < out.rows.size(); ++i) {
    if (static_cast<int64_t>(out.rows[i].size()) != out.positions * out.width) {
      return absl::InternalError(store::internal::Cat(
          "replay: h^", out.layers[i], " has ", out.rows[i].size(),
          " floats, want ", out.positions * out.width));
    }
  }
  return out;
}

}  // namespace layerproof::prover
