#include "prover/prover_node.h"

#include <filesystem>
#include <thread>
#include <utility>

#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "kernels/golden.h"
#include "prover/batch_scheduler.h"
#include "prover/commitment_builder.h"
#include "prover/inference_pipeline.h"
#include "prover/internal/services.h"
#include "prover/journal.h"
#include "prover/prover_metrics.h"
#include "rpc/metrics.h"
#include "rpc/structured_log.h"
#include "rpc/task_pool.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"
#include "store/status.h"
#include "text/gguf_tokenizer.h"
#include "text/model_text.h"

namespace layerproof::prover {

namespace model = kernels::model;
using store::internal::Cat;

namespace {

absl::Status CheckOptions(const ProverOptions& o) {
  auto invalid = [](const std::string& m) {
    return absl::InvalidArgumentError(Cat("ProverOptions.", m));
  };
  LP_RETURN_IF_ERROR(
      store::ValidateNodeId("ProverOptions.prover_id", o.prover_id));
  if (o.model == nullptr) return invalid("model: required");
  if (o.executor == nullptr) return invalid("executor: required");
  if (o.key == nullptr) return invalid("key: required");
  if (o.promise_window <= absl::ZeroDuration() ||
      o.promise_window > absl::Nanoseconds(store::kMaxPromiseWindowNanos)) {
    return invalid(
        "promise_window: want > 0 and <= 7 days "
        "(store::kMaxPromiseWindowNanos)");
  }
  if (o.log_origin.empty()) {
    return invalid("log_origin: required (the log's origin line)");
  }
  if (o.log_key == nullptr) {
    return invalid("log_key: required (the log's checkpoint key)");
  }
  if (o.journal_dir.empty()) return invalid("journal_dir: required");
  if (o.verifier_address.empty()) return invalid("verifier_address: required");
  if (o.max_new_tokens < 1) return invalid("max_new_tokens: got 0, want >= 1");
  if (o.max_prompt_tokens < 1) {
    return invalid("max_prompt_tokens: got 0, want >= 1");
  }
  if (o.opening_threads < 1 || o.opening_threads > 64) {
    return invalid(
        Cat("opening_threads: got ", o.opening_threads, ", want 1..64"));
  }
  if (o.retention <= absl::ZeroDuration()) {
    return invalid("retention: want > 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> LogChannel(
    const ProverOptions& o) {
  LP_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> creds,
                      rpc::MakeChannelCredentials(o.verifier_tls));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  // Reconnect quickly once the verifier comes back: the submitter has its
  // own backoff and must not wait out gRPC's (up to 120 s).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  if (!o.verifier_tls.server_name_override.empty()) {
    args.SetSslTargetNameOverride(o.verifier_tls.server_name_override);
  }
  return grpc::CreateCustomChannel(o.verifier_address, creds, args);
}

}  // namespace

struct ProverNode::Impl {
  ProverOptions options;
  std::unique_ptr<text::ModelText> text;
  std::unique_ptr<model::Engine> engine;
  std::shared_ptr<ProverJournal> journal;
  std::unique_ptr<internal::JournalHandle> journal_handle;
  std::unique_ptr<LogSubmitter> submitter;
  std::unique_ptr<BatchScheduler> scheduler;
  std::unique_ptr<rpc::TaskPool> commit_pool;
  std::unique_ptr<rpc::TaskPool> opening_pool;
  std::unique_ptr<InferencePipeline> pipeline;
  rpc::NodeMetrics metrics;
  std::unique_ptr<ProverMetrics> prover_metrics;
  internal::ServiceContext service_context;
  std::unique_ptr<internal::InferenceService> inference_service;
  std::unique_ptr<internal::OpeningService> opening_service;
  std::unique_ptr<HttpApi> http_api;

  absl::Mutex sweep_mu;
  bool stop_sweeper ABSL_GUARDED_BY(sweep_mu) = false;
  std::thread sweeper;
  bool shut_down = false;

  // Queue depths and totals, read when scraped.
  void AddSampledMetrics() {
    using Type = rpc::SampledMetrics::Type;
    rpc::SampledMetrics& m = metrics.sampled();
    m.Add("layerproof_queue_depth",
          "Work waiting or in flight in each of the prover's queues.",
          Type::kGauge, rpc::SampledMetrics::Sampler([this] {
            return std::vector<std::pair<rpc::SampledMetrics::Labels, double>>{
                {{{"queue", "generation"}}, double(scheduler->active())},
                {{{"queue", "commit"}},
                 double(commit_pool->queued() + commit_pool->running())},
                {{{"queue", "submission"}}, double(submitter->pending())},
                {{{"queue", "opening"}},
                 double(opening_pool->queued() + opening_pool->running())}};
          }));
    m.Add("layerproof_commitments_total",
          "Requests committed (signed and journaled) since the start.",
          Type::kCounter, [this] { return double(pipeline->committed()); });
  }

  absl::StatusOr<JournalSweep> Sweep() {
    std::shared_ptr<ProverJournal> j = journal_handle->Get();
    if (j == nullptr) return absl::UnavailableError("prover: shut down");
    const int64_t now = UnixNanosNow();
    const int64_t cutoff = now - absl::ToInt64Nanoseconds(options.retention);
    absl::StatusOr<JournalSweep> sweep = j->DeleteOlderThan(cutoff);
    if (!sweep.ok()) {
      rpc::LogEvent("error", "prover.journal", "sweep_failed",
                    {{"message", std::string(sweep.status().message())}});
      return sweep;
    }
    if (sweep->deleted > 0) {
      rpc::LogEvent("info", "prover.journal", "swept",
                    {{"deleted", sweep->deleted}});
    }
    if (sweep->pending_kept > 0) {
      // Kept past the retention because the log has not acknowledged them:
      // a sign that the log has been unreachable (or refusing) for long.
      rpc::LogEvent(
          "warn", "prover.journal", "pending_past_retention",
          {{"pending_kept", sweep->pending_kept},
           {"oldest_age_ms",
            (now - sweep->oldest_pending_unix_nanos) / 1'000'000},
           {"retention_ms", absl::ToInt64Milliseconds(options.retention)}});
    }
    return sweep;
  }

  void SweepLoop() {
    absl::MutexLock lock(&sweep_mu);
    while (!stop_sweeper) {
      sweep_mu.AwaitWithTimeout(absl::Condition(&stop_sweeper),
                                options.retention_sweep_interval);
      if (stop_sweeper) break;
      sweep_mu.Unlock();
      (void)Sweep();
      sweep_mu.Lock();
    }
  }
};

ProverNode::ProverNode(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<ProverNode>> ProverNode::Create(
    ProverOptions options) {
  LP_RETURN_IF_ERROR(CheckOptions(options));
  auto impl = std::make_unique<Impl>();
  Impl& n = *impl;
  n.options = std::move(options);
  const ProverOptions& o = n.options;
  const model::ModelConfig& mc = o.model->config();

  {
    // tokenizer.json beside the model, else a GGUF file's tokenizer.ggml.*
    // metadata; neither leaves n.text null (prompts as ids only), and so
    // does GGUF metadata text/ does not support (logged).
    kernels::StatusOr<std::unique_ptr<text::ModelText>> t =
        text::LoadModelTextFor(o.model->dir(), o.model->source());
    if (t.ok()) {
      n.text = *std::move(t);
    } else if (t.status().code() == kernels::StatusCode::kUnimplemented &&
               !std::filesystem::exists(o.model->dir() + "/tokenizer.json")) {
      rpc::LogEvent("warn", "prover.text", "gguf_tokenizer_unsupported",
                    {{"error", t.status().message()}});
    } else {
      return store::ToAbslStatus(t.status());
    }
  }
  kernels::StatusOr<std::unique_ptr<model::Engine>> engine =
      model::Engine::Create(*o.model, o.executor, o.engine);
  if (!engine.ok()) return store::ToAbslStatus(engine.status());
  n.engine = *std::move(engine);

  LP_ASSIGN_OR_RETURN(std::unique_ptr<ProverJournal> journal,
                      ProverJournal::Open(o.journal_dir));
  n.journal = std::move(journal);
  n.journal_handle = std::make_unique<internal::JournalHandle>(n.journal);
  LP_RETURN_IF_ERROR(n.Sweep().status());
  LP_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, LogChannel(o));
  n.submitter = std::make_unique<LogSubmitter>(*n.journal, channel, o.log_key,
                                               o.log_origin, o.submitter);
  LP_ASSIGN_OR_RETURN(std::vector<v1::JournalEntry> pending,
                      n.journal->Pending());
  if (!pending.empty()) {
    rpc::LogEvent("info", "prover.submitter", "requeued",
                  {{"pending", pending.size()}});
  }
  n.submitter->Requeue(pending);

  n.prover_metrics = std::make_unique<ProverMetrics>(n.metrics.registry());
  n.scheduler = std::make_unique<BatchScheduler>(
      *n.engine, o.engine.max_sequences, o.max_waiting_requests,
      o.record_metrics ? &n.prover_metrics->batch_size : nullptr);
  // The commit queue holds requests the engine finished; the engine admits
  // at most max_sequences running plus max_waiting_requests waiting, so this
  // bound is never reached unless commits stall (then a finished request
  // fails RESOURCE_EXHAUSTED, uncommitted, rather than queueing forever).
  n.commit_pool = std::make_unique<rpc::TaskPool>(
      1, o.max_waiting_requests + size_t(o.engine.max_sequences));
  n.opening_pool =
      std::make_unique<rpc::TaskPool>(o.opening_threads, o.max_queued_openings);
  PipelineConfig pc;
  pc.model = o.model;
  pc.prover_id = o.prover_id;
  pc.key = o.key;
  pc.text = n.text.get();
  pc.max_context = n.engine->max_context();
  pc.receipt_wait = o.receipt_wait;
  pc.log_origin = o.log_origin;
  pc.promise_window = o.promise_window;
  pc.faults = o.faults.get();
  pc.metrics = o.record_metrics ? n.prover_metrics.get() : nullptr;
  n.pipeline = std::make_unique<InferencePipeline>(
      std::move(pc), *n.scheduler, *n.commit_pool, *n.journal, *n.submitter);

  internal::ServiceContext& sc = n.service_context;
  sc.pipeline = n.pipeline.get();
  sc.engine = n.engine.get();
  sc.text = n.text.get();
  sc.limits.vocab_size = mc.vocab_size;
  sc.limits.max_context = n.engine->max_context();
  sc.limits.max_new_tokens = o.max_new_tokens;
  sc.limits.max_prompt_tokens = o.max_prompt_tokens;
  sc.limits.max_prompt_bytes = o.max_prompt_bytes;
  v1::ModelInfoResponse& info = sc.model_info;
  info.set_prover_id(o.prover_id);
  const kernels::Sha256Digest& root = o.model->digest().root;
  info.set_model_digest(
      std::string(reinterpret_cast<const char*>(root.data()), root.size()));
  info.set_spec_version(kernels::kSpecVersion);
  info.set_num_layers(static_cast<uint32_t>(mc.num_layers));
  info.set_hidden_size(static_cast<uint32_t>(mc.hidden_size));
  info.set_vocab_size(static_cast<uint32_t>(mc.vocab_size));
  info.set_max_context(static_cast<uint32_t>(n.engine->max_context()));
  info.set_max_new_tokens(o.max_new_tokens);
  info.set_max_prompt_tokens(static_cast<uint32_t>(
      std::min<int64_t>(o.max_prompt_tokens, n.engine->max_context() - 1)));
  const auto& pub = o.key->public_key().raw();
  info.set_public_key(
      std::string(reinterpret_cast<const char*>(pub.data()), pub.size()));
  info.set_backend(std::string(kernels::BackendName(o.executor->kind())));
  sc.journal = n.journal_handle.get();
  sc.opening_pool = n.opening_pool.get();
  sc.authorizer = std::make_unique<rpc::Authorizer>(o.roles, o.insecure);
  LP_ASSIGN_OR_RETURN(sc.peer_limiter, rpc::PeerLimiter::Create(o.peer_limits));
  sc.max_opening_bytes = o.max_opening_bytes;
  sc.max_opening_time = o.max_opening_time;
  sc.faults = o.faults.get();
  sc.metrics = o.record_metrics ? n.prover_metrics.get() : nullptr;
  n.AddSampledMetrics();
  n.inference_service = std::make_unique<internal::InferenceService>(sc);
  n.opening_service = std::make_unique<internal::OpeningService>(sc);
  n.sweeper = std::thread([&n] { n.SweepLoop(); });
  return std::unique_ptr<ProverNode>(new ProverNode(std::move(impl)));
}

ProverNode::~ProverNode() {
  Impl& n = *impl_;
  if (!n.shut_down) (void)Shutdown(absl::Now());
  // Openings ran until now (the server is shut down before the node goes):
  // finish the replays queued, then close the journal.
  n.opening_pool->Drain();
  n.journal_handle->Close();
  n.journal.reset();
}

std::vector<grpc::Service*> ProverNode::services() {
  return {impl_->inference_service.get(), impl_->opening_service.get()};
}

std::vector<grpc::Service*> ProverNode::inference_services() {
  return {impl_->inference_service.get()};
}

std::vector<grpc::Service*> ProverNode::opening_services() {
  return {impl_->opening_service.get()};
}

absl::StatusOr<int> ProverNode::StartHttpApi(HttpApiOptions options) {
  Impl& n = *impl_;
  if (n.http_api != nullptr) {
    return absl::FailedPreconditionError("the HTTP API is already running");
  }
  if (n.shut_down) return absl::UnavailableError("prover: shut down");
  LP_ASSIGN_OR_RETURN(n.http_api,
                      HttpApi::Start(std::move(options), n.service_context));
  return n.http_api->port();
}

absl::Status ProverNode::Shutdown(absl::Time deadline) {
  Impl& n = *impl_;
  if (n.shut_down) return absl::OkStatus();
  n.shut_down = true;
  if (n.http_api != nullptr) n.http_api->SetDraining();
  n.scheduler->Drain(deadline);
  n.commit_pool->Drain();
  absl::Status flushed = n.submitter->Flush(deadline);
  n.submitter->Stop();
  // Every completion has its answer now: let the handlers send them.
  if (n.http_api != nullptr) n.http_api->Stop();
  {
    absl::MutexLock lock(&n.sweep_mu);
    n.stop_sweeper = true;
  }
  n.sweeper.join();
  // The opening pool and the journal stay: Opening answers until the node
  // is destroyed (an auditor may open the last commitments right now).
  return flushed;
}

size_t ProverNode::pending_submissions() const {
  return impl_->submitter->pending();
}

uint64_t ProverNode::committed_requests() const {
  return impl_->pipeline->committed();
}

absl::StatusOr<JournalSweep> ProverNode::SweepJournal() {
  return impl_->Sweep();
}

const rpc::NodeMetrics& ProverNode::metrics() const { return impl_->metrics; }

uint64_t ProverNode::max_batch_sequences() const {
  return impl_->scheduler->max_batch_sequences();
}

}  // namespace layerproof::prover
