#include "cli/prover_client.h"

#include <openssl/rand.h>

#include <string>

#include "absl/time/clock.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"

namespace layerproof::cli {
namespace {

using store::internal::Cat;

absl::Status FromGrpc(const grpc::Status& s, std::string_view call) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      Cat(call, ": ", s.error_message()));
}

// Polls Opening.GetCommitment until the promised commitment is logged.
void FollowPromise(const ProverClient& client, const ClientTimeouts& timeouts,
                   const check::ReceiptTrust& trust, CheckedGeneration& out) {
  const v1::SubmissionPromise& promise = *out.receipt->promise;
  // The verifier judges the promise by this time, whatever log_by says.
  const absl::Time log_by =
      absl::FromUnixNanos(store::PromiseDueUnixNanos(promise));
  const absl::Time give_up = absl::Now() + timeouts.follow;
  while (true) {
    v1::GetCommitmentRequest request;
    request.set_request_id(out.response.request_id());
    v1::GetCommitmentResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    const grpc::Status status =
        client.opening->GetCommitment(&context, request, &response);
    if (status.ok() && response.has_inclusion()) {
      out.status = check::CheckPromisedInclusion(
          response.inclusion(), out.response.commitment_envelope(), trust,
          &*out.receipt);
      out.followed_inclusion = response.inclusion();
      return;
    }
    const absl::Time now = absl::Now();
    if (now > log_by) {
      out.promise_broken = true;
      out.status = absl::FailedPreconditionError(
          Cat("receipt: the prover promised to log the commitment by ",
              absl::FormatTime(log_by), " and has not (",
              status.ok() ? "still pending" : status.error_message(),
              "); present the promise to the verifier (Audit.PresentPromise)"));
      return;
    }
    if (now >= give_up) {
      out.status = absl::DeadlineExceededError(
          Cat("receipt: still a promise after following it for ",
              absl::FormatDuration(timeouts.follow), "; it is due by ",
              absl::FormatTime(log_by)));
      return;
    }
    absl::SleepFor(timeouts.poll);  // polling the prover
  }
}

}  // namespace

std::string RandomNonce() {
  std::string nonce(16, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), 16);
  return nonce;
}

CheckedGeneration GenerateChecked(const ProverClient& client,
                                  const v1::GenerateRequest& request,
                                  const check::ReceiptTrust& trust,
                                  const ClientTimeouts& timeouts) {
  CheckedGeneration out;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeouts.generate));
  const grpc::Status status =
      client.inference->Generate(&context, request, &out.response);
  if (!status.ok()) {
    out.rpc_failed = true;
    out.status = FromGrpc(status, "Inference.Generate");
    return out;
  }
  absl::StatusOr<check::CheckedReceipt> receipt =
      check::CheckReceipt(request, out.response, trust);
  if (!receipt.ok()) {
    out.status = receipt.status();
    return out;
  }
  out.receipt = *std::move(receipt);
  if (out.receipt->promise.has_value())
    FollowPromise(client, timeouts, trust, out);
  return out;
}

}  // namespace layerproof::cli
