// Test-only faults that turn an honest prover into a cheating one, so that
// the tests (and the demo's clearly labelled demo-only fault) can show each
// kind of cheating being caught (issue 5, docs/protocol.md "Cheating").
//
// Reachability: only code that constructs a ProverNode in-process can set
// ProverOptions::faults. `layerproof serve prover` never sets it, and no
// flag, file or request reaches it.
//
// Faults act on what the prover commits to and what it opens, which is all
// a verifier ever sees of a prover: the engine itself always runs honestly.
// Every hook has an honest default, so a fault overrides only what it needs.
// Thread safety: the ProverFaults object is called from the engine thread
// and the opening workers at once; a RowsTamper is used by one request's
// tap (or one replay) at a time.
#ifndef LAYERPROOF_PROVER_INTERNAL_PROVER_FAULTS_H_
#define LAYERPROOF_PROVER_INTERNAL_PROVER_FAULTS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layerproof/v1/records.pb.h"

namespace layerproof::prover {

// Per-request tampering with layer rows. The same calls, in the same order,
// are made while serving (before the rows are hashed into the commitment)
// and while replaying for an opening (before the rows are hashed or sent),
// so a consistent cheater's openings match its commitments. For each step
// the calls come layer 0, 1, ..., L for the same positions.
class RowsTamper {
 public:
  virtual ~RowsTamper() = default;
  // May change rows[n][width] of h^layer at positions pos0..pos0+n-1.
  virtual void Tamper(int64_t layer, int64_t pos0, float* rows, int64_t n,
                      int64_t width) = 0;
};

class ProverFaults {
 public:
  virtual ~ProverFaults() = default;

  // A tamper for one request's serving and, separately, one for each of its
  // replays; nullptr (the default) changes nothing.
  virtual std::unique_ptr<RowsTamper> NewRowsTamper() { return nullptr; }
  // May change the rows of h^layer just before an opening sends them, after
  // they were checked by nothing (an opening that does not match).
  virtual void TamperOpenedRows(int64_t /*layer*/, int64_t /*pos0*/,
                                float* /*rows*/, int64_t /*n*/,
                                int64_t /*width*/) {}
  // May change the output tokens the prover reports, journals and commits
  // to (the engine sampled `output`).
  virtual void TamperOutputTokens(std::vector<int32_t>& /*output*/) {}
  // May change the commitment just before it is signed (e.g. claim another
  // model digest, or replay an older commitment's fields under this
  // request's id).
  virtual void TamperCommitment(v1::Commitment& /*commitment*/) {}
  // May change the signed envelope of a commitment just after signing
  // (e.g. corrupt a signature byte or its keyid, so that the prover itself
  // submits a forged signature). The journal, the log submission and the
  // response carry the tampered bytes; the bytes are re-serialised only
  // when the hook changed the message.
  virtual void TamperEnvelope(v1::Envelope& /*envelope*/) {}
  // Whether Opening.Open should never answer (it waits until the call is
  // cancelled or its deadline passes).
  virtual bool StallOpenings() { return false; }
  // Whether to keep a commitment out of the log: it is journaled and the
  // client gets a signed promise, but it is never submitted (a cheater that
  // logs only what it likes).
  virtual bool SkipSubmission() { return false; }
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_INTERNAL_PROVER_FAULTS_H_
