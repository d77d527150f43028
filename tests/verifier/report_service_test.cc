// Report.GetComplianceReport served by a verifier node over gRPC: the
// report's counts equal the verdicts the log holds (cross-checked with
// ListVerdicts), its signature verifies in both signed forms and a changed
// byte does not, consecutive reports' checkpoints are consistent (also
// across a restart and under concurrent requests), bad requests are
// refused with messages naming the field, and mTLS requires the auditor
// role.
#include "verifier/report_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "layerproof/v1/report.grpc.pb.h"
#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "tests/rpc/test_certs.h"
#include "tests/verifier/report_entries.h"
#include "tests/verifier/verifier_world.h"
#include "check/report_format.h"
#include "verifier/verifier_node.h"

namespace layerproof::verifier {
namespace {

using testing::HonestOpenings;
using testing::ProverEntry;
using testing::Serve;
using testing::Served;
using testing::TempDir;

// Serve() stamps every commitment with this time.
constexpr int64_t kServedAt = 1700000000000000000;
constexpr int64_t kHour = int64_t{3600} * 1000000000;

const store::Ed25519PrivateKey& ProverKey(int i) {
  static auto* keys = new std::vector<store::Ed25519PrivateKey>([] {
    std::vector<store::Ed25519PrivateKey> k;
    k.push_back(*store::Ed25519PrivateKey::Generate());
    k.push_back(*store::Ed25519PrivateKey::Generate());
    return k;
  }());
  return (*keys)[size_t(i - 1)];
}

std::shared_ptr<const store::Ed25519PrivateKey> VerifierKey() {
  static auto* key = new std::shared_ptr<const store::Ed25519PrivateKey>(
      std::make_shared<const store::Ed25519PrivateKey>(
          *store::Ed25519PrivateKey::Generate()));
  return *key;
}

store::Sha256Hash ToHash(const std::string& hex) {
  auto h = store::ParseHash(hex);
  EXPECT_TRUE(h.ok()) << h.status();
  return h.value_or(store::Sha256Hash{});
}

// A verifier node (rate 1, one block per audit) serving over gRPC, with
// openings from `openings`; mTLS with `client_cn`'s certificate when set.
class Node {
 public:
  Node(const std::string& dir, std::shared_ptr<check::OpeningSource> openings,
       const std::string& client_cn = "") {
    VerifierOptions o;
    o.verifier_id = "verifier-test";
    o.engine = testing::TheWorld().engine.get();
    o.key = VerifierKey();
    o.db_dir = dir;
    o.provers.push_back({"prover-1", ProverKey(1).public_key(), "", {}});
    o.provers.push_back({"prover-2", ProverKey(2).public_key(), "", {}});
    o.policy.rate = 1.0;
    o.policy.layers_per_audit = 1;
    o.audit_threads = 2;
    o.submit_threads = 4;
    o.insecure = client_cn.empty();
    o.roles.Grant("prover-1", rpc::Role::kProver);
    o.roles.Grant("prover-2", rpc::Role::kProver);
    o.roles.Grant("auditor-1", rpc::Role::kAuditor);
    o.opening_source = std::move(openings);
    auto node = VerifierNode::Create(std::move(o));
    EXPECT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
    rpc::ServerConfig config;
    config.tls.insecure = true;
    if (!client_cn.empty()) {
      config.tls = rpc::fixture::TestCerts::Get().Server(true);
    }
    auto server = rpc::StartServer(config, node_->services());
    EXPECT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    const std::string address = "127.0.0.1:" + std::to_string(server_->port());
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    if (!client_cn.empty()) {
      auto tls = rpc::MakeChannel(
          address, rpc::fixture::TestCerts::Get().Client(client_cn));
      EXPECT_TRUE(tls.ok()) << tls.status();
      channel = *tls;
    }
    log = v1::Log::NewStub(channel);
    audit = v1::Audit::NewStub(channel);
    report = v1::Report::NewStub(channel);
  }
  ~Node() {
    server_->Shutdown(std::chrono::milliseconds(100));
    node_->Shutdown(absl::Seconds(5)).IgnoreError();
  }

  void Submit(const std::string& envelope) {
    v1::SubmitRequest request;
    request.add_envelopes(envelope);
    v1::SubmitResponse response;
    grpc::ClientContext ctx;
    ASSERT_TRUE(log->Submit(&ctx, request, &response).ok());
    ASSERT_EQ(response.results_size(), 1);
    ASSERT_EQ(response.results(0).code(), 0);
  }

  grpc::Status Report(int64_t from, int64_t to, const std::string& prover,
                      std::string* envelope, uint64_t previous_tree_size = 0,
                      const std::string& nonce = "") {
    v1::ComplianceReportRequest request;
    request.set_from_unix_nanos(from);
    request.set_to_unix_nanos(to);
    request.set_prover_id(prover);
    request.set_previous_tree_size(previous_tree_size);
    request.set_client_nonce(nonce);
    v1::ComplianceReportResponse response;
    grpc::ClientContext ctx;
    grpc::Status s = report->GetComplianceReport(&ctx, request, &response);
    *envelope = response.report_envelope();
    return s;
  }

  // The verified report over the hour either side of now (commitments are
  // windowed by the verifier's time of logging, not Serve's created_at).
  nlohmann::json VerifiedReport(const std::string& prover = "",
                                uint64_t previous_tree_size = 0,
                                const std::string& nonce = "") {
    std::string envelope;
    const int64_t now = absl::ToUnixNanos(absl::Now());
    grpc::Status s = Report(now - kHour, now + kHour, prover, &envelope,
                            previous_tree_size, nonce);
    EXPECT_TRUE(s.ok()) << s.error_message();
    auto r = check::VerifyReportEnvelope(envelope, node_->public_key());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(nlohmann::json());
  }

  // Every verdict the log holds, by ListVerdicts.
  std::vector<v1::Verdict> AllVerdicts() {
    v1::ListVerdictsRequest r;
    r.set_page_size(1000);
    v1::ListVerdictsResponse out;
    grpc::ClientContext ctx;
    EXPECT_TRUE(audit->ListVerdicts(&ctx, r, &out).ok());
    std::vector<v1::Verdict> verdicts;
    for (const v1::VerdictRecord& rec : out.verdicts()) {
      auto env = store::VerifyEnvelope(
          rec.verdict_envelope(),
          [&] {
            store::KeyRing ring;
            ring.Add(node_->public_key());
            return ring;
          }(),
          store::kVerdictPayloadType, 1 << 20);
      EXPECT_TRUE(env.ok());
      verdicts.push_back(*store::ParseVerdict(env->payload));
    }
    return verdicts;
  }

  VerifierNode& node() { return *node_; }
  std::unique_ptr<v1::Log::Stub> log;
  std::unique_ptr<v1::Audit::Stub> audit;
  std::unique_ptr<v1::Report::Stub> report;

 private:
  std::unique_ptr<VerifierNode> node_;
  std::unique_ptr<rpc::RunningServer> server_;
};

TEST(ReportServiceTest, CountsEqualTheLogsVerdictsAndTheSignatureVerifies) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Node n(dir.path(), openings);
  // prover-1 serves two requests honestly; prover-2 cannot open its one.
  Served a = Serve(ProverKey(1), "prover-1");
  Served b = Serve(ProverKey(1), "prover-1", {3, 4, 5});
  Served c = Serve(ProverKey(2), "prover-2");
  openings->Add(a);
  openings->Add(b);
  n.Submit(a.envelope);
  n.Submit(b.envelope);
  n.Submit(c.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
  // And one on-demand audit of every layer.
  v1::RequestAuditRequest on_demand;
  on_demand.set_request_id(a.request_id);
  on_demand.set_all_layers(true);
  v1::RequestAuditResponse audited;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(n.audit->RequestAudit(&ctx, on_demand, &audited).ok());
  }

  const nlohmann::json r = n.VerifiedReport();
  const std::vector<v1::Verdict> logged = n.AllVerdicts();
  ASSERT_EQ(logged.size(), 4u);
  int failures = 0;
  for (const v1::Verdict& v : logged) failures += v.outcome() != v1::PASS;
  EXPECT_EQ(r["totals"]["audits"], logged.size());
  EXPECT_EQ(r["totals"]["failures"], failures);
  EXPECT_EQ(r["totals"]["failures"], 1);
  EXPECT_EQ(r["totals"]["commitments"], 3);
  EXPECT_EQ(r["totals"]["drawn_audits"], 3);
  EXPECT_EQ(r["totals"]["on_demand_audits"], 1);
  EXPECT_EQ(r["totals"]["realised_audit_rate"], 1.0);
  EXPECT_EQ(r["totals"]["verdicts"]["PASS"], 3);
  EXPECT_EQ(r["totals"]["verdicts"]["FAIL_OPENING"], 1);
  EXPECT_EQ(r["checkpoint"]["tree_size"], 7);
  EXPECT_EQ(r["verifier_id"], "verifier-test");
  EXPECT_EQ(r["log_origin"], "layerproof/verifier-test");
  EXPECT_EQ(r["policy"]["audit_rate"], 1.0);
  // The checkpoint is the verifier's signed note.
  store::CheckpointVerifier cv("verifier-test", n.node().public_key());
  auto cp = cv.Verify(r["checkpoint"]["note"].get<std::string>(),
                      "layerproof/verifier-test");
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->size, 7u);
  EXPECT_EQ(store::HexEncode(store::Bytes(cp->root)),
            r["checkpoint"]["root_hash"]);

  const nlohmann::json& p1 = ProverEntry(r, "prover-1");
  EXPECT_EQ(p1["audits"], 3);
  EXPECT_EQ(p1["on_demand_audits"], 1);
  // The on-demand audit is not among the bounds' audits.
  EXPECT_EQ(p1["detection"]["drawn_audits"], 2);
  const nlohmann::json& p2 = ProverEntry(r, "prover-2");
  EXPECT_EQ(p2["failures"], 1);
  EXPECT_TRUE(p2["detection"]["ruled_out"]["0.95"].is_null());
  ASSERT_EQ(r["failures"].size(), 1u);
  EXPECT_EQ(r["failures"][0]["prover_id"], "prover-2");
  EXPECT_EQ(r["failures"][0]["outcome"], "FAIL_OPENING");
  ASSERT_EQ(r["by_model"].size(), 1u);
  EXPECT_EQ(r["by_model"][0]["commitments"], 3);

  // Filtered to prover-1.
  const nlohmann::json only = n.VerifiedReport("prover-1");
  EXPECT_EQ(only["totals"]["commitments"], 2);
  EXPECT_EQ(only["totals"]["failures"], 0);

  // The DSSE JSON form verifies; a changed payload byte, another key or a
  // malformed envelope does not.
  std::string envelope;
  const int64_t now = absl::ToUnixNanos(absl::Now());
  ASSERT_TRUE(n.Report(now - kHour, now + kHour, "", &envelope).ok());
  auto dsse = check::ReportEnvelopeToDsseJson(envelope);
  ASSERT_TRUE(dsse.ok()) << dsse.status();
  auto verified = check::VerifyReportDsseJson(*dsse, n.node().public_key());
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ((*verified)["totals"], r["totals"]);
  nlohmann::json tampered = nlohmann::json::parse(*dsse);
  std::string payload =
      *store::Base64Decode(tampered["payload"].get<std::string>());
  const size_t at = payload.find("\"failures\":1");
  ASSERT_NE(at, std::string::npos);
  payload[at + 11] = '0';
  tampered["payload"] = store::Base64Encode(store::AsBytes(payload));
  auto bad = check::VerifyReportDsseJson(tampered.dump(), n.node().public_key());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kPermissionDenied)
      << bad.status();
  auto other = check::VerifyReportDsseJson(*dsse, ProverKey(1).public_key());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(check::VerifyReportDsseJson("{\"payloadType\": 3}", n.node().public_key())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      check::VerifyReportDsseJson("not json", n.node().public_key()).status().code(),
      absl::StatusCode::kInvalidArgument);
  std::string flipped = envelope;
  flipped[flipped.size() / 2] ^= 1;
  EXPECT_FALSE(check::VerifyReportEnvelope(flipped, n.node().public_key()).ok());
}

TEST(ReportServiceTest, ConsecutiveReportsAreConsistentAcrossARestart) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  nlohmann::json first, second, third;
  {
    Node n(dir.path(), openings);
    Served a = Serve(ProverKey(1), "prover-1");
    openings->Add(a);
    n.Submit(a.envelope);
    ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
    first = n.VerifiedReport();
    EXPECT_TRUE(first["previous_report"].is_null());
    Served b = Serve(ProverKey(1), "prover-1", {9, 8, 7});
    openings->Add(b);
    n.Submit(b.envelope);
    ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
    second = n.VerifiedReport();
  }
  {
    Node n(dir.path(), openings);
    Served c = Serve(ProverKey(1), "prover-1", {2, 2, 2});
    openings->Add(c);
    n.Submit(c.envelope);
    ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
    third = n.VerifiedReport();
  }
  for (const auto& [older, newer] :
       {std::pair(&first, &second), std::pair(&second, &third)}) {
    const nlohmann::json& prev = (*newer)["previous_report"];
    ASSERT_TRUE(prev.is_object()) << newer->dump();
    EXPECT_EQ(prev["tree_size"], (*older)["checkpoint"]["tree_size"]);
    EXPECT_EQ(prev["root_hash"], (*older)["checkpoint"]["root_hash"]);
    EXPECT_EQ(prev["generated_at_unix_nanos"],
              (*older)["generated_at_unix_nanos"]);
    std::vector<store::Sha256Hash> proof;
    for (const nlohmann::json& h : prev["consistency_proof"]) {
      proof.push_back(ToHash(h.get<std::string>()));
    }
    EXPECT_FALSE(proof.empty());
    EXPECT_TRUE(store::VerifyConsistency(
                    prev["tree_size"].get<uint64_t>(),
                    (*newer)["checkpoint"]["tree_size"].get<uint64_t>(),
                    ToHash(prev["root_hash"].get<std::string>()),
                    ToHash((*newer)["checkpoint"]["root_hash"]), proof)
                    .ok());
  }
  EXPECT_EQ(first["checkpoint"]["tree_size"], 2);
  EXPECT_EQ(second["checkpoint"]["tree_size"], 4);
  EXPECT_EQ(third["checkpoint"]["tree_size"], 6);
}

// Regression: reports windowed commitments by the prover's created_at
// (Serve stamps 2023), so a prover's clock decided which report saw them.
TEST(ReportServiceTest, WindowsCommitmentsByTheVerifiersTimeOfLogging) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Node n(dir.path(), openings);
  Served a = Serve(ProverKey(1), "prover-1");
  openings->Add(a);
  n.Submit(a.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
  const nlohmann::json now = n.VerifiedReport();
  EXPECT_EQ(now["totals"]["commitments"], 1);
  EXPECT_EQ(now["totals"]["audits"], 1);
  EXPECT_EQ(now["totals"]["commitments_timed_by_prover_clock"], 0);
  std::string envelope;
  ASSERT_TRUE(n.Report(kServedAt - 1, kServedAt + 1, "", &envelope).ok());
  auto at_claim = check::VerifyReportEnvelope(envelope, n.node().public_key());
  ASSERT_TRUE(at_claim.ok()) << at_claim.status();
  EXPECT_EQ((*at_claim)["totals"]["commitments"], 0);
  EXPECT_EQ((*at_claim)["totals"]["audits"], 0);
}

TEST(ReportServiceTest, ProvesConsistencyFromTheCallersPreviousReport) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Node n(dir.path(), openings);
  Served a = Serve(ProverKey(1), "prover-1");
  openings->Add(a);
  n.Submit(a.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
  const nlohmann::json mine = n.VerifiedReport("", 0, "n1");
  EXPECT_EQ(mine["client_nonce"], "6e31");
  // Someone else's report moves the verifier's last-report anchor.
  const nlohmann::json theirs = n.VerifiedReport();
  EXPECT_EQ(theirs["client_nonce"], "");
  EXPECT_EQ(theirs["previous_report"]["source"], "last_issued");
  Served b = Serve(ProverKey(1), "prover-1", {9, 8, 7});
  openings->Add(b);
  n.Submit(b.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());

  const uint64_t size = mine["checkpoint"]["tree_size"].get<uint64_t>();
  const nlohmann::json next =
      n.VerifiedReport("", size, std::string("\x00\xff", 2));
  EXPECT_EQ(next["client_nonce"], "00ff");
  const nlohmann::json& prev = next["previous_report"];
  EXPECT_EQ(prev["source"], "caller");
  EXPECT_EQ(prev["tree_size"], mine["checkpoint"]["tree_size"]);
  EXPECT_EQ(prev["root_hash"], mine["checkpoint"]["root_hash"]);
  EXPECT_TRUE(prev["generated_at_unix_nanos"].is_null());
  EXPECT_EQ(next["checkpoint"]["tree_size"], 4);

  std::string envelope;
  grpc::Status s = n.Report(0, 10, "", &envelope, 5);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find(
                "ComplianceReportRequest.previous_tree_size: got 5, want <= 4"),
            std::string::npos)
      << s.error_message();
  s = n.Report(0, 10, "", &envelope, 0, std::string(65, 'x'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("ComplianceReportRequest.client_nonce"),
            std::string::npos)
      << s.error_message();
  EXPECT_TRUE(n.Report(0, 10, "", &envelope, 0, std::string(64, 'x')).ok());
}

// Re-signs `report` with the verifier's own key (a report its signature
// alone would vouch for) as DSSE JSON.
std::string SignedDsse(const nlohmann::json& report) {
  auto env =
      store::SignEnvelope(check::kReportPayloadType, report.dump(), *VerifierKey());
  EXPECT_TRUE(env.ok()) << env.status();
  auto dsse = check::ReportEnvelopeToDsseJson(*env);
  EXPECT_TRUE(dsse.ok()) << dsse.status();
  return dsse.value_or("");
}

// Regression: a verified signature was all VerifyReportDsseJson checked;
// the checkpoint note and the consistency proof were only the HTML's to
// look at.
TEST(ReportServiceTest, VerifyingChecksTheCheckpointNoteAndTheProof) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Node n(dir.path(), openings);
  Served a = Serve(ProverKey(1), "prover-1");
  openings->Add(a);
  n.Submit(a.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
  n.VerifiedReport();
  Served b = Serve(ProverKey(1), "prover-1", {9, 8, 7});
  openings->Add(b);
  n.Submit(b.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
  const nlohmann::json good = n.VerifiedReport();
  ASSERT_TRUE(good["previous_report"].is_object());
  const store::Ed25519PublicKey key = n.node().public_key();
  ASSERT_TRUE(check::VerifyReportDsseJson(SignedDsse(good), key).ok());

  auto refused = [&](nlohmann::json r, const std::string& what) {
    auto v = check::VerifyReportDsseJson(SignedDsse(r), key);
    EXPECT_EQ(v.status().code(), absl::StatusCode::kPermissionDenied)
        << what << ": " << v.status();
    EXPECT_NE(std::string(v.status().message()).find(what), std::string::npos)
        << v.status();
  };
  nlohmann::json r = good;
  r["checkpoint"]["tree_size"] = 3;
  refused(r, "report.checkpoint");
  r = good;
  r["checkpoint"]["root_hash"] = std::string(64, 'a');
  refused(r, "report.checkpoint");
  r = good;
  std::string note = r["checkpoint"]["note"].get<std::string>();
  note[note.find('\n') + 1] = '9';  // the size line
  r["checkpoint"]["note"] = note;
  refused(r, "report.checkpoint.note");
  r = good;
  r["verifier_id"] = "verifier-other";
  refused(r, "report.checkpoint.note");
  r = good;
  r["log_origin"] = "layerproof/other";
  refused(r, "report.checkpoint.note");
  r = good;
  r["previous_report"]["root_hash"] = std::string(64, 'b');
  refused(r, "report.previous_report.consistency_proof");
  r = good;
  r["previous_report"]["consistency_proof"][0] = std::string(64, 'c');
  refused(r, "report.previous_report.consistency_proof");
  r = good;
  r["previous_report"]["tree_size"] = 1;
  refused(r, "report.previous_report.consistency_proof");
}

// Regression: `report render` parsed any JSON before the signature check,
// however deep (64 MB of '[' took 2.4 GB) or large.
TEST(ReportServiceTest, VerifyingRefusesDeepOrHugeJsonBeforeParsing) {
  const store::Ed25519PublicKey key = VerifierKey()->public_key();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto v = check::VerifyReportDsseJson(deep, key);
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(v.status().message()).find("nested deeper than 64"),
            std::string::npos)
      << v.status();
  // Brackets inside strings do not count; 64 levels are fine.
  EXPECT_TRUE(check::CheckJsonDepth("{\"a\": \"[[[[\\\"[[[\"}", 1, "x").ok());
  EXPECT_TRUE(
      check::CheckJsonDepth(std::string(64, '[') + std::string(64, ']'), 64, "x")
          .ok());
  EXPECT_FALSE(check::CheckJsonDepth(std::string(65, '['), 64, "x").ok());
  // A signed payload is depth-checked before it is parsed too.
  auto env = store::SignEnvelope(
      check::kReportPayloadType, std::string(1000, '[') + std::string(1000, ']'),
      *VerifierKey());
  ASSERT_TRUE(env.ok());
  v = check::VerifyReportEnvelope(*env, key);
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(v.status().message()).find("report payload: nested"),
            std::string::npos)
      << v.status();
  const std::string huge(check::kMaxReportDsseJsonBytes + 1, ' ');
  v = check::VerifyReportDsseJson(huge, key);
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(v.status().message()).find("bytes, want <="),
            std::string::npos)
      << v.status();
}

TEST(ReportServiceTest, ConcurrentReportsFormOneChain) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Node n(dir.path(), openings);
  Served a = Serve(ProverKey(1), "prover-1");
  openings->Add(a);
  n.Submit(a.envelope);
  ASSERT_TRUE(n.node().WaitIdle(absl::Seconds(60)).ok());
  constexpr int kReports = 4;
  std::vector<nlohmann::json> reports(kReports);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReports; ++i) {
    threads.emplace_back([&, i] { reports[size_t(i)] = n.VerifiedReport(); });
  }
  for (std::thread& t : threads) t.join();
  // Each report names the one issued just before it: one null, and every
  // other previous generated_at is another report's.
  std::set<int64_t> issued, named;
  int firsts = 0;
  for (const nlohmann::json& r : reports) {
    issued.insert(r["generated_at_unix_nanos"].get<int64_t>());
    if (r["previous_report"].is_null()) {
      ++firsts;
    } else {
      named.insert(
          r["previous_report"]["generated_at_unix_nanos"].get<int64_t>());
    }
  }
  EXPECT_EQ(firsts, 1);
  EXPECT_EQ(issued.size(), size_t(kReports));
  EXPECT_EQ(named.size(), size_t(kReports - 1));
  for (int64_t t : named) EXPECT_TRUE(issued.count(t)) << t;
}

TEST(ReportServiceTest, BadRequestsAreRefused) {
  TempDir dir;
  Node n(dir.path(), std::make_shared<HonestOpenings>());
  std::string envelope;
  grpc::Status s = n.Report(10, 10, "", &envelope);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "ComplianceReportRequest.to_unix_nanos: got 10, want > "
            "from_unix_nanos (10)");
  s = n.Report(-5, 10, "", &envelope);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "ComplianceReportRequest.from_unix_nanos: got -5, want >= 0");
  s = n.Report(0, 10, "prover 1", &envelope);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("ComplianceReportRequest.prover_id"),
            std::string::npos)
      << s.error_message();
  s = n.Report(0, 10, std::string(300, 'p'), &envelope);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // A refused request issues no report: the next one is the first.
  ASSERT_TRUE(n.Report(0, 10, "", &envelope).ok());
  auto r = check::VerifyReportEnvelope(envelope, n.node().public_key());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)["previous_report"].is_null());
  EXPECT_EQ((*r)["totals"]["commitments"], 0);
}

TEST(ReportServiceTest, MtlsNeedsTheAuditorRole) {
  TempDir dir;
  std::string envelope;
  {
    Node prover(dir.path(), std::make_shared<HonestOpenings>(), "prover-1");
    grpc::Status s = prover.Report(0, 10, "", &envelope);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(s.error_message().find("Report.GetComplianceReport needs role "
                                     "auditor"),
              std::string::npos)
        << s.error_message();
  }
  Node auditor(dir.path(), std::make_shared<HonestOpenings>(), "auditor-1");
  EXPECT_TRUE(auditor.Report(0, 10, "", &envelope).ok());
}

}  // namespace
}  // namespace layerproof::verifier
