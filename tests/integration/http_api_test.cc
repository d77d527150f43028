// The prover's OpenAI-compatible HTTP API in the in-process cluster, for
// what the peer test (tests/peer/openai_peer.mjs, the official client)
// cannot reach: TLS, the 503 of a draining prover, refusals that store
// nothing, and a receipt checked in process with check::CheckReceipt.
#include "prover/http_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "check/receipt.h"
#include "openai/api_response.h"
#include "tests/integration/cluster.h"
#include "tests/rpc/test_certs.h"

namespace layerproof::integration {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kModel[] = "layerproof-tiny";

prover::HttpApiOptions Plain() {
  prover::HttpApiOptions o;
  o.insecure = true;
  o.model_name = kModel;
  return o;
}

std::string CompletionBody(int max_tokens = 4) {
  return Json{{"model", kModel},
              {"prompt", "Hello"},
              {"max_tokens", max_tokens},
              {"temperature", 0}}
      .dump();
}

// Holds every commitment at signing until released, so that a request is
// in flight for as long as a test needs.
class GateFaults : public prover::ProverFaults {
 public:
  void TamperCommitment(v1::Commitment&) override {
    absl::MutexLock lock(&mu_);
    ++entered_;
    mu_.Await(absl::Condition(&open_));
  }
  void WaitEntered() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* n) { return *n > 0; }, &entered_));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }

 private:
  absl::Mutex mu_;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(HttpApi, ReceiptOfACompletionPassesTheClientCheck) {
  Cluster cluster;
  cluster.StartVerifier();
  RunningProver& p = cluster.StartProver();
  absl::StatusOr<int> port = p.node->StartHttpApi(Plain());
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client client("127.0.0.1", *port);
  auto res =
      client.Post("/v1/completions", CompletionBody(), "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  absl::StatusOr<v1::SavedReceipt> saved = openai::ReceiptOfBody(res->body);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(res->get_header_value("X-LayerProof-Request-Id"),
            Json::parse(res->body)["layerproof"]["request_id"]);
  absl::StatusOr<check::CheckedReceipt> checked =
      cluster.CheckReceipt(saved->request(), saved->response());
  EXPECT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(saved->request().text(), "Hello");
  EXPECT_EQ(saved->response().output_token_ids_size(), 4);
  // A second refusal path stores nothing: an unknown model leaves the
  // journal's count where it was.
  const uint64_t committed = p.node->committed_requests();
  auto refused =
      client.Post("/v1/completions", R"({"model": "x", "prompt": "a"})",
                  "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 404);
  EXPECT_EQ(p.node->committed_requests(), committed);
  auto no_path = client.Get("/v1/engines");
  ASSERT_TRUE(no_path);
  EXPECT_EQ(no_path->status, 404);
  EXPECT_THAT(no_path->body, HasSubstr("\"error\""));
}

TEST(HttpApi, ServesOverTls) {
  const auto& certs = rpc::fixture::TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  Cluster cluster;
  cluster.StartVerifier();
  RunningProver& p = cluster.StartProver();
  prover::HttpApiOptions o = Plain();
  o.insecure = false;
  o.tls_cert_file = certs.Pem("server");
  o.tls_key_file = certs.Key("server");
  absl::StatusOr<int> port = p.node->StartHttpApi(o);
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::SSLClient tls("127.0.0.1", *port);
  tls.set_ca_cert_path(certs.Pem("ca").c_str());
  tls.enable_server_certificate_verification(true);
  auto res = tls.Post("/v1/completions", CompletionBody(), "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  httplib::Client plain("127.0.0.1", *port);
  plain.set_connection_timeout(2);
  plain.set_read_timeout(2);
  auto refused = plain.Get("/v1/models");
  EXPECT_TRUE(!refused || refused->status != 200);
}

TEST(HttpApi, OptionsAreChecked) {
  Cluster cluster;
  cluster.StartVerifier();
  RunningProver& p = cluster.StartProver();
  prover::HttpApiOptions no_tls = Plain();
  no_tls.insecure = false;
  EXPECT_THAT(p.node->StartHttpApi(no_tls).status().message(),
              HasSubstr("no TLS certificate and key, and not insecure"));
  prover::HttpApiOptions tight = Plain();
  tight.threads = 4;
  tight.max_in_flight = 4;
  EXPECT_THAT(p.node->StartHttpApi(tight).status().message(),
              HasSubstr("max_in_flight < threads"));
  prover::HttpApiOptions bad_cert = Plain();
  bad_cert.insecure = false;
  bad_cert.tls_cert_file = "/nonexistent.pem";
  bad_cert.tls_key_file = "/nonexistent.key";
  EXPECT_THAT(p.node->StartHttpApi(bad_cert).status().message(),
              HasSubstr("cannot load the TLS certificate"));
}

TEST(HttpApi, ApiKeysFileIsCheckedWithoutEchoingKeys) {
  auto keys = prover::ParseApiKeys(
      R"({"sk-0123456789abcdef": "team-a", "sk-fedcba9876543210": "team b"})",
      "keys.json");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->at("sk-0123456789abcdef"), "team-a");
  EXPECT_EQ(keys->size(), 2u);
  const auto short_key =
      prover::ParseApiKeys(R"({"sk-short": "team-a"})", "keys.json").status();
  EXPECT_THAT(short_key.message(),
              HasSubstr("keys.json: entry 1 (client team-a): the key must be"));
  EXPECT_THAT(short_key.message(), ::testing::Not(HasSubstr("sk-short")));
  EXPECT_THAT(prover::ParseApiKeys(R"({"sk-0123456789abcdef": 5})", "k")
                  .status()
                  .message(),
              HasSubstr("k: entry 1: the client must be"));
  EXPECT_THAT(prover::ParseApiKeys(R"({"sk-0123456789abcdef": "a",
                                       "sk-0123456789abcdef": "b"})",
                                   "k")
                  .status()
                  .message(),
              HasSubstr("k: bad JSON"));
  EXPECT_FALSE(prover::ParseApiKeys("[]", "k").ok());
}

// While the prover drains, new completions get 503 and the one in flight
// still gets its answer and receipt.
TEST(HttpApi, DrainingProverAnswers503AndFinishesWhatItHas) {
  Cluster cluster;
  cluster.StartVerifier();
  auto gate = std::make_shared<GateFaults>();
  ProverSetup setup;
  setup.faults = gate;
  RunningProver& p = cluster.StartProver(setup);
  absl::StatusOr<int> port = p.node->StartHttpApi(Plain());
  ASSERT_TRUE(port.ok()) << port.status();

  int in_flight_status = 0;
  std::string in_flight_body;
  std::thread in_flight([&] {
    httplib::Client client("127.0.0.1", *port);
    client.set_read_timeout(60);
    auto res =
        client.Post("/v1/completions", CompletionBody(), "application/json");
    if (res) {
      in_flight_status = res->status;
      in_flight_body = res->body;
    }
  });
  gate->WaitEntered();  // the request is at its commitment, held
  std::thread shutdown(
      [&] { (void)p.node->Shutdown(absl::Now() + absl::Seconds(60)); });

  httplib::Client client("127.0.0.1", *port);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  int health = 0;
  while (absl::Now() < deadline) {
    auto res = client.Get("/health");
    if (res && res->status == 503) {
      health = 503;
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(health, 503) << "the API never said it was draining";
  auto refused =
      client.Post("/v1/completions", CompletionBody(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("shutting down"));

  gate->Open();
  in_flight.join();
  shutdown.join();
  EXPECT_EQ(in_flight_status, 200) << in_flight_body;
  EXPECT_TRUE(openai::ReceiptOfBody(in_flight_body).ok());
}

}  // namespace
}  // namespace layerproof::integration
