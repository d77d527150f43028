#include "prover/http_api.h"

#include <httplib.h>

#include <atomic>
#include <deque>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "kernels/model/json_fields.h"
#include "openai/api_request.h"
#include "openai/api_response.h"
#include "openai/text_stream.h"
#include "prover/internal/services.h"
#include "rpc/http_pool.h"
#include "rpc/structured_log.h"
#include "store/crypto.h"
#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::prover {
namespace {

using store::internal::Cat;

constexpr char kRequestIdHeader[] = "X-LayerProof-Request-Id";
constexpr char kNonceHeader[] = "X-LayerProof-Nonce";
constexpr char kJson[] = "application/json";

void SendError(httplib::Response& res, const openai::ApiError& e) {
  res.status = e.http_status;
  res.set_content(e.body, kJson);
}

// One completion between the pipeline's callbacks (engine and commit
// threads) and the HTTP handler thread that answers it.
struct Call {
  explicit Call(const text::Tokenizer* tokenizer, std::vector<std::string> stop)
      : text(tokenizer, std::move(stop)) {}
  absl::Mutex mu;
  openai::TextStream text ABSL_GUARDED_BY(mu);
  std::deque<std::string> deltas ABSL_GUARDED_BY(mu);  // stream only
  std::optional<absl::StatusOr<v1::GenerateResponse>> done ABSL_GUARDED_BY(mu);
  bool stream = false;
};

}  // namespace

struct HttpApi::Impl {
  HttpApiOptions options;
  const internal::ServiceContext& context;
  std::unique_ptr<httplib::Server> server;
  std::thread listener;
  int port = 0;
  std::atomic<bool> draining{false};
  int64_t created = absl::ToUnixSeconds(absl::Now());

  absl::Mutex mu;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  std::map<std::string, int> per_client ABSL_GUARDED_BY(mu);

  Impl(HttpApiOptions o, const internal::ServiceContext& c)
      : options(std::move(o)), context(c) {}

  openai::ServedModel Served() const {
    openai::ServedModel s;
    s.name = options.model_name;
    s.max_new_tokens = context.limits.max_new_tokens;
    s.max_context = context.limits.max_context;
    s.text = context.text;
    return s;
  }

  // The client identity of a request: its API key's, or its address.
  absl::StatusOr<std::string> Identify(const httplib::Request& req) const {
    if (options.api_keys.empty()) return req.remote_addr;
    const std::string auth = req.get_header_value("Authorization");
    constexpr absl::string_view kBearer = "Bearer ";
    if (!absl::StartsWith(auth, kBearer)) {
      return absl::UnauthenticatedError(
          "missing API key: send Authorization: Bearer <key>");
    }
    auto it = options.api_keys.find(auth.substr(kBearer.size()));
    if (it == options.api_keys.end()) {
      return absl::UnauthenticatedError("incorrect API key provided");
    }
    return it->second;
  }

  // A slot for one generation of `client`, or ResourceExhausted.
  absl::Status Admit(const std::string& client) {
    absl::MutexLock lock(&mu);
    if (in_flight >= options.max_in_flight) {
      return absl::ResourceExhaustedError(
          Cat("the server has ", in_flight,
              " completions in flight (its limit); "
              "retry later"));
    }
    int& mine = per_client[client];
    if (mine >= options.max_in_flight_per_client) {
      return absl::ResourceExhaustedError(
          Cat("this client has ", mine, " completions in flight (its limit is ",
              options.max_in_flight_per_client, "); retry later"));
    }
    ++mine;
    ++in_flight;
    return absl::OkStatus();
  }
  void Release(const std::string& client) {
    absl::MutexLock lock(&mu);
    --in_flight;
    if (--per_client[client] == 0) per_client.erase(client);
  }

  // Answers with the error object of `status`, counted as a request.
  void Refuse(httplib::Response& res, const absl::Status& status) {
    Count(status.code());
    SendError(res, openai::ErrorBody(status));
  }
  void Count(absl::StatusCode code) const {
    if (context.metrics != nullptr) context.metrics->CountRequest("http", code);
  }

  void Complete(openai::Endpoint endpoint, const httplib::Request& req,
                httplib::Response& res);
  void Answer(openai::Endpoint endpoint, const openai::ApiRequest& api,
              GenerationSpec spec, const std::string& client,
              httplib::Response& res);
};

void HttpApi::Impl::Complete(openai::Endpoint endpoint,
                             const httplib::Request& req,
                             httplib::Response& res) {
  if (draining.load()) {
    return Refuse(res, absl::UnavailableError("the prover is shutting down"));
  }
  absl::StatusOr<std::string> client = Identify(req);
  if (!client.ok()) return Refuse(res, client.status());
  absl::StatusOr<openai::ApiRequest> api = openai::ParseApiRequest(
      endpoint, req.body, req.get_header_value(kNonceHeader), Served());
  if (!api.ok()) return Refuse(res, api.status());
  absl::StatusOr<GenerationSpec> spec =
      ValidateGenerateRequest(api->generate, context.limits, context.text);
  if (!spec.ok()) return Refuse(res, spec.status());
  if (absl::Status admitted = Admit(*client); !admitted.ok()) {
    return Refuse(res, admitted);
  }
  // A streamed answer outlives this handler (the content provider runs
  // after it returns); Answer hands the slot's release to whichever ends
  // last.
  Answer(endpoint, *api, *std::move(spec), *client, res);
}

void HttpApi::Impl::Answer(openai::Endpoint endpoint,
                           const openai::ApiRequest& api, GenerationSpec spec,
                           const std::string& client, httplib::Response& res) {
  auto call = std::make_shared<Call>(
      context.text != nullptr ? &context.text->tokenizer() : nullptr, api.stop);
  call->stream = api.stream;
  std::string request_id;
  absl::StatusOr<uint64_t> ticket = context.pipeline->Start(
      std::move(spec),
      [call](int32_t token) {
        absl::MutexLock lock(&call->mu);
        const bool stop = call->text.Add(token);
        if (call->stream) {
          std::string delta = call->text.TakeDelta();
          if (!delta.empty()) call->deltas.push_back(std::move(delta));
        }
        return !stop;
      },
      [call](absl::StatusOr<v1::GenerateResponse> result) {
        absl::MutexLock lock(&call->mu);
        call->done = std::move(result);
      },
      &request_id);
  if (!ticket.ok()) {
    Release(client);
    return Refuse(res, ticket.status());
  }
  const std::string rid = store::HexEncode(store::AsBytes(request_id));
  res.set_header(kRequestIdHeader, rid);
  rpc::LogEvent(
      "info", "prover.http", "completion_started",
      {{"request_id", rid}, {"client", client}, {"stream", api.stream}});

  // What a finished call answers with; the caller holds call->mu (a
  // plain function of the call's values, so that clang's analysis sees the
  // lock held where they are read).
  auto completion = [this, endpoint, generate = api.generate](
                        std::string text, bool stopped_by_text,
                        const v1::GenerateResponse& response) {
    openai::Completion out;
    out.endpoint = endpoint;
    out.model = options.model_name;
    out.created_unix_seconds = absl::ToUnixSeconds(absl::Now());
    out.text = std::move(text);
    out.stopped_by_text = stopped_by_text;
    *out.receipt.mutable_request() = generate;
    *out.receipt.mutable_response() = response;
    return out;
  };

  if (!api.stream) {
    absl::MutexLock lock(&call->mu);
    call->mu.Await(absl::Condition(
        +[](Call* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
          return c->done.has_value();
        },
        call.get()));
    Release(client);
    if (!call->done->ok()) {
      return Refuse(res, call->done->status());
    }
    Count(absl::StatusCode::kOk);
    res.set_content(
        openai::CompletionBody(completion(
            call->text.Text(), call->text.stopped(), call->done->value())),
        kJson);
    return;
  }

  openai::StreamChunk head;
  head.endpoint = endpoint;
  head.id = openai::CompletionId(endpoint, request_id);
  head.model = options.model_name;
  head.created_unix_seconds = absl::ToUnixSeconds(absl::Now());
  const bool include_usage = api.include_usage;
  auto sent_role = std::make_shared<bool>(false);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, call, head, include_usage, sent_role, completion,
       ticket = *ticket](size_t, httplib::DataSink& sink) {
        auto send = [&](const std::string& data) {
          const std::string event = Cat("data: ", data, "\n\n");
          return sink.write(event.data(), event.size());
        };
        if (head.endpoint == openai::Endpoint::kChatCompletions &&
            !*sent_role) {
          *sent_role = true;
          openai::StreamChunk role = head;
          role.role_chunk = true;
          if (!send(openai::StreamChunkBody(role))) {
            context.pipeline->Cancel(ticket);
            return false;
          }
        }
        std::deque<std::string> deltas;
        std::optional<openai::Completion> finished;
        std::optional<absl::Status> failed;
        {
          absl::MutexLock lock(&call->mu);
          // Wake at least every 100 ms to notice a client that left.
          call->mu.AwaitWithTimeout(
              absl::Condition(
                  +[](Call* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) {
                    return !c->deltas.empty() || c->done.has_value();
                  },
                  call.get()),
              absl::Milliseconds(100));
          deltas.swap(call->deltas);
          if (call->done.has_value()) {
            if (call->done->ok()) {
              const std::string rest = call->text.Flush();
              if (!rest.empty()) deltas.push_back(rest);
              finished = completion(call->text.Text(), call->text.stopped(),
                                    call->done->value());
            } else {
              failed = call->done->status();
            }
          }
        }
        for (const std::string& d : deltas) {
          openai::StreamChunk chunk = head;
          chunk.delta = d;
          if (!send(openai::StreamChunkBody(chunk))) {
            context.pipeline->Cancel(ticket);
            return false;
          }
        }
        if (failed.has_value()) {
          Count(failed->code());
          send(openai::ErrorBody(*failed).body);
          sink.done();
          return true;
        }
        if (finished.has_value()) {
          Count(absl::StatusCode::kOk);
          openai::StreamChunk last = head;
          last.finish = openai::FinishReasonName(
              finished->receipt.response().finish_reason(),
              finished->stopped_by_text);
          for (const std::string& body :
               openai::FinalChunkBodies(last, *finished, include_usage)) {
            if (!send(body)) return false;
          }
          send("[DONE]");
          sink.done();
          return true;
        }
        if (!sink.is_writable()) {
          context.pipeline->Cancel(ticket);
          return false;
        }
        return true;
      },
      [this, client, call, ticket = *ticket](bool success) {
        if (!success) context.pipeline->Cancel(ticket);
        // The slot is free once the pipeline is done with the request too.
        Release(client);
      });
}

absl::StatusOr<std::map<std::string, std::string>> ParseApiKeys(
    std::string_view json, std::string_view source) {
  kernels::StatusOr<kernels::model::internal::Json> root =
      kernels::model::internal::ParseJson(json, source);
  if (!root.ok()) return store::ToAbslStatus(root.status());
  if (!root->is_object()) {
    return absl::InvalidArgumentError(
        Cat(std::string(source), ": want a JSON object {key: client}"));
  }
  const auto printable = [](std::string_view s, bool spaces) {
    for (char c : s) {
      if (c < (spaces ? 0x20 : 0x21) || c > 0x7e) return false;
    }
    return true;
  };
  std::map<std::string, std::string> keys;
  size_t i = 0;
  for (const auto& [key, client] : root->items()) {
    ++i;
    const std::string where = Cat(std::string(source), ": entry ", i);
    if (!client.is_string() || client.get<std::string>().empty() ||
        client.get<std::string>().size() > 128 ||
        !printable(client.get<std::string>(), true)) {
      return absl::InvalidArgumentError(Cat(
          where, ": the client must be 1 to 128 printable ASCII characters"));
    }
    if (key.size() < 16 || key.size() > 256 || !printable(key, false)) {
      return absl::InvalidArgumentError(
          Cat(where, " (client ", client.get<std::string>(),
              "): the key must be 16 to 256 printable ASCII characters "
              "without spaces"));
    }
    keys.emplace(key, client.get<std::string>());
  }
  return keys;
}

HttpApi::HttpApi(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpApi::~HttpApi() { Stop(); }

int HttpApi::port() const { return impl_->port; }

void HttpApi::SetDraining() { impl_->draining.store(true); }

void HttpApi::Stop() {
  if (impl_->server == nullptr) return;
  impl_->draining.store(true);
  impl_->server->stop();
  if (impl_->listener.joinable()) impl_->listener.join();
  impl_->server.reset();
}

absl::StatusOr<std::unique_ptr<HttpApi>> HttpApi::Start(
    HttpApiOptions options, const internal::ServiceContext& context) {
  if (options.model_name.empty()) {
    return absl::InvalidArgumentError("HttpApiOptions.model_name: empty");
  }
  const bool tls =
      !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (tls && (options.tls_cert_file.empty() || options.tls_key_file.empty())) {
    return absl::InvalidArgumentError(
        "HttpApiOptions: TLS needs both tls_cert_file and tls_key_file");
  }
  if (!tls && !options.insecure) {
    return absl::InvalidArgumentError(
        "HttpApiOptions: no TLS certificate and key, and not insecure");
  }
  if (options.threads < 2 || options.max_in_flight < 1 ||
      options.max_in_flight >= options.threads ||
      options.max_in_flight_per_client < 1) {
    return absl::InvalidArgumentError(
        "HttpApiOptions: want threads >= 2, 1 <= max_in_flight < threads "
        "(so that a full server still answers 429) and "
        "max_in_flight_per_client >= 1");
  }
  auto impl = std::make_unique<Impl>(std::move(options), context);
  Impl& n = *impl;
  if (tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(
        n.options.tls_cert_file.c_str(), n.options.tls_key_file.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(
          Cat("HttpApiOptions: cannot load the TLS certificate ",
              n.options.tls_cert_file, " and key ", n.options.tls_key_file));
    }
    n.server = std::move(ssl);
  } else {
    n.server = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *n.server;
  const int threads = n.options.threads;
  const size_t queued = n.options.max_queued_connections;
  s.new_task_queue = [threads, queued] {
    return rpc::NewBoundedHttpPool(threads, queued);
  };
  const auto timeout = absl::ToChronoSeconds(n.options.io_timeout);
  s.set_read_timeout(timeout);
  s.set_write_timeout(timeout);
  s.set_keep_alive_timeout(5);
  s.set_keep_alive_max_count(100);
  s.set_payload_max_length(n.options.max_body_bytes);
  s.set_error_handler([&n](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      SendError(res,
                openai::ErrorBody(413, "invalid_request_error",
                                  Cat("the request body is over ",
                                      n.options.max_body_bytes, " bytes")));
    } else if (res.status == 404) {
      SendError(res, openai::ErrorBody(404, "invalid_request_error",
                                       "no such endpoint"));
    } else {
      SendError(res, openai::ErrorBody(res.status, "invalid_request_error",
                                       "the request could not be served"));
    }
  });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SendError(res, openai::ErrorBody(absl::InternalError(
                           "internal error while serving the request")));
      });
  s.Post("/v1/completions",
         [&n](const httplib::Request& req, httplib::Response& res) {
           n.Complete(openai::Endpoint::kCompletions, req, res);
         });
  s.Post("/v1/chat/completions",
         [&n](const httplib::Request& req, httplib::Response& res) {
           n.Complete(openai::Endpoint::kChatCompletions, req, res);
         });
  s.Get("/v1/models",
        [&n](const httplib::Request& req, httplib::Response& res) {
          absl::StatusOr<std::string> client = n.Identify(req);
          if (!client.ok())
            return SendError(res, openai::ErrorBody(client.status()));
          res.set_content(openai::ModelsBody(n.options.model_name, n.created,
                                             n.context.model_info.prover_id()),
                          kJson);
        });
  s.Get("/health", [&n](const httplib::Request&, httplib::Response& res) {
    res.status = n.draining.load() ? 503 : 200;
    res.set_content(n.draining.load() ? "draining\n" : "ok\n", "text/plain");
  });
  if (n.options.port == 0) {
    n.port = s.bind_to_any_port(n.options.host);
  } else if (s.bind_to_port(n.options.host, n.options.port)) {
    n.port = n.options.port;
  } else {
    n.port = -1;
  }
  if (n.port <= 0) {
    return absl::UnavailableError(Cat("HTTP API: cannot listen on ",
                                      n.options.host, ":", n.options.port));
  }
  n.listener = std::thread([&s] { s.listen_after_bind(); });
  rpc::LogEvent("info", "prover.http", "listening",
                {{"host", n.options.host},
                 {"port", n.port},
                 {"tls", tls},
                 {"api_keys", n.options.api_keys.size()}});
  return std::unique_ptr<HttpApi>(new HttpApi(std::move(impl)));
}

}  // namespace layerproof::prover
