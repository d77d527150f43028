// The forward pass of the engine: one decoder block over a batch of rows,
// the taps, the head, and the verifier's entry points built from them.
//
// Block l (HF LlamaDecoderLayer):
//   xn = RmsNorm(x) * input_norm;  q, k, v = xn·Wq^T (+bq), xn·Wk^T, xn·Wv^T
//   Qwen3: q = RmsNorm(q) * q_norm, k = RmsNorm(k) * k_norm over each head
//   (rows of head_dim: the same op and reduction order as the layer norms)
//   RoPE(q), RoPE(k) at each row's position; K/V appended to the sequence's
//   cache; attn = Attention(q, cache) per sequence
//   x += attn·Wo^T;  xn = RmsNorm(x) * post_norm
//   x += (silu(xn·Wg^T) * xn·Wu^T)·Wd^T
// Every op but attention is row-independent, and attention reads only its
// own sequence's cache, so batching never changes a bit.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/model/engine.h"
#include "kernels/model/internal/engine_state.h"

namespace layerproof::kernels::model {
namespace {

Status EnsureBuffer(Executor& ex, Buffer& b, int64_t floats) {
  if (b.count() >= floats) return OkStatus();
  LP_ASSIGN_OR_RETURN(b, ex.Allocate(floats));
  return OkStatus();
}

const float* BiasPtr(const Bias& b) {
  return b.count() == 0 ? nullptr : b.data();
}

}  // namespace

Status Engine::EnsureWorkspace(Workspace& ws, int64_t rows) const {
  const ModelConfig& c = model_.config();
  if (rows <= ws.capacity) return OkStatus();
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  Executor& ex = *executor_;
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.x, rows * c.hidden_size));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.xn, rows * c.hidden_size));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.q, rows * q_dim));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.k, rows * kv_dim));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.v, rows * kv_dim));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.attn, rows * q_dim));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.gate, rows * c.intermediate_size));
  LP_RETURN_IF_ERROR(EnsureBuffer(ex, ws.up, rows * c.intermediate_size));
  ws.capacity = rows;
  return OkStatus();
}

Status Engine::RunBlockRows(int64_t l, const std::vector<Segment>& segments,
                            int64_t rows, const int64_t* positions,
                            Workspace& ws) const {
  const ModelConfig& c = model_.config();
  const LayerParams& p = layers_[l];
  Executor& ex = *executor_;
  const int64_t h = c.hidden_size;
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  const float eps = static_cast<float>(c.rms_norm_eps);

  // Attention.
  LP_RETURN_IF_ERROR(
      ex.RmsNorm(ws.x.data(), rows, h, *p.input_norm, eps, ws.xn.data()));
  LP_RETURN_IF_ERROR(
      ex.Gemm(ws.xn.data(), rows, *p.q, BiasPtr(p.q_bias), ws.q.data()));
  LP_RETURN_IF_ERROR(
      ex.Gemm(ws.xn.data(), rows, *p.k, BiasPtr(p.k_bias), ws.k.data()));
  LP_RETURN_IF_ERROR(
      ex.Gemm(ws.xn.data(), rows, *p.v, BiasPtr(p.v_bias), ws.v.data()));
  if (c.qk_norm) {
    // RmsNorm may not write its input, so normalise into attn (free until
    // attention) and copy back.
    LP_RETURN_IF_ERROR(ex.RmsNorm(ws.q.data(), rows * c.num_heads, c.head_dim,
                                  *p.q_norm, eps, ws.attn.data()));
    LP_RETURN_IF_ERROR(ex.Copy(ws.attn.data(), rows * q_dim, ws.q.data()));
    LP_RETURN_IF_ERROR(ex.RmsNorm(ws.k.data(), rows * c.num_kv_heads,
                                  c.head_dim, *p.k_norm, eps, ws.attn.data()));
    LP_RETURN_IF_ERROR(ex.Copy(ws.attn.data(), rows * kv_dim, ws.k.data()));
  }
  LP_RETURN_IF_ERROR(ex.Rope(ws.q.data(), rows, c.num_heads, positions, rope_));
  LP_RETURN_IF_ERROR(
      ex.Rope(ws.k.data(), rows, c.num_kv_heads, positions, rope_));
  for (const Segment& s : segments) {
    KvLayer& kv = (*s.kv)[l - s.kv_base];
    LP_RETURN_IF_ERROR(ex.Copy(ws.k.data() + s.row0 * kv_dim, s.rows * kv_dim,
                               kv.k.data() + s.pos0 * kv_dim));
    LP_RETURN_IF_ERROR(ex.Copy(ws.v.data() + s.row0 * kv_dim, s.rows * kv_dim,
                               kv.v.data() + s.pos0 * kv_dim));
    AttentionArgs a;
    a.q = ws.q.data() + s.row0 * q_dim;
    a.k = kv.k.data();
    a.v = kv.v.data();
    a.out = ws.attn.data() + s.row0 * q_dim;
    a.nq = s.rows;
    a.q_pos0 = s.pos0;
    a.n_kv = s.pos0 + s.rows;
    a.n_heads = c.num_heads;
    a.n_kv_heads = c.num_kv_heads;
    a.head_dim = c.head_dim;
    LP_RETURN_IF_ERROR(ex.Attention(a));
  }
  LP_RETURN_IF_ERROR(
      ex.Gemm(ws.attn.data(), rows, *p.o, nullptr, ws.xn.data()));
  LP_RETURN_IF_ERROR(ex.Add(ws.x.data(), ws.xn.data(), rows * h, ws.x.data()));

  // MLP.
  LP_RETURN_IF_ERROR(
      ex.RmsNorm(ws.x.data(), rows, h, *p.post_norm, eps, ws.xn.data()));
  LP_RETURN_IF_ERROR(
      ex.Gemm(ws.xn.data(), rows, *p.gate, nullptr, ws.gate.data()));
  LP_RETURN_IF_ERROR(ex.Gemm(ws.xn.data(), rows, *p.up, nullptr, ws.up.data()));
  LP_RETURN_IF_ERROR(ex.SwiGlu(ws.gate.data(), ws.up.data(),
                               rows * c.intermediate_size, ws.gate.data()));
  LP_RETURN_IF_ERROR(
      ex.Gemm(ws.gate.data(), rows, *p.down, nullptr, ws.xn.data()));
  return ex.Add(ws.x.data(), ws.xn.data(), rows * h, ws.x.data());
}

Status Engine::TapRows(const std::vector<Segment>& segments, int64_t layer,
                       const float* x, Workspace& ws) const {
  const int64_t h = model_.config().hidden_size;
  for (const Segment& s : segments) {
    if (s.tap == nullptr) continue;
    const float* rows = x + s.row0 * h;
    if (!executor_->host_memory()) {
      ws.host_rows.resize(s.rows * h);
      LP_RETURN_IF_ERROR(
          executor_->CopyToHost(rows, s.rows * h, ws.host_rows.data()));
      rows = ws.host_rows.data();
    }
    s.tap->OnLayerRows(s.seq, layer, s.pos0, rows, s.rows, h);
  }
  return OkStatus();
}

Status Engine::HeadRows(const float* x, int64_t n, float* logits_host,
                        Workspace& ws) const {
  const ModelConfig& c = model_.config();
  LP_RETURN_IF_ERROR(executor_->RmsNorm(x, n, c.hidden_size, *final_norm_,
                                        static_cast<float>(c.rms_norm_eps),
                                        ws.xn.data()));
  LP_RETURN_IF_ERROR(EnsureBuffer(*executor_, ws.logits, n * c.vocab_size));
  LP_RETURN_IF_ERROR(
      executor_->Gemm(ws.xn.data(), n, *lm_head_, nullptr, ws.logits.data()));
  return executor_->CopyToHost(ws.logits.data(), n * c.vocab_size, logits_host);
}

Status Engine::CheckTokens(const int32_t* tokens, int64_t n,
                           const char* what) const {
  const int64_t vocab = model_.config().vocab_size;
  if (n < 1 || n > max_context_) {
    return InvalidArgument(std::string(what) + ": got " + std::to_string(n) +
                           " positions, want 1 .. " +
                           std::to_string(max_context_));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      return InvalidArgument(std::string(what) + "[" + std::to_string(i) +
                             "]: token " + std::to_string(tokens[i]) +
                             " out of range, want 0 .. " +
                             std::to_string(vocab - 1));
    }
  }
  return OkStatus();
}

Status Engine::Embed(const int32_t* tokens, int64_t n, float* h0) const {
  LP_RETURN_IF_ERROR(CheckTokens(tokens, n, "tokens"));
  Workspace ws;
  LP_RETURN_IF_ERROR(
      EnsureBuffer(*executor_, ws.x, n * model_.config().hidden_size));
  LP_RETURN_IF_ERROR(executor_->Embedding(*embed_, tokens, n, ws.x.data()));
  return executor_->CopyToHost(ws.x.data(), n * model_.config().hidden_size,
                               h0);
}

Status Engine::RunBlock(int64_t layer, const float* input, int64_t positions,
                        float* output) const {
  const ModelConfig& c = model_.config();
  if (layer < 1 || layer > c.num_layers) {
    return InvalidArgument("RunBlock: layer " + std::to_string(layer) +
                           " out of range, want 1 .. " +
                           std::to_string(c.num_layers));
  }
  if (positions < 1 || positions > max_context_) {
    return InvalidArgument("RunBlock: got " + std::to_string(positions) +
                           " positions, want 1 .. " +
                           std::to_string(max_context_));
  }
  if (input == nullptr || output == nullptr) {
    return InvalidArgument("RunBlock: input and output must not be null");
  }
  Workspace ws;
  LP_RETURN_IF_ERROR(EnsureWorkspace(ws, positions));
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  std::vector<KvLayer> kv(1);
  LP_ASSIGN_OR_RETURN(kv[0].k, executor_->Allocate(positions * kv_dim));
  LP_ASSIGN_OR_RETURN(kv[0].v, executor_->Allocate(positions * kv_dim));
  std::vector<int64_t> pos(positions);
  for (int64_t i = 0; i < positions; ++i) pos[i] = i;
  Segment s;
  s.rows = positions;
  s.kv = &kv;
  s.kv_base = layer - 1;
  LP_RETURN_IF_ERROR(
      executor_->CopyFromHost(input, positions * c.hidden_size, ws.x.data()));
  LP_RETURN_IF_ERROR(RunBlockRows(layer - 1, {s}, positions, pos.data(), ws));
  return executor_->CopyToHost(ws.x.data(), positions * c.hidden_size, output);
}

Status Engine::RunHead(const float* h_last, int64_t n, float* logits) const {
  const ModelConfig& c = model_.config();
  if (n < 1 || n > max_context_) {
    return InvalidArgument("RunHead: got " + std::to_string(n) +
                           " rows, want 1 .. " + std::to_string(max_context_));
  }
  if (h_last == nullptr || logits == nullptr) {
    return InvalidArgument("RunHead: input and logits must not be null");
  }
  Workspace ws;
  LP_RETURN_IF_ERROR(EnsureBuffer(*executor_, ws.x, n * c.hidden_size));
  LP_RETURN_IF_ERROR(EnsureBuffer(*executor_, ws.xn, n * c.hidden_size));
  LP_RETURN_IF_ERROR(
      executor_->CopyFromHost(h_last, n * c.hidden_size, ws.x.data()));
  return HeadRows(ws.x.data(), n, logits, ws);
}

Status Engine::Forward(const std::vector<int32_t>& tokens, LayerTap* tap,
                       SequenceId seq, float* logits) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t h = model_.config().hidden_size;
  LP_RETURN_IF_ERROR(CheckTokens(tokens.data(), n, "tokens"));
  std::vector<float> cur(n * h), next(n * h);
  LP_RETURN_IF_ERROR(Embed(tokens.data(), n, cur.data()));
  if (tap != nullptr) tap->OnLayerRows(seq, 0, 0, cur.data(), n, h);
  for (int64_t l = 1; l <= model_.config().num_layers; ++l) {
    LP_RETURN_IF_ERROR(RunBlock(l, cur.data(), n, next.data()));
    cur.swap(next);
    if (tap != nullptr) tap->OnLayerRows(seq, l, 0, cur.data(), n, h);
  }
  if (logits == nullptr) return OkStatus();
  return RunHead(cur.data(), n, logits);
}

}  // namespace layerproof::kernels::model
