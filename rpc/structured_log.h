// One-line structured logs of every node (prover, verifier) on stderr: a JSON
// object per line with "ts" (RFC 3339 UTC), "level", "component", "event" and
// the event's fields, e.g.
//   {"component":"prover.submitter","event":"commitment_refused",
//    "level":"warn","request_id":"…","code":7,"message":"…","ts":"…"}
// Never logs tokens, activations, salts or seeds. Thread safety: each line
// is written with one fwrite, so lines from different threads never
// interleave.
#ifndef LAYERPROOF_RPC_STRUCTURED_LOG_H_
#define LAYERPROOF_RPC_STRUCTURED_LOG_H_

#include <cstdio>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace layerproof::rpc {

inline void LogEvent(const char* level, const char* component,
                     const char* event, nlohmann::json fields = {}) {
  if (!fields.is_object()) fields = nlohmann::json::object();
  fields["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                  absl::UTCTimeZone());
  fields["level"] = level;
  fields["component"] = component;
  fields["event"] = event;
  const std::string line =
      fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_STRUCTURED_LOG_H_
