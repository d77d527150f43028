// The Opening client (verifier/opening_client.h) against a scripted fake
// Opening service on 127.0.0.1: a good stream is reassembled exactly, every
// kind of malformed stream is refused with a message naming what was
// wrong, the header must match what the commitment fixes, the size cap
// holds, a prover's errors keep their code but not their text, a prover
// that is down for a while is retried until it serves, and a stalled or
// unreachable one ends at the deadline as DeadlineExceeded.
#include "verifier/opening_client.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "rpc/server.h"

namespace layerproof::verifier {
namespace {

constexpr uint32_t kPositions = 5;
constexpr uint32_t kWidth = 4;

// The float stored at (layer, position, column) in the test's openings.
float Value(uint32_t layer, uint32_t pos, uint32_t col) {
  return static_cast<float>(layer * 1000 + pos * 10 + col) + 0.25f;
}

v1::OpenChunk Header(const std::vector<uint32_t>& layers,
                     uint32_t positions = kPositions) {
  v1::OpenChunk c;
  v1::OpeningHeader* h = c.mutable_header();
  h->set_commitment_envelope("envelope bytes");
  h->set_salt(std::string(32, 's'));
  h->add_prompt_token_ids(5);
  h->add_output_token_ids(6);
  h->set_seed(77);
  h->set_positions(positions);
  h->set_hidden_size(kWidth);
  for (uint32_t k : layers) h->add_layers(k);
  return c;
}

// Rows pos0 .. pos0+n-1 of h^layer (fp32 little-endian).
v1::OpenChunk Rows(uint32_t layer, uint32_t pos0, uint32_t n) {
  v1::OpenChunk c;
  v1::ActivationRows* r = c.mutable_rows();
  r->set_layer(layer);
  r->set_position0(pos0);
  std::string data;
  for (uint32_t p = pos0; p < pos0 + n; ++p) {
    for (uint32_t col = 0; col < kWidth; ++col) {
      const float v = Value(layer, p, col);
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int b = 0; b < 4; ++b)
        data.push_back(static_cast<char>(bits >> (8 * b)));
    }
  }
  r->set_data(data);
  return c;
}

struct Script {
  std::vector<v1::OpenChunk> chunks;
  grpc::Status status = grpc::Status::OK;
  bool stall = false;  // send nothing until the client goes away
};

// Streams a Script: its chunks one write at a time, then its status.
// Lifetime: from Open until OnDone, which deletes it.
class ScriptedWriter : public grpc::ServerWriteReactor<v1::OpenChunk> {
 public:
  explicit ScriptedWriter(Script script) : script_(std::move(script)) {
    if (!script_.stall) Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
      return;
    }
    Next();
  }
  void OnCancel() override {
    if (script_.stall) Finish(grpc::Status(grpc::StatusCode::CANCELLED, ""));
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (next_ < script_.chunks.size()) {
      StartWrite(&script_.chunks[next_++]);
    } else {
      Finish(script_.status);
    }
  }
  Script script_;
  size_t next_ = 0;
};

class FakeOpeningService : public v1::Opening::CallbackService {
 public:
  void Set(Script s) {
    absl::MutexLock lock(&mu_);
    script_ = std::move(s);
  }
  v1::OpenRequest last_request() {
    absl::MutexLock lock(&mu_);
    return last_;
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  grpc::ServerWriteReactor<v1::OpenChunk>* Open(
      grpc::CallbackServerContext*, const v1::OpenRequest* request) override {
    absl::MutexLock lock(&mu_);
    last_ = *request;
    ++calls_;
    return new ScriptedWriter(script_);
  }

 private:
  absl::Mutex mu_;
  Script script_ ABSL_GUARDED_BY(mu_);
  v1::OpenRequest last_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

std::unique_ptr<rpc::RunningServer> Serve(FakeOpeningService& service,
                                          const std::string& listen) {
  rpc::ServerConfig config;
  config.listen = listen;
  config.tls.insecure = true;
  absl::StatusOr<std::unique_ptr<rpc::RunningServer>> s =
      rpc::StartServer(config, {&service});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// A loopback port nothing listens on (a server's, once it is gone).
int FreePort() {
  FakeOpeningService service;
  std::unique_ptr<rpc::RunningServer> s = Serve(service, "127.0.0.1:0");
  const int port = s->port();
  s->Shutdown(std::chrono::milliseconds(0));
  return port;
}

rpc::TlsOptions Insecure() {
  rpc::TlsOptions tls;
  tls.insecure = true;
  return tls;
}

class OpeningClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rpc::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.tls.insecure = true;
    absl::StatusOr<std::unique_ptr<rpc::RunningServer>> s =
        rpc::StartServer(config, {&service_});
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::milliseconds(0));
  }

  std::unique_ptr<GrpcOpeningSource> Source(
      GrpcOpeningSourceOptions options = {}) {
    auto src = std::make_unique<GrpcOpeningSource>(options);
    EXPECT_TRUE(src->AddProver("prover-a",
                               "127.0.0.1:" + std::to_string(server_->port()),
                               Insecure())
                    .ok());
    return src;
  }

  absl::StatusOr<check::Opening> OpenWith(
      Script script, std::vector<uint32_t> layers,
      GrpcOpeningSourceOptions options = {}) {
    service_.Set(std::move(script));
    return Source(options)->Open("prover-a", std::string(16, 'r'), layers,
                                 kPositions, kWidth,
                                 absl::Now() + absl::Seconds(20));
  }

  // Expects `script` to be refused with `code` and a message containing
  // `part`.
  void ExpectRefused(Script script, std::vector<uint32_t> layers,
                     absl::StatusCode code, const std::string& part,
                     GrpcOpeningSourceOptions options = {}) {
    absl::StatusOr<check::Opening> o =
        OpenWith(std::move(script), layers, options);
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.status().code(), code) << o.status();
    EXPECT_NE(o.status().message().find(part), std::string::npos) << o.status();
  }

  FakeOpeningService service_;
  std::unique_ptr<rpc::RunningServer> server_;
};

TEST_F(OpeningClientTest, GoodStreamIsReassembledExactly) {
  Script s;
  s.chunks = {Header({1, 3}), Rows(1, 0, 3), Rows(1, 3, 2), Rows(3, 0, 5)};
  absl::StatusOr<check::Opening> o = OpenWith(s, {1, 3});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->header.salt(), std::string(32, 's'));
  EXPECT_EQ(o->header.seed(), 77u);
  ASSERT_EQ(o->layers.size(), 2u);
  for (uint32_t k : {1u, 3u}) {
    const std::vector<float>& rows = o->layers.at(k);
    ASSERT_EQ(rows.size(), kPositions * kWidth);
    for (uint32_t p = 0; p < kPositions; ++p) {
      for (uint32_t c = 0; c < kWidth; ++c) {
        EXPECT_EQ(rows[p * kWidth + c], Value(k, p, c));
      }
    }
  }
  const v1::OpenRequest req = service_.last_request();
  EXPECT_EQ(req.request_id(), std::string(16, 'r'));
  EXPECT_EQ(std::vector<uint32_t>(req.layers().begin(), req.layers().end()),
            (std::vector<uint32_t>{1, 3}));
}

TEST_F(OpeningClientTest, HeaderOnlyOpening) {
  Script s;
  s.chunks = {Header({})};
  absl::StatusOr<check::Opening> o = OpenWith(s, {});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->layers.empty());
  EXPECT_EQ(o->header.positions(), kPositions);
}

TEST_F(OpeningClientTest, MissingOrRepeatedHeaderIsRefused) {
  Script rows_first;
  rows_first.chunks = {Rows(1, 0, 5)};
  ExpectRefused(rows_first, {1}, absl::StatusCode::kInvalidArgument,
                "want the header first");
  Script nothing;
  ExpectRefused(nothing, {1}, absl::StatusCode::kInvalidArgument,
                "ended without a header");
  Script twice;
  twice.chunks = {Header({1}), Header({1})};
  ExpectRefused(twice, {1}, absl::StatusCode::kInvalidArgument,
                "a second header");
}

TEST_F(OpeningClientTest, LayersOtherThanRequestedAreRefused) {
  Script other;
  other.chunks = {Header({1, 2}), Rows(1, 0, 5), Rows(2, 0, 5)};
  ExpectRefused(other, {1, 3}, absl::StatusCode::kInvalidArgument,
                "OpeningHeader.layers: got [1,2], want [1,3]");
  Script order;
  order.chunks = {Header({1, 3}), Rows(3, 0, 5), Rows(1, 0, 5)};
  ExpectRefused(order, {1, 3}, absl::StatusCode::kInvalidArgument,
                "ActivationRows.layer: got 3, want 1");
  Script interleaved;
  interleaved.chunks = {Header({1, 3}), Rows(1, 0, 2), Rows(3, 0, 5)};
  ExpectRefused(interleaved, {1, 3}, absl::StatusCode::kInvalidArgument,
                "ActivationRows.layer: got 3, want 1");
}

TEST_F(OpeningClientTest, RowsOutOfPositionOrderAreRefused) {
  Script gap;
  gap.chunks = {Header({1}), Rows(1, 0, 2), Rows(1, 3, 2)};
  ExpectRefused(gap, {1}, absl::StatusCode::kInvalidArgument,
                "ActivationRows.position0: got 3, want 2");
}

TEST_F(OpeningClientTest, ShortRowsAreRefused) {
  Script s;
  v1::OpenChunk partial = Rows(1, 0, 5);
  partial.mutable_rows()->mutable_data()->resize(5 * kWidth * 4 - 3);
  s.chunks = {Header({1}), partial};
  ExpectRefused(s, {1}, absl::StatusCode::kInvalidArgument,
                "want a non-empty multiple of 16");
  Script early_end;
  early_end.chunks = {Header({1}), Rows(1, 0, 3)};
  ExpectRefused(early_end, {1}, absl::StatusCode::kInvalidArgument,
                "ended after 3 of 5 rows of h^1");
}

TEST_F(OpeningClientTest, ExtraDataIsRefused) {
  Script past;
  past.chunks = {Header({1}), Rows(1, 0, 4), Rows(1, 4, 2)};
  ExpectRefused(past, {1}, absl::StatusCode::kInvalidArgument, "want rows < 5");
  Script after;
  after.chunks = {Header({1}), Rows(1, 0, 5), Rows(1, 5, 1)};
  ExpectRefused(after, {1}, absl::StatusCode::kInvalidArgument,
                "after every requested layer was complete");
}

TEST_F(OpeningClientTest, OpeningsOverTheSizeCapAreRefused) {
  Script s;
  s.chunks = {Header({1, 3}), Rows(1, 0, 5), Rows(3, 0, 5)};
  GrpcOpeningSourceOptions small;
  small.max_opening_bytes = 2 * kPositions * kWidth * 4 - 1;
  ExpectRefused(s, {1, 3}, absl::StatusCode::kResourceExhausted,
                "exceed the limit of 159 bytes", small);
  small.max_opening_bytes += 1;
  EXPECT_TRUE(OpenWith(s, {1, 3}, small).ok());
}

// Regression: the prover's own error text (and its address) reached the
// verdict's detail. Its code is kept; its words are not.
TEST_F(OpeningClientTest, ServerErrorsKeepTheirCodeButNotTheirText) {
  for (grpc::StatusCode code :
       {grpc::StatusCode::NOT_FOUND, grpc::StatusCode::PERMISSION_DENIED,
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        grpc::StatusCode::INVALID_ARGUMENT,
        grpc::StatusCode::FAILED_PRECONDITION}) {
    Script s;
    s.status = grpc::Status(code, "request not journaled; see http://x");
    const int calls = service_.calls();
    absl::StatusOr<check::Opening> o = OpenWith(s, {1});
    ASSERT_FALSE(o.ok());
    const absl::StatusCode want = static_cast<absl::StatusCode>(code);
    EXPECT_EQ(o.status().code(), want) << o.status();
    EXPECT_EQ(o.status().message(),
              "opening refused: " + absl::StatusCodeToString(want));
    EXPECT_FALSE(check::IsOpeningUnavailableToVerifier(o.status()));
    // Deliberate: not retried.
    EXPECT_EQ(service_.calls(), calls + 1);
  }
}

TEST_F(OpeningClientTest, MalformedStreamsNameNeitherTheProverNorItsAddress) {
  Script s;
  s.chunks = {Header({1}), Rows(1, 1, 2)};
  absl::StatusOr<check::Opening> o = OpenWith(s, {1});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().message(),
            "opening malformed: chunk 1: ActivationRows.position0: got 1, "
            "want 0 (rows contiguous in position order)");
}

// Regression: the client reserved positions x hidden_size floats from the
// prover's header before comparing it with the commitment.
TEST_F(OpeningClientTest, HeaderSizesComeFromTheCommitmentNotTheProver) {
  Script huge;  // 800 MB of rows for one layer, within the 1 GiB cap
  huge.chunks = {Header({1}, 200'000'000), Rows(1, 0, 1)};
  ExpectRefused(huge, {1}, absl::StatusCode::kInvalidArgument,
                "opening malformed: OpeningHeader.positions: got 200000000, "
                "want 5 (prompt + output - 1, as committed)");
  Script wide;
  v1::OpenChunk h = Header({1});
  h.mutable_header()->set_hidden_size(kWidth * 2);
  wide.chunks = {h, Rows(1, 0, 5)};
  ExpectRefused(wide, {1}, absl::StatusCode::kInvalidArgument,
                "OpeningHeader.hidden_size: got 8, want 4 (as committed)");
}

TEST_F(OpeningClientTest, StalledStreamEndsAtTheDeadline) {
  Script s;
  s.stall = true;
  service_.Set(s);
  std::unique_ptr<GrpcOpeningSource> src = Source();
  const absl::Time start = absl::Now();
  absl::StatusOr<check::Opening> o =
      src->Open("prover-a", std::string(16, 'r'), {1}, kPositions, kWidth,
                start + absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status())) << o.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

// Regression: a prover that was down (restarting, not yet up) when its
// opening was asked for got a permanent FAIL_OPENING. The client retries
// until the deadline, and the channel reconnects within ~100 ms.
TEST_F(OpeningClientTest, ProverDownAtFirstIsRetriedUntilItServes) {
  const int port = FreePort();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  GrpcOpeningSource src;
  ASSERT_TRUE(src.AddProver("prover-a", address, Insecure()).ok());
  FakeOpeningService late;
  Script good;
  good.chunks = {Header({1}), Rows(1, 0, 5)};
  late.Set(good);
  std::unique_ptr<rpc::RunningServer> server;
  const absl::Time start = absl::Now();
  std::thread starter([&] {
    absl::SleepFor(absl::Milliseconds(300));
    server = Serve(late, address);
  });
  absl::StatusOr<check::Opening> o =
      src.Open("prover-a", std::string(16, 'r'), {1}, kPositions, kWidth,
               start + absl::Seconds(20));
  starter.join();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->layers.at(1).size(), kPositions * kWidth);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(late.calls(), 1);
  EXPECT_GE(src.unreachable_attempts(), 1u);  // the down window was hit
  if (server) server->Shutdown(std::chrono::milliseconds(0));
}

TEST_F(OpeningClientTest, UnreachableProverEndsAtTheDeadline) {
  GrpcOpeningSource src;
  ASSERT_TRUE(src.AddProver("prover-a",
                            "127.0.0.1:" + std::to_string(FreePort()),
                            Insecure())
                  .ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<check::Opening> o =
      src.Open("prover-a", std::string(16, 'r'), {1}, kPositions, kWidth,
               start + absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status())) << o.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(OpeningClientTest, UnavailableFromTheProverIsRetriedUntilTheDeadline) {
  Script s;
  s.status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting");
  service_.Set(s);
  std::unique_ptr<GrpcOpeningSource> src = Source();
  absl::StatusOr<check::Opening> o =
      src->Open("prover-a", std::string(16, 'r'), {1}, kPositions, kWidth,
                absl::Now() + absl::Milliseconds(400));
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status())) << o.status();
  EXPECT_NE(o.status().message().find("unreachable until the deadline"),
            std::string::npos)
      << o.status();
  EXPECT_GE(service_.calls(), 3);
}

// The verifier's own gaps are not the prover's fault.
TEST_F(OpeningClientTest, UnknownOrAddresslessProverIsTheVerifiersProblem) {
  std::unique_ptr<GrpcOpeningSource> src = Source();
  absl::StatusOr<check::Opening> o =
      src->Open("prover-b", std::string(16, 'r'), {1}, kPositions, kWidth,
                absl::Now() + absl::Seconds(5));
  EXPECT_TRUE(check::IsOpeningUnavailableToVerifier(o.status())) << o.status();
  EXPECT_NE(o.status().message().find("prover-b"), std::string::npos);
  ASSERT_TRUE(src->AddProver("prover-c", "", Insecure()).ok());
  o = src->Open("prover-c", std::string(16, 'r'), {1}, kPositions, kWidth,
                absl::Now() + absl::Seconds(5));
  EXPECT_TRUE(check::IsOpeningUnavailableToVerifier(o.status())) << o.status();
  EXPECT_NE(o.status().message().find("without an check::Opening address"),
            std::string::npos)
      << o.status();
  o = src->Open("prover-a", std::string(16, 'r'), {1}, kPositions, kWidth,
                absl::Now() - absl::Seconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status())) << o.status();
}

}  // namespace
}  // namespace layerproof::verifier
