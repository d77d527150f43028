// Valid records for the store tests: a Commitment and a Verdict that pass
// ValidateCommitment / ValidateVerdict, for tests to sign or break.
#ifndef LAYERPROOF_TESTS_STORE_RECORDS_FIXTURE_H_
#define LAYERPROOF_TESTS_STORE_RECORDS_FIXTURE_H_

#include <cstddef>
#include <string>

#include "layerproof/v1/records.pb.h"

namespace layerproof::store::fixture {

inline std::string Filled(size_t n, char c) { return std::string(n, c); }

inline v1::Commitment ValidCommitment() {
  v1::Commitment c;
  c.set_request_id(Filled(16, '\x01'));
  c.set_prover_id("prover-eu-1");
  c.set_model_digest(Filled(32, '\x02'));
  c.set_spec_version(1);
  c.set_prompt_digest(Filled(32, '\x03'));
  c.set_prompt_tokens(5);
  c.set_output_digest(Filled(32, '\x04'));
  c.set_output_tokens(3);
  c.mutable_sampling()->set_temperature(0.7f);
  c.mutable_sampling()->set_top_k(40);
  c.mutable_sampling()->set_top_p(0.95f);
  c.set_seed_digest(Filled(32, '\x05'));
  c.set_num_layers(4);
  for (int l = 0; l <= 4; ++l) c.add_layer_hashes(Filled(32, char(0x10 + l)));
  c.set_hidden_size(64);
  c.set_client_nonce("nonce");
  c.set_created_at_unix_nanos(1764460000000000000);
  c.set_finish_reason(v1::FINISH_REASON_STOP);
  c.set_max_new_tokens(c.output_tokens() + 4);
  c.add_stop_token_ids(2);
  c.set_max_context(4096);
  return c;
}

inline v1::Verdict ValidVerdict() {
  v1::Verdict v;
  v.set_request_id(Filled(16, '\x01'));
  v.set_commitment_leaf_index(7);
  v.set_outcome(v1::PASS);
  v.add_audited_layers(1);
  v.add_audited_layers(3);
  v.set_head_checked(true);
  v.set_audit_seed(Filled(32, '\x06'));
  v.set_verifier_id("verifier-1");
  v.set_created_at_unix_nanos(1764460001000000000);
  v.set_commitment_leaf_hash(Filled(32, '\x07'));
  return v;
}

}  // namespace layerproof::store::fixture

#endif  // LAYERPROOF_TESTS_STORE_RECORDS_FIXTURE_H_
