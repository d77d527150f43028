// The verifier's client of the prover's Opening service (opening.proto):
// an OpeningSource that calls Opening.Open over gRPC and reassembles the
// streamed header and ActivationRows chunks into an Opening.
//
// The stream is validated strictly as it arrives (check::OpeningAssembler,
// check/opening_stream.h, holds the rules), and anything wrong ends the
// call with an error naming what was wrong (the audit's FAIL_OPENING
// detail, "opening malformed: ..."):
//   - the first chunk is the header, and there is exactly one;
//   - the header lists exactly the requested layers, and its positions and
//     hidden_size are the ones the commitment fixes (Open's `positions`
//     and `hidden_size`), checked before anything is allocated;
//   - the layers' rows come in the requested order, each layer complete
//     before the next starts, rows contiguous in position order from 0;
//   - each chunk's data is non-empty, a whole number of rows
//     (hidden_size × 4 bytes each) and does not run past `positions`;
//   - every layer has exactly `positions` rows when the stream ends;
//   - positions × hidden_size × 4 × layers is at most max_opening_bytes,
//     checked from the header before anything is allocated
//     (ResourceExhausted, "opening too large: ...").
// Malformed streams are InvalidArgument. An error status the prover
// returns keeps its code, with the message "opening refused: CODE" (never
// the prover's own text). Transport failures (gRPC UNAVAILABLE: the
// prover down, restarting, or not yet reachable) are retried with a
// backoff of 50 ms doubling up to 1 s, on a channel that reconnects after
// 100 ms doubling up to 1 s, until the deadline; an opening not complete by
// the deadline is DeadlineExceeded. A prover this client does not know, or
// one registered without an Opening address, is
// OpeningUnavailableToVerifier (the verifier's problem, not the prover's).
// No message carries the prover's address.
//
// Thread safety: AddProver and Open may be called from any threads at once.
// Open blocks (the sync ClientReader API); call it from an audit worker
// thread, never from a reactor.
#ifndef LAYERPROOF_VERIFIER_OPENING_CLIENT_H_
#define LAYERPROOF_VERIFIER_OPENING_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "check/re_executor.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "rpc/tls.h"

namespace layerproof::verifier {

struct GrpcOpeningSourceOptions {
  // Most activation bytes one opening may carry (all layers together).
  uint64_t max_opening_bytes = uint64_t{1} << 30;
  // Largest single message the channel accepts (a chunk's data is at most
  // 1 MiB; the header carries the tokens and the envelope).
  int max_message_bytes = 64 << 20;
};

class GrpcOpeningSource : public check::OpeningSource {
 public:
  explicit GrpcOpeningSource(GrpcOpeningSourceOptions options = {});
  GrpcOpeningSource(const GrpcOpeningSource&) = delete;
  GrpcOpeningSource& operator=(const GrpcOpeningSource&) = delete;

  // Registers (or replaces) where `prover_id`'s Opening service listens:
  // `address` "host:port" with `tls`, or "" for a prover registered without
  // one (its openings are then OpeningUnavailableToVerifier). The channel is
  // made here and cached; errors are those of rpc::MakeChannelCredentials
  // (e.g. unreadable TLS files), or InvalidArgument for --insecure with a
  // server name override.
  absl::Status AddProver(const std::string& prover_id,
                         const std::string& address,
                         const rpc::TlsOptions& tls);

  absl::StatusOr<check::Opening> Open(std::string_view prover_id,
                                      std::string_view request_id,
                                      const std::vector<uint32_t>& layers,
                                      uint64_t positions, uint64_t hidden_size,
                                      absl::Time deadline) override;

  // From now on, an opening whose prover is unreachable stops retrying at
  // once with OpeningUnavailableToVerifier (its audit stays pending for the
  // next start) instead of waiting for its deadline: the verifier is
  // shutting down. Openings that are streaming are not interrupted.
  void StopRetrying();

  // Opening attempts that found the prover unreachable (each one retried),
  // since construction: tests and layerproof_openings_unreachable_total.
  uint64_t unreachable_attempts() const { return unreachable_attempts_; }

 private:
  struct Prover {
    // Null for a prover registered without an Opening address.
    std::shared_ptr<v1::Opening::Stub> stub;
  };

  const GrpcOpeningSourceOptions options_;
  std::atomic<bool> stop_retrying_{false};
  std::atomic<uint64_t> unreachable_attempts_{0};
  absl::Mutex mu_;
  std::map<std::string, Prover, std::less<>> provers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_OPENING_CLIENT_H_
