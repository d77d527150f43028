// The attestation service's speed (issue 5), each figure against a named
// peer measured in the same run, on the synthetic `small` and `medium`
// models (kernels/model/synth.h, seed 1), at --threads engine threads
// (default 2):
//
//  1. Commitment overhead. Workload: 8 sequences in one continuous batch,
//     16-token prompts, 32 generated tokens each (ignore_eos, greedy);
//     tokens/s = generated tokens / wall time of the round (prefill
//     included). One untimed warm-up round, then --rounds rounds, the three
//     configurations taking turns (the order rotates every round) so all
//     see the same machine; best and median:
//       (a) the bare Engine: Add x8, Step until idle, no tap (the peer);
//       (b) the prover's commit path without gRPC: the prover's own
//           BatchScheduler (engine thread) with a CommitmentTap per request
//           (every layer's rows into salted SHA-256 on the engine thread),
//           then on one commit worker (as ProverNode has) the steps of
//           InferencePipeline::Commit: close the hashes, BuildCommitment,
//           SignCommitment (Ed25519), and the synced ProverJournal::Put.
//           The round ends when the 8th request is journaled;
//       (c) the whole ProverNode over gRPC loopback: 8 client threads call
//           Inference.Generate; the prover submits to an in-process
//           VerifierNode (audit rate 0); a round ends when the 8th response
//           (with its log receipt) has arrived.
//     Diagnostics: the engine thread's time inside the tap in (b), the
//     commit worker's time, and the SHA-256 throughput of the layer hasher
//     (kernels/sha256: SHA-NI where the CPU has it) against OpenSSL's SHA-256
//     (which uses the SHA extensions where the CPU has them).
//  2. Audit cost. Per request (prompt 64, 32 output tokens, sampled with a
//     seed): the prover's forward is Engine::Forward over the 95 committed
//     positions with a CommitmentTap (what a replay costs, and what serving
//     costs apart from the head's 32 rows); the audit is ReExecutor::Audit
//     with fixed plans of s blocks (s = 1: every block once; s = 2: every
//     block once, in pairs) and an in-process OpeningSource that hands back
//     a precomputed honest opening (the prover's replay is not counted).
//     CPU time is CLOCK_PROCESS_CPUTIME_ID (the engine's thread pool works
//     on several threads), with nothing else running in the process; wall
//     time too. Target: audit / forward <= (s+1)/(L+1), read both as x1.1
//     and as +0.10.
//  3. End to end. A fresh VerifierNode (audit rate 0.1, s = 1) and
//     ProverNode over gRPC loopback; 8 client threads each send --requests
//     Generate calls back to back (prompt 16, max_tokens uniform in 16..32,
//     ignore_eos); requests/s, generated tokens/s, p50 / p99 latency. Peer:
//     the bare engine's batch-8 tokens/s of section 1, same run.
//
// Models are synthesized once into <model dir>/<preset>-seed1 (default
// <build dir>/models, as model_bench) and reused. Databases go to
// <build dir>/bench-tmp (not /tmp, which may be tmpfs) and are removed.
// Output: markdown for BENCHMARKS.md on stdout, and in --out FILE.
// Numbers are only meaningful on an otherwise idle machine; the load
// average is printed.
#include <openssl/sha.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/loopback_nodes.h"
#include "bench/synth_model.h"
#include "grpcpp/client_context.h"
#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/layer_hash.h"
#include "kernels/model/model.h"
#include "kernels/model/synth.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "prover/batch_scheduler.h"
#include "prover/commitment_builder.h"
#include "prover/journal.h"
#include "prover/prover_node.h"
#include "store/commitment.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "rpc/server.h"
#include "rpc/task_pool.h"
#include "rpc/tls.h"
#include "verifier/audit_policy.h"
#include "check/re_executor.h"
#include "verifier/verifier_node.h"

namespace layerproof::bench {
namespace {

namespace fs = std::filesystem;
namespace km = kernels::model;

constexpr int kBatch = 8;        // sequences / client threads
constexpr int64_t kPrompt = 16;  // overhead and end-to-end prompts
constexpr int64_t kTokens = 32;  // overhead: generated per sequence
constexpr int64_t kAuditPrompt = 64;
constexpr int64_t kAuditTokens = 32;
// The audited requests' sampling (the head check replays the sampler).
struct AuditSampling {
  float temperature;
  int32_t top_k;
  float top_p;
};
constexpr AuditSampling kSampling{0.8f, 40, 0.95f};

struct Options {
  std::vector<std::string> presets = {"small", "medium"};
  bool quick = false;
  std::string model_dir;  // holds <preset>-seed1/
  int threads = 2;
  std::string out;
  int rounds_small = 15;  // timed overhead rounds per configuration
  int rounds_medium = 7;
  int audit_requests = 4;
  int forward_reps = 3;
  int audit_reps = 2;
  int e2e_requests_small = 32;  // per client
  int e2e_requests_medium = 6;
};

void Usage() {
  std::fprintf(stderr,
               "usage: service_bench [--preset small|medium|all] [--quick]\n"
               "  [--model-dir DIR (holds <preset>-seed1/)] [--threads N]\n"
               "  [--out FILE] [--rounds N] [--requests N]\n");
}

bool ParseArgs(int argc, char** argv, Options* o) {
  int rounds = 0, requests = 0;
  for (Args args(argc, argv); args.Next();) {
    if (args.Flag("--quick")) {
      o->quick = true;
    } else if (const char* v = args.Value("--preset")) {
      const std::string p = v;
      if (p == "all") {
        o->presets = {"small", "medium"};
      } else if (p == "small" || p == "medium") {
        o->presets = {p};
      } else {
        return false;
      }
    } else if (const char* v = args.Value("--model-dir")) {
      o->model_dir = v;
    } else if (const char* v = args.Value("--threads")) {
      o->threads = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--out")) {
      o->out = v;
    } else if (const char* v = args.Value("--rounds")) {
      rounds = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--requests")) {
      requests = std::max(1, std::atoi(v));
    } else {
      return false;
    }
  }
  if (o->quick) {
    o->presets = {"small"};
    o->rounds_small = o->rounds_medium = 3;
    o->audit_requests = 2;
    o->forward_reps = 2;
    o->audit_reps = 1;
    o->e2e_requests_small = o->e2e_requests_medium = 4;
  }
  if (rounds > 0) o->rounds_small = o->rounds_medium = rounds;
  if (requests > 0) o->e2e_requests_small = o->e2e_requests_medium = requests;
  return true;
}

// ---------------------------------------------------------------- helpers ---

bool CpuHasFlag(const std::string& flag) {
  std::ifstream f("/proc/cpuinfo");
  std::string word;
  while (f >> word) {
    if (word == flag) return true;
  }
  return false;
}

// The committed stop rule (max_new_tokens, stop ids, ignore_eos,
// max_context), for CommitmentInputs that have it: set as
// InferencePipeline::Commit sets it, and skipped where the fields do not
// exist, so the benchmark builds on both sides of that change.
template <typename In>
void SetStopRule(In& in, int64_t max_new_tokens, bool ignore_eos,
                 int64_t max_context) {
  if constexpr (requires { in.max_new_tokens; }) {
    in.max_new_tokens =
        static_cast<decltype(in.max_new_tokens)>(max_new_tokens);
  }
  if constexpr (requires { in.ignore_eos; }) in.ignore_eos = ignore_eos;
  if constexpr (requires { in.max_context; }) {
    in.max_context = static_cast<decltype(in.max_context)>(max_context);
  }
}

// ----------------------------------------------------- (b) commit path ---

// Times the engine thread's calls into the tap it wraps.
class TimedTap : public km::LayerTap {
 public:
  TimedTap(km::LayerTap* inner, std::atomic<int64_t>* ns)
      : inner_(inner), ns_(ns) {}
  void OnLayerRows(km::SequenceId seq, int64_t layer, int64_t pos0,
                   const float* rows, int64_t n, int64_t width) override {
    const auto t0 = Clock::now();
    inner_->OnLayerRows(seq, layer, pos0, rows, n, width);
    ns_->fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
            .count(),
        std::memory_order_relaxed);
  }

 private:
  km::LayerTap* inner_;
  std::atomic<int64_t>* ns_;
};

// The prover's commit path without gRPC or the log: BatchScheduler (the
// engine thread), one CommitmentTap per request, one commit worker that
// does what InferencePipeline::Commit does before it hands the envelope to
// the LogSubmitter.
class CommitPath {
 public:
  CommitPath(const km::Model& model, km::Engine& engine,
             const std::string& journal_dir)
      : model_(model),
        max_context_(engine.max_context()),
        scheduler_(engine, 64),
        pool_(1),
        journal_(Must(prover::ProverJournal::Open(journal_dir), "journal")),
        key_(NewKey()) {}
  ~CommitPath() {
    scheduler_.Drain(absl::Now() + absl::Seconds(60));
    pool_.Drain();
  }

  struct RoundTimes {
    double total = 0;        // enqueue of the first .. journal of the last
    double engine_done = 0;  // .. the last sequence finished (engine thread)
    double tap = 0;          // engine thread inside the taps
    double commit = 0;       // commit worker, summed over the requests
  };

  RoundTimes Round(const std::vector<std::vector<int32_t>>& prompts) {
    struct Req {
      prover::RequestSecrets secrets;
      std::unique_ptr<prover::CommitmentTap> tap;
      std::unique_ptr<TimedTap> timed;
    };
    struct State {
      absl::Mutex mu;
      int finished = 0, committed = 0, want = 0;
      bool all_committed = false;
      Clock::time_point engine_done;
      std::atomic<int64_t> tap_ns{0}, commit_ns{0};
    };
    // Shared with the engine thread's and the worker's closures, which may
    // still hold it after the round is over.
    auto st = std::make_shared<State>();
    st->want = static_cast<int>(prompts.size());
    const km::ModelConfig& mc = model_.config();
    const auto t0 = Clock::now();
    // All of the round's requests are queued at once, as (a) adds them
    // before its first step: staggered arrivals would cost (b) an extra
    // engine step per round that has nothing to do with committing.
    std::vector<prover::ScheduledGeneration> round;
    for (const std::vector<int32_t>& prompt : prompts) {
      auto r = std::make_shared<Req>();
      // As InferencePipeline::Start: fresh secrets, a tap keyed with them.
      r->secrets = Must(prover::NewRequestSecrets(), "secrets");
      r->tap = std::make_unique<prover::CommitmentTap>(
          mc.num_layers, mc.hidden_size, r->secrets.key, nullptr);
      r->timed = std::make_unique<TimedTap>(r->tap.get(), &st->tap_ns);
      prover::ScheduledGeneration g;
      g.request.prompt = prompt;
      g.request.max_new_tokens = kTokens;
      g.request.ignore_eos = true;
      g.request.tap = r->timed.get();
      g.on_finished = [this, st, r](absl::StatusOr<km::FinishedSequence> f) {
        {
          absl::MutexLock l(&st->mu);
          if (++st->finished == st->want) st->engine_done = Clock::now();
        }
        pool_.Post([this, st, r, f = std::move(f)]() mutable {
          const auto c0 = Clock::now();
          Commit(*r, Must(std::move(f), "sequence"));
          st->commit_ns.fetch_add(
              std::chrono::duration_cast<std::chrono::nanoseconds>(
                  Clock::now() - c0)
                  .count());
          absl::MutexLock l(&st->mu);
          if (++st->committed == st->want) st->all_committed = true;
        });
      };
      round.push_back(std::move(g));
    }
    Must(scheduler_.EnqueueAll(std::move(round)).status(), "EnqueueAll");
    {
      absl::MutexLock l(&st->mu);
      st->mu.Await(absl::Condition(&st->all_committed));
    }
    RoundTimes t;
    t.total = Seconds(t0);
    absl::MutexLock l(&st->mu);
    t.engine_done = std::chrono::duration<double>(st->engine_done - t0).count();
    t.tap = 1e-9 * double(st->tap_ns.load());
    t.commit = 1e-9 * double(st->commit_ns.load());
    return t;
  }

 private:
  template <typename Req>
  void Commit(Req& r, km::FinishedSequence f) {
    const int64_t positions =
        static_cast<int64_t>(f.prompt.size() + f.output.size()) - 1;
    std::vector<std::string> hashes =
        Must(r.tap->Finish(positions), "CommitmentTap::Finish");
    r.timed.reset();
    r.tap.reset();
    prover::CommitmentInputs in;
    in.model = &model_;
    in.prover_id = "bench-prover";
    in.secrets = r.secrets;
    in.prompt = f.prompt;
    in.output = f.output;
    in.sampling.set_temperature(0);
    in.sampling.set_top_k(0);
    in.sampling.set_top_p(1);
    in.seed = 0;
    in.layer_hashes = std::move(hashes);
    in.created_at_unix_nanos = prover::UnixNanosNow();
    in.finish_reason = prover::ToProtoFinishReason(f.finish);
    SetStopRule(in, kTokens, true, max_context_);
    const v1::Commitment c = prover::BuildCommitment(in);
    std::string envelope = Must(store::SignCommitment(c, *key_), "sign");
    v1::JournalEntry entry;
    entry.set_request_id(r.secrets.request_id);
    entry.set_salt(r.secrets.salt);
    entry.set_seed(in.seed);
    entry.mutable_prompt_token_ids()->Assign(f.prompt.begin(), f.prompt.end());
    entry.mutable_output_token_ids()->Assign(f.output.begin(), f.output.end());
    *entry.mutable_sampling() = in.sampling;
    entry.set_finish_reason(in.finish_reason);
    entry.set_commitment_envelope(std::move(envelope));
    entry.set_created_at_unix_nanos(in.created_at_unix_nanos);
    Must(journal_->Put(entry), "journal Put");
  }

  const km::Model& model_;
  const int64_t max_context_;
  prover::BatchScheduler scheduler_;
  rpc::TaskPool pool_;
  std::unique_ptr<prover::ProverJournal> journal_;
  std::shared_ptr<const store::Ed25519PrivateKey> key_;
};

// ----------------------------------------------- (c) the served cluster ---

// The served cluster (bench/loopback_nodes.h) and kBatch client channels
// to the prover.
class Service {
 public:
  Service(const km::Model& model, kernels::Backend* backend,
          const fs::path& dir, const verifier::AuditPolicy& policy)
      : nodes_(model, backend, dir, policy) {
    for (int i = 0; i < kBatch; ++i) {
      stubs_.push_back(v1::Inference::NewStub(
          Must(rpc::MakeChannel(address(), LoopbackNodes::tls()), "channel")));
    }
  }

  std::string address() const { return nodes_.prover_address(); }
  verifier::VerifierNode& verifier() { return nodes_.verifier(); }

  struct Result {
    int64_t tokens = 0;
    bool included = false;  // the receipt is an inclusion, not a promise
  };
  // One Generate call on client `client`'s channel.
  Result Generate(int client, const std::vector<int32_t>& prompt,
                  uint32_t max_tokens) {
    v1::GenerateRequest request;
    for (int32_t id : prompt) request.mutable_token_ids()->add_ids(id);
    request.mutable_sampling()->set_temperature(0);
    request.mutable_sampling()->set_top_p(1);
    request.set_max_tokens(max_tokens);
    request.set_ignore_eos(true);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(600));
    v1::GenerateResponse response;
    const grpc::Status s =
        stubs_[client]->Generate(&context, request, &response);
    if (!s.ok()) Die("Generate", s.error_message());
    if (response.output_token_ids_size() != static_cast<int>(max_tokens)) {
      Die("Generate", "wrong number of output tokens");
    }
    return {response.output_token_ids_size(),
            response.receipt().has_inclusion()};
  }

 private:
  // Declared first so that the nodes shut down before the channels close,
  // as they did before the nodes moved to bench/loopback_nodes.h.
  std::vector<std::unique_ptr<v1::Inference::Stub>> stubs_;
  LoopbackNodes nodes_;
};

// ------------------------------------------------------------- overhead ---

std::vector<std::vector<int32_t>> RoundPrompts(int round, int64_t vocab) {
  std::vector<std::vector<int32_t>> p;
  for (int b = 0; b < kBatch; ++b) {
    p.push_back(Prompt(kPrompt, 1000 * uint64_t(round) + b, vocab));
  }
  return p;
}

double BareRound(km::Engine& e, const std::vector<std::vector<int32_t>>& ps) {
  const auto t0 = Clock::now();
  for (const auto& p : ps) {
    km::GenerationRequest r;
    r.prompt = p;
    r.max_new_tokens = kTokens;
    r.ignore_eos = true;
    Must(e.Add(std::move(r)).status(), "Engine::Add");
  }
  while (!e.idle()) Must(e.Step(), "Engine::Step");
  const double sec = Seconds(t0);
  for (const auto& f : e.TakeFinished()) {
    if (static_cast<int64_t>(f.output.size()) != kTokens) {
      Die("bare round", "wrong number of tokens");
    }
  }
  return sec;
}

struct ServedRound {
  double seconds = 0;
  int included = 0;
  double first = 0;  // the first response's arrival, from the round's start
};
ServedRound ServedRoundOnce(Service& svc,
                            const std::vector<std::vector<int32_t>>& ps) {
  std::atomic<int> included{0};
  std::vector<double> arrival(kBatch);
  const auto t0 = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kBatch; ++c) {
    clients.emplace_back([&, c] {
      if (svc.Generate(c, ps[c], kTokens).included) included.fetch_add(1);
      arrival[c] = Seconds(t0);
    });
  }
  for (auto& t : clients) t.join();
  return {Seconds(t0), included.load(),
          *std::min_element(arrival.begin(), arrival.end())};
}

// Bytes/s of kernels' LayerHasher (the tap's hash) and of OpenSSL SHA-256.
struct ShaRates {
  double layer_hasher = 0, openssl = 0;
};
ShaRates MeasureSha(int64_t width) {
  const int64_t rows = (int64_t{8} << 20) / (width * 4);
  std::vector<float> buf(rows * width);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = float(i % 1000) * 0.001f;
  const double bytes = double(buf.size()) * 4;
  ShaRates r;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    km::LayerHasher h(1, width);
    h.AddRows(buf.data(), rows);
    volatile uint8_t sink = h.Finish()[0];
    (void)sink;
    r.layer_hasher = std::max(r.layer_hasher, bytes / Seconds(t0));
    t0 = Clock::now();
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(buf.data()), buf.size() * 4,
           md);
    volatile unsigned char sink2 = md[0];
    (void)sink2;
    r.openssl = std::max(r.openssl, bytes / Seconds(t0));
  }
  return r;
}

struct OverheadResult {
  Rates bare, commit, served;
};

// Median over the rounds of 1 - ours/peer, each round's own pair.
std::string PairedPct(const Rates& ours, const Rates& peer) {
  std::vector<double> v;
  for (size_t i = 0; i < ours.v.size() && i < peer.v.size(); ++i) {
    v.push_back(1.0 - ours.v[i] / peer.v[i]);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * Median(v));
  return buf;
}

std::string Pct(double ours, double peer) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * (1.0 - ours / peer));
  return buf;
}

OverheadResult Overhead(const Options& o, const std::string& preset,
                        const km::Model& model, kernels::Backend* backend,
                        km::Executor& executor, const fs::path& tmp) {
  const km::ModelConfig& mc = model.config();
  const int rounds = preset == "small" ? o.rounds_small : o.rounds_medium;
  km::EngineOptions eo;
  eo.max_sequences = 64;
  std::unique_ptr<km::Engine> bare =
      Must(km::Engine::Create(model, &executor, eo), "Engine::Create");
  std::unique_ptr<km::Engine> commit_engine =
      Must(km::Engine::Create(model, &executor, eo), "Engine::Create");
  auto path = std::make_unique<CommitPath>(
      model, *commit_engine, Fresh(tmp / (preset + "-commit-journal")));
  verifier::AuditPolicy none;
  none.rate = 0;
  none.layers_per_audit = 1;
  auto svc = std::make_unique<Service>(model, backend,
                                       tmp / (preset + "-served"), none);

  OverheadResult r;
  std::vector<double> cpu[3];  // process CPU s per round, by configuration
  std::vector<double> served_spread;
  std::vector<double> tap_share, commit_per_req, tail;
  int included = 0, served_requests = 0;
  const double tokens = double(kBatch * kTokens);
  for (int round = 0; round <= rounds; ++round) {
    const auto prompts = RoundPrompts(round, mc.vocab_size);
    for (int k = 0; k < 3; ++k) {
      const int which = (round + k) % 3;
      const double c0 = ProcessCpuSeconds();
      switch (which) {
        case 0: {
          const double s = BareRound(*bare, prompts);
          if (round > 0) r.bare.v.push_back(tokens / s);
          break;
        }
        case 1: {
          const CommitPath::RoundTimes t = path->Round(prompts);
          if (round > 0) {
            r.commit.v.push_back(tokens / t.total);
            tap_share.push_back(t.tap / t.total);
            commit_per_req.push_back(t.commit / kBatch);
            tail.push_back(t.total - t.engine_done);
          }
          break;
        }
        case 2: {
          const ServedRound s = ServedRoundOnce(*svc, prompts);
          if (round > 0) {
            r.served.v.push_back(tokens / s.seconds);
            included += s.included;
            served_spread.push_back(s.seconds - s.first);
            served_requests += kBatch;
          }
          break;
        }
      }
      if (round > 0) cpu[which].push_back(ProcessCpuSeconds() - c0);
    }
    Note("  %s round %d/%d: bare %.1f, commit %.1f, served %.1f tokens/s\n",
         preset.c_str(), round, rounds, r.bare.v.empty() ? 0 : r.bare.v.back(),
         r.commit.v.empty() ? 0 : r.commit.v.back(),
         r.served.v.empty() ? 0 : r.served.v.back());
  }
  svc.reset();
  path.reset();

  const ShaRates sha = MeasureSha(mc.hidden_size);
  const double bytes_per_token =
      double(mc.hidden_size) * 4 * (mc.num_layers + 1);

  Emit("\n#### Commitment overhead, `%s` (%d timed rounds, +1 warm-up)\n\n",
       preset.c_str(), rounds);
  Emit(
      "| configuration | tokens/s best | median | overhead vs bare (best / "
      "median / median of the rounds' pairs) |\n|---|---|---|---|\n");
  Emit("| (a) bare Engine, no tap | %.1f | %.1f | — |\n", r.bare.best(),
       r.bare.median());
  Emit(
      "| (b) commit path: tap + SHA-256 + sign + journal | %.1f | %.1f | "
      "**%s** / %s / %s |\n",
      r.commit.best(), r.commit.median(),
      Pct(r.commit.best(), r.bare.best()).c_str(),
      Pct(r.commit.median(), r.bare.median()).c_str(),
      PairedPct(r.commit, r.bare).c_str());
  Emit(
      "| (c) ProverNode over gRPC + VerifierNode (rate 0) | %.1f | %.1f | "
      "**%s** / %s / %s |\n",
      r.served.best(), r.served.median(),
      Pct(r.served.best(), r.bare.best()).c_str(),
      Pct(r.served.median(), r.bare.median()).c_str(),
      PairedPct(r.served, r.bare).c_str());
  const double tap_med = Median(tap_share);
  const double tail_med = Median(tail);
  const double round_med = tokens / r.commit.median();
  Emit("\nWhere (b)'s time goes (medians over the rounds):\n");
  Emit(
      "- engine thread inside the taps (salted SHA-256 of every layer's "
      "rows): %.1f%% of the round (%.2f ms of %.1f ms);\n",
      100 * tap_med, 1e3 * tap_med * round_med, 1e3 * round_med);
  Emit(
      "- commit worker per request (close hashes, build, Ed25519 sign, "
      "synced journal Put): %.2f ms; the round's tail after the last "
      "sequence finished: %.2f ms (%.1f%% of the round);\n",
      1e3 * Median(commit_per_req), 1e3 * tail_med, 100 * tail_med / round_med);
  Emit(
      "- hashed per token: %.0f KiB (hidden %lld x 4 bytes x %lld layers); "
      "LayerHasher (kernels/sha256) %.0f MB/s, OpenSSL SHA-256 "
      "%.0f MB/s (%.1fx) on this CPU (sha_ni %s); so %.1f µs per token "
      "on the engine thread, or %.1f µs with OpenSSL's;\n",
      bytes_per_token / 1024, (long long)mc.hidden_size,
      (long long)mc.num_layers + 1, sha.layer_hasher / 1e6, sha.openssl / 1e6,
      sha.openssl / sha.layer_hasher, CpuHasFlag("sha_ni") ? "yes" : "no",
      1e6 * bytes_per_token / sha.layer_hasher,
      1e6 * bytes_per_token / sha.openssl);
  Emit(
      "- at the bare engine's median %.1f tokens/s that predicts %.1f%% "
      "(portable) or %.1f%% (OpenSSL) for hashing on the engine thread.\n",
      r.bare.median(),
      100 * r.bare.median() * bytes_per_token / sha.layer_hasher,
      100 * r.bare.median() * bytes_per_token / sha.openssl);
  Emit(
      "- (c): %d of %d responses carried a log inclusion (the rest a "
      "signed promise).\n",
      included, served_requests);
  const double walls[3] = {tokens / r.bare.median(), round_med,
                           tokens / r.served.median()};
  Emit(
      "- process CPU per round (median; all threads: engine pool, taps, "
      "commit worker, gRPC, RocksDB, the verifier): (a) %.0f ms = %.2f "
      "cores busy, (b) %.0f ms = %.2f, (c) %.0f ms = %.2f; (c) spends "
      "%.0f ms of CPU per round beyond (b) on gRPC, the log submission, the "
      "verifier's log and their RocksDB writes, on the same cores.\n",
      1e3 * Median(cpu[0]), Median(cpu[0]) / walls[0], 1e3 * Median(cpu[1]),
      Median(cpu[1]) / walls[1], 1e3 * Median(cpu[2]),
      Median(cpu[2]) / walls[2], 1e3 * (Median(cpu[2]) - Median(cpu[1])));
  Emit(
      "- (c): the last response came %.1f ms after the first (median "
      "over the rounds); in (b) the whole commit tail after the last "
      "sequence is %.1f ms. A spread far beyond that means the requests "
      "joined the batch over several engine steps.\n",
      1e3 * Median(served_spread), 1e3 * tail_med);
  return r;
}

// ----------------------------------------------------------- audit cost ---

// Keeps every layer's rows: the prover's honest opening.
class CaptureTap : public km::LayerTap {
 public:
  CaptureTap(int64_t layers, int64_t positions, int64_t width)
      : width_(width), rows_(layers + 1) {
    for (auto& r : rows_) r.resize(positions * width);
  }
  void OnLayerRows(km::SequenceId, int64_t layer, int64_t pos0,
                   const float* rows, int64_t n, int64_t width) override {
    std::copy(rows, rows + n * width, rows_[layer].data() + pos0 * width_);
  }
  std::vector<std::vector<float>>& rows() { return rows_; }

 private:
  int64_t width_;
  std::vector<std::vector<float>> rows_;
};

// Hands back the precomputed honest opening of one request.
class PrecomputedOpenings : public check::OpeningSource {
 public:
  v1::OpeningHeader header;
  std::vector<std::vector<float>> layers;  // h^0 .. h^L
  absl::StatusOr<check::Opening> Open(std::string_view, std::string_view,
                                         const std::vector<uint32_t>& ks,
                                         uint64_t, uint64_t,
                                         absl::Time) override {
    check::Opening o;
    o.header = header;
    o.header.clear_layers();
    for (uint32_t k : ks) {
      o.header.add_layers(k);
      o.layers[k] = layers[k];
    }
    return o;
  }
};

struct AuditRequest {
  std::string envelope;
  PrecomputedOpenings opening;
  std::vector<int32_t> tokens;               // the committed positions
  double forward_cpu = 0, forward_wall = 0;  // best of forward_reps
  double head_cpu = 0;  // RunHead over the output rows, best
};

struct AuditRow {
  uint32_t s = 0;
  std::vector<double> ratio_cpu, ratio_wall, ratio_cpu_head;
  double audit_cpu = 0, audit_wall = 0;  // sums
  int audits = 0;
};

void AuditCost(const Options& o, const std::string& preset,
               const km::Model& model, km::Executor& executor) {
  const km::ModelConfig& mc = model.config();
  const int64_t L = mc.num_layers;
  std::unique_ptr<km::Engine> engine =
      Must(km::Engine::Create(model, &executor), "Engine::Create");
  const auto key = NewKey();
  store::KeyRing keys;
  keys.Add(key->public_key());
  check::ReExecutor re(*engine, ModelDigest(model));

  std::vector<std::unique_ptr<AuditRequest>> reqs;
  for (int i = 0; i < o.audit_requests; ++i) {
    auto r = std::make_unique<AuditRequest>();
    const prover::RequestSecrets secrets =
        Must(prover::NewRequestSecrets(), "secrets");
    prover::CommitmentTap tap(L, mc.hidden_size, secrets.key, nullptr);
    km::GenerationRequest g;
    g.prompt = Prompt(kAuditPrompt, 50000 + i, mc.vocab_size);
    g.sampling.temperature = kSampling.temperature;
    g.sampling.top_k = kSampling.top_k;
    g.sampling.top_p = kSampling.top_p;
    g.sampling.seed = 1234 + i;
    g.max_new_tokens = kAuditTokens;
    g.ignore_eos = true;
    g.tap = &tap;
    const km::FinishedSequence f = Must(engine->Generate(g), "Generate");
    const int64_t positions = kAuditPrompt + kAuditTokens - 1;
    prover::CommitmentInputs in;
    in.model = &model;
    in.prover_id = "bench-prover";
    in.secrets = secrets;
    in.prompt = f.prompt;
    in.output = f.output;
    in.sampling.set_temperature(g.sampling.temperature);
    in.sampling.set_top_k(g.sampling.top_k);
    in.sampling.set_top_p(g.sampling.top_p);
    in.seed = g.sampling.seed;
    in.layer_hashes = Must(tap.Finish(positions), "Finish");
    in.created_at_unix_nanos = prover::UnixNanosNow();
    in.finish_reason = prover::ToProtoFinishReason(f.finish);
    SetStopRule(in, kAuditTokens, true, engine->max_context());
    r->envelope =
        Must(store::SignCommitment(prover::BuildCommitment(in), *key), "sign");
    r->tokens = f.prompt;
    r->tokens.insert(r->tokens.end(), f.output.begin(), f.output.end() - 1);
    CaptureTap capture(L, positions, mc.hidden_size);
    Must(engine->Forward(r->tokens, &capture, 0, nullptr), "Forward");
    r->opening.layers = std::move(capture.rows());
    v1::OpeningHeader& h = r->opening.header;
    h.set_commitment_envelope(r->envelope);
    h.set_salt(secrets.salt);
    h.mutable_prompt_token_ids()->Assign(f.prompt.begin(), f.prompt.end());
    h.mutable_output_token_ids()->Assign(f.output.begin(), f.output.end());
    h.set_seed(in.seed);
    h.set_positions(static_cast<uint32_t>(positions));
    h.set_hidden_size(static_cast<uint32_t>(mc.hidden_size));
    reqs.push_back(std::move(r));
  }
  // The prover's forward of each request, hashing every layer.
  for (int rep = 0; rep < o.forward_reps; ++rep) {
    for (auto& r : reqs) {
      const prover::RequestSecrets secrets =
          Must(prover::NewRequestSecrets(), "secrets");
      prover::CommitmentTap tap(L, mc.hidden_size, secrets.key, nullptr);
      const double c0 = ProcessCpuSeconds();
      const auto t0 = Clock::now();
      Must(engine->Forward(r->tokens, &tap, 0, nullptr), "Forward");
      (void)Must(tap.Finish(static_cast<int64_t>(r->tokens.size())), "Finish");
      const double wall = Seconds(t0), cpu = ProcessCpuSeconds() - c0;
      const int64_t n = kAuditTokens;
      std::vector<float> logits(n * mc.vocab_size);
      const double h0 = ProcessCpuSeconds();
      Must(engine->RunHead(r->opening.layers[L].data() +
                               (kAuditPrompt - 1) * mc.hidden_size,
                           n, logits.data()),
           "RunHead");
      kernels::SamplingParams sp;
      sp.temperature = kSampling.temperature;
      sp.top_k = kSampling.top_k;
      sp.top_p = kSampling.top_p;
      sp.seed = r->opening.header.seed();
      for (int64_t j = 0; j < n; ++j) {
        (void)Must(engine->Sample(logits.data() + j * mc.vocab_size, sp,
                                  kAuditPrompt + j),
                   "Sample");
      }
      const double head = ProcessCpuSeconds() - h0;
      if (rep == 0 || cpu < r->forward_cpu) r->forward_cpu = cpu;
      if (rep == 0 || wall < r->forward_wall) r->forward_wall = wall;
      if (rep == 0 || head < r->head_cpu) r->head_cpu = head;
    }
  }
  // Plans: s = 1, every block once; s = 2, every block once, in pairs.
  std::vector<std::vector<uint32_t>> plans1, plans2;
  for (int64_t l = 1; l <= L; ++l) plans1.push_back({uint32_t(l)});
  for (int64_t j = 0; j < L / 2; ++j) {
    std::vector<uint32_t> p = {uint32_t(j + 1), uint32_t((j + L / 2) % L + 1)};
    std::sort(p.begin(), p.end());
    plans2.push_back(p);
  }
  std::vector<AuditRow> rows;
  int failures = 0;
  for (auto* plans : {&plans1, &plans2}) {
    AuditRow row;
    row.s = static_cast<uint32_t>((*plans)[0].size());
    for (size_t pi = 0; pi < plans->size(); ++pi) {
      AuditRequest& r = *reqs[pi % reqs.size()];
      check::AuditPlan plan;
      plan.layers = (*plans)[pi];
      plan.audit_seed = std::string(32, 'b');
      double best_cpu = 0, best_wall = 0;
      for (int rep = 0; rep < o.audit_reps; ++rep) {
        const double c0 = ProcessCpuSeconds();
        const auto t0 = Clock::now();
        const check::AuditOutcome out = Must(
            re.Audit(r.envelope, pi, plan, keys, r.opening, absl::Seconds(600)),
            "check::ReExecutor::Audit");
        const double wall = Seconds(t0), cpu = ProcessCpuSeconds() - c0;
        if (out.verdict.outcome() != v1::PASS) {
          ++failures;
          Note("audit did not pass: %s\n", out.verdict.detail().c_str());
        }
        if (rep == 0 || cpu < best_cpu) best_cpu = cpu;
        if (rep == 0 || wall < best_wall) best_wall = wall;
      }
      row.ratio_cpu.push_back(best_cpu / r.forward_cpu);
      row.ratio_wall.push_back(best_wall / r.forward_wall);
      row.ratio_cpu_head.push_back(best_cpu / (r.forward_cpu + r.head_cpu));
      row.audit_cpu += best_cpu;
      row.audit_wall += best_wall;
      ++row.audits;
    }
    rows.push_back(std::move(row));
  }
  if (failures > 0) Die("audit cost", "an honest audit did not pass");

  double fwd_cpu = 0, fwd_wall = 0, head_cpu = 0;
  for (auto& r : reqs) {
    fwd_cpu += r->forward_cpu;
    fwd_wall += r->forward_wall;
    head_cpu += r->head_cpu;
  }
  fwd_cpu /= reqs.size();
  fwd_wall /= reqs.size();
  head_cpu /= reqs.size();

  Emit(
      "\n#### Audit cost, `%s` (L = %lld; %d requests of %lld + %lld "
      "tokens, %lld positions)\n\n",
      preset.c_str(), (long long)L, o.audit_requests, (long long)kAuditPrompt,
      (long long)kAuditTokens, (long long)(kAuditPrompt + kAuditTokens - 1));
  Emit(
      "Prover forward (Engine::Forward + CommitmentTap), mean of the "
      "requests' best of %d: %.1f ms CPU, %.1f ms wall; the head and the "
      "sampler over the 32 output rows (what serving adds; Forward skips "
      "them): %.1f ms CPU.\n\n",
      o.forward_reps, 1e3 * fwd_cpu, 1e3 * fwd_wall, 1e3 * head_cpu);
  Emit(
      "| s | audits | audit CPU ms (mean) | audit wall ms (mean) | audit / "
      "forward, CPU (mean, max) | wall (mean) | CPU vs forward + head + "
      "sampler (mean) | (s+1)/(L+1) | target ×1.1 | target +0.10 | met? |\n");
  Emit("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const AuditRow& row : rows) {
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / double(v.size());
    };
    const double rc = mean(row.ratio_cpu);
    const double rmax =
        *std::max_element(row.ratio_cpu.begin(), row.ratio_cpu.end());
    const double bound = double(row.s + 1) / double(L + 1);
    Emit(
        "| %u | %d | %.1f | %.1f | **%.3f**, %.3f | %.3f | %.3f | %.3f | "
        "%.3f | %.3f | %s / %s |\n",
        row.s, row.audits, 1e3 * row.audit_cpu / row.audits,
        1e3 * row.audit_wall / row.audits, rc, rmax, mean(row.ratio_wall),
        mean(row.ratio_cpu_head), bound, bound * 1.1, bound + 0.10,
        rmax <= bound * 1.1 ? "yes" : "no",
        rmax <= bound + 0.10 ? "yes" : "no");
  }
  Emit(
      "\n(\"met?\": the largest ratio over the plans, against ×1.1 / "
      "+0.10.)\n");

  // Where an audit's time goes: one block, the head, the hashing.
  {
    const AuditRequest& r = *reqs[0];
    const int64_t positions = static_cast<int64_t>(r.tokens.size());
    std::vector<float> out(positions * mc.hidden_size);
    std::vector<float> logits(kAuditTokens * mc.vocab_size);
    double block = 1e9, head = 1e9, hash = 1e9, embed = 1e9, sample = 1e9;
    kernels::SamplingParams sp;
    sp.temperature = kSampling.temperature;
    sp.top_k = kSampling.top_k;
    sp.top_p = kSampling.top_p;
    sp.seed = 1234;
    for (int rep = 0; rep < 3; ++rep) {
      double c0 = ProcessCpuSeconds();
      Must(engine->RunBlock(L / 2, r.opening.layers[L / 2 - 1].data(),
                            positions, out.data()),
           "RunBlock");
      block = std::min(block, ProcessCpuSeconds() - c0);
      c0 = ProcessCpuSeconds();
      Must(engine->RunHead(
               r.opening.layers[L].data() + (kAuditPrompt - 1) * mc.hidden_size,
               kAuditTokens, logits.data()),
           "RunHead");
      head = std::min(head, ProcessCpuSeconds() - c0);
      c0 = ProcessCpuSeconds();
      for (int64_t j = 0; j < kAuditTokens; ++j) {
        (void)Must(engine->Sample(logits.data() + j * mc.vocab_size, sp,
                                  kAuditPrompt + j),
                   "Sample");
      }
      sample = std::min(sample, ProcessCpuSeconds() - c0);
      c0 = ProcessCpuSeconds();
      (void)km::HashLayerRows(1, out.data(), positions, mc.hidden_size);
      hash = std::min(hash, ProcessCpuSeconds() - c0);
      c0 = ProcessCpuSeconds();
      Must(engine->Embed(r.tokens.data(), positions, out.data()), "Embed");
      embed = std::min(embed, ProcessCpuSeconds() - c0);
    }
    Emit(
        "\nParts, CPU ms (best of 3): one block %.2f; the head (final norm "
        "+ LM head over %lld rows, vocab %lld) %.2f = %.2f blocks; hashing "
        "one layer's rows %.2f; the sampler over %lld rows (temperature "
        "%.1f, top_k %d, top_p %.2f) %.2f; embedding %.2f. The forward is "
        "%.2f blocks' worth.\n",
        1e3 * block, (long long)kAuditTokens, (long long)mc.vocab_size,
        1e3 * head, head / block, 1e3 * hash, (long long)kAuditTokens,
        kSampling.temperature, kSampling.top_k, kSampling.top_p, 1e3 * sample,
        1e3 * embed, fwd_cpu / block);
  }
}

// ----------------------------------------------------------- end to end ---

struct E2EResult {
  double rate = 0;
  int requests = 0;
  double seconds = 0;
  int64_t tokens = 0;
  int included = 0;
  std::vector<double> latencies;
  uint64_t drawn = 0, done_in_window = 0, done = 0, passes = 0, errors = 0;
};

E2EResult EndToEndOnce(int n, double rate, const km::Model& model,
                       kernels::Backend* backend, const fs::path& dir) {
  verifier::AuditPolicy policy;
  policy.rate = rate;
  policy.layers_per_audit = 1;
  auto svc = std::make_unique<Service>(model, backend, dir, policy);
  const int64_t vocab = model.config().vocab_size;
  // Warm-up: one request per client.
  {
    std::vector<std::thread> t;
    for (int c = 0; c < kBatch; ++c) {
      t.emplace_back(
          [&, c] { svc->Generate(c, Prompt(kPrompt, 900000 + c, vocab), 16); });
    }
    for (auto& x : t) x.join();
  }
  Must(svc->verifier().WaitIdle(absl::Seconds(600)), "WaitIdle");
  const verifier::VerifierCounters before = svc->verifier().counters();
  std::vector<std::vector<double>> lat(kBatch);
  std::atomic<int64_t> tokens{0};
  std::atomic<int> included{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kBatch; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937_64 rng(77 + c);
      for (int i = 0; i < n; ++i) {
        const uint32_t max_tokens = 16 + static_cast<uint32_t>(rng() % 17);
        const auto s0 = Clock::now();
        const Service::Result r = svc->Generate(
            c, Prompt(kPrompt, 100000 * (c + 1) + i, vocab), max_tokens);
        lat[c].push_back(Seconds(s0));
        tokens.fetch_add(r.tokens);
        if (r.included) included.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  E2EResult e;
  e.rate = rate;
  e.seconds = Seconds(t0);
  const verifier::VerifierCounters at_end = svc->verifier().counters();
  Must(svc->verifier().WaitIdle(absl::Seconds(600)), "WaitIdle");
  const verifier::VerifierCounters after = svc->verifier().counters();
  svc.reset();
  for (auto& v : lat) e.latencies.insert(e.latencies.end(), v.begin(), v.end());
  e.requests = static_cast<int>(e.latencies.size());
  e.tokens = tokens.load();
  e.included = included.load();
  e.drawn = after.audits_drawn - before.audits_drawn;
  e.done_in_window = at_end.audits_done - before.audits_done;
  e.done = after.audits_done - before.audits_done;
  e.passes = after.verdicts[v1::PASS];
  e.errors = after.audit_errors;
  return e;
}

void EndToEnd(const Options& o, const std::string& preset,
              const km::Model& model, kernels::Backend* backend,
              const fs::path& tmp, const Rates& bare) {
  const int n =
      preset == "small" ? o.e2e_requests_small : o.e2e_requests_medium;
  std::vector<E2EResult> runs;
  runs.push_back(
      EndToEndOnce(n, 0.1, model, backend, tmp / (preset + "-e2e-0.1")));
  runs.push_back(
      EndToEndOnce(n, 0.0, model, backend, tmp / (preset + "-e2e-0")));
  Emit(
      "\n#### End to end, `%s`: 8 clients x %d requests (prompt 16, "
      "16..32 tokens, greedy), s = 1\n\n",
      preset.c_str(), n);
  Emit(
      "| audit rate | requests | requests/s | tokens/s | p50 latency ms | "
      "p99 latency ms | bare engine batch 8, tokens/s (best / median) | "
      "served / bare (median) |\n|---|---|---|---|---|---|---|---|\n");
  for (const E2EResult& e : runs) {
    const double tps = double(e.tokens) / e.seconds;
    Emit("| %s | %d | %.2f | %.1f | %.0f | %.0f | %.1f / %.1f | %.2f |\n",
         e.rate > 0 ? "**0.1**" : "0 (for comparison)", e.requests,
         e.requests / e.seconds, tps, 1e3 * Percentile(e.latencies, 0.5),
         1e3 * Percentile(e.latencies, 0.99), bare.best(), bare.median(),
         tps / bare.median());
  }
  Emit("\n");
  for (const E2EResult& e : runs) {
    Emit(
        "- rate %.1f: %lld generated tokens in %.1f s; %d of %d responses "
        "carried a log inclusion; audits drawn for the timed requests %llu, "
        "finished inside the window %llu, in all %llu; PASS verdicts since "
        "start %llu, audit errors %llu.\n",
        e.rate, (long long)e.tokens, e.seconds, e.included, e.requests,
        (unsigned long long)e.drawn, (unsigned long long)e.done_in_window,
        (unsigned long long)e.done, (unsigned long long)e.passes,
        (unsigned long long)e.errors);
  }
  Emit(
      "- p99 is a nearest-rank percentile of %d latencies; the peer is "
      "section (a) of this run (32 tokens per sequence).\n",
      runs[0].requests);
}

// ---------------------------------------------------------------- main ---

int Run(const Options& o) {
  const BenchRun run = StartRun(o.model_dir, o.threads, o.quick);
  const fs::path& models = run.models;
  const fs::path& tmp = run.tmp;
  kernels::Backend* backend = run.backend;

  for (const std::string& preset : o.presets) {
    const std::string dir = (models / (preset + "-seed1")).string();
    std::unique_ptr<km::Model> model =
        Must(LoadOrSynthesize(preset, dir), "--preset");
    const km::ModelConfig& c = model->config();
    Emit(
        "\n### `%s`: hidden %lld, %lld layers, vocab %lld, %.3f B params "
        "(%s)\n",
        preset.c_str(), (long long)c.hidden_size, (long long)c.num_layers,
        (long long)c.vocab_size, km::ParameterCount(c) / 1e9, dir.c_str());
    std::unique_ptr<km::Executor> executor =
        Must(km::MakeExecutor(backend), "executor");
    Note("%s: audit cost ...\n", preset.c_str());
    AuditCost(o, preset, *model, *executor);
    Note("%s: commitment overhead ...\n", preset.c_str());
    const OverheadResult ov =
        Overhead(o, preset, *model, backend, *executor, tmp);
    Note("%s: end to end ...\n", preset.c_str());
    EndToEnd(o, preset, *model, backend, tmp, ov.bare);
    Emit("\nload average after `%s`: %s\n", preset.c_str(),
         LoadAverage().c_str());
  }
  return FinishRun(run, o.out);
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  using namespace layerproof::bench;
  return Main<Options>("service_bench", argc, argv, ParseArgs, Usage, Run);
}
