// `layerproof serve verifier` and `layerproof serve prover` as real
// processes over mutual TLS (docs/security.md): their flags wire
// certificates, roles and the provers file, a request is committed, logged
// and audited PASS, a client without the prover role cannot submit, and
// SIGTERM shuts both down cleanly (exit 0), the prover only after the
// requests in flight have finished and their commitments are logged.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "layerproof/v1/audit_work.grpc.pb.h"
#include "store/crypto.h"
#include "store/merkle.h"
#include "tests/integration/cluster.h"
#include "tests/integration/node_process.h"
#include "tests/integration/run_command.h"
#include "tests/rpc/test_certs.h"

namespace layerproof::integration {
namespace {

using rpc::fixture::TestCerts;

template <typename Service>
std::unique_ptr<typename Service::Stub> Stub(const std::string& address,
                                             const std::string& who) {
  auto channel = rpc::MakeChannel(address, TestCerts::Get().Client(who));
  EXPECT_TRUE(channel.ok()) << channel.status();
  return Service::NewStub(*channel);
}

// The files `serve` reads, in the cluster's root: the key pairs prover.*
// (a new one) and verifier.* (the cluster's), and provers.json registering
// prover-1 with its Opening service at `opening_address`.
void WriteNodeFiles(const Cluster& cluster,
                    const std::string& opening_address) {
  const std::string root = cluster.root();
  auto prover_key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(prover_key.ok());
  ASSERT_TRUE(store::WriteKeyPair(*prover_key, root + "/prover").ok());
  ASSERT_TRUE(
      store::WriteKeyPair(cluster.verifier_private_key(), root + "/verifier")
          .ok());
  std::ofstream(root + "/provers.json")
      << R"({"provers": [{"id": "prover-1", "public_key_file": "prover.pub",
             "opening_address": ")"
      << opening_address << R"("}]})";
}

TEST(ServeCommands, ProverAndVerifierOverMutualTls) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  Cluster cluster;  // only for its model and temp dir
  const std::string root = cluster.root();
  std::ofstream(root + "/roles.json")
      << R"({"prover-1": ["prover"], "verifier-1": ["auditor"],
             "auditor-1": ["auditor"], "client-1": ["client"]})";
  const int prover_port = ReservePort();
  const std::string prover_address = "127.0.0.1:" + std::to_string(prover_port);
  ASSERT_NO_FATAL_FAILURE(WriteNodeFiles(cluster, prover_address));
  const std::vector<std::string> server_tls = {
      "--tls-cert", certs.Pem("server"), "--tls-key",   certs.Key("server"),
      "--tls-ca",   certs.Pem("ca"),     "--roles",     root + "/roles.json",
      "--peer-ca",  certs.Pem("ca"),     "--peer-name", "localhost"};
  const auto with = [&](std::vector<std::string> args, const std::string& who) {
    args.insert(args.end(), server_tls.begin(), server_tls.end());
    for (const std::string& a : {std::string("--client-cert"), certs.Pem(who),
                                 std::string("--client-key"), certs.Key(who)}) {
      args.push_back(a);
    }
    return args;
  };

  NodeProcess verifier(
      with({"serve", "verifier", "--model", cluster.model_dir(), "--key",
            root + "/verifier.key", "--db", root + "/db", "--listen",
            "127.0.0.1:0", "--provers", root + "/provers.json", "--audit-rate",
            "1", "--layers-per-audit", "2"},
           "verifier-1"));
  ASSERT_FALSE(verifier.address().empty());
  std::ofstream(root + "/api-keys.json")
      << R"({"sk-cli-serve-test-0001": "team-a"})";
  NodeProcess prover(with({"serve",
                           "prover",
                           "--model",
                           cluster.model_dir(),
                           "--key",
                           root + "/prover.key",
                           "--listen",
                           prover_address,
                           "--verifier",
                           verifier.address(),
                           "--log-key",
                           root + "/verifier.pub",
                           "--journal",
                           root + "/journal",
                           "--http-listen",
                           "127.0.0.1:0",
                           "--served-model-name",
                           "tiny",
                           "--api-keys",
                           root + "/api-keys.json"},
                          "prover-1"),
                     /*lines=*/2);
  ASSERT_EQ(prover.address(), prover_address);

  // `layerproof health` (readiness probes): serving, by server and by
  // service; an unknown service is a failed call (exit 3).
  {
    const std::vector<std::string> tls = {
        "--peer-ca",    certs.Pem("ca"),      "--peer-name",
        "localhost",    "--client-cert",      certs.Pem("stranger"),
        "--client-key", certs.Key("stranger")};
    const auto health = [&](const std::string& address,
                            const std::string& service) {
      std::vector<std::string> args = {"health", address};
      args.insert(args.end(), tls.begin(), tls.end());
      if (!service.empty()) {
        args.push_back("--service");
        args.push_back(service);
      }
      return RunLayerproof(args);
    };
    CommandResult r = health(verifier.address(), "");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("\"SERVING\""), std::string::npos) << r.out;
    EXPECT_EQ(health(prover.address(), "layerproof.v1.Inference").exit_code, 0);
    EXPECT_EQ(health(verifier.address(), "layerproof.v1.Nope").exit_code, 3);
    EXPECT_EQ(RunLayerproof({"health"}).exit_code, 2);
  }

  // The OpenAI-compatible API, over TLS with the server's certificate:
  // Bearer key required, the served name is the model.
  {
    const std::string http = prover.address_of("prover-http");
    ASSERT_FALSE(http.empty());
    httplib::SSLClient api(http.substr(0, http.rfind(':')),
                           std::stoi(http.substr(http.rfind(':') + 1)));
    api.set_ca_cert_path(certs.Pem("ca").c_str());
    api.enable_server_certificate_verification(true);
    const std::string body =
        R"({"model": "tiny", "prompt": "the quick brown fox", "max_tokens": 3})";
    auto anonymous = api.Post("/v1/completions", body, "application/json");
    ASSERT_TRUE(anonymous) << httplib::to_string(anonymous.error());
    EXPECT_EQ(anonymous->status, 401);
    api.set_bearer_token_auth("sk-cli-serve-test-0001");
    auto served = api.Post("/v1/completions", body, "application/json");
    ASSERT_TRUE(served) << httplib::to_string(served.error());
    EXPECT_EQ(served->status, 200) << served->body;
    EXPECT_NE(served->body.find("\"layerproof\""), std::string::npos);
    EXPECT_FALSE(served->get_header_value("X-LayerProof-Request-Id").empty());
  }

  // Under mTLS, Generate needs role client: a certificate from the CA
  // without it is refused.
  {
    auto refused = Stub<v1::Inference>(prover.address(), "stranger");
    v1::GenerateRequest request;
    request.set_text("a stranger");
    request.set_max_tokens(2);
    v1::GenerateResponse response;
    grpc::ClientContext context;
    EXPECT_EQ(refused->Generate(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  auto inference = Stub<v1::Inference>(prover.address(), "client-1");
  v1::GenerateRequest request;
  request.set_text("the quick brown fox");
  request.set_max_tokens(4);
  request.set_client_nonce("cli-test");
  v1::GenerateResponse response;
  grpc::ClientContext context;
  const grpc::Status status = inference->Generate(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(response.receipt().has_inclusion());

  // It is audited (rate 1) and passes.
  auto audit = Stub<v1::Audit>(verifier.address(), "stranger");
  v1::GetVerdictResponse verdicts;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (verdicts.verdicts_size() == 0 && absl::Now() < deadline) {
    v1::GetVerdictRequest get;
    get.set_request_id(response.request_id());
    grpc::ClientContext get_context;
    ASSERT_TRUE(audit->GetVerdict(&get_context, get, &verdicts).ok());
    if (verdicts.verdicts_size() == 0) {
      absl::SleepFor(absl::Milliseconds(20));  // polling the verifier
    }
  }
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  v1::Envelope envelope;
  ASSERT_TRUE(
      envelope.ParseFromString(verdicts.verdicts(0).verdict_envelope()));
  v1::Verdict verdict;
  ASSERT_TRUE(verdict.ParseFromString(envelope.payload()));
  EXPECT_EQ(verdict.outcome(), v1::PASS) << verdict.detail();

  // Only the prover's certificate may submit.
  auto log = Stub<v1::Log>(verifier.address(), "auditor-1");
  v1::SubmitRequest submit;
  submit.add_envelopes(response.commitment_envelope());
  v1::SubmitResponse submitted;
  grpc::ClientContext submit_context;
  EXPECT_EQ(log->Submit(&submit_context, submit, &submitted).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // SIGTERM with requests in flight: each finishes, is committed and
  // logged; nothing is lost.
  constexpr int kInFlight = 4;
  std::vector<v1::GenerateResponse> finished(kInFlight);
  std::vector<std::thread> streams;
  std::atomic<int> started{0};
  for (int i = 0; i < kInFlight; ++i) {
    streams.emplace_back([&, i] {
      auto stub = Stub<v1::Inference>(prover.address(), "client-1");
      v1::GenerateRequest long_request;
      long_request.set_text("stream " + std::to_string(i));
      long_request.set_max_tokens(400);
      long_request.set_ignore_eos(true);
      grpc::ClientContext stream_context;
      auto reader = stub->GenerateStream(&stream_context, long_request);
      v1::GenerateEvent event;
      bool counted = false;
      while (reader->Read(&event)) {
        if (!counted) ++started, counted = true;
        if (event.has_done()) finished[i] = event.done();
      }
      const grpc::Status done = reader->Finish();
      EXPECT_TRUE(done.ok()) << done.error_message();
    });
  }
  const absl::Time start_deadline = absl::Now() + absl::Seconds(60);
  while (started < kInFlight && absl::Now() < start_deadline) {
    absl::SleepFor(absl::Milliseconds(5));  // polling the streams
  }
  ASSERT_EQ(started.load(), kInFlight);
  prover.Kill(SIGTERM);
  for (std::thread& t : streams) t.join();
  EXPECT_TRUE(WIFEXITED(prover.exit_status()));
  EXPECT_EQ(WEXITSTATUS(prover.exit_status()), 0);
  auto reader_log = Stub<v1::Log>(verifier.address(), "stranger");
  for (const v1::GenerateResponse& r : finished) {
    ASSERT_FALSE(r.commitment_envelope().empty());
    EXPECT_EQ(r.output_token_ids_size(), 400);
    const store::Sha256Hash leaf = store::LeafHash(r.commitment_envelope());
    v1::GetInclusionProofRequest get_proof;
    get_proof.set_leaf_hash(std::string(leaf.begin(), leaf.end()));
    v1::GetInclusionProofResponse proof;
    grpc::ClientContext proof_context;
    const grpc::Status logged =
        reader_log->GetInclusionProof(&proof_context, get_proof, &proof);
    EXPECT_TRUE(logged.ok()) << logged.error_message();
  }

  verifier.Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(verifier.exit_status()));
  EXPECT_EQ(WEXITSTATUS(verifier.exit_status()), 0);
}

// The listeners deploy/k8s's NetworkPolicies rely on: with --submit-listen,
// --audit-work-listen and --opening-listen, Log.Submit, AuditWork and
// Opening are answered on their own listeners only (UNIMPLEMENTED on the
// main ones), and a request still goes end to end through them.
TEST(ServeCommands, SplitListenersServeEachRestrictedCallOnlyOnItsOwn) {
  Cluster cluster;  // only for its model and temp dir
  const std::string root = cluster.root();
  const std::string opening = "127.0.0.1:" + std::to_string(ReservePort());
  ASSERT_NO_FATAL_FAILURE(WriteNodeFiles(cluster, opening));
  NodeProcess verifier({"serve",
                        "verifier",
                        "--insecure",
                        "--model",
                        cluster.model_dir(),
                        "--key",
                        root + "/verifier.key",
                        "--db",
                        root + "/db",
                        "--listen",
                        "127.0.0.1:0",
                        "--submit-listen",
                        "127.0.0.1:0",
                        "--audit-work-listen",
                        "127.0.0.1:0",
                        "--remote-auditors",
                        "--provers",
                        root + "/provers.json",
                        "--audit-rate",
                        "0"},
                       /*lines=*/3);
  const std::string submit = verifier.address_of("verifier-submit");
  const std::string work = verifier.address_of("verifier-audit-work");
  ASSERT_FALSE(submit.empty());
  ASSERT_FALSE(work.empty());
  NodeProcess prover(
      {"serve", "prover", "--insecure", "--model", cluster.model_dir(), "--key",
       root + "/prover.key", "--listen", "127.0.0.1:0", "--opening-listen",
       opening, "--verifier", submit, "--log-key", root + "/verifier.pub",
       "--journal", root + "/journal"},
      /*lines=*/2);
  ASSERT_EQ(prover.address_of("prover-opening"), opening);

  const auto channel = [](const std::string& address) {
    auto c = rpc::MakeChannel(address, Insecure());
    EXPECT_TRUE(c.ok()) << c.status();
    return *c;
  };
  // End to end: the prover submits through the submission listener.
  auto inference = v1::Inference::NewStub(channel(prover.address()));
  v1::GenerateRequest request;
  request.set_text("split listeners");
  request.set_max_tokens(3);
  v1::GenerateResponse response;
  {
    grpc::ClientContext context;
    const grpc::Status s = inference->Generate(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_TRUE(response.receipt().has_inclusion());
  }
  const auto code = [](auto call) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(5));
    return call(&context).error_code();
  };
  v1::SubmitRequest submit_request;
  submit_request.add_envelopes(response.commitment_envelope());
  v1::SubmitResponse submitted;
  auto open_log = v1::Log::NewStub(channel(verifier.address()));
  EXPECT_EQ(code([&](grpc::ClientContext* c) {
              return open_log->Submit(c, submit_request, &submitted);
            }),
            grpc::StatusCode::UNIMPLEMENTED);
  v1::GetCheckpointResponse checkpoint;
  EXPECT_EQ(code([&](grpc::ClientContext* c) {
              return open_log->GetCheckpoint(c, {}, &checkpoint);
            }),
            grpc::StatusCode::OK);
  // AuditWork only on its listener.
  v1::LeaseAuditRequest lease;
  lease.set_worker_id("test");
  v1::LeaseAuditResponse leased;
  EXPECT_EQ(code([&](grpc::ClientContext* c) {
              return v1::AuditWork::NewStub(channel(verifier.address()))
                  ->Lease(c, lease, &leased);
            }),
            grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_NE(
      code([&](grpc::ClientContext* c) {
        return v1::AuditWork::NewStub(channel(work))->Lease(c, lease, &leased);
      }),
      grpc::StatusCode::UNIMPLEMENTED);
  // Opening only on its listener, Inference never there.
  v1::GetCommitmentRequest get;
  get.set_request_id(response.request_id());
  v1::GetCommitmentResponse commitment;
  EXPECT_EQ(code([&](grpc::ClientContext* c) {
              return v1::Opening::NewStub(channel(prover.address()))
                  ->GetCommitment(c, get, &commitment);
            }),
            grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(code([&](grpc::ClientContext* c) {
              return v1::Opening::NewStub(channel(opening))
                  ->GetCommitment(c, get, &commitment);
            }),
            grpc::StatusCode::OK);
  v1::ModelInfoResponse info;
  EXPECT_EQ(code([&](grpc::ClientContext* c) {
              return v1::Inference::NewStub(channel(opening))
                  ->ModelInfo(c, {}, &info);
            }),
            grpc::StatusCode::UNIMPLEMENTED);

  prover.Kill(SIGTERM);
  EXPECT_EQ(WEXITSTATUS(prover.exit_status()), 0);
  verifier.Kill(SIGTERM);
  EXPECT_EQ(WEXITSTATUS(verifier.exit_status()), 0);
}

TEST(ServeCommands, PlaintextNeedsInsecureAndUsageErrorsExitTwo) {
  Cluster cluster;
  const std::string binary = LP_LAYERPROOF_BINARY;
  const auto run = [&](const std::string& args) {
    const int rc = std::system((binary + " " + args + " 2>/dev/null").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  // No TLS flags and no --insecure: a usage error, nothing started.
  EXPECT_EQ(run("serve prover --model " + cluster.model_dir() +
                " --key k --listen 127.0.0.1:0 --verifier 127.0.0.1:1"
                " --journal " +
                cluster.root() + "/j"),
            2);
  EXPECT_FALSE(std::filesystem::exists(cluster.root() + "/j"));
  EXPECT_EQ(run("serve verifier --model x"), 2);
  // Audit draws are never seedable in a served verifier (only the demo's
  // are): predictable seeds would tell a prover what escapes audit.
  EXPECT_EQ(run("serve verifier --insecure --audit-seed x --model x"), 2);
  // Listener flags that do not fit together: refused before anything is
  // created.
  const std::string split =
      "serve verifier --insecure --model " + cluster.model_dir() +
      " --key k --db " + cluster.root() + "/vdb --listen 127.0.0.1:0" +
      " --provers p.json --audit-work-listen" + " 127.0.0.1:0";
  EXPECT_EQ(run(split + " --remote-auditors"), 2);  // no --submit-listen
  EXPECT_EQ(run(split + " --submit-listen 127.0.0.1:0"), 2);  // no remote
  EXPECT_FALSE(std::filesystem::exists(cluster.root() + "/vdb"));
  EXPECT_EQ(run("serve nothing"), 2);
  EXPECT_EQ(run("serve --help"), 0);
}

}  // namespace
}  // namespace layerproof::integration
