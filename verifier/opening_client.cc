#include "verifier/opening_client.h"

#include <algorithm>
#include <utility>

#include "check/opening_stream.h"
#include "grpc/grpc.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

// Retries of an opening whose prover is unreachable (opening_client.h).
constexpr absl::Duration kInitialRetryBackoff = absl::Milliseconds(50);
constexpr absl::Duration kMaxRetryBackoff = absl::Seconds(1);
// The channel's own reconnection backoff (gRPC's defaults, 1 s growing to
// 120 s, would leave a restarted prover unreachable for minutes).
constexpr int kInitialReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;

// A channel as rpc::MakeChannel makes one, reconnecting fast.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpeningChannel(
    const std::string& address, const rpc::TlsOptions& tls,
    int max_message_bytes) {
  if (max_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        Cat("GrpcOpeningSourceOptions.max_message_bytes: got ",
            max_message_bytes, ", want > 0"));
  }
  if (tls.insecure && !tls.server_name_override.empty()) {
    return absl::InvalidArgumentError(
        Cat("--insecure: conflicts with server name override ",
            tls.server_name_override));
  }
  LP_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> creds,
                      rpc::MakeChannelCredentials(tls));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes);
  args.SetMaxSendMessageSize(max_message_bytes);
  if (!tls.server_name_override.empty()) {
    args.SetSslTargetNameOverride(tls.server_name_override);
  }
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              kInitialReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  return grpc::CreateCustomChannel(address, creds, args);
}

// One call of Opening.Open. `transient` when it failed for the transport
// (retried until the deadline).
struct Attempt {
  absl::StatusOr<check::Opening> opening;
  bool transient = false;
};

Attempt OpenOnce(v1::Opening::Stub& stub, const v1::OpenRequest& request,
                 const std::vector<uint32_t>& layers, uint64_t positions,
                 uint64_t hidden_size, uint64_t max_bytes,
                 absl::Time deadline) {
  grpc::ClientContext context;  // must outlive the reader
  context.set_deadline(absl::ToChronoTime(deadline));
  std::unique_ptr<grpc::ClientReader<v1::OpenChunk>> reader =
      stub.Open(&context, request);
  check::OpeningAssembler assembler(layers, positions, hidden_size, max_bytes);
  absl::Status malformed;
  v1::OpenChunk chunk;
  while (reader->Read(&chunk)) {
    malformed = assembler.Add(chunk);
    if (!malformed.ok()) {
      context.TryCancel();
      while (reader->Read(&chunk)) {
      }
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!malformed.ok()) return {malformed};
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return {assembler.Finish()};
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return {
          absl::DeadlineExceededError("opening: not complete by the deadline")};
    case grpc::StatusCode::UNAVAILABLE:
      return {absl::UnavailableError("opening: the prover is unreachable"),
              /*transient=*/true};
    default:
      // What the prover reported, by its code only: its message is its own
      // text, and verdict details carry only the verifier's words.
      return {absl::Status(
          static_cast<absl::StatusCode>(status.error_code()),
          Cat("opening refused: ",
              absl::StatusCodeToString(
                  static_cast<absl::StatusCode>(status.error_code()))))};
  }
}

}  // namespace

GrpcOpeningSource::GrpcOpeningSource(GrpcOpeningSourceOptions options)
    : options_(options) {}

absl::Status GrpcOpeningSource::AddProver(const std::string& prover_id,
                                          const std::string& address,
                                          const rpc::TlsOptions& tls) {
  Prover p;
  if (!address.empty()) {
    LP_ASSIGN_OR_RETURN(
        std::shared_ptr<grpc::Channel> channel,
        OpeningChannel(address, tls, options_.max_message_bytes));
    p.stub = std::shared_ptr<v1::Opening::Stub>(v1::Opening::NewStub(channel));
  }
  absl::MutexLock lock(&mu_);
  provers_[prover_id] = std::move(p);
  return absl::OkStatus();
}

absl::StatusOr<check::Opening> GrpcOpeningSource::Open(
    std::string_view prover_id, std::string_view request_id,
    const std::vector<uint32_t>& layers, uint64_t positions,
    uint64_t hidden_size, absl::Time deadline) {
  std::shared_ptr<v1::Opening::Stub> stub;
  {
    absl::MutexLock lock(&mu_);
    auto it = provers_.find(prover_id);
    if (it == provers_.end()) {
      return check::OpeningUnavailableToVerifier(
          Cat("prover \"", prover_id,
              "\" is not registered with this verifier's opening client"));
    }
    if (it->second.stub == nullptr) {
      return check::OpeningUnavailableToVerifier(Cat(
          "prover \"", prover_id,
          "\" is registered without an check::Opening address; register its "
          "opening_address to audit it"));
    }
    stub = it->second.stub;
  }

  v1::OpenRequest request;
  request.set_request_id(std::string(request_id));
  for (uint32_t k : layers) request.add_layers(k);
  absl::Duration backoff = kInitialRetryBackoff;
  for (int attempts = 0;; ++attempts) {
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(
          attempts == 0 ? "opening: the deadline passed before the call"
                        : Cat("opening: the prover was unreachable until the "
                              "deadline (",
                              attempts, " attempts)"));
    }
    Attempt a = OpenOnce(*stub, request, layers, positions, hidden_size,
                         options_.max_opening_bytes, deadline);
    if (!a.transient) return std::move(a.opening);
    ++unreachable_attempts_;
    if (stop_retrying_) {
      return check::OpeningUnavailableToVerifier(
          "opening: the prover is unreachable and the verifier is shutting "
          "down");
    }
    absl::SleepFor(std::min(backoff, deadline - absl::Now()));
    backoff = std::min(2 * backoff, kMaxRetryBackoff);
  }
}

void GrpcOpeningSource::StopRetrying() { stop_retrying_ = true; }

}  // namespace layerproof::verifier
