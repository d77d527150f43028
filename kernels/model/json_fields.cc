#include "kernels/model/json_fields.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <vector>

#include "kernels/model/internal/errors.h"
#include "kernels/printable.h"

namespace layerproof::kernels::model::internal {
namespace {

// nlohmann's what() starts with "[json.exception.parse_error.101] " and
// may quote the input it "last read", raw: made Printable.
std::string ParserMessage(const char* what) {
  std::string m(what);
  if (!m.empty() && m[0] == '[') {
    const size_t close = m.find("] ");
    if (close != std::string::npos) m.erase(0, close + 2);
  }
  return Printable(m);
}

std::string FormatDouble(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", d);
  return buf;
}

}  // namespace

StatusOr<Json> ParseJson(std::string_view text, std::string_view where) {
  // One key set per open object; the callback only records the first
  // duplicate, as it must not throw through the parser.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open_objects.empty() && parsed.is_string() &&
            !open_objects.back().insert(parsed.get<std::string>()).second &&
            duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string(where) +
                           ": bad JSON: " + ParserMessage(e.what()));
  }
  if (!duplicate.empty()) {
    return InvalidArgument(std::string(where) + ": bad JSON: duplicate key " +
                           DescribeJson(Json(duplicate)));
  }
  return j;
}

std::string DescribeJson(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  constexpr size_t kMax = 60;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

std::optional<int64_t> JsonInt(const Json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return int64_t(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

const Json* FieldReader::Find(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string FieldReader::Where(std::string_view key) const {
  return where_ + ": " + std::string(key);
}

Status FieldReader::Error(std::string_view key, const Json& got,
                          std::string_view want) const {
  return InvalidArgument(GotWant(Where(key), DescribeJson(got), want));
}

StatusOr<int64_t> FieldReader::RequiredInt(std::string_view key, int64_t lo,
                                           int64_t hi) const {
  LP_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(key, lo, hi));
  if (!v) {
    return InvalidArgument(Where(key) + ": missing, want an integer in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) +
                           "]");
  }
  return *v;
}

StatusOr<std::optional<int64_t>> FieldReader::OptionalInt(std::string_view key,
                                                          int64_t lo,
                                                          int64_t hi) const {
  const Json* j = Find(key);
  if (j == nullptr) return std::optional<int64_t>();
  const std::optional<int64_t> v = JsonInt(*j);
  if (!v || *v < lo || *v > hi) {
    return Error(key, *j,
                 "an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  }
  return v;
}

StatusOr<std::optional<double>> FieldReader::OptionalNumber(
    std::string_view key, double lo, double hi) const {
  const Json* j = Find(key);
  if (j == nullptr) return std::optional<double>();
  if (j->is_number()) {
    const double d = j->get<double>();
    if (std::isfinite(d) && d > lo && d < hi) return std::optional<double>(d);
  }
  return Error(
      key, *j,
      "a number in (" + FormatDouble(lo) + ", " + FormatDouble(hi) + ")");
}

StatusOr<std::optional<bool>> FieldReader::OptionalBool(
    std::string_view key) const {
  const Json* j = Find(key);
  if (j == nullptr) return std::optional<bool>();
  if (!j->is_boolean()) return Error(key, *j, "true or false");
  return std::optional<bool>(j->get<bool>());
}

StatusOr<std::optional<std::string>> FieldReader::OptionalString(
    std::string_view key) const {
  const Json* j = Find(key);
  if (j == nullptr) return std::optional<std::string>();
  if (!j->is_string()) return Error(key, *j, "a string");
  return std::optional<std::string>(j->get<std::string>());
}

}  // namespace layerproof::kernels::model::internal
