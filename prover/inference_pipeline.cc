#include "prover/inference_pipeline.h"

#include <utility>

#include "prover/commitment_builder.h"
#include "rpc/structured_log.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "store/status.h"

namespace layerproof::prover {

namespace model = kernels::model;
using store::internal::Cat;

namespace {

// `bytes` with every ill-formed UTF-8 sequence replaced by U+FFFD, as
// Hugging Face decodes (GenerateResponse.text is a proto3 string, which must
// be valid UTF-8; a byte-level decode cut mid-character is not).
std::string ToValidUtf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      len = 1;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, min = 0x10000;
    }
    bool ok = len > 0 && i + len <= n;
    uint32_t cp = len == 1 ? c : (c & (0x7f >> len));
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xc0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    if (ok) {
      out.append(bytes, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// Runs the TamperEnvelope fault on the parsed `envelope`; replaces the
// bytes only when the hook changed the message (the honest bytes are kept
// otherwise, whatever the re-serialisation would give).
void TamperEnvelope(ProverFaults& faults, std::string& envelope) {
  v1::Envelope parsed;
  if (!parsed.ParseFromString(envelope)) return;  // we just signed it
  const std::string before = parsed.SerializeAsString();
  faults.TamperEnvelope(parsed);
  std::string after = parsed.SerializeAsString();
  if (after != before) envelope = std::move(after);
}

}  // namespace

struct InferencePipeline::Request {
  GenerationSpec spec;
  RequestSecrets secrets;
  uint64_t seed = 0;
  std::unique_ptr<CommitmentTap> tap;
  DoneCallback done;
};

InferencePipeline::InferencePipeline(PipelineConfig config,
                                     BatchScheduler& scheduler,
                                     rpc::TaskPool& commit_pool,
                                     ProverJournal& journal,
                                     LogSubmitter& submitter)
    : config_(std::move(config)),
      scheduler_(scheduler),
      commit_pool_(commit_pool),
      journal_(journal),
      submitter_(submitter) {}

absl::StatusOr<uint64_t> InferencePipeline::Start(GenerationSpec spec,
                                                  TokenSink on_token,
                                                  DoneCallback done,
                                                  std::string* request_id) {
  auto request = std::make_shared<Request>();
  LP_ASSIGN_OR_RETURN(request->secrets, NewRequestSecrets());
  if (request_id != nullptr) *request_id = request->secrets.request_id;
  if (!spec.client_nonce.empty()) {
    request->seed = store::SeedFromNonce(store::AsBytes(spec.client_nonce));
  } else if (spec.seed.has_value()) {
    request->seed = *spec.seed;
  } else {
    LP_ASSIGN_OR_RETURN(request->seed, RandomSeed());
  }
  const model::ModelConfig& mc = config_.model->config();
  request->tap = std::make_unique<CommitmentTap>(
      mc.num_layers, mc.hidden_size, request->secrets.key,
      config_.faults != nullptr ? config_.faults->NewRowsTamper() : nullptr);
  request->done = std::move(done);

  model::GenerationRequest g;
  g.prompt = spec.prompt;
  g.sampling.temperature = spec.sampling.temperature();
  g.sampling.top_k = spec.sampling.top_k();
  g.sampling.top_p = spec.sampling.top_p();
  g.sampling.seed = request->seed;
  g.max_new_tokens = spec.max_tokens;
  g.stop_tokens = spec.stop_token_ids;
  g.ignore_eos = spec.ignore_eos;
  g.tap = request->tap.get();
  request->spec = std::move(spec);

  ScheduledGeneration scheduled;
  scheduled.request = std::move(g);
  if (ProverMetrics* m = config_.metrics; m != nullptr) {
    // Engine thread: one clock read and one histogram update per token.
    scheduled.on_token = [m, on_token = std::move(on_token), last = absl::Now(),
                          first = true](int32_t token) mutable {
      const absl::Time now = absl::Now();
      (first ? m->time_to_first_token : m->time_per_output_token)
          .Observe(absl::ToDoubleSeconds(now - last));
      first = false;
      last = now;
      return on_token ? on_token(token) : true;
    };
  } else {
    scheduled.on_token = std::move(on_token);
  }
  scheduled.on_finished =
      [this, request](absl::StatusOr<model::FinishedSequence> finished) {
        const absl::Status queued = commit_pool_.Offer(
            {[this, request, finished = std::move(finished)]() mutable {
               Commit(request, std::move(finished));
             },
             {}},
            "prover commit queue");
        if (!queued.ok()) {
          request->done(absl::Status(queued.code(),
                                     Cat(std::string(queued.message()),
                                         "; the request was not committed")));
        }
      };
  return scheduler_.Enqueue(std::move(scheduled));
}

void InferencePipeline::Cancel(uint64_t ticket) { scheduler_.Cancel(ticket); }

void InferencePipeline::Commit(
    const std::shared_ptr<Request>& request,
    absl::StatusOr<model::FinishedSequence> finished) {
  const DoneCallback& done = request->done;
  if (!finished.ok()) {
    done(finished.status());
    return;
  }
  model::FinishedSequence& f = *finished;
  if (f.output.empty()) {
    done(absl::CancelledError(
        "request cancelled before any token was generated; nothing was "
        "committed"));
    return;
  }
  const int64_t positions =
      static_cast<int64_t>(f.prompt.size() + f.output.size()) - 1;
  absl::StatusOr<std::vector<std::string>> hashes =
      request->tap->Finish(positions);
  request->tap.reset();
  if (!hashes.ok()) {
    done(hashes.status());
    return;
  }
  if (config_.faults != nullptr) config_.faults->TamperOutputTokens(f.output);

  CommitmentInputs in;
  in.model = config_.model;
  in.prover_id = config_.prover_id;
  in.secrets = request->secrets;
  in.prompt = f.prompt;
  in.output = f.output;
  in.sampling = request->spec.sampling;
  in.seed = request->seed;
  in.layer_hashes = *std::move(hashes);
  in.client_nonce = request->spec.client_nonce;
  in.created_at_unix_nanos = UnixNanosNow();
  in.finish_reason = ToProtoFinishReason(f.finish);
  in.max_new_tokens = request->spec.max_tokens;
  in.request_stop_token_ids = request->spec.stop_token_ids;
  in.ignore_eos = request->spec.ignore_eos;
  in.max_context = config_.max_context;
  v1::Commitment commitment = BuildCommitment(in);
  if (config_.faults != nullptr) config_.faults->TamperCommitment(commitment);
  absl::StatusOr<std::string> envelope =
      store::SignCommitment(commitment, *config_.key);
  if (!envelope.ok()) {
    done(absl::InternalError(Cat("prover: cannot sign the commitment: ",
                                 std::string(envelope.status().message()))));
    return;
  }
  if (config_.faults != nullptr) TamperEnvelope(*config_.faults, *envelope);

  v1::JournalEntry entry;
  entry.set_request_id(request->secrets.request_id);
  entry.set_salt(request->secrets.salt);
  entry.set_seed(request->seed);
  entry.mutable_prompt_token_ids()->Assign(f.prompt.begin(), f.prompt.end());
  entry.mutable_output_token_ids()->Assign(f.output.begin(), f.output.end());
  *entry.mutable_sampling() = request->spec.sampling;
  entry.set_finish_reason(in.finish_reason);
  entry.set_commitment_envelope(*envelope);
  entry.set_created_at_unix_nanos(in.created_at_unix_nanos);
  absl::Status journaled = journal_.Put(entry);
  if (!journaled.ok()) {
    rpc::LogEvent(
        "error", "prover.pipeline", "journal_write_failed",
        {{"request_id", store::HexEncode(store::AsBytes(entry.request_id()))},
         {"message", std::string(journaled.message())}});
    done(absl::UnavailableError(
        Cat("prover: the commitment could not be journaled: ",
            std::string(journaled.message()))));
    return;
  }
  committed_.fetch_add(1);
  if (config_.metrics != nullptr) {
    config_.metrics->prompt_tokens.Increment(
        static_cast<double>(f.prompt.size()));
    config_.metrics->output_tokens.Increment(
        static_cast<double>(f.output.size()));
  }

  v1::GenerateResponse response;
  response.set_request_id(entry.request_id());
  *response.mutable_prompt_token_ids() = entry.prompt_token_ids();
  *response.mutable_output_token_ids() = entry.output_token_ids();
  if (config_.text != nullptr) {
    kernels::StatusOr<std::string> text =
        config_.text->tokenizer().Decode(f.output, /*skip_special=*/true);
    if (text.ok()) response.set_text(ToValidUtf8(*text));
  }
  response.set_finish_reason(in.finish_reason);
  response.set_salt(request->secrets.salt);
  response.set_seed(request->seed);
  response.set_commitment_envelope(*envelope);

  if (config_.faults != nullptr && config_.faults->SkipSubmission()) {
    // Tests only: a cheater that journals, promises and never logs.
    Respond(request, std::move(response), ReceiptOutcome{});  // kPending
    return;
  }
  submitter_.Submit(entry.request_id(), *std::move(envelope),
                    absl::Now() + config_.receipt_wait,
                    [this, request, response = std::move(response)](
                        const ReceiptOutcome& outcome) mutable {
                      Respond(request, std::move(response), outcome);
                    });
}

void InferencePipeline::Respond(const std::shared_ptr<Request>& request,
                                v1::GenerateResponse response,
                                const ReceiptOutcome& outcome) {
  switch (outcome.kind) {
    case ReceiptOutcome::Kind::kIncluded:
      *response.mutable_receipt()->mutable_inclusion() = outcome.inclusion;
      break;
    case ReceiptOutcome::Kind::kRefused:
      break;  // no receipt; the refusal is logged and journaled
    case ReceiptOutcome::Kind::kPending: {
      v1::SubmissionPromise promise;
      promise.set_request_id(response.request_id());
      const store::Sha256Hash leaf =
          store::LeafHash(response.commitment_envelope());
      promise.set_commitment_leaf_hash(
          std::string(reinterpret_cast<const char*>(leaf.data()), leaf.size()));
      promise.set_prover_id(config_.prover_id);
      promise.set_log_origin(config_.log_origin);
      const int64_t now = UnixNanosNow();
      promise.set_promised_at_unix_nanos(now);
      promise.set_log_by_unix_nanos(
          now + absl::ToInt64Nanoseconds(config_.promise_window));
      absl::StatusOr<std::string> signed_promise =
          store::SignEnvelope(store::kSubmissionPromisePayloadType,
                              promise.SerializeAsString(), *config_.key);
      if (!signed_promise.ok()) {
        request->done(absl::InternalError(
            Cat("prover: cannot sign the submission promise: ",
                std::string(signed_promise.status().message()))));
        return;
      }
      response.mutable_receipt()->set_promise_envelope(*signed_promise);
      break;
    }
  }
  request->done(std::move(response));
}

}  // namespace layerproof::prover
