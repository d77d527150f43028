#include "verifier/report_builder.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <utility>

#include "kernels/status.h"
#include "layerproof/v1/records.pb.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "verifier/detection_bounds.h"
#include "check/bytes.h"
#include "verifier/internal/attribution.h"

namespace layerproof::verifier {
namespace {

using check::Hex;
using store::internal::Cat;

constexpr int kOutcomes = v1::VerdictOutcome_ARRAYSIZE;  // values 0..max

// A commitment created in the window (and matching the prover filter).
struct Logged {
  std::string prover_id;
  std::string model_digest;
  int64_t created_at = 0;  // the prover's claim
  // What the report windows it by: the verifier's clock when it indexed the
  // entry (AuditStore::LoggedAt), else see WhenLogged.
  int64_t logged_at = 0;
  bool logged_at_known = false;
  uint32_t num_layers = 0;
  // Committed without a client nonce: the prover chose the seed.
  bool without_nonce = false;
  bool audited = false;
  bool drawn = false;  // audited by a policy draw
};

struct Tally {
  uint64_t commitments = 0;
  uint64_t commitments_without_nonce = 0;
  uint64_t audited_commitments = 0;
  uint64_t drawn_audited_commitments = 0;
  uint64_t audits = 0;
  uint64_t drawn_audits = 0;
  uint64_t on_demand_audits = 0;
  uint64_t refused_submissions = 0;
  uint64_t unlogged_promises = 0;
  uint64_t failures = 0;
  std::array<uint64_t, kOutcomes> verdicts{};
  // d_i of each drawn audit (detection bounds).
  std::vector<double> fractions;
};

enum class Kind { kDrawn, kOnDemand, kRefusal, kUnlogged };

void CountVerdict(Tally& t, Kind kind, v1::VerdictOutcome outcome,
                  double fraction) {
  if (int(outcome) > 0 && int(outcome) < kOutcomes) ++t.verdicts[outcome];
  // Closed without a re-execution (v1::INCONCLUSIVE): no audit took place,
  // so it is neither a failure nor part of the detection bounds.
  if (outcome == v1::INCONCLUSIVE) return;
  ++t.audits;
  switch (kind) {
    case Kind::kDrawn:
      ++t.drawn_audits;
      t.fractions.push_back(fraction);
      break;
    case Kind::kOnDemand:
      ++t.on_demand_audits;
      break;
    case Kind::kRefusal:
      ++t.refused_submissions;
      break;
    case Kind::kUnlogged:
      ++t.unlogged_promises;
      break;
  }
  if (outcome != v1::PASS) ++t.failures;
}

void CountCommitment(Tally& t, const Logged& c) {
  ++t.commitments;
  if (c.without_nonce) ++t.commitments_without_nonce;
  if (c.audited) ++t.audited_commitments;
  if (c.drawn) ++t.drawn_audited_commitments;
}

nlohmann::json VerdictsJson(const Tally& t) {
  nlohmann::json out = nlohmann::json::object();
  for (int o = 1; o < kOutcomes; ++o) {
    out[v1::VerdictOutcome_Name(static_cast<v1::VerdictOutcome>(o))] =
        t.verdicts[size_t(o)];
  }
  return out;
}

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  return v.has_value() ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json DetectionJson(const Tally& t) {
  const Detection d = ComputeDetection(t.fractions, t.failures);
  nlohmann::json curve = nlohmann::json::array();
  for (const DetectionPoint& p : d.curve) {
    curve.push_back({{"f", p.f}, {"confidence", p.confidence}});
  }
  return {{"drawn_audits", d.drawn_audits},
          {"failures", d.failures},
          {"layer_fraction_min", d.layer_fraction_min},
          {"layer_fraction_mean", d.layer_fraction_mean},
          {"ruled_out",
           {{"0.95", OptionalNumber(d.ruled_out_95)},
            {"0.99", OptionalNumber(d.ruled_out_99)}}},
          {"curve", std::move(curve)}};
}

// The counts every split shares.
void PutCounts(nlohmann::json& out, const Tally& t) {
  out["commitments"] = t.commitments;
  out["commitments_without_nonce"] = t.commitments_without_nonce;
  out["audited_commitments"] = t.audited_commitments;
  out["drawn_audited_commitments"] = t.drawn_audited_commitments;
  out["audits"] = t.audits;
  out["drawn_audits"] = t.drawn_audits;
  out["on_demand_audits"] = t.on_demand_audits;
  out["refused_submissions"] = t.refused_submissions;
  out["unlogged_promises"] = t.unlogged_promises;
  out["realised_audit_rate"] =
      t.commitments == 0
          ? 0.0
          : double(t.drawn_audited_commitments) / double(t.commitments);
  out["failures"] = t.failures;
  out["verdicts"] = VerdictsJson(t);
}

// The bucket width: the first of these that needs at most
// kMaxTimelineBuckets buckets for the window, else window / that many
// (rounded up).
int64_t BucketNanos(uint64_t span) {
  constexpr int64_t kSecond = 1000000000;
  constexpr std::array<int64_t, 12> kWidths = {kSecond,
                                               10 * kSecond,
                                               60 * kSecond,
                                               300 * kSecond,
                                               900 * kSecond,
                                               3600 * kSecond,
                                               6 * 3600 * kSecond,
                                               86400 * kSecond,
                                               7 * 86400 * kSecond,
                                               30 * 86400 * kSecond,
                                               91 * 86400 * kSecond,
                                               365 * 86400 * kSecond};
  for (int64_t w : kWidths) {
    if ((span + uint64_t(w) - 1) / uint64_t(w) <=
        uint64_t(kMaxTimelineBuckets)) {
      return w;
    }
  }
  return int64_t((span + kMaxTimelineBuckets - 1) / kMaxTimelineBuckets);
}

bool InWindow(const ReportInputs& in, int64_t t) {
  return t >= in.from_unix_nanos && t < in.to_unix_nanos;
}

// The time commitment entry `index` is windowed by (docs/reports.md "How
// each number is computed"): the verifier's recorded time of logging; for
// an entry not yet indexed when the report started (`indexed` is the
// watermark then), the report's own time (the entry was logged before it);
// otherwise, for entries indexed before logging times were recorded, the
// prover's created_at (`*by_prover_clock` set).
absl::StatusOr<int64_t> WhenLogged(const AuditStore& store, uint64_t index,
                                   uint64_t indexed, int64_t generated,
                                   int64_t created_at, bool* by_prover_clock) {
  *by_prover_clock = false;
  LP_ASSIGN_OR_RETURN(std::optional<int64_t> logged, store.LoggedAt(index));
  if (logged.has_value()) return *logged;
  if (index >= indexed) return generated;
  *by_prover_clock = true;
  return created_at;
}

}  // namespace

std::string Rfc3339(int64_t unix_nanos) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ",
                          absl::FromUnixNanos(unix_nanos), absl::UTCTimeZone());
}

absl::StatusOr<nlohmann::json> BuildReport(const store::Log& log,
                                           const AuditStore& store,
                                           const ReportInputs& in) {
  const uint64_t tree_size = in.checkpoint.size;
  if (tree_size > log.Size()) {
    return absl::InternalError(Cat("checkpoint of ", tree_size,
                                   " entries is beyond the log's ",
                                   log.Size()));
  }
  const uint64_t span =
      uint64_t(in.to_unix_nanos) - uint64_t(in.from_unix_nanos);
  const int64_t bucket = BucketNanos(span);
  const size_t buckets =
      size_t((span + uint64_t(bucket) - 1) / uint64_t(bucket));
  std::vector<std::pair<uint64_t, uint64_t>> timeline(buckets);  // pass, fail

  std::unordered_map<uint64_t, Logged> logged;  // by leaf index
  Tally totals;
  std::map<std::string, Tally> by_prover;
  std::map<std::string, Tally> by_model;  // by raw digest
  nlohmann::json failures = nlohmann::json::array();
  uint64_t failures_omitted = 0;
  uint64_t other_entries = 0;
  uint64_t timed_by_prover_clock = 0;
  const int64_t generated = absl::ToUnixNanos(in.generated_at);
  LP_ASSIGN_OR_RETURN(const uint64_t indexed, store.IndexedSize());

  for (uint64_t i = 0; i < tree_size; ++i) {
    LP_ASSIGN_OR_RETURN(std::string entry, log.Entry(i));
    v1::Envelope env;
    if (!env.ParseFromString(entry)) {
      return absl::DataLossError(Cat("log entry ", i, ": malformed envelope"));
    }
    if (env.payload_type() == store::kCommitmentPayloadType) {
      absl::StatusOr<v1::Commitment> c = store::ParseCommitment(env.payload());
      if (!c.ok()) {
        return absl::DataLossError(
            Cat("log entry ", i, ": ", std::string(c.status().message())));
      }
      if (!in.prover_id.empty() && c->prover_id() != in.prover_id) continue;
      bool by_prover_clock = false;
      LP_ASSIGN_OR_RETURN(
          const int64_t when,
          WhenLogged(store, i, indexed, generated, c->created_at_unix_nanos(),
                     &by_prover_clock));
      if (!InWindow(in, when)) continue;
      if (by_prover_clock) ++timed_by_prover_clock;
      Logged l;
      l.prover_id = c->prover_id();
      l.model_digest = c->model_digest();
      l.created_at = c->created_at_unix_nanos();
      l.logged_at = when;
      l.logged_at_known = !by_prover_clock;
      l.num_layers = c->num_layers();
      l.without_nonce = c->client_nonce().empty();
      logged.emplace(i, std::move(l));
      continue;
    }
    if (env.payload_type() != store::kVerdictPayloadType) {
      ++other_entries;
      continue;
    }
    absl::StatusOr<v1::Verdict> v = store::ParseVerdict(env.payload());
    if (!v.ok()) {
      return absl::DataLossError(
          Cat("log entry ", i, ": ", std::string(v.status().message())));
    }
    // Whom and when the verdict counts for.
    Logged* commitment = nullptr;
    std::string prover_id, model_digest;
    int64_t when = 0;
    Kind kind = Kind::kRefusal;
    if (v->has_commitment_leaf_index()) {
      auto it = logged.find(v->commitment_leaf_index());
      if (it == logged.end()) continue;  // outside the window or filter
      commitment = &it->second;
      prover_id = commitment->prover_id;
      model_digest = commitment->model_digest;
      when = commitment->logged_at;
      // On-demand audits are not random: never part of the bounds. An audit
      // the store has no record of is counted with them (conservative).
      LP_ASSIGN_OR_RETURN(std::optional<bool> on_demand,
                          store.AuditOnDemand(v->audit_seed()));
      kind =
          on_demand.has_value() && !*on_demand ? Kind::kDrawn : Kind::kOnDemand;
    } else {
      // A FAIL_SIGNATURE at submission: charged to the authenticated
      // submitter; a FAIL_UNLOGGED: to the prover that signed the promise.
      // Either is in the window by its own time.
      if (v->outcome() == v1::FAIL_UNLOGGED) {
        kind = Kind::kUnlogged;
        prover_id = internal::PromisedProverId(*v);
      } else {
        prover_id = v->refused_submitter();
      }
      when = v->created_at_unix_nanos();
      if (!InWindow(in, when)) continue;
      if (!in.prover_id.empty() && prover_id != in.prover_id) continue;
    }
    double fraction = 0;
    if (commitment != nullptr && commitment->num_layers > 0) {
      fraction = std::min(1.0, double(v->audited_layers_size()) /
                                   double(commitment->num_layers));
    }
    if (commitment != nullptr && v->outcome() != v1::INCONCLUSIVE) {
      commitment->audited = true;
      if (kind == Kind::kDrawn) commitment->drawn = true;
    }
    CountVerdict(totals, kind, v->outcome(), fraction);
    CountVerdict(by_prover[prover_id], kind, v->outcome(), fraction);
    CountVerdict(by_model[model_digest], kind, v->outcome(), fraction);
    const size_t b =
        size_t(uint64_t(when - in.from_unix_nanos) / uint64_t(bucket));
    if (v->outcome() == v1::INCONCLUSIVE) continue;  // counted, not a finding
    if (b < timeline.size()) {
      (v->outcome() == v1::PASS ? timeline[b].first : timeline[b].second)++;
    }
    if (v->outcome() == v1::PASS) continue;
    if (failures.size() >= in.max_failures) {
      ++failures_omitted;
      continue;
    }
    nlohmann::json f = {
        {"request_id", Hex(v->request_id())},
        {"prover_id", prover_id},
        {"model_digest", Hex(model_digest)},
        {"outcome", v1::VerdictOutcome_Name(v->outcome())},
    };
    if (v->outcome() == v1::FAIL_MISMATCH) f["layer"] = v->mismatch().layer();
    f["detail"] = v->detail();
    f["verdict_leaf_index"] = i;
    f["commitment_leaf_index"] =
        v->has_commitment_leaf_index()
            ? nlohmann::json(v->commitment_leaf_index())
            : nlohmann::json(nullptr);
    f["created_at_unix_nanos"] = v->created_at_unix_nanos();
    f["commitment_created_at_unix_nanos"] =
        commitment != nullptr ? nlohmann::json(commitment->created_at)
                              : nlohmann::json(nullptr);
    f["commitment_logged_at_unix_nanos"] =
        commitment != nullptr && commitment->logged_at_known
            ? nlohmann::json(commitment->logged_at)
            : nlohmann::json(nullptr);
    f["on_demand"] = kind == Kind::kOnDemand;
    f["refused_at_submission"] = kind == Kind::kRefusal;
    f["unlogged_promise"] = kind == Kind::kUnlogged;
    f["audited_layers"] = std::vector<uint32_t>(v->audited_layers().begin(),
                                                v->audited_layers().end());
    f["audit_seed"] = Hex(v->audit_seed());
    f["evidence"] = {{"rpc", "layerproof.v1.Audit/GetEvidence"},
                     {"request_id", Hex(v->request_id())},
                     {"verdict_leaf_index", i}};
    failures.push_back(std::move(f));
  }
  // Commitments, once every verdict on them is seen.
  for (const auto& [index, c] : logged) {
    CountCommitment(totals, c);
    CountCommitment(by_prover[c.prover_id], c);
    CountCommitment(by_model[c.model_digest], c);
  }

  nlohmann::json report = nlohmann::json::object();
  report["format"] = "layerproof.compliance-report.v1";
  report["verifier_id"] = in.verifier_id;
  report["log_origin"] = in.log_origin;
  report["generated_at_unix_nanos"] = generated;
  report["generated_at"] = Rfc3339(generated);
  report["window"] = {{"from_unix_nanos", in.from_unix_nanos},
                      {"to_unix_nanos", in.to_unix_nanos},
                      {"from", Rfc3339(in.from_unix_nanos)},
                      {"to", Rfc3339(in.to_unix_nanos)}};
  report["prover_filter"] = in.prover_id;
  report["client_nonce"] = Hex(in.client_nonce);
  report["policy"] = {{"audit_rate", in.policy.rate},
                      {"layers_per_audit", in.policy.layers_per_audit}};
  report["checkpoint"] = {
      {"tree_size", tree_size},
      {"root_hash", store::HexEncode(store::Bytes(in.checkpoint.root))},
      {"note", in.checkpoint_note}};
  if (in.previous.has_value()) {
    nlohmann::json proof = nlohmann::json::array();
    for (const store::Sha256Hash& h : in.consistency_proof) {
      proof.push_back(store::HexEncode(store::Bytes(h)));
    }
    const bool caller = in.previous_from_caller;
    report["previous_report"] = {
        {"source", caller ? "caller" : "last_issued"},
        {"generated_at_unix_nanos",
         caller ? nlohmann::json(nullptr)
                : nlohmann::json(in.previous->generated_at_unix_nanos)},
        {"generated_at", caller ? nlohmann::json(nullptr)
                                : nlohmann::json(Rfc3339(
                                      in.previous->generated_at_unix_nanos))},
        {"tree_size", in.previous->tree_size},
        {"root_hash", Hex(in.previous->root_hash)},
        {"consistency_proof", std::move(proof)}};
  } else {
    report["previous_report"] = nullptr;
  }
  nlohmann::json totals_json = nlohmann::json::object();
  PutCounts(totals_json, totals);
  totals_json["log_entries_scanned"] = tree_size;
  totals_json["other_log_entries"] = other_entries;
  totals_json["commitments_timed_by_prover_clock"] = timed_by_prover_clock;
  report["totals"] = std::move(totals_json);

  nlohmann::json provers = nlohmann::json::array();
  for (const auto& [id, t] : by_prover) {
    nlohmann::json p = {{"prover_id", id}};
    PutCounts(p, t);
    p["detection"] = DetectionJson(t);
    provers.push_back(std::move(p));
  }
  report["by_prover"] = std::move(provers);
  nlohmann::json models = nlohmann::json::array();
  for (const auto& [digest, t] : by_model) {
    nlohmann::json m = {{"model_digest", Hex(digest)}};
    PutCounts(m, t);
    models.push_back(std::move(m));
  }
  report["by_model"] = std::move(models);
  report["detection"] = DetectionJson(totals);

  nlohmann::json bucket_list = nlohmann::json::array();
  for (size_t b = 0; b < timeline.size(); ++b) {
    bucket_list.push_back(
        {{"start_unix_nanos", in.from_unix_nanos + int64_t(b) * bucket},
         {"pass", timeline[b].first},
         {"fail", timeline[b].second}});
  }
  report["timeline"] = {{"bucket_nanos", bucket},
                        {"buckets", std::move(bucket_list)}};
  report["failures"] = std::move(failures);
  report["failures_omitted"] = failures_omitted;
  return report;
}

}  // namespace layerproof::verifier
