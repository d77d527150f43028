// Opening: Open (replayed activations, auditors only) and GetCommitment.
#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "prover/internal/services.h"
#include "prover/replay.h"
#include "rpc/grpc_status.h"
#include "rpc/reactor.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"

namespace layerproof::prover::internal {
namespace {

using store::internal::Cat;

static_assert(std::endian::native == std::endian::little,
              "openings send the host's floats as fp32 little-endian");

// Most activation bytes in one ActivationRows chunk (whole rows; a single
// row wider than this goes alone).
constexpr int64_t kMaxChunkBytes = int64_t{1} << 20;

// Shared by an Open reactor and the replay job, which may outlive the
// reactor's interest (cancellation) but never its lifetime: the reactor is
// deleted only after Finish, and only the holder of `finished` finishes.
struct OpenCall {
  absl::Mutex mu;
  grpc::ServerWriteReactor<v1::OpenChunk>* reactor ABSL_GUARDED_BY(mu) =
      nullptr;
  bool finished ABSL_GUARDED_BY(mu) = false;
  bool writing ABSL_GUARDED_BY(mu) = false;
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  absl::Time deadline;
  // The opening, once replayed.
  ReplayedLayers replayed ABSL_GUARDED_BY(mu);
  size_t next_layer ABSL_GUARDED_BY(mu) = 0;  // index into replayed.layers
  int64_t next_position ABSL_GUARDED_BY(mu) = 0;
  v1::OpenChunk chunk ABSL_GUARDED_BY(mu);

  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (finished) return;
    finished = true;
    reactor->Finish(status);
  }
};

// Lives from Open() until gRPC calls OnDone after Finish (from validation,
// the replay job, the last write or cancellation); deletes itself. With the
// StallOpenings fault it only finishes when the call is cancelled or its
// deadline passes, without holding any thread.
class OpenReactor final : public grpc::ServerWriteReactor<v1::OpenChunk> {
 public:
  OpenReactor(const ServiceContext& context,
              grpc::CallbackServerContext& server_context,
              const v1::OpenRequest& request)
      : context_(context), call_(std::make_shared<OpenCall>()) {
    absl::MutexLock lock(&call_->mu);
    call_->reactor = this;
    absl::Status allowed = context.authorizer->Check(
        server_context, rpc::Role::kAuditor, "Opening.Open");
    if (!allowed.ok()) {
      call_->FinishLocked(rpc::ToGrpcStatus(allowed));
      return;
    }
    const uint32_t num_layers = context.model_info.num_layers();
    absl::Status valid = ValidateOpenRequest(request, num_layers);
    if (!valid.ok()) {
      call_->FinishLocked(rpc::ToGrpcStatus(valid));
      return;
    }
    if (context.faults != nullptr && context.faults->StallOpenings()) return;
    call_->deadline = std::min(absl::FromChrono(server_context.deadline()),
                               absl::Now() + context.max_opening_time);
    std::shared_ptr<OpenCall> call = call_;
    const ServiceContext* ctx = &context_;
    v1::OpenRequest copy = request;
    const absl::Status queued = context.opening_pool->Offer(
        {[ctx, call, copy = std::move(copy)] { RunReplay(*ctx, call, copy); },
         {}},
        "Opening.Open: the prover's replay queue");
    if (!queued.ok()) call_->FinishLocked(rpc::ToGrpcStatus(queued));
  }

  void OnWriteDone(bool ok) override {
    rpc::ReactionStarts(this);
    absl::MutexLock lock(&call_->mu);
    call_->writing = false;
    if (!ok || call_->cancelled) {
      return call_->FinishLocked(
          grpc::Status(grpc::StatusCode::CANCELLED, "Open: stream closed"));
    }
    if (absl::Now() > call_->deadline) {
      return call_->FinishLocked(
          grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                       "Open: the deadline passed while sending the opening"));
    }
    WriteNextLocked(context_, *call_);
  }
  void OnCancel() override {
    rpc::ReactionStarts(this);
    absl::MutexLock lock(&call_->mu);
    call_->cancelled = true;
    // A write in flight completes (not ok) and finishes in OnWriteDone.
    if (!call_->writing) {
      call_->FinishLocked(
          grpc::Status(grpc::StatusCode::CANCELLED, "Open: cancelled"));
    }
  }
  void OnDone() override {
    rpc::DeleteAfterLastCriticalSection(this, call_->mu);
  }

 private:
  // Sends the next rows chunk, or finishes after the last.
  static void WriteNextLocked(const ServiceContext& context, OpenCall& call)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(call.mu) {
    ReplayedLayers& r = call.replayed;
    if (call.next_layer >= r.layers.size() || r.positions == 0) {
      return call.FinishLocked(grpc::Status::OK);
    }
    const int64_t row_bytes = r.width * static_cast<int64_t>(sizeof(float));
    const int64_t rows =
        std::min(std::max<int64_t>(1, kMaxChunkBytes / row_bytes),
                 r.positions - call.next_position);
    const uint32_t layer = r.layers[call.next_layer];
    const float* src =
        r.rows[call.next_layer].data() + call.next_position * r.width;
    call.chunk.Clear();
    v1::ActivationRows* out = call.chunk.mutable_rows();
    out->set_layer(layer);
    out->set_position0(static_cast<uint32_t>(call.next_position));
    std::string* data = out->mutable_data();
    data->resize(static_cast<size_t>(rows * row_bytes));
    std::memcpy(data->data(), src, data->size());
    if (context.faults != nullptr) {
      context.faults->TamperOpenedRows(layer, call.next_position,
                                       reinterpret_cast<float*>(data->data()),
                                       rows, r.width);
    }
    call.next_position += rows;
    if (call.next_position >= r.positions) {
      // The layer is sent: free its rows and move on.
      std::vector<float>().swap(r.rows[call.next_layer]);
      ++call.next_layer;
      call.next_position = 0;
    }
    call.writing = true;
    call.reactor->StartWrite(&call.chunk);
  }

  // On an opening worker: looks the request up, checks the limits, replays
  // and starts streaming.
  static void RunReplay(const ServiceContext& context,
                        const std::shared_ptr<OpenCall>& call,
                        const v1::OpenRequest& request) {
    auto fail = [&](const absl::Status& s) {
      absl::MutexLock lock(&call->mu);
      call->FinishLocked(rpc::ToGrpcStatus(s));
    };
    {
      absl::MutexLock lock(&call->mu);
      if (call->finished) return;
    }
    std::shared_ptr<ProverJournal> journal = context.journal->Get();
    if (journal == nullptr) {
      return fail(absl::UnavailableError("prover: shutting down"));
    }
    absl::StatusOr<v1::JournalEntry> entry = journal->Get(request.request_id());
    if (!entry.ok()) return fail(entry.status());
    const uint64_t positions =
        static_cast<uint64_t>(entry->prompt_token_ids_size()) +
        static_cast<uint64_t>(entry->output_token_ids_size()) - 1;
    const uint64_t hidden = context.model_info.hidden_size();
    const uint64_t bytes = positions * hidden * sizeof(float) *
                           static_cast<uint64_t>(request.layers_size());
    if (bytes > context.max_opening_bytes) {
      return fail(absl::ResourceExhaustedError(
          Cat("Open: the opening is ", bytes, " bytes (", positions,
              " positions x ", hidden, " floats x 4 bytes x ",
              request.layers_size(), " layers), want <= max_opening_bytes ",
              context.max_opening_bytes)));
    }
    if (absl::Now() > call->deadline) {
      return fail(absl::DeadlineExceededError(
          "Open: the deadline passed before the replay started"));
    }
    std::vector<uint32_t> layers(request.layers().begin(),
                                 request.layers().end());
    absl::StatusOr<ReplayedLayers> replayed = ReplayLayers(
        *context.engine, *entry, layers,
        context.faults != nullptr ? context.faults->NewRowsTamper() : nullptr);
    if (!replayed.ok()) return fail(replayed.status());
    if (absl::Now() > call->deadline) {
      return fail(absl::DeadlineExceededError(
          "Open: the deadline passed during the replay"));
    }
    absl::MutexLock lock(&call->mu);
    if (call->finished) return;
    call->replayed = *std::move(replayed);
    v1::OpeningHeader* header = call->chunk.mutable_header();
    header->set_commitment_envelope(entry->commitment_envelope());
    header->set_salt(entry->salt());
    *header->mutable_prompt_token_ids() = entry->prompt_token_ids();
    *header->mutable_output_token_ids() = entry->output_token_ids();
    header->set_seed(entry->seed());
    header->set_positions(static_cast<uint32_t>(positions));
    header->set_hidden_size(static_cast<uint32_t>(hidden));
    *header->mutable_layers() = request.layers();
    call->writing = true;
    call->reactor->StartWrite(&call->chunk);
  }

  const ServiceContext& context_;
  std::shared_ptr<OpenCall> call_;
};

}  // namespace

grpc::ServerWriteReactor<v1::OpenChunk>* OpeningService::Open(
    grpc::CallbackServerContext* context, const v1::OpenRequest* request) {
  return rpc::Published(new OpenReactor(context_, *context, *request));
}

grpc::ServerUnaryReactor* OpeningService::GetCommitment(
    grpc::CallbackServerContext* context,
    const v1::GetCommitmentRequest* request,
    v1::GetCommitmentResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (request->request_id().size() != store::kRequestIdBytes) {
    reactor->Finish(rpc::ToGrpcStatus(absl::InvalidArgumentError(Cat(
        "GetCommitmentRequest.request_id: got ", request->request_id().size(),
        " bytes, want ", store::kRequestIdBytes))));
    return reactor;
  }
  std::shared_ptr<ProverJournal> journal = context_.journal->Get();
  if (journal == nullptr) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "prover: shutting down"));
    return reactor;
  }
  // One RocksDB point read: short enough for a reactor thread.
  absl::StatusOr<v1::JournalEntry> entry = journal->Get(request->request_id());
  if (!entry.ok()) {
    reactor->Finish(rpc::ToGrpcStatus(entry.status()));
    return reactor;
  }
  response->set_commitment_envelope(entry->commitment_envelope());
  if (entry->has_inclusion())
    *response->mutable_inclusion() = entry->inclusion();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace layerproof::prover::internal
