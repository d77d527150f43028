// The client load of `layerproof demo`: `requests` Generate calls from
// `concurrency` client threads, alternating between the provers, with
// random prompts (token ids), sampling parameters and client nonces, over
// mutual TLS as the role-less client certificate `client-1`.
//
// Every response is checked the way a real client checks it (DESIGN §1
// step 2): the commitment envelope verifies under the prover's key, it is
// about this request, its prompt and output digests are those of the
// tokens received under the given salt, the seed is derived from the
// nonce, and the receipt proves the commitment's inclusion in the log
// against a checkpoint signed by the verifier (a signed promise is
// followed by Opening.GetCommitment until the log has it).
// Thread safety: RunDemoLoad blocks the calling thread; `on_tick` runs on
// it about ten times a second.
#ifndef LAYERPROOF_DEMO_DEMO_LOAD_H_
#define LAYERPROOF_DEMO_DEMO_LOAD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "demo/demo_cluster.h"

namespace layerproof::demo {

struct DemoLoadOptions {
  int requests = 60;
  int concurrency = 8;
  uint32_t max_new_tokens = 24;
  int32_t vocab = 0;  // prompt ids are below it; > 0
  uint64_t seed = 1;  // of the prompts; nonces are fresh random bytes
  // Set from outside (a signal): no further request is sent.
  const std::atomic<bool>* stop = nullptr;
};

struct DemoRequest {
  std::string prover_id;
  std::string request_id;  // 16 bytes; empty when the call failed
  bool ok = false;         // answered and every client check passed
  std::string error;       // why not
  bool promise = false;    // the receipt was a promise at first
  uint32_t prompt_tokens = 0, output_tokens = 0;
};

struct DemoLoadProgress {
  int sent = 0, done = 0, failed = 0;
};

// Runs the load; `on_tick(progress)` is called on this thread while it
// runs and once at the end.
std::vector<DemoRequest> RunDemoLoad(
    DemoCluster& cluster, const DemoLoadOptions& options,
    const std::function<void(const DemoLoadProgress&)>& on_tick);

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_LOAD_H_
