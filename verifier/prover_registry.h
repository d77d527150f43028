// The provers a verifier accepts (DESIGN §5, §7): each registered prover's
// name, Ed25519 public key and the address of its Opening service. Only
// commitments signed by a registered key are logged, and an audit opens
// the request at the address registered for the commitment's prover_id.
//
// The registry file is JSON, paths relative to the file's directory:
//   {"provers": [{"id": "prover-1",
//                 "public_key_file": "keys/prover-1.pub",
//                 "opening_address": "127.0.0.1:7001"}]}
// Unknown keys are refused; so are duplicate ids and duplicate keys.
//
// Thread safety: ProverDirectory is thread-safe; its key ring is
// copy-on-write, so a KeyRing snapshot stays valid (and unchanged) while
// AddProver runs on another thread.
#ifndef LAYERPROOF_VERIFIER_PROVER_REGISTRY_H_
#define LAYERPROOF_VERIFIER_PROVER_REGISTRY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "rpc/tls.h"

namespace layerproof::verifier {

struct ProverRegistration {
  std::string prover_id;
  store::Ed25519PublicKey key;
  // host:port of the prover's Opening service; may be empty when the
  // prover is only allowed to submit (its audits then fail to open).
  std::string opening_address;
  // Client-side TLS toward this prover (the verifier's outbound TLS).
  rpc::TlsOptions opening_tls;
  // How long the prover keeps what it needs to open a commitment (its
  // --retention-hours; provers.json "retention_hours", default 168). An
  // opening that fails later than this after the verifier logged the
  // commitment is the verifier's lateness, not the prover's fault: the
  // audit is INCONCLUSIVE, not FAIL_OPENING (docs/protocol.md "Retention").
  absl::Duration retention = absl::Hours(24 * 7);
};

// Reads the registry file at `path`. Every error names the file and the
// field, e.g. "provers.json: provers[1].id: "prover-1" registered twice".
// Every registration gets `opening_tls`, the verifier's outbound TLS.
absl::StatusOr<std::vector<ProverRegistration>> LoadProverRegistry(
    const std::string& path, const rpc::TlsOptions& opening_tls = {});
// As LoadProverRegistry, from text; `source` names it in errors and
// `base_dir` resolves relative key paths.
absl::StatusOr<std::vector<ProverRegistration>> ParseProverRegistry(
    std::string_view json, std::string_view source, const std::string& base_dir,
    const rpc::TlsOptions& opening_tls = {});

class ProverDirectory {
 public:
  ProverDirectory();
  ProverDirectory(const ProverDirectory&) = delete;
  ProverDirectory& operator=(const ProverDirectory&) = delete;

  // Registers a prover. Re-adding an identical registration is OK (its
  // address and TLS are updated); the same id with another key, or the same
  // key under another id, is AlreadyExists.
  absl::Status Add(const ProverRegistration& prover);

  // The keys registered so far; an immutable snapshot.
  std::shared_ptr<const store::KeyRing> keys() const;
  // The prover id registered with the key `key_id`, if any.
  std::optional<std::string> ProverOfKey(const store::Sha256Hash& key_id) const;
  std::optional<ProverRegistration> Find(std::string_view prover_id) const;

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const store::KeyRing> keys_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ProverRegistration, std::less<>> by_id_
      ABSL_GUARDED_BY(mu_);
  std::map<store::Sha256Hash, std::string> id_by_key_ ABSL_GUARDED_BY(mu_);
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_PROVER_REGISTRY_H_
