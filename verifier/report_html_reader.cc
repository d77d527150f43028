// Reading the compliance report JSON for the HTML page
// (verifier/internal/report_view.h): every field is checked before it is
// used.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "kernels/status.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "store/status.h"
#include "verifier/internal/report_view.h"

namespace layerproof::verifier::internal::report_view {
namespace {

using Json = nlohmann::json;

using store::internal::Cat;

// More verdict kinds than this in one object is not a report.
constexpr size_t kMaxVerdictKinds = 32;

std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Describe(const Json& v) {
  // ASCII-only, so cutting it cannot split a character.
  std::string s = v.dump(-1, ' ', true, Json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

absl::Status Bad(std::string_view path, const Json& got,
                 std::string_view want) {
  return absl::InvalidArgumentError(Cat("compliance report: ", path, ": got ",
                                        Describe(got), ", want ", want));
}

absl::Status Missing(std::string_view path, std::string_view want) {
  return absl::InvalidArgumentError(
      Cat("compliance report: ", path, ": missing, want ", want));
}

// Typed access to the fields of one JSON object; `path` names it in
// messages ("" for the report itself, "by_prover[1]", ...).
class Fields {
 public:
  static absl::StatusOr<Fields> Of(const Json& v, std::string path) {
    if (!v.is_object()) {
      return Bad(path.empty() ? "report" : path, v, "a JSON object");
    }
    return Fields(v, std::move(path));
  }

  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : Cat(path_, ".", key);
  }
  // The field, or nullptr when absent or null.
  const Json* Find(std::string_view key) const {
    const auto it = object_->find(key);
    return it == object_->end() || it->is_null() ? nullptr : &*it;
  }
  absl::StatusOr<const Json*> Required(std::string_view key,
                                       std::string_view want) const {
    const Json* v = Find(key);
    if (v == nullptr) return Missing(Path(key), want);
    return v;
  }
  absl::StatusOr<std::string> String(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "a string"));
    if (!v->is_string()) return Bad(Path(key), *v, "a string");
    return v->get<std::string>();
  }
  absl::StatusOr<bool> Bool(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "true or false"));
    if (!v->is_boolean()) return Bad(Path(key), *v, "true or false");
    return v->get<bool>();
  }
  // A non-negative integer that fits int64_t; nullopt when absent or null.
  absl::StatusOr<std::optional<int64_t>> OptionalCount(
      std::string_view key) const {
    const Json* v = Find(key);
    if (v == nullptr) return std::optional<int64_t>();
    constexpr char kWant[] = "a non-negative integer";
    if (v->is_number_unsigned()) {
      const uint64_t u = v->get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Bad(Path(key), *v, kWant);
      }
      return std::optional<int64_t>(static_cast<int64_t>(u));
    }
    if (!v->is_number_integer() || v->get<int64_t>() < 0) {
      return Bad(Path(key), *v, kWant);
    }
    return std::optional<int64_t>(v->get<int64_t>());
  }
  absl::StatusOr<int64_t> Count(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(std::optional<int64_t> n, OptionalCount(key));
    if (!n) return Missing(Path(key), "a non-negative integer");
    return *n;
  }
  // A finite number in [lo, hi]; nullopt when absent or null.
  absl::StatusOr<std::optional<double>> OptionalNumber(std::string_view key,
                                                       double lo,
                                                       double hi) const {
    const Json* v = Find(key);
    if (v == nullptr) return std::optional<double>();
    const std::string want =
        hi == std::numeric_limits<double>::max()
            ? Cat("a number >= ", Short(lo))
            : Cat("a number in [", Short(lo), ", ", Short(hi), "]");
    if (!v->is_number()) return Bad(Path(key), *v, want);
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) return Bad(Path(key), *v, want);
    return std::optional<double>(d);
  }
  absl::StatusOr<double> Fraction(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(std::optional<double> d, OptionalNumber(key, 0, 1));
    if (!d) return Missing(Path(key), "a number in [0, 1]");
    return *d;
  }
  absl::StatusOr<Fields> Object(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "a JSON object"));
    return Of(*v, Path(key));
  }
  absl::StatusOr<const Json*> Array(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "a JSON array"));
    if (!v->is_array()) return Bad(Path(key), *v, "a JSON array");
    return v;
  }

 private:
  Fields(const Json& object, std::string path)
      : object_(&object), path_(std::move(path)) {}
  const Json* object_;
  std::string path_;
};

std::string Item(std::string_view path, size_t i) {
  return Cat(path, "[", i, "]");
}

absl::StatusOr<Verdicts> ReadVerdicts(const Fields& parent) {
  LP_ASSIGN_OR_RETURN(Fields f, parent.Object("verdicts"));
  const Json& v = *parent.Find("verdicts");
  if (v.size() > kMaxVerdictKinds) {
    return Bad(parent.Path("verdicts"), v,
               Cat("at most ", kMaxVerdictKinds, " verdict kinds"));
  }
  Verdicts out;
  for (const auto& [kind, count] : v.items()) {
    LP_ASSIGN_OR_RETURN(out[kind], f.Count(kind));
  }
  return out;
}
absl::StatusOr<Detection> ReadDetection(const Fields& parent) {
  LP_ASSIGN_OR_RETURN(Fields f, parent.Object("detection"));
  Detection d;
  LP_ASSIGN_OR_RETURN(d.drawn_audits, f.Count("drawn_audits"));
  LP_ASSIGN_OR_RETURN(d.failures, f.Count("failures"));
  LP_ASSIGN_OR_RETURN(d.d_min, f.Fraction("layer_fraction_min"));
  LP_ASSIGN_OR_RETURN(d.d_mean, f.Fraction("layer_fraction_mean"));
  LP_ASSIGN_OR_RETURN(Fields ruled_out, f.Object("ruled_out"));
  LP_ASSIGN_OR_RETURN(d.f95, ruled_out.OptionalNumber("0.95", 0, 1));
  LP_ASSIGN_OR_RETURN(d.f99, ruled_out.OptionalNumber("0.99", 0, 1));
  LP_ASSIGN_OR_RETURN(const Json* curve, f.Array("curve"));
  for (size_t i = 0; i < curve->size(); ++i) {
    LP_ASSIGN_OR_RETURN(Fields p,
                        Fields::Of((*curve)[i], Item(f.Path("curve"), i)));
    report_svg::CurvePoint point;
    LP_ASSIGN_OR_RETURN(point.f, p.Fraction("f"));
    LP_ASSIGN_OR_RETURN(point.confidence, p.Fraction("confidence"));
    d.curve.push_back(point);
  }
  std::stable_sort(d.curve.begin(), d.curve.end(),
                   [](const auto& a, const auto& b) { return a.f < b.f; });
  return d;
}
absl::StatusOr<Counts> ReadCounts(const Fields& f, bool full) {
  Counts c;
  LP_ASSIGN_OR_RETURN(c.commitments, f.Count("commitments"));
  LP_ASSIGN_OR_RETURN(c.audits, f.Count("audits"));
  LP_ASSIGN_OR_RETURN(c.failures, f.Count("failures"));
  LP_ASSIGN_OR_RETURN(c.verdicts, ReadVerdicts(f));
  if (!full) return c;
  LP_ASSIGN_OR_RETURN(c.audited_commitments, f.Count("audited_commitments"));
  LP_ASSIGN_OR_RETURN(c.drawn_audits, f.Count("drawn_audits"));
  LP_ASSIGN_OR_RETURN(c.on_demand_audits, f.Count("on_demand_audits"));
  // Audits of commitments logged before the window can push it above 1.
  LP_ASSIGN_OR_RETURN(std::optional<double> rate,
                      f.OptionalNumber("realised_audit_rate", 0,
                                       std::numeric_limits<double>::max()));
  if (!rate) return Missing(f.Path("realised_audit_rate"), "a number >= 0");
  c.realised_audit_rate = *rate;
  return c;
}
// A 64-hex-digit hash field.
absl::StatusOr<std::string> Hash(const Fields& f, std::string_view key) {
  LP_ASSIGN_OR_RETURN(std::string hex, f.String(key));
  if (!store::ParseHash(hex).ok()) {
    return Bad(f.Path(key), Json(hex), "64 hex digits");
  }
  return hex;
}

absl::StatusOr<Failure> ReadFailure(const Fields& f) {
  Failure x;
  LP_ASSIGN_OR_RETURN(x.request_id, f.String("request_id"));
  LP_ASSIGN_OR_RETURN(x.prover_id, f.String("prover_id"));
  LP_ASSIGN_OR_RETURN(x.model_digest, f.String("model_digest"));
  LP_ASSIGN_OR_RETURN(x.outcome, f.String("outcome"));
  LP_ASSIGN_OR_RETURN(x.detail, f.String("detail"));
  LP_ASSIGN_OR_RETURN(x.layer, f.OptionalCount("layer"));
  LP_ASSIGN_OR_RETURN(x.verdict_leaf_index, f.Count("verdict_leaf_index"));
  LP_ASSIGN_OR_RETURN(x.commitment_leaf_index,
                      f.OptionalCount("commitment_leaf_index"));
  LP_ASSIGN_OR_RETURN(x.created_at, f.Count("created_at_unix_nanos"));
  LP_ASSIGN_OR_RETURN(x.on_demand, f.Bool("on_demand"));
  LP_ASSIGN_OR_RETURN(Fields e, f.Object("evidence"));
  LP_ASSIGN_OR_RETURN(x.evidence_rpc, e.String("rpc"));
  LP_ASSIGN_OR_RETURN(x.evidence_request_id, e.String("request_id"));
  LP_ASSIGN_OR_RETURN(x.evidence_verdict_leaf_index,
                      e.Count("verdict_leaf_index"));
  return x;
}
}  // namespace

absl::StatusOr<Report> ReadReport(const nlohmann::json& json) {
  absl::StatusOr<Report> result = [&]() -> absl::StatusOr<Report> {
    LP_ASSIGN_OR_RETURN(Fields f, Fields::Of(json, ""));
    Report r;
    LP_ASSIGN_OR_RETURN(std::string format, f.String("format"));
    if (format != kFormat) return Bad("format", Json(format), kFormat);
    LP_ASSIGN_OR_RETURN(r.verifier_id, f.String("verifier_id"));
    LP_ASSIGN_OR_RETURN(r.log_origin, f.String("log_origin"));
    LP_ASSIGN_OR_RETURN(r.generated_at, f.String("generated_at"));
    LP_ASSIGN_OR_RETURN(r.generated_at_nanos,
                        f.Count("generated_at_unix_nanos"));
    LP_ASSIGN_OR_RETURN(r.prover_filter, f.String("prover_filter"));
    if (f.Find("client_nonce") != nullptr) {
      LP_ASSIGN_OR_RETURN(r.client_nonce, f.String("client_nonce"));
    }
    LP_ASSIGN_OR_RETURN(Fields window, f.Object("window"));
    LP_ASSIGN_OR_RETURN(r.window_from, window.String("from"));
    LP_ASSIGN_OR_RETURN(r.window_to, window.String("to"));
    LP_ASSIGN_OR_RETURN(r.window_from_nanos, window.Count("from_unix_nanos"));
    LP_ASSIGN_OR_RETURN(r.window_to_nanos, window.Count("to_unix_nanos"));
    LP_ASSIGN_OR_RETURN(Fields policy, f.Object("policy"));
    LP_ASSIGN_OR_RETURN(r.audit_rate, policy.Fraction("audit_rate"));
    LP_ASSIGN_OR_RETURN(r.layers_per_audit, policy.Count("layers_per_audit"));
    LP_ASSIGN_OR_RETURN(Fields checkpoint, f.Object("checkpoint"));
    LP_ASSIGN_OR_RETURN(r.tree_size, checkpoint.Count("tree_size"));
    LP_ASSIGN_OR_RETURN(r.root_hash, Hash(checkpoint, "root_hash"));
    LP_ASSIGN_OR_RETURN(r.note, checkpoint.String("note"));
    if (f.Find("previous_report") != nullptr) {
      LP_ASSIGN_OR_RETURN(Fields p, f.Object("previous_report"));
      Previous prev;
      // Null when the caller named the previous tree size (source "caller").
      LP_ASSIGN_OR_RETURN(prev.generated_at,
                          p.OptionalCount("generated_at_unix_nanos"));
      if (p.Find("source") != nullptr) {
        LP_ASSIGN_OR_RETURN(prev.source, p.String("source"));
        if (prev.source != "caller" && prev.source != "last_issued") {
          return Bad(p.Path("source"), *p.Find("source"),
                     "\"caller\" or \"last_issued\"");
        }
      }
      LP_ASSIGN_OR_RETURN(prev.tree_size, p.Count("tree_size"));
      LP_ASSIGN_OR_RETURN(prev.root_hash, Hash(p, "root_hash"));
      LP_ASSIGN_OR_RETURN(const Json* proof, p.Array("consistency_proof"));
      for (size_t i = 0; i < proof->size(); ++i) {
        const Json& h = (*proof)[i];
        const std::string path = Item(p.Path("consistency_proof"), i);
        if (!h.is_string() || !store::ParseHash(h.get<std::string>()).ok()) {
          return Bad(path, h, "64 hex digits");
        }
        prev.proof.push_back(h.get<std::string>());
      }
      r.previous = std::move(prev);
    }
    LP_ASSIGN_OR_RETURN(Fields totals, f.Object("totals"));
    LP_ASSIGN_OR_RETURN(r.totals, ReadCounts(totals, /*full=*/true));
    LP_ASSIGN_OR_RETURN(
        std::optional<int64_t> by_prover_clock,
        totals.OptionalCount("commitments_timed_by_prover_clock"));
    r.commitments_timed_by_prover_clock = by_prover_clock.value_or(0);
    LP_ASSIGN_OR_RETURN(const Json* by_prover, f.Array("by_prover"));
    for (size_t i = 0; i < by_prover->size(); ++i) {
      LP_ASSIGN_OR_RETURN(Fields p,
                          Fields::Of((*by_prover)[i], Item("by_prover", i)));
      Prover prover;
      LP_ASSIGN_OR_RETURN(prover.id, p.String("prover_id"));
      LP_ASSIGN_OR_RETURN(prover.counts, ReadCounts(p, /*full=*/true));
      LP_ASSIGN_OR_RETURN(prover.detection, ReadDetection(p));
      r.provers.push_back(std::move(prover));
    }
    LP_ASSIGN_OR_RETURN(const Json* by_model, f.Array("by_model"));
    for (size_t i = 0; i < by_model->size(); ++i) {
      LP_ASSIGN_OR_RETURN(Fields m,
                          Fields::Of((*by_model)[i], Item("by_model", i)));
      Model model;
      LP_ASSIGN_OR_RETURN(model.digest, m.String("model_digest"));
      LP_ASSIGN_OR_RETURN(model.counts, ReadCounts(m, /*full=*/false));
      r.models.push_back(std::move(model));
    }
    LP_ASSIGN_OR_RETURN(r.detection, ReadDetection(f));
    LP_ASSIGN_OR_RETURN(Fields timeline, f.Object("timeline"));
    LP_ASSIGN_OR_RETURN(r.bucket_nanos, timeline.Count("bucket_nanos"));
    LP_ASSIGN_OR_RETURN(const Json* buckets, timeline.Array("buckets"));
    for (size_t i = 0; i < buckets->size(); ++i) {
      LP_ASSIGN_OR_RETURN(
          Fields b, Fields::Of((*buckets)[i], Item("timeline.buckets", i)));
      int64_t start, pass, fail;
      LP_ASSIGN_OR_RETURN(start, b.Count("start_unix_nanos"));
      LP_ASSIGN_OR_RETURN(pass, b.Count("pass"));
      LP_ASSIGN_OR_RETURN(fail, b.Count("fail"));
      r.buckets.push_back({start, {pass, fail}});
    }
    LP_ASSIGN_OR_RETURN(const Json* failures, f.Array("failures"));
    for (size_t i = 0; i < failures->size(); ++i) {
      LP_ASSIGN_OR_RETURN(Fields x,
                          Fields::Of((*failures)[i], Item("failures", i)));
      LP_ASSIGN_OR_RETURN(Failure failure, ReadFailure(x));
      r.failures.push_back(std::move(failure));
    }
    LP_ASSIGN_OR_RETURN(r.failures_omitted, f.Count("failures_omitted"));
    return r;
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

}  // namespace layerproof::verifier::internal::report_view
