// The prover's OpenAI-compatible HTTP API (docs/openai-api.md):
// POST /v1/completions, POST /v1/chat/completions (JSON, or server-sent
// events with `stream: true`, ending in `data: [DONE]`) and GET /v1/models,
// on cpp-httplib (Debian's libcpp-httplib), in the prover process itself:
// a request goes straight into the same InferencePipeline as gRPC
// Generate, with no second hop and no second copy of the limits.
//
// Every completion carries its receipt (openai/api_response.h) and the
// X-LayerProof-Request-Id header; a client may fix the sampling seed with
// an X-LayerProof-Nonce header (hex). Errors are OpenAI error objects: 400
// naming the field, 401 (a missing or unknown Bearer key when keys are
// configured), 404 (an unknown model or path), 413 (a body over
// max_body_bytes), 429 (this client's or the server's in-flight limit, or
// the engine's queue, is full), 503 (draining).
//
// Bounds: `threads` connection handlers, at most `max_queued_connections`
// accepted connections waiting for one (the accept loop then waits, and
// the kernel's listen backlog holds the rest), at most `max_in_flight`
// generations at once over HTTP and `max_in_flight_per_client` per client
// identity; read and write timeouts end stalled connections.
//
// Lifetime: the ServiceContext must outlive the server. Thread safety:
// SetDraining and Stop may be called from any thread; Stop once.
#ifndef LAYERPROOF_PROVER_HTTP_API_H_
#define LAYERPROOF_PROVER_HTTP_API_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace layerproof::prover {

namespace internal {
struct ServiceContext;
}

struct HttpApiOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port (HttpApi::port() says which)
  // TLS from PEM files. Both empty: plaintext, which needs `insecure`.
  std::string tls_cert_file;
  std::string tls_key_file;
  bool insecure = false;
  // The `model` requests name and /v1/models lists. Required.
  std::string model_name;
  // Bearer API key -> client identity (for logs and per-client limits).
  // Empty: no key needed; the identity is the peer address.
  std::map<std::string, std::string> api_keys;
  size_t max_body_bytes = size_t{1} << 20;
  int threads = 32;
  size_t max_queued_connections = 64;
  int max_in_flight = 24;
  int max_in_flight_per_client = 8;
  absl::Duration io_timeout = absl::Seconds(30);
};

// An API keys file (`serve prover --api-keys FILE`): a JSON object from
// each Bearer key (16 to 256 printable ASCII characters, no spaces) to the
// client identity it stands for (1 to 128 printable ASCII characters),
// e.g. {"sk-team-a-0f3c9e1d2b7a": "team-a"}. Errors name `source` and the
// identity or the entry's position, never a key.
absl::StatusOr<std::map<std::string, std::string>> ParseApiKeys(
    std::string_view json, std::string_view source);

class HttpApi {
 public:
  // Binds and starts serving. InvalidArgument naming the option, or
  // Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpApi>> Start(
      HttpApiOptions options, const internal::ServiceContext& context);
  ~HttpApi();  // Stop()
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  int port() const;
  // New completions get 503; those in flight finish.
  void SetDraining();
  // Stops listening and waits for the handlers to return.
  void Stop();

  struct Impl;

 private:
  explicit HttpApi(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_HTTP_API_H_
