// Inference: Generate (unary and streamed) and ModelInfo.
#include <deque>
#include <memory>
#include <optional>
#include <utility>

#include "prover/internal/services.h"
#include "rpc/grpc_status.h"
#include "rpc/reactor.h"

namespace layerproof::prover::internal {
namespace {

// The gRPC status of a finished Generate call, counted by its code.
grpc::Status Counted(ProverMetrics* metrics, const absl::Status& status) {
  if (metrics != nullptr) metrics->CountRequest("grpc", status.code());
  return rpc::ToGrpcStatus(status);
}

// Shared by a unary Generate reactor and the pipeline's callbacks, which
// may outlive the reactor (the pipeline finishes after the client left).
struct UnaryCall {
  absl::Mutex mu;
  bool finished ABSL_GUARDED_BY(mu) = false;
  grpc::ServerUnaryReactor* reactor ABSL_GUARDED_BY(mu) = nullptr;
  v1::GenerateResponse* response ABSL_GUARDED_BY(mu) = nullptr;
  std::optional<uint64_t> ticket ABSL_GUARDED_BY(mu);
  bool cancelled ABSL_GUARDED_BY(mu) = false;
};

// Lives from Generate() until gRPC calls OnDone (after Finish, which comes
// from the pipeline's DoneCallback or a validation error); deletes itself.
class GenerateReactor final : public grpc::ServerUnaryReactor {
 public:
  GenerateReactor(const ServiceContext& context,
                  const grpc::CallbackServerContext& server_context,
                  const v1::GenerateRequest& request,
                  v1::GenerateResponse* response)
      : context_(context), call_(std::make_shared<UnaryCall>()) {
    absl::StatusOr<rpc::PeerLease> lease =
        AdmitGenerate(context, server_context, "Inference.Generate");
    if (!lease.ok()) {
      Finish(Counted(context.metrics, lease.status()));
      return;
    }
    lease_ = *std::move(lease);
    absl::StatusOr<GenerationSpec> spec =
        ValidateGenerateRequest(request, context.limits, context.text);
    if (!spec.ok()) {
      Finish(Counted(context.metrics, spec.status()));
      return;
    }
    {
      absl::MutexLock lock(&call_->mu);
      call_->reactor = this;
      call_->response = response;
    }
    std::shared_ptr<UnaryCall> call = call_;
    absl::StatusOr<uint64_t> ticket = context.pipeline->Start(
        *std::move(spec), nullptr,
        [call, metrics = context.metrics](
            absl::StatusOr<v1::GenerateResponse> result) {
          grpc::ServerUnaryReactor* reactor = nullptr;
          {
            absl::MutexLock lock(&call->mu);
            if (call->finished) return;
            call->finished = true;
            if (result.ok()) *call->response = *std::move(result);
            reactor = call->reactor;
          }
          reactor->Finish(Counted(metrics, result.status()));
        });
    absl::MutexLock lock(&call_->mu);
    if (!ticket.ok()) {
      call_->finished = true;
      Finish(Counted(context.metrics, ticket.status()));
      return;
    }
    call_->ticket = *ticket;
    if (call_->cancelled) context_.pipeline->Cancel(*ticket);
  }

  void OnCancel() override {
    rpc::ReactionStarts(this);
    absl::MutexLock lock(&call_->mu);
    call_->cancelled = true;
    if (call_->ticket.has_value() && !call_->finished) {
      context_.pipeline->Cancel(*call_->ticket);
    }
  }
  void OnDone() override {
    rpc::DeleteAfterLastCriticalSection(this, call_->mu);
  }

 private:
  const ServiceContext& context_;
  std::shared_ptr<UnaryCall> call_;
  rpc::PeerLease lease_;  // released when gRPC is done with the call
};

// Shared by a GenerateStream reactor and the pipeline's callbacks.
struct StreamCall {
  absl::Mutex mu;
  grpc::ServerWriteReactor<v1::GenerateEvent>* reactor ABSL_GUARDED_BY(mu) =
      nullptr;
  std::deque<v1::GenerateEvent> queue ABSL_GUARDED_BY(mu);
  v1::GenerateEvent writing_event ABSL_GUARDED_BY(mu);
  bool writing ABSL_GUARDED_BY(mu) = false;
  std::optional<grpc::Status> final_status ABSL_GUARDED_BY(mu);
  bool finished ABSL_GUARDED_BY(mu) = false;
  std::optional<uint64_t> ticket ABSL_GUARDED_BY(mu);
  bool cancelled ABSL_GUARDED_BY(mu) = false;

  // Starts the next write, or finishes once the last event is out.
  void Pump() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (finished || writing) return;
    if (!queue.empty()) {
      writing_event = std::move(queue.front());
      queue.pop_front();
      writing = true;
      reactor->StartWrite(&writing_event);
    } else if (final_status.has_value()) {
      finished = true;
      reactor->Finish(*final_status);
    }
  }
};

// Lives from GenerateStream() until gRPC calls OnDone (after Finish, from
// the pipeline's callbacks or a failed write); deletes itself.
class GenerateStreamReactor final
    : public grpc::ServerWriteReactor<v1::GenerateEvent> {
 public:
  GenerateStreamReactor(const ServiceContext& context,
                        const grpc::CallbackServerContext& server_context,
                        const v1::GenerateRequest& request)
      : context_(context), call_(std::make_shared<StreamCall>()) {
    absl::StatusOr<rpc::PeerLease> lease =
        AdmitGenerate(context, server_context, "Inference.GenerateStream");
    if (!lease.ok()) {
      Finish(Counted(context.metrics, lease.status()));
      return;
    }
    lease_ = *std::move(lease);
    absl::StatusOr<GenerationSpec> spec =
        ValidateGenerateRequest(request, context.limits, context.text);
    if (!spec.ok()) {
      Finish(Counted(context.metrics, spec.status()));
      return;
    }
    {
      absl::MutexLock lock(&call_->mu);
      call_->reactor = this;
    }
    std::shared_ptr<StreamCall> call = call_;
    absl::StatusOr<uint64_t> ticket = context.pipeline->Start(
        *std::move(spec),
        [call](int32_t token) {
          absl::MutexLock lock(&call->mu);
          if (call->finished) return true;
          // Coalesce with a delta that is queued but not yet being written.
          if (call->queue.empty() || !call->queue.back().has_tokens()) {
            call->queue.emplace_back();
          }
          call->queue.back().mutable_tokens()->add_token_ids(token);
          call->Pump();
          return true;
        },
        [call, metrics = context.metrics](
            absl::StatusOr<v1::GenerateResponse> result) {
          absl::MutexLock lock(&call->mu);
          if (call->finished) return;
          if (result.ok()) {
            call->queue.emplace_back();
            *call->queue.back().mutable_done() = *std::move(result);
          }
          call->final_status = Counted(metrics, result.status());
          call->Pump();
        });
    absl::MutexLock lock(&call_->mu);
    if (!ticket.ok()) {
      call_->finished = true;
      Finish(Counted(context.metrics, ticket.status()));
      return;
    }
    call_->ticket = *ticket;
    if (call_->cancelled) context_.pipeline->Cancel(*ticket);
  }

  void OnWriteDone(bool ok) override {
    rpc::ReactionStarts(this);
    absl::MutexLock lock(&call_->mu);
    call_->writing = false;
    if (!ok) {
      // The stream is broken (the client left): stop the request too.
      if (call_->ticket.has_value()) context_.pipeline->Cancel(*call_->ticket);
      call_->queue.clear();
      if (!call_->finished) {
        call_->finished = true;
        Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                            "GenerateStream: the stream was closed"));
      }
      return;
    }
    call_->Pump();
  }
  void OnCancel() override {
    rpc::ReactionStarts(this);
    absl::MutexLock lock(&call_->mu);
    call_->cancelled = true;
    if (call_->ticket.has_value() && !call_->finished) {
      context_.pipeline->Cancel(*call_->ticket);
    }
  }
  void OnDone() override {
    rpc::DeleteAfterLastCriticalSection(this, call_->mu);
  }

 private:
  const ServiceContext& context_;
  std::shared_ptr<StreamCall> call_;
  rpc::PeerLease lease_;  // released when gRPC is done with the call
};

}  // namespace

absl::StatusOr<rpc::PeerLease> AdmitGenerate(
    const ServiceContext& context, const grpc::ServerContextBase& call,
    std::string_view method) {
  if (!rpc::Authorizer::PeerCommonName(call).empty()) {
    if (absl::Status s =
            context.authorizer->Check(call, rpc::Role::kClient, method);
        !s.ok()) {
      return s;
    }
    return rpc::PeerLease();
  }
  return context.peer_limiter->Admit(call, method);
}

grpc::ServerUnaryReactor* InferenceService::Generate(
    grpc::CallbackServerContext* context, const v1::GenerateRequest* request,
    v1::GenerateResponse* response) {
  return rpc::Published(
      new GenerateReactor(context_, *context, *request, response));
}

grpc::ServerWriteReactor<v1::GenerateEvent>* InferenceService::GenerateStream(
    grpc::CallbackServerContext* context, const v1::GenerateRequest* request) {
  return rpc::Published(
      new GenerateStreamReactor(context_, *context, *request));
}

grpc::ServerUnaryReactor* InferenceService::ModelInfo(
    grpc::CallbackServerContext* context,
    const v1::ModelInfoRequest* /*request*/, v1::ModelInfoResponse* response) {
  *response = context_.model_info;
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace layerproof::prover::internal
