// report_bench's section 2, offline evidence-bundle verification (see the
// top of report_bench.cc): VerifyEvidenceBundle of a served request's
// bundles against the verifier's own audit of the same commitment and a
// full forward pass.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/loopback_nodes.h"
#include "bench/report_bench.h"
#include "grpcpp/client_context.h"
#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "rpc/tls.h"
#include "verifier/audit_policy.h"
#include "check/bundle_check.h"
#include "check/re_executor.h"

namespace layerproof::bench {
namespace {

namespace fs = std::filesystem;
namespace km = kernels::model;

constexpr int64_t kPrompt = 64;  // the bundle's request
constexpr uint32_t kTokens = 32;

verifier::AuditPolicy OnDemandOnly() {
  verifier::AuditPolicy p;
  p.rate = 0;  // audits on demand only
  p.layers_per_audit = 1;
  return p;
}

// The served cluster (bench/loopback_nodes.h, as service_bench stands it
// up, auditing on demand only) and clients of the prover's Inference and
// the verifier's Audit.
class Service {
 public:
  Service(const km::Model& model, kernels::Backend* backend,
          const fs::path& dir)
      : nodes_(model, backend, dir, OnDemandOnly()) {
    inference_ = v1::Inference::NewStub(
        Must(rpc::MakeChannel(nodes_.prover_address(), LoopbackNodes::tls()),
             "channel"));
    audit_ = v1::Audit::NewStub(
        Must(rpc::MakeChannel(nodes_.verifier_address(), LoopbackNodes::tls()),
             "channel"));
  }

  const store::Ed25519PublicKey& verifier_key() const {
    return nodes_.verifier_key();
  }
  const store::Ed25519PublicKey& prover_key() const {
    return nodes_.prover_key();
  }

  // Serves one request; returns its request id.
  std::string Generate(const std::vector<int32_t>& prompt) {
    v1::GenerateRequest request;
    for (int32_t id : prompt) request.mutable_token_ids()->add_ids(id);
    request.mutable_sampling()->set_temperature(0.8f);
    request.mutable_sampling()->set_top_k(40);
    request.mutable_sampling()->set_top_p(0.95f);
    request.set_seed(1234);
    request.set_max_tokens(kTokens);
    request.set_ignore_eos(true);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(600));
    v1::GenerateResponse response;
    const grpc::Status s = inference_->Generate(&context, request, &response);
    if (!s.ok()) Die("Generate", s.error_message());
    return response.request_id();
  }

  // Audits `request_id` on demand with `layers` and returns the serialised
  // evidence bundle of the verdict (as tests/integration/bundle_test.cc).
  std::string AuditAndFetch(const std::string& request_id,
                            const std::vector<uint32_t>& layers) {
    v1::RequestAuditRequest request;
    request.set_request_id(request_id);
    for (uint32_t l : layers) request.add_layers(l);
    v1::RequestAuditResponse response;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (;;) {  // the commitment may not be logged yet: retry
      grpc::ClientContext context;
      const grpc::Status s = audit_->RequestAudit(&context, request, &response);
      if (s.ok()) break;
      if (absl::Now() > deadline) Die("RequestAudit", s.error_message());
      absl::SleepFor(absl::Milliseconds(50));
    }
    v1::GetEvidenceRequest evidence;
    evidence.set_request_id(request_id);
    evidence.set_verdict_leaf_index(response.verdict().leaf_index());
    for (;;) {  // the checkpoint may lag the verdict for a moment: poll
      v1::EvidenceBundle bundle;
      grpc::ClientContext context;
      const grpc::Status s = audit_->GetEvidence(&context, evidence, &bundle);
      if (s.ok()) {
        std::string out;
        if (!bundle.SerializeToString(&out)) Die("GetEvidence", "serialise");
        return out;
      }
      if (s.error_code() != grpc::StatusCode::UNAVAILABLE ||
          absl::Now() > deadline) {
        Die("GetEvidence", s.error_message());
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

 private:
  // Declared first so that the nodes shut down before the channels close,
  // as they did before the nodes moved to bench/loopback_nodes.h.
  std::unique_ptr<v1::Inference::Stub> inference_;
  std::unique_ptr<v1::Audit::Stub> audit_;
  LoopbackNodes nodes_;
};

// Hands back the bundle's opening, held in memory.
class MemoryOpening : public check::OpeningSource {
 public:
  explicit MemoryOpening(const v1::EvidenceBundle& b) {
    opening_.header = b.opening();
    for (const v1::OpenedLayer& l : b.opened_layers()) {
      std::vector<float> rows(l.data().size() / sizeof(float));
      std::memcpy(rows.data(), l.data().data(), rows.size() * sizeof(float));
      opening_.layers[l.layer()] = std::move(rows);
    }
  }
  absl::StatusOr<check::Opening> Open(std::string_view, std::string_view,
                                         const std::vector<uint32_t>& ks,
                                         uint64_t, uint64_t,
                                         absl::Time) override {
    check::Opening o;
    o.header = opening_.header;
    for (uint32_t k : ks) {
      auto it = opening_.layers.find(k);
      if (it != opening_.layers.end()) o.layers[k] = it->second;
    }
    return o;
  }

 private:
  check::Opening opening_;
};

struct BundleRow {
  std::vector<uint32_t> layers;
  size_t bundle_bytes = 0;
  int opened = 0;
  Times verify_wall, verify_cpu, audit_wall, audit_cpu, fwd_wall, fwd_cpu;
  std::vector<double> pair_audit, pair_fwd;  // per-round wall ratios
  std::vector<double> pair_extra;            // per-round verify - audit, s
};

}  // namespace

void Bundles(const Options& o, const km::Model& model,
             kernels::Backend* backend, const fs::path& tmp) {
  const km::ModelConfig& mc = model.config();
  const int64_t L = mc.num_layers;
  const std::vector<std::vector<uint32_t>> plans = {{4}, {2, 4, 6, 8}};
  for (const auto& p : plans) {
    if (p.back() > L) Die("bundles", "the model has too few layers");
  }
  Note("bundles: serving and auditing a request ...\n");
  std::vector<std::string> bundles;
  store::Ed25519PublicKey log_key, prover_key;
  {
    Service svc(model, backend, tmp / "bundle-service");
    const std::string id = svc.Generate(Prompt(kPrompt, 4242, mc.vocab_size));
    for (const auto& p : plans) bundles.push_back(svc.AuditAndFetch(id, p));
    log_key = svc.verifier_key();
    prover_key = svc.prover_key();
  }

  // The third party's own engine (it must accept max_positions, as
  // bundle_check.h asks).
  std::unique_ptr<km::Executor> executor =
      Must(km::MakeExecutor(backend), "executor");
  km::EngineOptions eo;
  eo.max_context = mc.max_positions;
  std::unique_ptr<km::Engine> engine =
      Must(km::Engine::Create(model, executor.get(), eo), "Engine::Create");
  const std::string digest = ModelDigest(model);
  check::BundleTrust trust;
  trust.log_key = log_key;
  trust.prover_keys = {prover_key};
  store::KeyRing keys;
  keys.Add(prover_key);
  check::ReExecutor re(*engine, digest);

  std::vector<BundleRow> rows;
  int64_t positions = 0;
  for (size_t b = 0; b < bundles.size(); ++b) {
    const std::string& bytes = bundles[b];
    const v1::EvidenceBundle bundle =
        Must(check::ParseEvidenceBundle(bytes), "check::ParseEvidenceBundle");
    v1::Envelope venv;
    if (!venv.ParseFromString(bundle.verdict_envelope())) {
      Die("bundle", "verdict envelope");
    }
    const v1::Verdict verdict =
        Must(store::ParseVerdict(venv.payload()), "ParseVerdict");
    if (verdict.outcome() != v1::PASS) Die("bundle", "verdict is not PASS");
    check::AuditPlan plan;
    plan.layers.assign(verdict.audited_layers().begin(),
                       verdict.audited_layers().end());
    plan.audit_seed = verdict.audit_seed();
    MemoryOpening source(bundle);
    const v1::OpeningHeader& h = bundle.opening();
    std::vector<int32_t> tokens(h.prompt_token_ids().begin(),
                                h.prompt_token_ids().end());
    tokens.insert(tokens.end(), h.output_token_ids().begin(),
                  h.output_token_ids().end() - 1);
    positions = static_cast<int64_t>(tokens.size());

    BundleRow row;
    row.layers = plans[b];
    row.bundle_bytes = bytes.size();
    row.opened = bundle.opened_layers_size();
    Note("  s = %zu: bundle %zu bytes, %d opened layers\n", row.layers.size(),
         bytes.size(), row.opened);
    for (int round = 0; round <= o.bundle_reps; ++round) {
      double wall[3], cpu[3];
      for (int k = 0; k < 3; ++k) {
        const int which = (round + k) % 3;
        const double c0 = ProcessCpuSeconds();
        const auto t0 = Clock::now();
        switch (which) {
          case 0: {
            const check::BundleVerification v = Must(
                check::VerifyEvidenceBundle(bytes, *engine, digest, trust),
                "check::VerifyEvidenceBundle");
            if (!v.ok() || !v.verdict_rederived) {
              std::string d;
              for (const auto& c : v.checks) {
                d += c.check + " " +
                     std::string(check::BundleCheckStateName(c.state)) +
                     ": " + c.detail + "\n";
              }
              Die("check::VerifyEvidenceBundle", "bundle did not verify:\n" + d);
            }
            break;
          }
          case 1: {
            const check::AuditOutcome out =
                Must(re.Audit(bundle.commitment_envelope(),
                              bundle.commitment_inclusion().leaf_index(), plan,
                              keys, source, absl::Seconds(600)),
                     "check::ReExecutor::Audit");
            if (out.verdict.outcome() != v1::PASS) {
              Die("check::ReExecutor::Audit", out.verdict.detail());
            }
            break;
          }
          case 2:
            Must(engine->Forward(tokens, nullptr, 0, nullptr), "Forward");
            break;
        }
        wall[which] = Seconds(t0);
        cpu[which] = ProcessCpuSeconds() - c0;
      }
      if (round == 0) continue;  // warm-up
      row.verify_wall.v.push_back(wall[0]);
      row.verify_cpu.v.push_back(cpu[0]);
      row.audit_wall.v.push_back(wall[1]);
      row.audit_cpu.v.push_back(cpu[1]);
      row.fwd_wall.v.push_back(wall[2]);
      row.fwd_cpu.v.push_back(cpu[2]);
      row.pair_audit.push_back(wall[0] / wall[1]);
      row.pair_fwd.push_back(wall[0] / wall[2]);
      row.pair_extra.push_back(wall[0] - wall[1]);
    }
    rows.push_back(std::move(row));
  }

  Emit(
      "\n#### Offline bundle verification, `small` (L = %lld, hidden %lld; "
      "%lld committed positions: prompt %lld + %u sampled tokens - 1), %d "
      "timed rounds (+1 warm-up)\n\n",
      (long long)L, (long long)mc.hidden_size, (long long)positions,
      (long long)kPrompt, kTokens, o.bundle_reps);
  Emit(
      "| s (blocks) | bundle | check::VerifyEvidenceBundle ms, wall best / median "
      "(CPU median) | check::ReExecutor::Audit ms, wall best / median (CPU median) "
      "| Engine::Forward ms, wall best / median (CPU median) | verify / "
      "audit (best / median of pairs) | verify - audit ms (median of pairs) "
      "| verify / forward (best / median of pairs) "
      "|\n|---|---|---|---|---|---|---|---|\n");
  for (const BundleRow& r : rows) {
    std::string blocks;
    for (uint32_t l : r.layers) {
      blocks += (blocks.empty() ? "" : ", ") + std::to_string(l);
    }
    Times pa, pf, pe;
    pa.v = r.pair_audit;
    pf.v = r.pair_fwd;
    pe.v = r.pair_extra;
    Emit(
        "| %zu ({%s}) | %.2f MB, %d layers opened | %.2f / %.2f (%.2f) | "
        "%.2f / %.2f (%.2f) | %.2f / %.2f (%.2f) | **%.2f×** / %.2f× | "
        "%+.2f | **%.2f×** / %.2f× |\n",
        r.layers.size(), blocks.c_str(), r.bundle_bytes / 1e6, r.opened,
        1e3 * r.verify_wall.best(), 1e3 * r.verify_wall.median(),
        1e3 * r.verify_cpu.median(), 1e3 * r.audit_wall.best(),
        1e3 * r.audit_wall.median(), 1e3 * r.audit_cpu.median(),
        1e3 * r.fwd_wall.best(), 1e3 * r.fwd_wall.median(),
        1e3 * r.fwd_cpu.median(), r.verify_wall.best() / r.audit_wall.best(),
        pa.median(), 1e3 * pe.median(),
        r.verify_wall.best() / r.fwd_wall.best(), pf.median());
  }
  Emit(
      "\n(\"Engine::Forward\": every block over the committed positions, "
      "without the head or any hashing; the audit and the bundle check also "
      "run the head and the sampler over the %u output rows and hash what "
      "they recompute. CPU is CLOCK_PROCESS_CPUTIME_ID: the engine's pool "
      "runs on %d threads.)\n",
      kTokens, o.threads);
}

}  // namespace layerproof::bench
