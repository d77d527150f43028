// The OpenAI API peer test's LayerProof side: the in-process cluster of the
// integration tests (a verifier and a prover on the tiny synthetic model)
// with the prover's HTTP API on 127.0.0.1, for openai_peer.mjs, which
// calls it with the official `openai` npm client. Writes the prover's and
// the log's public keys into OUT_DIR, prints one JSON line
//   {"port": P, "api_key": K, "model": M, "model_dir": D,
//    "prover_key": FILE, "log_key": FILE}
// and serves until its stdin closes. Limits are small so that the client
// can reach 413 and 429 cheaply.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cluster.h"

int main(int argc, char** argv) {
  using namespace layerproof;  // NOLINT(build/namespaces)
  if (argc != 2) {
    std::fprintf(stderr, "usage: peer_openai_server OUT_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  integration::Cluster cluster;
  cluster.StartVerifier();
  integration::RunningProver& prover = cluster.StartProver();
  prover::HttpApiOptions options;
  options.insecure = true;
  options.model_name = "layerproof-tiny";
  options.api_keys = {{"sk-peer-test", "peer-test-client"}};
  options.max_body_bytes = 64 << 10;
  options.threads = 8;
  options.max_in_flight = 4;
  options.max_in_flight_per_client = 2;
  absl::StatusOr<int> port = prover.node->StartHttpApi(options);
  if (!port.ok()) {
    std::fprintf(stderr, "peer_openai_server: %s\n",
                 std::string(port.status().message()).c_str());
    return 1;
  }
  const std::string prover_key = out + "/prover.pub";
  const std::string log_key = out + "/log.pub";
  std::ofstream(prover_key) << prover.key->public_key().ToPem();
  std::ofstream(log_key) << cluster.verifier_key().ToPem();
  nlohmann::json hello = {{"port", *port},
                          {"api_key", "sk-peer-test"},
                          {"model", options.model_name},
                          {"model_dir", cluster.model_dir()},
                          {"prover_key", prover_key},
                          {"log_key", log_key}};
  std::cout << hello.dump() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  if (const absl::Status s = prover.Stop(); !s.ok()) {
    std::fprintf(stderr, "peer_openai_server: %s\n", s.ToString().c_str());
  }
  return 0;
}
