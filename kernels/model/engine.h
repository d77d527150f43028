// The deterministic inference engine: prefill, decode with a KV cache,
// continuous batching, sampling and per-layer taps, on any executor.
//
// Every op is row-independent except attention, which each sequence runs
// against its own KV cache in the order of docs/determinism.md §3.5. So a
// sequence's hidden states, logits and tokens are bit-identical whether it
// runs alone or batched with others, prefilled at once, in chunks or decoded
// token by token, on any backend and thread count.
//
// Layers: h^0 is the embedding output, h^l (l = 1..L) the output of block l.
// A sequence's positions are its prompt followed by its generated tokens
// except the last (which is sampled but never fed back).
//
// Thread safety: Add, Cancel, Step and TakeFinished must be called from one
// thread at a time (a scheduler's). Embed, RunBlock, RunHead and Forward are
// const, use their own buffers and may run concurrently with each other and
// with Step. The Model and the Executor must outlive the Engine.
#ifndef LAYERPROOF_KERNELS_MODEL_ENGINE_H_
#define LAYERPROOF_KERNELS_MODEL_ENGINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "kernels/ref/sampling.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

using SequenceId = uint64_t;

// Receives every layer's output rows as they are produced. For each
// (sequence, layer) the calls come in position order, covering positions
// 0, 1, 2, ... without gaps. `rows` is host memory [n][width], valid only
// during the call. Called on the thread running Step / Forward.
class LayerTap {
 public:
  virtual ~LayerTap() = default;
  virtual void OnLayerRows(SequenceId seq, int64_t layer, int64_t pos0,
                           const float* rows, int64_t n, int64_t width) = 0;
};

struct EngineOptions {
  // Longest sequence (prompt + generated) the engine accepts; 0: the
  // model's max_positions capped at 8192. Sizes the RoPE table.
  int64_t max_context = 0;
  // Most sequences in flight at once.
  int64_t max_sequences = 64;
  // Most rows (prompt positions plus decode tokens) one Step runs; longer
  // prompts are prefilled in chunks over several steps.
  int64_t max_step_rows = 1024;
  // Progress of preparing (packing) the weights: blocks done of L + 1 (the
  // embedding and head count as one). Called on the creating thread.
  std::function<void(int64_t done, int64_t total)> prepare_progress;
};

struct GenerationRequest {
  std::vector<int32_t> prompt;  // non-empty, ids < vocab
  SamplingParams sampling;      // temperature 0: greedy
  int64_t max_new_tokens = 16;  // >= 1
  // Stop when one of these is generated (it is kept in the output). Empty:
  // the model's eos_token_ids.
  std::vector<int32_t> stop_tokens;
  bool ignore_eos = false;  // generate exactly max_new_tokens
  LayerTap* tap = nullptr;  // may be null; must outlive the sequence
};

enum class FinishReason : uint8_t {
  kNone,
  kStop,
  kMaxTokens,
  kContextFull,
  kCancelled
};
const char* FinishReasonName(FinishReason r);

struct TokenEvent {
  SequenceId seq = 0;
  int32_t token = 0;
  int64_t position = 0;  // where the token sits in the sequence
  FinishReason finish =
      FinishReason::kNone;  // set on the sequence's last token
};

struct FinishedSequence {
  SequenceId seq = 0;
  std::vector<int32_t> prompt;
  std::vector<int32_t> output;  // generated tokens
  FinishReason finish = FinishReason::kNone;
};

class Engine {
 public:
  static StatusOr<std::unique_ptr<Engine>> Create(
      const Model& model, Executor* executor,
      const EngineOptions& options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const Model& model() const { return model_; }
  int64_t max_context() const { return max_context_; }

  // Queues a sequence; it joins the batch at the next Step. Validates the
  // request (InvalidArgument naming the field) and capacity.
  StatusOr<SequenceId> Add(GenerationRequest request);
  // Drops a sequence; it finishes with kCancelled at the next Step.
  Status Cancel(SequenceId seq);
  // One step of every sequence in flight: the next prefill chunk of new
  // ones and one decode token of the rest. Appends the tokens sampled in
  // this step to *events (if not null). Finished sequences leave the batch.
  Status Step(std::vector<TokenEvent>* events = nullptr);
  bool idle() const { return sequences_.empty(); }
  std::vector<FinishedSequence> TakeFinished();

  // Adds `request` and steps until it finishes (other sequences in flight
  // step too; their results stay for TakeFinished).
  StatusOr<FinishedSequence> Generate(GenerationRequest request);

  // h^0 rows of `tokens` into host h0[n][hidden].
  Status Embed(const int32_t* tokens, int64_t n, float* h0) const;
  // The verifier's re-execution of block `layer` (1..L) over a whole
  // sequence in prefill mode: input = h^(layer-1)[positions][hidden] (host),
  // output = h^layer (host). Bit-identical to what Step produced.
  Status RunBlock(int64_t layer, const float* input, int64_t positions,
                  float* output) const;
  // Final norm and LM head: logits[n][vocab] (host) of h^L rows (host).
  Status RunHead(const float* h_last, int64_t n, float* logits) const;
  // The token the sampler draws from one row of logits at `position` (the
  // position the new token takes).
  StatusOr<int32_t> Sample(const float* logits, const SamplingParams& params,
                           int64_t position) const;
  // A whole prefill through Embed, RunBlock and RunHead: taps every layer
  // (as sequence `seq`) and writes logits[positions][vocab] if not null.
  Status Forward(const std::vector<int32_t>& tokens, LayerTap* tap,
                 SequenceId seq, float* logits) const;

 private:
  struct LayerParams;
  struct Sequence;
  struct Workspace;
  struct Segment;
  Engine(const Model& model, Executor* executor);
  Status Prepare(const EngineOptions& options);
  // Runs block `l` (0-based) over the rows of *ws: x is updated in place.
  Status RunBlockRows(int64_t l, const std::vector<Segment>& segments,
                      int64_t rows, const int64_t* positions,
                      Workspace& ws) const;
  Status EnsureWorkspace(Workspace& ws, int64_t rows) const;
  Status CheckTokens(const int32_t* tokens, int64_t n, const char* what) const;
  Status EnsureKv(Sequence& s, int64_t positions);
  Status TapRows(const std::vector<Segment>& segments, int64_t layer,
                 const float* x, Workspace& ws) const;
  Status HeadRows(const float* x, int64_t n, float* logits_host,
                  Workspace& ws) const;
  void Finish(Sequence& s, FinishReason reason);

  const Model& model_;
  Executor* executor_;
  int64_t max_context_ = 0;
  EngineOptions options_;
  RopeTable rope_;
  std::vector<LayerParams> layers_;
  std::unique_ptr<Vector> embed_;
  std::unique_ptr<Vector> final_norm_;
  std::unique_ptr<Matrix> lm_head_;
  std::vector<int32_t> stop_tokens_;
  SequenceId next_id_ = 1;
  std::map<SequenceId, std::unique_ptr<Sequence>> sequences_;
  std::vector<FinishedSequence> finished_;
  std::unique_ptr<Workspace> step_ws_;
  // Computes the sampler's softmax; null: the scalar ref (no faster CPU
  // backend on this machine).
  Backend* sampling_backend_ = nullptr;
};

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_ENGINE_H_
