// The receipt check (check/receipt.h) and the log proof checks
// (check/log_proofs.h): an honest receipt passes, and every way a prover
// can bend a field the client asked for, or the log, is refused naming the
// field.
#include "check/receipt.h"

#include <functional>
#include <string>
#include <vector>

#include "check/log_proofs.h"
#include "gtest/gtest.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/merkle.h"

namespace layerproof::check {
namespace {

constexpr char kOrigin[] = "layerproof/verifier-1";

std::string Str(const store::Sha256Hash& h) { return {h.begin(), h.end()}; }

store::Ed25519PrivateKey NewKey() {
  auto key = store::Ed25519PrivateKey::Generate();
  EXPECT_TRUE(key.ok());
  return *std::move(key);
}

// A prover, a log and a client's request, with knobs to make each of them
// lie.
class ReceiptTest : public ::testing::Test {
 protected:
  ReceiptTest()
      : prover_key_(NewKey()),
        log_signer_(*store::CheckpointSigner::Create("verifier-1", NewKey())),
        log_verifier_("verifier-1", log_signer_.public_key()) {
    request_.mutable_token_ids()->add_ids(5);
    request_.mutable_token_ids()->add_ids(6);
    request_.mutable_token_ids()->add_ids(7);
    request_.mutable_sampling()->set_temperature(0.7f);
    request_.mutable_sampling()->set_top_k(40);
    request_.mutable_sampling()->set_top_p(0.95f);
    request_.set_max_tokens(4);
    request_.add_stop_token_ids(2);
    request_.set_client_nonce("a client nonce");
    trust_.prover_keys.Add(prover_key_.public_key());
    trust_.prover_id = "prover-1";
    trust_.log = {&log_verifier_, kOrigin};
  }

  // What an honest prover commits to for request_ and output {9, 10, 2}.
  v1::Commitment HonestCommitment(const v1::GenerateResponse& r) const {
    const std::string key = store::DigestKey(store::AsBytes(r.salt()),
                                             store::AsBytes(r.request_id()));
    const store::Bytes k = store::AsBytes(key);
    v1::Commitment c;
    c.set_request_id(r.request_id());
    c.set_prover_id("prover-1");
    c.set_model_digest(std::string(32, '\x02'));
    c.set_spec_version(1);
    const std::vector<int32_t> prompt(r.prompt_token_ids().begin(),
                                      r.prompt_token_ids().end());
    const std::vector<int32_t> output(r.output_token_ids().begin(),
                                      r.output_token_ids().end());
    c.set_prompt_digest(Str(store::TokenDigest(k, prompt)));
    c.set_prompt_tokens(static_cast<uint32_t>(prompt.size()));
    c.set_output_digest(Str(store::TokenDigest(k, output)));
    c.set_output_tokens(static_cast<uint32_t>(output.size()));
    *c.mutable_sampling() = request_.sampling();
    c.set_seed_digest(Str(store::SeedDigest(k, r.seed())));
    c.set_num_layers(2);
    for (int l = 0; l <= 2; ++l) c.add_layer_hashes(std::string(32, char(l)));
    c.set_hidden_size(8);
    c.set_client_nonce(request_.client_nonce());
    c.set_created_at_unix_nanos(1764460000000000000);
    c.set_finish_reason(v1::FINISH_REASON_STOP);
    c.set_max_new_tokens(request_.max_tokens());
    for (int32_t id : request_.stop_token_ids()) c.add_stop_token_ids(id);
    c.set_stop_ids_from_model(request_.stop_token_ids_size() == 0);
    c.set_ignore_eos(request_.ignore_eos());
    c.set_max_context(64);
    return c;
  }

  // The response, with the commitment bent by `bend_commitment` before it
  // is signed; logged as leaf 3 of 5 unless `promise`.
  v1::GenerateResponse Respond(
      const std::function<void(v1::Commitment&)>& bend_commitment = {},
      bool promise = false) {
    v1::GenerateResponse r;
    r.set_request_id(std::string(16, '\x11'));
    r.set_salt(std::string(32, '\x22'));
    for (int32_t id : request_.token_ids().ids()) r.add_prompt_token_ids(id);
    for (int32_t id : {9, 10, 2}) r.add_output_token_ids(id);
    r.set_finish_reason(v1::FINISH_REASON_STOP);
    r.set_seed(request_.client_nonce().empty()
                   ? 77
                   : store::SeedFromNonce(
                         store::AsBytes(request_.client_nonce())));
    v1::Commitment c = HonestCommitment(r);
    if (bend_commitment) bend_commitment(c);
    auto envelope = store::SignCommitment(c, prover_key_);
    EXPECT_TRUE(envelope.ok()) << envelope.status();
    r.set_commitment_envelope(*envelope);
    if (promise) {
      r.mutable_receipt()->set_promise_envelope(Promise(*envelope));
    } else {
      *r.mutable_receipt()->mutable_inclusion() = Log(*envelope);
    }
    return r;
  }

  std::string Promise(const std::string& envelope,
                      const store::Ed25519PrivateKey* key = nullptr) const {
    v1::SubmissionPromise p;
    p.set_request_id(std::string(16, '\x11'));
    p.set_commitment_leaf_hash(Str(store::LeafHash(envelope)));
    p.set_prover_id("prover-1");
    p.set_log_origin(kOrigin);
    p.set_promised_at_unix_nanos(1764460000000000000);
    p.set_log_by_unix_nanos(1764460000000000000 + 60'000'000'000);
    auto signed_promise =
        store::SignEnvelope(store::kSubmissionPromisePayloadType,
                            p.SerializeAsString(), key ? *key : prover_key_);
    EXPECT_TRUE(signed_promise.ok());
    return *signed_promise;
  }

  // `envelope` logged at index 3 of a 5-leaf tree, with a signed
  // checkpoint.
  v1::LogInclusion Log(const std::string& envelope,
                       const store::CheckpointSigner* signer = nullptr) const {
    store::InMemoryTree tree;
    for (int i = 0; i < 3; ++i) tree.Append("other leaf " + std::to_string(i));
    tree.Append(envelope);
    tree.Append("a later leaf");
    store::Checkpoint cp{kOrigin, tree.size(), tree.Root(), {}};
    v1::LogInclusion inclusion;
    inclusion.set_leaf_index(3);
    inclusion.set_tree_size(tree.size());
    inclusion.set_checkpoint(*(signer ? signer : &log_signer_)->Sign(cp));
    const std::vector<store::Sha256Hash> proof =
        *store::InclusionProof(tree, 3, tree.size());
    for (const auto& h : proof) inclusion.add_inclusion_proof(Str(h));
    return inclusion;
  }

  // The check's message, or "OK".
  std::string Check(const v1::GenerateResponse& r) const {
    absl::StatusOr<CheckedReceipt> got = CheckReceipt(request_, r, trust_);
    return got.ok() ? "OK" : got.status().ToString();
  }

  store::Ed25519PrivateKey prover_key_;
  store::CheckpointSigner log_signer_;
  store::CheckpointVerifier log_verifier_;
  v1::GenerateRequest request_;
  ReceiptTrust trust_;
};

TEST_F(ReceiptTest, AnHonestLoggedReceiptPasses) {
  absl::StatusOr<CheckedReceipt> got =
      CheckReceipt(request_, Respond(), trust_);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->checkpoint.has_value());
  EXPECT_EQ(got->checkpoint->size, 5u);
  EXPECT_EQ(got->leaf_index, 3u);
  EXPECT_FALSE(got->promise.has_value());
}

TEST_F(ReceiptTest, GreedyWithoutStopIdsOrNonceBindsTheDefaults) {
  request_.clear_sampling();
  request_.clear_stop_token_ids();
  request_.clear_client_nonce();
  request_.set_seed(77);
  EXPECT_EQ(Check(Respond([](v1::Commitment& c) {
              c.mutable_sampling()->set_temperature(0);
              c.mutable_sampling()->set_top_k(0);
              c.mutable_sampling()->set_top_p(1);
              c.add_stop_token_ids(2);  // the model's eos ids
            })),
            "OK");
  // A prover that claims the request named its stop ids.
  EXPECT_NE(Check(Respond([](v1::Commitment& c) {
              c.mutable_sampling()->set_temperature(0);
              c.mutable_sampling()->set_top_k(0);
              c.mutable_sampling()->set_top_p(1);
              c.add_stop_token_ids(2);
              c.set_stop_ids_from_model(false);
            })).find("Commitment.stop_ids_from_model"),
            std::string::npos);
}

// Each field the client asked for, bent by the prover (and re-signed).
TEST_F(ReceiptTest, EveryBentRequestFieldIsRefusedByName) {
  const struct {
    const char* field;
    std::function<void(v1::Commitment&)> bend;
  } cases[] = {
      {"Commitment.sampling",
       [](v1::Commitment& c) { c.mutable_sampling()->set_temperature(0.71f); }},
      {"Commitment.sampling",
       [](v1::Commitment& c) { c.mutable_sampling()->set_top_k(41); }},
      {"Commitment.max_new_tokens",
       [](v1::Commitment& c) { c.set_max_new_tokens(3); }},
      {"Commitment.ignore_eos", [](v1::Commitment& c) { c.set_ignore_eos(true); }},
      {"Commitment.stop_token_ids",
       [](v1::Commitment& c) { c.set_stop_token_ids(0, 3); }},
      {"Commitment.stop_token_ids",
       [](v1::Commitment& c) { c.set_stop_ids_from_model(true); }},
      {"Commitment.client_nonce",
       [](v1::Commitment& c) { c.set_client_nonce("another nonce"); }},
      {"Commitment.prover_id",
       [](v1::Commitment& c) { c.set_prover_id("prover-2"); }},
      {"Commitment.request_id",
       [](v1::Commitment& c) { c.set_request_id(std::string(16, '\x12')); }},
      {"Commitment.output_digest",
       [](v1::Commitment& c) { c.set_output_digest(std::string(32, 'x')); }},
      {"Commitment.seed_digest",
       [](v1::Commitment& c) { c.set_seed_digest(std::string(32, 'x')); }},
  };
  for (const auto& c : cases) {
    const std::string got = Check(Respond(c.bend));
    EXPECT_NE(got.find(c.field), std::string::npos) << c.field << ": " << got;
    EXPECT_NE(got.find("DATA_LOSS"), std::string::npos) << got;
  }
}

TEST_F(ReceiptTest, ResponsesThatDisagreeWithTheCommitmentAreRefused) {
  v1::GenerateResponse r = Respond();
  r.set_output_token_ids(0, 8);
  EXPECT_NE(Check(r).find("Commitment.output_digest"), std::string::npos);
  r = Respond();
  r.set_seed(r.seed() + 1);  // not the nonce's seed
  EXPECT_NE(Check(r).find("GenerateResponse.seed"), std::string::npos);
  r = Respond();
  r.set_prompt_token_ids(0, 4);  // not the prompt sent
  EXPECT_NE(Check(r).find("GenerateResponse.prompt_token_ids"),
            std::string::npos);
  r = Respond();
  r.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
  EXPECT_NE(Check(r).find("finish_reason"), std::string::npos);
  // An output that runs past a requested stop id (10) breaks the stop
  // rule, though everything else agrees.
  request_.set_stop_token_ids(0, 10);
  EXPECT_NE(Check(Respond()).find("stop rule"), std::string::npos);
}

TEST_F(ReceiptTest, AStrangersSignatureOrANonCanonicalCommitmentIsRefused) {
  v1::GenerateResponse r = Respond();
  const store::Ed25519PrivateKey stranger = NewKey();
  auto forged = store::SignCommitment(
      *store::ParseCommitment(
          [&] {
            v1::Envelope e;
            e.ParseFromString(r.commitment_envelope());
            return e.payload();
          }()),
      stranger);
  r.set_commitment_envelope(*forged);
  EXPECT_NE(Check(r).find("GenerateResponse.commitment_envelope"),
            std::string::npos);

  // An unknown field appended to the payload: a second encoding.
  v1::GenerateResponse odd = Respond();
  v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(odd.commitment_envelope()));
  std::string payload = e.payload() + std::string("\xa8\x06\x01", 3);
  auto resigned = store::SignEnvelope(store::kCommitmentPayloadType, payload,
                                      prover_key_);
  odd.set_commitment_envelope(*resigned);
  EXPECT_NE(Check(odd).find("canonical"), std::string::npos) << Check(odd);
}

TEST_F(ReceiptTest, TheInclusionMustBeInTheTrustedLog) {
  v1::GenerateResponse r = Respond();
  // A checkpoint signed by another key.
  const store::CheckpointSigner other =
      *store::CheckpointSigner::Create("verifier-1", NewKey());
  *r.mutable_receipt()->mutable_inclusion() =
      Log(r.commitment_envelope(), &other);
  EXPECT_NE(Check(r).find("LogInclusion.checkpoint"), std::string::npos)
      << Check(r);
  // A proof hash flipped.
  r = Respond();
  std::string h = r.receipt().inclusion().inclusion_proof(0);
  h[0] ^= 1;
  r.mutable_receipt()->mutable_inclusion()->set_inclusion_proof(0, h);
  EXPECT_NE(Check(r).find("inclusion_proof"), std::string::npos) << Check(r);
  // A short hash, a wrong size, a wrong index.
  r = Respond();
  r.mutable_receipt()->mutable_inclusion()->set_inclusion_proof(0, "short");
  EXPECT_NE(Check(r).find("inclusion_proof[0]"), std::string::npos) << Check(r);
  r = Respond();
  r.mutable_receipt()->mutable_inclusion()->set_tree_size(6);
  EXPECT_NE(Check(r).find("tree_size"), std::string::npos);
  r = Respond();
  r.mutable_receipt()->mutable_inclusion()->set_leaf_index(2);
  EXPECT_NE(Check(r).find("inclusion_proof"), std::string::npos);
  // Another origin.
  trust_.log.origin = "layerproof/verifier-2";
  EXPECT_NE(Check(Respond()).find("checkpoint"), std::string::npos);
  // Neither inclusion nor promise.
  trust_.log.origin = kOrigin;
  r = Respond();
  r.clear_receipt();
  EXPECT_NE(Check(r).find("neither"), std::string::npos);
}

TEST_F(ReceiptTest, APromiseIsCheckedThenItsInclusion) {
  v1::GenerateResponse r = Respond({}, /*promise=*/true);
  absl::StatusOr<CheckedReceipt> got = CheckReceipt(request_, r, trust_);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->promise.has_value());
  EXPECT_FALSE(got->checkpoint.has_value());
  ASSERT_TRUE(CheckPromisedInclusion(Log(r.commitment_envelope()),
                                     r.commitment_envelope(), trust_, &*got)
                  .ok());
  EXPECT_EQ(got->leaf_index, 3u);
  // The inclusion of another leaf does not honour it.
  EXPECT_FALSE(CheckPromisedInclusion(Log("another envelope"),
                                      r.commitment_envelope(), trust_, &*got)
                   .ok());

  // A promise for another leaf, or signed by a stranger.
  r.mutable_receipt()->set_promise_envelope(Promise("another envelope"));
  EXPECT_NE(Check(r).find("SubmissionPromise.commitment_leaf_hash"),
            std::string::npos);
  const store::Ed25519PrivateKey stranger = NewKey();
  r.mutable_receipt()->set_promise_envelope(
      Promise(r.commitment_envelope(), &stranger));
  EXPECT_NE(Check(r).find("Receipt.promise_envelope"), std::string::npos);
}

store::Checkpoint TreeCheckpoint(store::InMemoryTree& tree) {
  return {kOrigin, tree.size(), tree.Root(), {}};
}

google::protobuf::RepeatedPtrField<std::string> Wire(
    const std::vector<store::Sha256Hash>& proof) {
  google::protobuf::RepeatedPtrField<std::string> out;
  for (const auto& h : proof) *out.Add() = Str(h);
  return out;
}

TEST(CheckpointFollows, GrowthWithAProofPassesAndEveryOtherChangeIsCaught) {
  store::InMemoryTree tree;
  for (int i = 0; i < 5; ++i) tree.Append("leaf " + std::to_string(i));
  const store::Checkpoint five = TreeCheckpoint(tree);
  for (int i = 5; i < 9; ++i) tree.Append("leaf " + std::to_string(i));
  const store::Checkpoint nine = TreeCheckpoint(tree);
  const auto proof = Wire(*store::ConsistencyProof(tree, 5, 9));
  const google::protobuf::RepeatedPtrField<std::string> none;
  EXPECT_TRUE(NeedsConsistencyProof(five, nine));
  EXPECT_TRUE(CheckCheckpointFollows(five, nine, proof, "cp").ok());
  EXPECT_TRUE(CheckCheckpointFollows(five, five, none, "cp").ok());
  EXPECT_TRUE(CheckCheckpointFollows({}, nine, none, "cp").ok());
  // Back, forked at the same size, forked at a larger size.
  EXPECT_EQ(CheckCheckpointFollows(nine, five, none, "cp").code(),
            absl::StatusCode::kDataLoss);
  store::Checkpoint forked = five;
  forked.root[0] ^= 1;
  EXPECT_EQ(CheckCheckpointFollows(five, forked, none, "cp").code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(CheckCheckpointFollows(forked, nine, proof, "cp").code(),
            absl::StatusCode::kDataLoss);
  // A malformed proof.
  google::protobuf::RepeatedPtrField<std::string> bad = proof;
  *bad.Mutable(0) = "short";
  EXPECT_EQ(CheckCheckpointFollows(five, nine, bad, "cp").code(),
            absl::StatusCode::kInvalidArgument);
  google::protobuf::RepeatedPtrField<std::string> long_proof;
  for (int i = 0; i < 65; ++i) *long_proof.Add() = std::string(32, 'a');
  EXPECT_EQ(ProofHashes(long_proof, "p").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace layerproof::check
