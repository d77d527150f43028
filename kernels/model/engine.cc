// The engine's scheduling: requests, continuous batching, KV caches and
// sampling. The forward pass itself is in engine_block.cc.
#include "kernels/model/engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "kernels/dispatch.h"
#include "kernels/model/internal/engine_state.h"
#include "kernels/ref/rope_table.h"

namespace layerproof::kernels::model {
namespace {

constexpr int64_t kDefaultMaxContext = 8192;
constexpr int64_t kMaxNewTokens = 1 << 20;

Status Field(const std::string& field, const std::string& what) {
  return InvalidArgument("GenerationRequest." + field + ": " + what);
}

}  // namespace

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kMaxTokens:
      return "max_tokens";
    case FinishReason::kContextFull:
      return "context_full";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "?";
}

Engine::Engine(const Model& model, Executor* executor)
    : model_(model), executor_(executor) {}
Engine::~Engine() = default;

StatusOr<std::unique_ptr<Engine>> Engine::Create(const Model& model,
                                                 Executor* executor,
                                                 const EngineOptions& options) {
  if (executor == nullptr) return InvalidArgument("Engine: executor is null");
  std::unique_ptr<Engine> e(new Engine(model, executor));
  LP_RETURN_IF_ERROR(e->Prepare(options));
  return e;
}

Status Engine::Prepare(const EngineOptions& options) {
  const ModelConfig& c = model_.config();
  options_ = options;
  max_context_ = options.max_context > 0
                     ? options.max_context
                     : std::min(c.max_positions, kDefaultMaxContext);
  if (max_context_ > c.max_positions) {
    return InvalidArgument("EngineOptions.max_context: got " +
                           std::to_string(max_context_) +
                           ", want <= " + std::to_string(c.max_positions) +
                           " (the model's max_position_embeddings)");
  }
  if (options.max_sequences < 1 ||
      options.max_step_rows < options.max_sequences) {
    return InvalidArgument(
        "EngineOptions: want 1 <= max_sequences <= max_step_rows, got " +
        std::to_string(options.max_sequences) + " and " +
        std::to_string(options.max_step_rows));
  }
  LP_ASSIGN_OR_RETURN(rope_, BuildRopeTable(c.head_dim, c.rope_theta,
                                            max_context_, c.rope_scaling));
  // The sampler's softmax (host memory) on the fastest CPU backend: same
  // bits as ref, several times faster over a whole vocabulary.
  for (BackendKind kind : AvailableBackends()) {
    if (kind == BackendKind::kAvx2 || kind == BackendKind::kAvx512 ||
        kind == BackendKind::kNeon) {
      LP_ASSIGN_OR_RETURN(sampling_backend_, GetBackend(kind));
    }
  }
  Executor& ex = *executor_;
  LP_ASSIGN_OR_RETURN(embed_, ex.PrepareVector(model_.embed_tokens()));
  LP_ASSIGN_OR_RETURN(final_norm_, ex.PrepareVector(model_.final_norm()));
  LP_ASSIGN_OR_RETURN(lm_head_, ex.PrepareMatrix(model_.lm_head()));
  layers_.resize(c.num_layers);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const BlockWeights& w = model_.block(l);
    LayerParams& p = layers_[l];
    LP_ASSIGN_OR_RETURN(p.input_norm, ex.PrepareVector(w.input_norm));
    LP_ASSIGN_OR_RETURN(p.post_norm, ex.PrepareVector(w.post_norm));
    LP_ASSIGN_OR_RETURN(p.q, ex.PrepareMatrix(w.q_proj));
    LP_ASSIGN_OR_RETURN(p.k, ex.PrepareMatrix(w.k_proj));
    LP_ASSIGN_OR_RETURN(p.v, ex.PrepareMatrix(w.v_proj));
    LP_ASSIGN_OR_RETURN(p.o, ex.PrepareMatrix(w.o_proj));
    LP_ASSIGN_OR_RETURN(p.gate, ex.PrepareMatrix(w.gate_proj));
    LP_ASSIGN_OR_RETURN(p.up, ex.PrepareMatrix(w.up_proj));
    LP_ASSIGN_OR_RETURN(p.down, ex.PrepareMatrix(w.down_proj));
    if (c.qk_norm) {
      LP_ASSIGN_OR_RETURN(p.q_norm, ex.PrepareVector(w.q_norm));
      LP_ASSIGN_OR_RETURN(p.k_norm, ex.PrepareVector(w.k_norm));
    }
    if (c.qkv_bias) {
      LP_ASSIGN_OR_RETURN(p.q_bias, ex.PrepareBias(w.q_bias));
      LP_ASSIGN_OR_RETURN(p.k_bias, ex.PrepareBias(w.k_bias));
      LP_ASSIGN_OR_RETURN(p.v_bias, ex.PrepareBias(w.v_bias));
    }
    if (options.prepare_progress) {
      options.prepare_progress(l + 2, c.num_layers + 1);
    }
  }
  stop_tokens_ = c.eos_token_ids;
  step_ws_ = std::make_unique<Workspace>();
  return OkStatus();
}

StatusOr<SequenceId> Engine::Add(GenerationRequest request) {
  const int64_t n = static_cast<int64_t>(request.prompt.size());
  if (n < 1 || n >= max_context_) {
    return Field("prompt", "got " + std::to_string(n) + " tokens, want 1 .. " +
                               std::to_string(max_context_ - 1));
  }
  Status ids =
      CheckTokens(request.prompt.data(), n, "GenerationRequest.prompt");
  if (!ids.ok()) return ids;
  if (request.max_new_tokens < 1 || request.max_new_tokens > kMaxNewTokens) {
    return Field("max_new_tokens",
                 "got " + std::to_string(request.max_new_tokens) +
                     ", want 1 .. " + std::to_string(kMaxNewTokens));
  }
  Status sp =
      ValidateSamplingParams(request.sampling, "GenerationRequest.sampling");
  if (!sp.ok()) return sp;
  for (int32_t t : request.stop_tokens) {
    if (t < 0 || t >= model_.config().vocab_size) {
      return Field("stop_tokens",
                   "token " + std::to_string(t) + " out of range");
    }
  }
  if (static_cast<int64_t>(sequences_.size()) >= options_.max_sequences) {
    return Status(StatusCode::kUnavailable,
                  "Engine: " + std::to_string(options_.max_sequences) +
                      " sequences in flight, the most it runs at once");
  }
  auto s = std::make_unique<Sequence>();
  s->id = next_id_++;
  s->tokens = request.prompt;
  s->request = std::move(request);
  s->kv.resize(model_.config().num_layers);
  const SequenceId id = s->id;
  sequences_.emplace(id, std::move(s));
  return id;
}

Status Engine::Cancel(SequenceId seq) {
  auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    return Status(StatusCode::kNotFound,
                  "Engine: no sequence " + std::to_string(seq) + " in flight");
  }
  it->second->cancelled = true;
  return OkStatus();
}

Status Engine::EnsureKv(Sequence& s, int64_t positions) {
  if (positions <= s.kv_capacity) return OkStatus();
  const ModelConfig& c = model_.config();
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  // Grow geometrically so a decoding sequence reallocates O(log n) times.
  const int64_t cap = std::min(
      max_context_, std::max({positions, 2 * s.kv_capacity, int64_t{16}}));
  for (KvLayer& layer : s.kv) {
    KvLayer grown;
    LP_ASSIGN_OR_RETURN(grown.k, executor_->Allocate(cap * kv_dim));
    LP_ASSIGN_OR_RETURN(grown.v, executor_->Allocate(cap * kv_dim));
    if (s.n_cached > 0) {
      LP_RETURN_IF_ERROR(
          executor_->Copy(layer.k.data(), s.n_cached * kv_dim, grown.k.data()));
      LP_RETURN_IF_ERROR(
          executor_->Copy(layer.v.data(), s.n_cached * kv_dim, grown.v.data()));
    }
    layer = std::move(grown);
  }
  s.kv_capacity = cap;
  return OkStatus();
}

void Engine::Finish(Sequence& s, FinishReason reason) {
  FinishedSequence f;
  f.seq = s.id;
  const int64_t prompt_len = static_cast<int64_t>(s.request.prompt.size());
  f.prompt = std::move(s.request.prompt);
  f.output.assign(s.tokens.begin() + prompt_len, s.tokens.end());
  f.finish = reason;
  finished_.push_back(std::move(f));
}

Status Engine::Step(std::vector<TokenEvent>* events) {
  // Cancelled sequences leave before the batch forms.
  for (auto it = sequences_.begin(); it != sequences_.end();) {
    if (it->second->cancelled) {
      Finish(*it->second, FinishReason::kCancelled);
      it = sequences_.erase(it);
    } else {
      ++it;
    }
  }
  if (sequences_.empty()) return OkStatus();

  // Decode rows first (one each), then prefill chunks in arrival order with
  // the rows left. The batch's composition never changes a result bit.
  std::vector<Segment> segments;
  int64_t budget = options_.max_step_rows;
  std::vector<Sequence*> order;
  for (auto& [id, s] : sequences_) {
    if (static_cast<int64_t>(s->tokens.size()) - s->n_cached == 1) {
      order.push_back(s.get());
    }
  }
  for (auto& [id, s] : sequences_) {
    if (static_cast<int64_t>(s->tokens.size()) - s->n_cached > 1) {
      order.push_back(s.get());
    }
  }
  std::vector<int32_t> ids;
  std::vector<int64_t> positions;
  for (Sequence* s : order) {
    const int64_t pending =
        static_cast<int64_t>(s->tokens.size()) - s->n_cached;
    const int64_t take = std::min(pending, budget);
    if (take == 0) break;
    budget -= take;
    LP_RETURN_IF_ERROR(EnsureKv(*s, s->n_cached + take));
    Segment seg;
    seg.seq = s->id;
    seg.row0 = static_cast<int64_t>(ids.size());
    seg.rows = take;
    seg.pos0 = s->n_cached;
    seg.kv = &s->kv;
    seg.tap = s->request.tap;
    segments.push_back(seg);
    for (int64_t i = 0; i < take; ++i) {
      ids.push_back(s->tokens[s->n_cached + i]);
      positions.push_back(s->n_cached + i);
    }
  }
  const int64_t rows = static_cast<int64_t>(ids.size());
  Workspace& ws = *step_ws_;
  LP_RETURN_IF_ERROR(EnsureWorkspace(ws, rows));
  LP_RETURN_IF_ERROR(
      executor_->Embedding(*embed_, ids.data(), rows, ws.x.data()));
  LP_RETURN_IF_ERROR(TapRows(segments, 0, ws.x.data(), ws));
  const int64_t n_layers = model_.config().num_layers;
  for (int64_t l = 0; l < n_layers; ++l) {
    LP_RETURN_IF_ERROR(RunBlockRows(l, segments, rows, positions.data(), ws));
    LP_RETURN_IF_ERROR(TapRows(segments, l + 1, ws.x.data(), ws));
  }

  // Sequences whose every token is now cached sample their next token from
  // the last row.
  const int64_t h = model_.config().hidden_size;
  const int64_t vocab = model_.config().vocab_size;
  std::vector<Sequence*> sampling;
  for (const Segment& seg : segments) {
    Sequence& s = *sequences_.at(seg.seq);
    s.n_cached += seg.rows;
    if (s.n_cached == static_cast<int64_t>(s.tokens.size())) {
      sampling.push_back(&s);
    }
  }
  if (sampling.empty()) return OkStatus();
  const int64_t n_head = static_cast<int64_t>(sampling.size());
  if (ws.head_in.count() < n_head * h) {
    LP_ASSIGN_OR_RETURN(ws.head_in, executor_->Allocate(n_head * h));
  }
  int64_t j = 0;
  for (const Segment& seg : segments) {
    if (j < n_head && sampling[j]->id == seg.seq) {
      LP_RETURN_IF_ERROR(
          executor_->Copy(ws.x.data() + (seg.row0 + seg.rows - 1) * h, h,
                          ws.head_in.data() + j * h));
      ++j;
    }
  }
  std::vector<float> logits(n_head * vocab);
  LP_RETURN_IF_ERROR(HeadRows(ws.head_in.data(), n_head, logits.data(), ws));
  for (int64_t i = 0; i < n_head; ++i) {
    Sequence& s = *sampling[i];
    const int64_t position = static_cast<int64_t>(s.tokens.size());
    LP_ASSIGN_OR_RETURN(int32_t token, Sample(logits.data() + i * vocab,
                                              s.request.sampling, position));
    s.tokens.push_back(token);
    ++s.generated;
    const std::vector<int32_t>& stops =
        s.request.stop_tokens.empty() ? stop_tokens_ : s.request.stop_tokens;
    FinishReason finish = FinishReason::kNone;
    if (!s.request.ignore_eos &&
        std::find(stops.begin(), stops.end(), token) != stops.end()) {
      finish = FinishReason::kStop;
    } else if (s.generated >= s.request.max_new_tokens) {
      finish = FinishReason::kMaxTokens;
    } else if (static_cast<int64_t>(s.tokens.size()) >= max_context_) {
      finish = FinishReason::kContextFull;
    }
    if (events != nullptr) {
      events->push_back(TokenEvent{s.id, token, position, finish});
    }
    if (finish != FinishReason::kNone) {
      Finish(s, finish);
      sequences_.erase(s.id);
    }
  }
  return OkStatus();
}

std::vector<FinishedSequence> Engine::TakeFinished() {
  return std::exchange(finished_, {});
}

StatusOr<FinishedSequence> Engine::Generate(GenerationRequest request) {
  LP_ASSIGN_OR_RETURN(SequenceId id, Add(std::move(request)));
  while (true) {
    LP_RETURN_IF_ERROR(Step());
    for (auto it = finished_.begin(); it != finished_.end(); ++it) {
      if (it->seq == id) {
        FinishedSequence f = std::move(*it);
        finished_.erase(it);
        return f;
      }
    }
  }
}

StatusOr<int32_t> Engine::Sample(const float* logits,
                                 const SamplingParams& params,
                                 int64_t position) const {
  return SampleToken(logits, model_.config().vocab_size, params,
                     static_cast<uint64_t>(position), sampling_backend_);
}

}  // namespace layerproof::kernels::model
