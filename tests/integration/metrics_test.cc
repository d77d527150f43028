// Every node's Prometheus metrics, read the way operators read them: a real
// Prometheus server (Debian's `prometheus`, started here on 127.0.0.1 with
// a generated config) scrapes a verifier and a prover under load (gRPC and
// HTTP API requests, audits), and the series are read back through
// Prometheus's HTTP query API. `promtool check metrics` passes on each
// node's exposition.
#include "rpc/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/node_process.h"

extern char** environ;

namespace layerproof::integration {
namespace {

using Json = nlohmann::json;

std::string Scrape(int port) {
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/metrics");
  EXPECT_TRUE(res && res->status == 200);
  return res ? res->body : "";
}

// `promtool check metrics` on `text`: its exit code and output.
std::pair<int, std::string> Promtool(const std::string& dir,
                                     const std::string& name,
                                     const std::string& text) {
  const std::string in = dir + "/" + name + ".prom";
  const std::string out = dir + "/" + name + ".promtool";
  std::ofstream(in) << text;
  const int rc = std::system(
      ("promtool check metrics < '" + in + "' > '" + out + "' 2>&1").c_str());
  std::ifstream read(out);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1,
          std::string(std::istreambuf_iterator<char>(read), {})};
}

class PrometheusProcess {
 public:
  PrometheusProcess(const std::string& dir, int port,
                    const std::vector<std::string>& targets) {
    const std::string config = dir + "/prometheus.yml";
    std::ofstream yml(config);
    yml << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "scrape_configs:\n  - job_name: layerproof\n"
        << "    static_configs:\n      - targets: [";
    for (size_t i = 0; i < targets.size(); ++i) {
      yml << (i ? ", " : "") << "'" << targets[i] << "'";
    }
    yml << "]\n";
    yml.close();
    std::vector<std::string> args = {
        "prometheus", "--config.file=" + config,
        "--storage.tsdb.path=" + dir + "/tsdb",
        "--web.listen-address=127.0.0.1:" + std::to_string(port),
        "--log.level=warn"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                     (dir + "/prometheus.log").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    ok_ = posix_spawnp(&pid_, "prometheus", &actions, nullptr, argv.data(),
                       environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~PrometheusProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
  }
  bool ok() const { return ok_; }

 private:
  pid_t pid_ = -1;
  bool ok_ = false;
};

// The result vector of an instant query, or empty.
Json Query(int port, const std::string& promql) {
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/api/v1/query", httplib::Params{{"query", promql}},
                   httplib::Headers{});
  if (!res || res->status != 200) return Json::array();
  const Json j = Json::parse(res->body, nullptr, false);
  if (!j.is_object() || j.value("status", "") != "success") {
    return Json::array();
  }
  return j["data"]["result"];
}

// Polls `promql` until it returns a sample whose value satisfies `ok`.
bool Eventually(int port, const std::string& promql,
                const std::function<bool(double)>& ok) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    for (const Json& sample : Query(port, promql)) {
      if (ok(std::stod(sample["value"][1].get<std::string>()))) return true;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  return false;
}

TEST(Metrics, PrometheusScrapesEveryNodeUnderLoad) {
  Cluster cluster;
  VerifierSetup vs;
  vs.policy = verifier::AuditPolicy{1.0, 1};
  cluster.StartVerifier(vs);
  RunningProver& p = cluster.StartProver();
  prover::HttpApiOptions http;
  http.insecure = true;
  http.model_name = "tiny";
  absl::StatusOr<int> http_port = p.node->StartHttpApi(http);
  ASSERT_TRUE(http_port.ok()) << http_port.status();
  auto prover_metrics =
      rpc::MetricsServer::Start("127.0.0.1", 0, p.node->metrics());
  auto verifier_metrics =
      rpc::MetricsServer::Start("127.0.0.1", 0, cluster.verifier().metrics());
  ASSERT_TRUE(prover_metrics.ok() && verifier_metrics.ok());

  // Load: gRPC and HTTP requests, each audited (rate 1).
  auto stub = cluster.InferenceStub(p);
  v1::SamplingParams greedy;
  greedy.set_temperature(0);
  greedy.set_top_p(1);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(cluster.Generate(*stub, {1, 2, 3, i}, 4, greedy).ok());
  }
  httplib::Client api("127.0.0.1", *http_port);
  for (int i = 0; i < 2; ++i) {
    auto res = api.Post(
        "/v1/completions",
        Json{{"model", "tiny"}, {"prompt", "hello"}, {"max_tokens", 3}}.dump(),
        "application/json");
    ASSERT_TRUE(res && res->status == 200);
  }
  auto refused =
      api.Post("/v1/completions", R"({"model": "tiny", "prompt": "x", "n": 3})",
               "application/json");
  ASSERT_TRUE(refused && refused->status == 400);
  ASSERT_TRUE(cluster.verifier().WaitIdle(absl::Seconds(60)).ok());

  // promtool accepts both expositions.
  const std::string prover_text = Scrape((*prover_metrics)->port());
  const std::string verifier_text = Scrape((*verifier_metrics)->port());
  for (const auto& [name, text] :
       {std::pair{"prover", prover_text}, {"verifier", verifier_text}}) {
    const auto [rc, out] = Promtool(cluster.root(), name, text);
    EXPECT_EQ(rc, 0) << name << ": promtool check metrics said:\n" << out;
  }
  EXPECT_THAT(prover_text,
              ::testing::HasSubstr("layerproof_requests_total{api=\"http\","
                                   "code=\"INVALID_ARGUMENT\"} 1"));

  const int prom_port = ReservePort();
  PrometheusProcess prometheus(
      cluster.root(), prom_port,
      {"127.0.0.1:" + std::to_string((*prover_metrics)->port()),
       "127.0.0.1:" + std::to_string((*verifier_metrics)->port())});
  ASSERT_TRUE(prometheus.ok()) << "cannot start prometheus (setup.sh "
                                  "installs Debian's package)";
  const auto positive = [](double v) { return v > 0; };
  // Serving.
  EXPECT_TRUE(Eventually(prom_port,
                         "layerproof_requests_total{api=\"grpc\",code=\"OK\"}",
                         [](double v) { return v == 3; }));
  EXPECT_TRUE(Eventually(prom_port,
                         "layerproof_requests_total{api=\"http\",code=\"OK\"}",
                         [](double v) { return v == 2; }));
  EXPECT_TRUE(Eventually(prom_port, "layerproof_output_tokens_total",
                         [](double v) { return v == 3 * 4 + 2 * 3; }));
  EXPECT_TRUE(Eventually(prom_port,
                         "layerproof_time_to_first_token_seconds_count",
                         [](double v) { return v == 5; }));
  EXPECT_TRUE(Eventually(prom_port, "layerproof_batch_size_count", positive));
  EXPECT_TRUE(Eventually(prom_port,
                         "layerproof_queue_depth{queue=\"generation\"}",
                         [](double v) { return v == 0; }));
  // Log.
  EXPECT_TRUE(Eventually(prom_port, "layerproof_log_size",
                         [](double v) { return v >= 10; }));  // 5 + verdicts
  EXPECT_TRUE(Eventually(prom_port, "layerproof_log_append_seconds_count",
                         [](double v) { return v == 5; }));
  EXPECT_TRUE(
      Eventually(prom_port, "layerproof_log_checkpoint_age_seconds", positive));
  // Audits.
  EXPECT_TRUE(Eventually(prom_port, "layerproof_audits_drawn_total",
                         [](double v) { return v == 5; }));
  EXPECT_TRUE(Eventually(prom_port,
                         "layerproof_verdicts_total{verdict=\"PASS\"}",
                         [](double v) { return v == 5; }));
  EXPECT_TRUE(Eventually(prom_port, "layerproof_audit_backlog",
                         [](double v) { return v == 0; }));
  EXPECT_TRUE(Eventually(prom_port, "layerproof_audits_pending",
                         [](double v) { return v == 0; }));
  EXPECT_TRUE(
      Eventually(prom_port, "layerproof_audit_opening_bytes_total", positive));
  EXPECT_TRUE(Eventually(prom_port,
                         "layerproof_audit_reexecution_seconds_count",
                         [](double v) { return v == 5; }));
  // Process, from both targets.
  EXPECT_TRUE(Eventually(prom_port, "count(process_resident_memory_bytes > 0)",
                         [](double v) { return v == 2; }));
  EXPECT_TRUE(
      Eventually(prom_port, "count(up == 1)", [](double v) { return v == 2; }));
}

}  // namespace
}  // namespace layerproof::integration
