// The verifier node's log side: Log.Submit's admission rules and proofs,
// refusals and whom they are charged to, bounds on submissions and queued
// audits, malformed batches, and the log reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/verifier/verifier_node_fixture.h"

namespace layerproof::verifier {
namespace {

using namespace node_fixture;  // NOLINT: the fixture of these tests

TEST(VerifierNodeTest, SubmitLogsWithAProofThatVerifies) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  Served s = Serve(ProverKey(), "prover-1");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  ASSERT_EQ(r.code(), 0) << r.message();
  EXPECT_EQ(r.leaf_index(), 0u);
  EXPECT_FALSE(r.duplicate());
  const store::Checkpoint c = v.Verify(v.last_checkpoint);
  EXPECT_EQ(c.size, v.last_tree_size);
  EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(s.envelope),
                                     r.leaf_index(), c.size,
                                     ToProof(r.inclusion_proof()), c.root)
                  .ok());
  // The same bytes again: the original index.
  v1::SubmitResult again = v.SubmitOne(s.envelope);
  EXPECT_EQ(again.code(), 0);
  EXPECT_EQ(again.leaf_index(), 0u);
  EXPECT_TRUE(again.duplicate());
  // Another commitment under the same request id: refused.
  v1::Commitment other = s.commitment;
  other.set_created_at_unix_nanos(other.created_at_unix_nanos() + 1);
  auto other_env = store::SignCommitment(other, ProverKey());
  ASSERT_TRUE(other_env.ok());
  v1::SubmitResult conflict = v.SubmitOne(*other_env);
  EXPECT_EQ(conflict.code(), int(grpc::StatusCode::ALREADY_EXISTS));
  EXPECT_NE(conflict.message().find("Commitment.request_id"), std::string::npos)
      << conflict.message();
  EXPECT_EQ(v.node().log()->Size(), 1u);
}

TEST(VerifierNodeTest, BatchOfManyIsLoggedWithOneCheckpointCoveringAll) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  std::vector<std::string> envelopes;
  for (int i = 0; i < 6; ++i) {
    envelopes.push_back(
        Serve(ProverKey(), "prover-1", {1, 2, int32_t(3 + i)}).envelope);
  }
  envelopes.push_back("not an envelope");
  v1::SubmitResponse response;
  ASSERT_TRUE(v.Submit(envelopes, &response).ok());
  ASSERT_EQ(response.results_size(), 7);
  const store::Checkpoint c = v.Verify(response.checkpoint());
  EXPECT_EQ(c.size, 6u);
  std::vector<uint64_t> indices;
  for (int i = 0; i < 6; ++i) {
    const v1::SubmitResult& r = response.results(i);
    ASSERT_EQ(r.code(), 0) << r.message();
    indices.push_back(r.leaf_index());
    EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(envelopes[i]),
                                       r.leaf_index(), c.size,
                                       ToProof(r.inclusion_proof()), c.root)
                    .ok());
  }
  std::sort(indices.begin(), indices.end());
  EXPECT_EQ(indices, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(response.results(6).code(),
            int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(v.node().counters().commitments_logged, 6u);
}

// Regression (issue 13, item 7): submissions never refused, each task
// holding the whole (up to 16 MiB) batch. Envelope bytes in flight are
// bounded; a batch past the bound is refused whole, nothing appended.
TEST(VerifierNodeTest, SubmissionsPastTheInFlightBoundAreRefused) {
  TempDir dir;
  std::vector<std::string> envelopes;
  size_t bytes = 0;
  for (int i = 0; i < 6; ++i) {
    envelopes.push_back(
        Serve(ProverKey(), "prover-1", {1, 2, int32_t(3 + i)}).envelope);
    bytes += envelopes.back().size();
  }
  NodeSetup setup;
  setup.openings = std::make_shared<HonestOpenings>();
  setup.rate = 0;
  setup.max_submission_bytes_in_flight = bytes - 1;
  Verifier v(dir.path(), setup);
  v1::SubmitResponse response;
  const grpc::Status refused = v.Submit(envelopes, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("max_submission_bytes_in_flight"),
            std::string::npos)
      << refused.error_message();
  EXPECT_EQ(v.node().log()->Size(), 0u);
  // Within the bound (and after the refusal released nothing it held).
  envelopes.pop_back();
  ASSERT_TRUE(v.Submit(envelopes, &response).ok());
  EXPECT_EQ(response.results_size(), 5);
  EXPECT_EQ(v.node().log()->Size(), 5u);
  ASSERT_TRUE(v.Submit(envelopes, &response).ok());  // released again
}

// Regression (issue 13, item 7): the audit queue never refused. On-demand
// audits past max_queued_audits are RESOURCE_EXHAUSTED; drawn ones stay
// pending in the store and are queued by a later pass.
TEST(VerifierNodeTest, AuditsPastTheQueueBoundWaitOrAreRefused) {
  TempDir dir;
  Served s = Serve(ProverKey(), "prover-1");
  auto held = std::make_shared<HonestOpenings>();
  held->Add(s);
  held->Hold();  // the first audit blocks a worker in its opening
  NodeSetup setup;
  setup.openings = held;
  setup.max_queued_audits = 1;
  Verifier v(dir.path(), setup);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  ASSERT_TRUE(Eventually([&] { return held->opens() == 1; }));
  v1::RequestAuditRequest request;
  request.set_request_id(s.request_id);
  v1::RequestAuditResponse response;
  // The second worker takes the first on-demand audit (it blocks too) ...
  std::thread first([&] {
    v1::RequestAuditResponse r;
    EXPECT_TRUE(v.RequestAudit(request, &r).ok());
  });
  ASSERT_TRUE(Eventually([&] { return held->opens() == 2; }));
  // ... the next one waits in the queue ...
  std::thread second([&] {
    v1::RequestAuditResponse r;
    EXPECT_TRUE(v.RequestAudit(request, &r).ok());
  });
  ASSERT_TRUE(
      Eventually([&] { return v.node().counters().audits_queued == 1; }));
  // ... and one more is refused.
  const grpc::Status refused = v.RequestAudit(request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  held->Release();
  first.join();
  second.join();
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  EXPECT_EQ(verdicts.verdicts_size(), 3);
}

// Regression: anyone (here an anonymous client of an --insecure verifier)
// could have signed FAIL_SIGNATURE verdicts logged "for" any prover. An
// unauthenticated submission with a bad signature is only refused.
TEST(VerifierNodeTest, AnonymousBadSignatureIsRefusedWithoutAVerdict) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  Served s = Serve(StrangerKey(), "prover-1");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED)) << r.message();
  Served forged = Serve(ProverKey(), "prover-1");
  v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(forged.envelope));
  e.mutable_signatures(0)->mutable_sig()->at(5) ^= 0x10;
  EXPECT_EQ(v.SubmitOne(e.SerializeAsString()).code(),
            int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(v.node().log()->Size(), 0u);
  v1::GetVerdictResponse verdicts;
  EXPECT_EQ(v.GetVerdict(s.request_id, &verdicts).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// Regression: a refusal verdict was credited to the refused envelope's
// unverified prover_id. It is charged to the authenticated submitter.
TEST(VerifierNodeTest, RefusalVerdictIsChargedToTheAuthenticatedSubmitter) {
  TempDir dir;
  NodeSetup setup{.openings = std::make_shared<HonestOpenings>(), .rate = 0};
  setup.mtls = true;
  Verifier v(dir.path(), setup);
  // prover-1 submits an envelope signed by a foreign key that claims to be
  // prover-2's.
  Served s = Serve(StrangerKey(), "prover-2");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED)) << r.message();
  // Again: refused, and its verdict is in the log once.
  EXPECT_EQ(v.SubmitOne(s.envelope).code(),
            int(grpc::StatusCode::PERMISSION_DENIED));
  ASSERT_EQ(v.node().log()->Size(), 1u);
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::FAIL_SIGNATURE);
  EXPECT_EQ(verdict.refused_submitter(), "prover-1");
  EXPECT_FALSE(verdict.has_commitment_leaf_index());
  EXPECT_EQ(verdict.commitment_leaf_hash(), Str(store::LeafHash(s.envelope)));
  // Listed under the submitter, not under the prover the envelope names.
  EXPECT_EQ(v.ListOf("prover-1").size(), 1u);
  EXPECT_TRUE(v.ListOf("prover-2").empty());
  // The refused envelope is kept for evidence (auditor role).
  auto auditor =
      rpc::MakeChannel("127.0.0.1:" + std::to_string(v.port()),
                       rpc::fixture::TestCerts::Get().Client("auditor-1"));
  ASSERT_TRUE(auditor.ok()) << auditor.status();
  v1::GetEvidenceRequest ereq;
  ereq.set_request_id(s.request_id);
  v1::EvidenceBundle bundle;
  grpc::ClientContext ctx;
  grpc::Status got =
      v1::Audit::NewStub(*auditor)->GetEvidence(&ctx, ereq, &bundle);
  ASSERT_TRUE(got.ok()) << got.error_message();
  EXPECT_EQ(bundle.commitment_envelope(), s.envelope);
  EXPECT_FALSE(bundle.has_commitment_inclusion());
  EXPECT_EQ(bundle.verdict_inclusion().leaf_index(), 0u);
}

// Regression: a compromised prover certificate could flood the log with
// signed refusals. At most one per second per submitter is logged.
TEST(VerifierNodeTest, RefusalVerdictsAreRateLimitedPerSubmitter) {
  TempDir dir;
  NodeSetup setup{.openings = std::make_shared<HonestOpenings>(), .rate = 0};
  setup.mtls = true;
  Verifier v(dir.path(), setup);
  std::vector<std::string> forged;
  for (int i = 0; i < 4; ++i) {
    forged.push_back(
        Serve(StrangerKey(), "prover-1", {3, int32_t(10 + i)}).envelope);
  }
  v1::SubmitResponse response;
  ASSERT_TRUE(v.Submit(forged, &response).ok());
  ASSERT_EQ(response.results_size(), 4);
  for (const v1::SubmitResult& r : response.results()) {
    EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED))
        << r.message();
  }
  EXPECT_EQ(v.node().log()->Size(), 1u);
  EXPECT_EQ(v.ListOf("prover-1").size(), 1u);
}

TEST(VerifierNodeTest, SubmitterMayOnlySubmitItsOwnCommitments) {
  TempDir dir;
  NodeSetup setup{.openings = std::make_shared<HonestOpenings>(), .rate = 0};
  setup.mtls = true;
  setup.client_cn = "prover-2";
  Verifier v(dir.path(), setup);
  // prover-1's own, validly signed commitment, submitted by prover-2.
  v1::SubmitResult r = v.SubmitOne(Serve(ProverKey(), "prover-1").envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED));
  EXPECT_EQ(r.message(),
            "Commitment.prover_id: got \"prover-1\", but the submitter's "
            "client certificate CN is \"prover-2\" (a prover submits only "
            "its own commitments)");
  EXPECT_EQ(v.node().log()->Size(), 0u);
  // Its own is logged.
  EXPECT_EQ(v.SubmitOne(Serve(Prover2Key(), "prover-2").envelope).code(), 0);
  EXPECT_EQ(v.node().log()->Size(), 1u);
}

TEST(VerifierNodeTest, MalformedAndOversizedBatchesAppendNothing) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  v1::SubmitResult bad = v.SubmitOne("\x0a\x03garbage");
  EXPECT_EQ(bad.code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  // A commitment whose record is invalid (no layer hashes), validly signed.
  Served s = Serve(ProverKey(), "prover-1");
  v1::Commitment broken = s.commitment;
  broken.clear_layer_hashes();
  v1::Envelope env;
  env.set_payload(broken.SerializeAsString());
  env.set_payload_type(std::string(store::kCommitmentPayloadType));
  auto* sig = env.add_signatures();
  sig->set_keyid(Str(ProverKey().public_key().KeyId()));
  sig->set_sig(std::string(64, 'x'));
  v1::SubmitResult invalid = v.SubmitOne(env.SerializeAsString());
  EXPECT_EQ(invalid.code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(invalid.message().find("Commitment.layer_hashes"),
            std::string::npos)
      << invalid.message();

  v1::SubmitResponse response;
  grpc::Status too_many =
      v.Submit(std::vector<std::string>(257, s.envelope), &response);
  EXPECT_EQ(too_many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(too_many.error_message(),
            "SubmitRequest.envelopes: got 257 envelopes, want 1..256");
  EXPECT_EQ(v.Submit({}, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(v.node().log()->Size(), 0u);
}

TEST(VerifierNodeTest, LogReads) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  std::vector<Served> served;
  for (int i = 0; i < 3; ++i) {
    served.push_back(Serve(ProverKey(), "prover-1", {4, int32_t(5 + i)}));
    ASSERT_EQ(v.SubmitOne(served.back().envelope).code(), 0);
  }
  // Checkpoint.
  v1::GetCheckpointResponse cp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.log->GetCheckpoint(&ctx, {}, &cp).ok());
  }
  const store::Checkpoint c = v.Verify(cp.checkpoint());
  EXPECT_EQ(c.size, 3u);
  EXPECT_EQ(cp.tree_size(), 3u);
  // Inclusion by leaf hash at the latest size.
  v1::GetInclusionProofRequest ip;
  ip.set_leaf_hash(Str(store::LeafHash(served[1].envelope)));
  v1::GetInclusionProofResponse ipr;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.log->GetInclusionProof(&ctx, ip, &ipr).ok());
  }
  EXPECT_EQ(ipr.inclusion().leaf_index(), 1u);
  EXPECT_EQ(ipr.inclusion().tree_size(), 3u);
  EXPECT_EQ(ipr.inclusion().checkpoint(), cp.checkpoint());
  EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(served[1].envelope), 1, 3,
                                     ToProof(ipr.inclusion().inclusion_proof()),
                                     c.root)
                  .ok());
  ip.set_leaf_hash(std::string(32, '\x01'));
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(v.log->GetInclusionProof(&ctx, ip, &ipr).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  ip.set_leaf_hash("short");
  {
    grpc::ClientContext ctx;
    grpc::Status s = v.log->GetInclusionProof(&ctx, ip, &ipr);
    EXPECT_EQ(s.error_message(),
              "GetInclusionProofRequest.leaf_hash: got 5 bytes, want 32");
  }
  // Consistency from 1 to 3.
  v1::GetConsistencyProofRequest cr;
  cr.set_old_size(1);
  cr.set_new_size(3);
  v1::GetConsistencyProofResponse cpr;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.log->GetConsistencyProof(&ctx, cr, &cpr).ok());
  }
  EXPECT_TRUE(store::VerifyConsistency(1, 3,
                                       store::LeafHash(served[0].envelope),
                                       c.root, ToProof(cpr.proof()))
                  .ok());
  // Entries: bounds.
  auto entries = [&](uint64_t start, uint32_t count,
                     v1::GetEntriesResponse* out) {
    v1::GetEntriesRequest r;
    r.set_start(start);
    r.set_count(count);
    grpc::ClientContext ctx;
    return v.log->GetEntries(&ctx, r, out);
  };
  v1::GetEntriesResponse er;
  ASSERT_TRUE(entries(1, 1000, &er).ok());
  ASSERT_EQ(er.entries_size(), 2);
  EXPECT_EQ(er.entries(0), served[1].envelope);
  EXPECT_EQ(entries(0, 0, &er).error_message(),
            "GetEntriesRequest.count: got 0, want 1..1000");
  EXPECT_EQ(entries(0, 1001, &er).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(entries(3, 1, &er).error_code(), grpc::StatusCode::OUT_OF_RANGE);
}

// Polls `done` until it holds or 30 s pass.

}  // namespace
}  // namespace layerproof::verifier
