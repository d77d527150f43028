// The one client of a prover: a Generate call whose response is checked
// with the receipt check (check/receipt.h) and whose promise, when the log
// was slow, is followed until its inclusion arrives or its deadline passes.
// `layerproof generate --prover` and the demo's clients both use it.
// Thread safety: GenerateChecked may run on many threads at once over one
// ProverClient (gRPC stubs are thread-safe).
#ifndef LAYERPROOF_CLI_PROVER_CLIENT_H_
#define LAYERPROOF_CLI_PROVER_CLIENT_H_

#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "check/receipt.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"

namespace layerproof::cli {

struct ProverClient {
  std::unique_ptr<v1::Inference::Stub> inference;
  std::unique_ptr<v1::Opening::Stub> opening;
};

struct ClientTimeouts {
  absl::Duration generate = absl::Seconds(120);
  // How long to follow a promise before giving up (the receipt is then
  // left pending, not broken).
  absl::Duration follow = absl::Seconds(60);
  absl::Duration poll = absl::Milliseconds(100);
};

struct CheckedGeneration {
  // OK: the response passed every check and, for a promise, its inclusion
  // arrived and passed too. Otherwise the first failure: an RPC error
  // (rpc_failed), a failed check, a broken promise (promise_broken), or a
  // promise still pending when ClientTimeouts::follow ran out.
  absl::Status status;
  bool rpc_failed = false;
  bool promise_broken = false;
  v1::GenerateResponse response;
  std::optional<check::CheckedReceipt> receipt;
  // The inclusion a promised receipt was followed by.
  std::optional<v1::LogInclusion> followed_inclusion;
};

// `request` as the client sends it (set its client_nonce: a fresh random
// one binds the seed to this request, docs/protocol.md).
CheckedGeneration GenerateChecked(const ProverClient& client,
                                  const v1::GenerateRequest& request,
                                  const check::ReceiptTrust& trust,
                                  const ClientTimeouts& timeouts = {});

// A fresh random client nonce of 16 bytes (OpenSSL RAND_bytes).
std::string RandomNonce();

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_PROVER_CLIENT_H_
