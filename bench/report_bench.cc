// Compliance reports and offline evidence-bundle verification (issue 6),
// each figure against a named peer measured in the same run, on this
// machine:
//
//  1. Report generation. A RocksDbLog (in <build dir>/bench-tmp) holding N
//     signed commitments (N = --sizes, default 1000, 10000 and 100000; each
//     built by prover::BuildCommitment for the `small` model, so of real
//     size) and verdicts on 30% of them (97% PASS, 3% FAIL_MISMATCH; 80%
//     drawn with one block, 20% on demand with every block), with the
//     audit store as the verifier's indexer leaves it (commitment index and
//     logging time, verdict index, audit records); one window covering all
//     of it. Timed:
//     verifier::BuildReport over the latest checkpoint (every entry
//     [0, size)), against the peer "a bare scan of the same log entries":
//     Log::Entry(i) for every i in [0, size) and v1::Envelope parsing only.
//     One untimed warm-up of each, then --reps rounds, the two taking turns
//     (the order alternates every round); best and median wall time, the
//     ratio report / scan, entries/s.
//  2. Offline bundle verification. An in-process VerifierNode (audit rate
//     0) and ProverNode over gRPC loopback (bench/loopback_nodes.h, as
//     service_bench stands them up), serve one request on `small` (prompt
//     64, 32 output tokens, sampled with a seed: 95 committed positions);
//     Audit.RequestAudit audits it on demand with s = 1 block ({4}) and
//     with s = 4 blocks ({2, 4, 6, 8}), and Audit.GetEvidence fetches each
//     verdict's bundle. Timed, --bundle-reps rounds taking turns (order
//     rotating), best and median of wall and process CPU time:
//       (a) check::VerifyEvidenceBundle of the serialised bundle, with
//           a third party's own engine over the same model files;
//       (b) peer: the verifier's own audit of the same commitment,
//           check::ReExecutor::Audit with the same plan (the verdict's
//           blocks and audit seed), fed the bundle's opening from memory;
//           (a) / (b) is what the signature, proof and binding checks and
//           the bundle's parsing add;
//       (c) peer: one full Engine::Forward of the same committed tokens
//           (every block, no tap, no head); (a) / (c) is what a third party
//           pays relative to re-running everything.
//
// The model is synthesized once into <model dir>/small-seed1 (default
// <build dir>/models, as model_bench and service_bench) and reused.
// Output: markdown for BENCHMARKS.md on stdout, and in --out FILE.
// Section 1 is here, section 2 in report_bench_bundles.cc.
// Numbers are only meaningful on an otherwise idle machine; the load
// average is printed.
#include "bench/report_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/synth_model.h"
#include "kernels/dispatch.h"
#include "kernels/model/model.h"
#include "prover/commitment_builder.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "store/log.h"
#include "store/rocksdb_log.h"
#include "verifier/audit_store.h"
#include "verifier/report_builder.h"

namespace layerproof::bench {
namespace {

namespace fs = std::filesystem;
namespace km = kernels::model;

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kT0 = 1800000000 * kSecond;  // the logs' first commitment
constexpr double kVerdictShare = 0.3;

void Usage() {
  std::fprintf(stderr,
               "usage: report_bench [--quick] [--sizes N,N,...]\n"
               "  [--model-dir DIR (holds small-seed1/)] [--threads N]\n"
               "  [--reps N] [--bundle-reps N] [--out FILE]\n");
}

bool ParseArgs(int argc, char** argv, Options* o) {
  int reps = 0, bundle_reps = 0;
  bool sizes_set = false;
  for (Args args(argc, argv); args.Next();) {
    if (args.Flag("--quick")) {
      o->quick = true;
    } else if (const char* v = args.Value("--sizes")) {
      o->sizes.clear();
      std::string s = v;
      size_t p = 0;
      while (p <= s.size()) {
        const size_t q = std::min(s.find(',', p), s.size());
        const long long n = std::atoll(s.substr(p, q - p).c_str());
        if (n < 10) return false;
        o->sizes.push_back(n);
        p = q + 1;
      }
      sizes_set = true;
    } else if (const char* v = args.Value("--model-dir")) {
      o->model_dir = v;
    } else if (const char* v = args.Value("--threads")) {
      o->threads = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--reps")) {
      reps = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--bundle-reps")) {
      bundle_reps = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--out")) {
      o->out = v;
    } else {
      return false;
    }
  }
  if (o->quick) {
    if (!sizes_set) o->sizes = {1000};
    o->reps = 3;
    o->bundle_reps = 3;
  }
  if (reps > 0) o->reps = reps;
  if (bundle_reps > 0) o->bundle_reps = bundle_reps;
  return true;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// ---------------------------------------------------------------- reports ---

constexpr int kAppendThreads = 64;

struct ReportWorld {
  std::unique_ptr<store::Log> log;
  std::unique_ptr<verifier::AuditStore> store;
  verifier::ReportInputs in;
  int64_t commitments = 0, verdicts = 0, failures = 0;
  double leaf_bytes = 0;  // mean
};

// A log of n commitments and verdicts on 30% of them, as the verifier
// would have logged them, and the audit store's records.
ReportWorld Populate(int64_t n, const km::Model& model, const fs::path& dir) {
  const km::ModelConfig& mc = model.config();
  const uint32_t L = static_cast<uint32_t>(mc.num_layers);
  auto key = std::make_unique<store::Ed25519PrivateKey>(
      Must(store::Ed25519PrivateKey::Generate(), "key"));
  const std::string name = "bench-verifier";
  store::LogOptions lo;
  lo.origin = "layerproof/bench-verifier";
  lo.signer = std::make_shared<const store::CheckpointSigner>(Must(
      store::CheckpointSigner::Create(
          name,
          Must(store::Ed25519PrivateKey::FromPem(key->ToPem()), "key copy")),
      "signer"));
  ReportWorld w;
  w.log = Must(store::RocksDbLog::Open(Fresh(dir / "log"), lo), "log");
  w.store = Must(verifier::AuditStore::Open(Fresh(dir / "audits")), "store");

  // A real commitment of the small model as the template (prompt 16, 32
  // output tokens, every layer hash 32 bytes).
  std::mt19937_64 rng(n);
  prover::CommitmentInputs ci;
  ci.model = &model;
  ci.prover_id = "bench-prover-0";
  ci.secrets = Must(prover::NewRequestSecrets(), "secrets");
  ci.prompt = Prompt(16, 1, mc.vocab_size);
  ci.output = Prompt(32, 2, mc.vocab_size);
  ci.sampling.set_temperature(0.8f);
  ci.sampling.set_top_k(40);
  ci.sampling.set_top_p(0.95f);
  ci.seed = 7;
  for (uint32_t k = 0; k <= L; ++k) {
    ci.layer_hashes.push_back(RandomBytes(rng, 32));
  }
  ci.created_at_unix_nanos = kT0;
  ci.finish_reason = v1::FINISH_REASON_MAX_TOKENS;
  ci.max_new_tokens = 32;
  ci.ignore_eos = true;
  ci.max_context = mc.max_positions;
  const v1::Commitment templ = prover::BuildCommitment(ci);

  // Commitments: three provers, one a second apart.
  std::vector<std::string> envelopes(n), request_ids(n);
  for (int64_t i = 0; i < n; ++i) {
    v1::Commitment c = templ;
    request_ids[i] = RandomBytes(rng, 16);
    c.set_request_id(request_ids[i]);
    c.set_prover_id("bench-prover-" + std::to_string(i % 3));
    c.set_created_at_unix_nanos(kT0 + i * kSecond);
    envelopes[i] = Must(store::SignCommitment(c, *key), "SignCommitment");
  }
  // On many threads: appends to the log are group-committed only when they
  // arrive at once.
  std::vector<uint64_t> index(n);
  ParallelFor(n, kAppendThreads, [&](int64_t i) {
    index[i] = Must(w.log->Append(envelopes[i]), "Append").index;
  });
  for (const auto& e : envelopes) w.leaf_bytes += double(e.size());

  // Verdicts on 30% of them.
  std::vector<int64_t> judged(n);
  for (int64_t i = 0; i < n; ++i) judged[i] = i;
  std::shuffle(judged.begin(), judged.end(), rng);
  judged.resize(static_cast<size_t>(std::llround(kVerdictShare * double(n))));
  std::sort(judged.begin(), judged.end());
  const int64_t m = static_cast<int64_t>(judged.size());
  std::vector<std::string> verdicts(m);
  std::vector<v1::AuditRecord> records(m);
  std::vector<v1::VerdictOutcome> outcomes(m);
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = judged[j];
    const bool on_demand = rng() % 5 == 0;
    const bool fail = rng() % 100 < 3;
    v1::Verdict v;
    v.set_request_id(request_ids[i]);
    v.set_commitment_leaf_index(index[i]);
    outcomes[j] = fail ? v1::FAIL_MISMATCH : v1::PASS;
    v.set_outcome(outcomes[j]);
    const uint32_t layer = 1 + static_cast<uint32_t>(rng() % L);
    if (on_demand) {
      for (uint32_t l = 1; l <= L; ++l) v.add_audited_layers(l);
    } else {
      v.add_audited_layers(layer);
    }
    if (fail) {
      v.mutable_mismatch()->set_layer(layer);
      v.mutable_mismatch()->set_expected(RandomBytes(rng, 32));
      v.mutable_mismatch()->set_got(RandomBytes(rng, 32));
      v.set_detail("layer hash differs");
      ++w.failures;
    }
    v.set_head_checked(true);
    const std::string seed = RandomBytes(rng, 32);
    v.set_audit_seed(seed);
    v.set_verifier_id(name);
    v.set_created_at_unix_nanos(kT0 + i * kSecond + kSecond / 2);
    v.set_commitment_leaf_hash(RandomBytes(rng, 32));
    verdicts[j] = Must(store::SignVerdict(v, *key), "SignVerdict");
    v1::AuditRecord& r = records[j];
    r.set_audit_seed(seed);
    r.set_request_id(request_ids[i]);
    r.set_on_demand(on_demand);
    r.set_done(true);
  }
  std::vector<uint64_t> vindex(m);
  ParallelFor(m, kAppendThreads, [&](int64_t j) {
    vindex[j] = Must(w.log->Append(verdicts[j]), "Append").index;
  });
  for (const auto& e : verdicts) w.leaf_bytes += double(e.size());
  w.leaf_bytes /= double(n + m);
  // The store as the verifier's indexer leaves it (AuditScheduler): each
  // commitment's index entry and logging time (what reports window by),
  // each verdict's index entry and audit record, the indexed size.
  verifier::AuditStoreBatch batch;
  for (int64_t i = 0; i < n; ++i) {
    batch.SetLoggedAt(index[i], kT0 + i * kSecond + kSecond / 4);
    batch.PutCommitment(request_ids[i], index[i]);
  }
  for (int64_t j = 0; j < m; ++j) {
    records[j].set_verdict_leaf_index(vindex[j]);
    batch.PutAudit(records[j]);
    v1::VerdictIndexEntry e;
    e.set_request_id(records[j].request_id());
    e.set_outcome(outcomes[j]);
    e.set_created_at_unix_nanos(kT0 + judged[j] * kSecond + kSecond / 2);
    e.set_audit_seed(records[j].audit_seed());
    e.set_prover_id("bench-prover-" + std::to_string(judged[j] % 3));
    batch.PutVerdict(vindex[j], e);
  }
  batch.SetIndexed(w.log->Size());
  Must(w.store->Write(batch), "AuditStore::Write");
  w.commitments = n;
  w.verdicts = m;

  verifier::ReportInputs& in = w.in;
  in.from_unix_nanos = kT0;
  in.to_unix_nanos = kT0 + (n + 10) * kSecond;
  in.verifier_id = name;
  in.log_origin = lo.origin;
  in.policy.rate = kVerdictShare;
  in.policy.layers_per_audit = 1;
  in.generated_at = absl::FromUnixNanos(in.to_unix_nanos + kSecond);
  // The checkpoint covering everything (signed after the last batch).
  const uint64_t size = w.log->Size();
  store::CheckpointVerifier cv(name, key->public_key());
  for (int tries = 0;; ++tries) {
    in.checkpoint_note = Must(w.log->LatestCheckpoint(), "LatestCheckpoint");
    in.checkpoint = Must(cv.Verify(in.checkpoint_note), "checkpoint");
    if (in.checkpoint.size == size) break;
    if (tries > 500) Die("checkpoint", "does not cover the log");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return w;
}

// The peer: every entry read and its Envelope parsed, nothing else.
uint64_t BareScan(const store::Log& log, uint64_t size) {
  uint64_t sink = 0;
  for (uint64_t i = 0; i < size; ++i) {
    const std::string entry = Must(log.Entry(i), "Log::Entry");
    v1::Envelope env;
    if (!env.ParseFromString(entry)) Die("bare scan", "malformed envelope");
    sink += env.payload().size();
  }
  return sink;
}

void Reports(const Options& o, const km::Model& model, const fs::path& tmp) {
  struct Row {
    int64_t n = 0, verdicts = 0, entries = 0;
    double leaf_bytes = 0, populate = 0;
    Times scan, report;
    std::vector<double> pair;  // report / scan, each round's own pair
    size_t json_bytes = 0;
  };
  std::vector<Row> rows;
  for (int64_t n : o.sizes) {
    Row row;
    Note("reports: populating a log of %lld commitments ...\n", (long long)n);
    const auto p0 = Clock::now();
    ReportWorld w = Populate(n, model, tmp / ("report-" + std::to_string(n)));
    row.populate = Seconds(p0);
    row.n = n;
    row.verdicts = w.verdicts;
    row.entries = static_cast<int64_t>(w.in.checkpoint.size);
    row.leaf_bytes = w.leaf_bytes;
    const uint64_t size = w.in.checkpoint.size;
    for (int round = 0; round <= o.reps; ++round) {
      double s = 0, r = 0;
      for (int k = 0; k < 2; ++k) {
        if ((round + k) % 2 == 0) {
          const auto t0 = Clock::now();
          volatile uint64_t sink = BareScan(*w.log, size);
          (void)sink;
          s = Seconds(t0);
        } else {
          const auto t0 = Clock::now();
          const nlohmann::json j = Must(
              verifier::BuildReport(*w.log, *w.store, w.in), "BuildReport");
          r = Seconds(t0);
          if (round == 0) {
            row.json_bytes = j.dump().size();
            const int64_t got = j["totals"]["commitments"].get<int64_t>();
            if (got != n) Die("BuildReport", "wrong commitment count");
            if (j["totals"].value("commitments_timed_by_prover_clock", 0) !=
                0) {
              Die("BuildReport", "commitments timed by the prover's clock");
            }
          }
        }
      }
      if (round == 0) continue;  // warm-up
      row.scan.v.push_back(s);
      row.report.v.push_back(r);
      row.pair.push_back(r / s);
    }
    Note("  scan %.2f ms, report %.2f ms (best)\n", 1e3 * row.scan.best(),
         1e3 * row.report.best());
    w = ReportWorld();
    rows.push_back(std::move(row));
  }

  Emit(
      "\n#### Compliance report generation (BuildReport over a RocksDbLog), "
      "%d timed rounds (+1 warm-up)\n\n",
      o.reps);
  Emit(
      "| commitments | verdicts | log entries | report ms (best / median) | "
      "bare scan ms (best / median) | report / scan (best / median / "
      "median of pairs) | report entries/s (best) | scan entries/s (best) "
      "|\n|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    Times pairs;
    pairs.v = r.pair;
    Emit(
        "| %lld | %lld | %lld | %.2f / %.2f | %.2f / %.2f | **%.2f×** / "
        "%.2f× / %.2f× | %.0f | %.0f |\n",
        (long long)r.n, (long long)r.verdicts, (long long)r.entries,
        1e3 * r.report.best(), 1e3 * r.report.median(), 1e3 * r.scan.best(),
        1e3 * r.scan.median(), r.report.best() / r.scan.best(),
        r.report.median() / r.scan.median(), pairs.median(),
        double(r.entries) / r.report.best(), double(r.entries) / r.scan.best());
  }
  Emit("\n");
  for (const Row& r : rows) {
    Emit(
        "- %lld commitments: mean entry %.0f bytes; report JSON %zu bytes; "
        "building the log (%d appending threads) took %.1f s, untimed.\n",
        (long long)r.n, r.leaf_bytes, r.json_bytes, kAppendThreads, r.populate);
  }
}

// ---------------------------------------------------------------- main ---

// ---------------------------------------------------------------- main ---

int Run(const Options& o) {
  const BenchRun run = StartRun(o.model_dir, o.threads, o.quick);
  const std::string dir = (run.models / "small-seed1").string();
  std::unique_ptr<km::Model> model =
      Must(LoadOrSynthesize("small", dir), "small model");

  Reports(o, *model, run.tmp);
  Emit("\nload average after the reports: %s\n", LoadAverage().c_str());
  Bundles(o, *model, run.backend, run.tmp);
  Emit("\nload average at the end: %s\n", LoadAverage().c_str());
  return FinishRun(run, o.out);
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  using namespace layerproof::bench;
  return Main<Options>("report_bench", argc, argv, ParseArgs, Usage, Run);
}
