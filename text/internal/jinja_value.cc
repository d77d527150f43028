#include "text/internal/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <utility>
#include <vector>

#include "text/internal/unicode.h"

namespace layerproof::text::internal::jinja {

namespace {

// Freeing a container frees what it holds, and a template can nest lists
// 10^6 deep (`{% set ns.x = [ns.x] %}` in a loop): freed recursively, that
// overflows the stack. So a container's items move to a per-thread queue
// and the outermost free empties it one value at a time.
struct FreeQueue {
  std::vector<Value> pending;
  bool draining = false;
};
thread_local FreeQueue free_queue;

bool HoldsContainer(const Value& v) { return v.list || v.dict || v.fn; }
Value& ItemOf(Value& v) { return v; }
Value& ItemOf(std::pair<std::string, Value>& kv) { return kv.second; }

template <typename Container>
void FreeContainer(Container* c) {
  FreeQueue& q = free_queue;
  for (auto& item : *c) {
    if (HoldsContainer(ItemOf(item)))
      q.pending.push_back(std::move(ItemOf(item)));
  }
  delete c;
  if (q.draining) return;
  q.draining = true;
  while (!q.pending.empty()) {
    Value v = std::move(q.pending.back());
    q.pending.pop_back();
  }  // Each v freed here queues its own items.
  q.draining = false;
}

}  // namespace

Value Value::Undefined(std::string what) {
  Value v;
  v.name = std::move(what);
  return v;
}
Value Value::None() {
  Value v;
  v.kind = Kind::kNone;
  return v;
}
Value Value::Bool(bool x) {
  Value v;
  v.kind = Kind::kBool;
  v.b = x;
  return v;
}
Value Value::Int(int64_t x) {
  Value v;
  v.kind = Kind::kInt;
  v.i = x;
  return v;
}
Value Value::Float(double x) {
  Value v;
  v.kind = Kind::kFloat;
  v.f = x;
  return v;
}
Value Value::Str(std::string x) {
  Value v;
  v.kind = Kind::kString;
  v.s = std::move(x);
  return v;
}
Value Value::MakeList(List x) {
  Value v;
  v.kind = Kind::kList;
  v.list = std::shared_ptr<List>(new List(std::move(x)), &FreeContainer<List>);
  return v;
}
Value Value::MakeDict(Dict x) {
  Value v;
  v.kind = Kind::kDict;
  v.dict = std::shared_ptr<Dict>(new Dict(std::move(x)), &FreeContainer<Dict>);
  return v;
}
Value Value::Namespace(Dict x) {
  Value v = MakeDict(std::move(x));
  v.kind = Kind::kNamespace;
  return v;
}
Value Value::Func(Function f) {
  Value v;
  v.kind = Kind::kFunction;
  v.fn = std::make_shared<Function>(std::move(f));
  return v;
}

const Value* Value::Find(const std::string& key) const {
  if (!has_items()) return nullptr;
  for (const auto& [k, v] : *dict) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Value::Set(const std::string& key, Value v) {
  for (auto& [k, old] : *dict) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  dict->emplace_back(key, std::move(v));
}

bool Truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return v.b;
    case Value::Kind::kInt: return v.i != 0;
    case Value::Kind::kFloat: return v.f != 0;
    case Value::Kind::kString: return !v.s.empty();
    case Value::Kind::kList: return !v.list->empty();
    case Value::Kind::kDict: return !v.dict->empty();
    case Value::Kind::kNamespace:
    case Value::Kind::kFunction: return true;
  }
  return false;
}

namespace {

// A number's value as a double, for mixed comparisons (bool counts as int).
std::optional<double> Numeric(const Value& v) {
  if (v.kind == Value::Kind::kInt) return static_cast<double>(v.i);
  if (v.kind == Value::Kind::kFloat) return v.f;
  if (v.kind == Value::Kind::kBool) return v.b ? 1.0 : 0.0;
  return std::nullopt;
}

// Python's float repr: the shortest digits that round-trip, in fixed
// notation when the decimal exponent is in [-4, 16), else d.ddde+XX.
std::string FloatRepr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  bool neg = false;
  if (!mant.empty() && mant[0] == '-') {
    neg = true;
    mant.erase(0, 1);
  }
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return neg ? "-" + out : out;
}

void JsonString(const std::string& s, bool ensure_ascii, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\n': out->append("\\n"); continue;
      case '\r': out->append("\\r"); continue;
      case '\t': out->append("\\t"); continue;
      case '\b': out->append("\\b"); continue;
      case '\f': out->append("\\f"); continue;
      default: break;
    }
    if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    } else if (c >= 0x80 && ensure_ascii) {
      // \uXXXX (surrogate pairs above the BMP), as
      // json.dumps(ensure_ascii=True); strings are valid UTF-8.
      size_t len = 0;
      uint32_t cp = DecodeUtf8(s, i, &len);
      i += len - 1;
      auto unit = [&](uint32_t u) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", u);
        out->append(b);
      };
      if (cp >= 0x10000) {
        cp -= 0x10000;
        unit(0xD800 + (cp >> 10));
        unit(0xDC00 + (cp & 0x3FF));
      } else {
        unit(cp);
      }
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

Status JsonValue(const Value& v, const ToJsonOptions& o, int depth,
                 std::string* out) {
  if (depth > kMaxPrintDepth) {
    return kernels::InvalidArgument("tojson: nested too deeply");
  }
  if (out->size() > kMaxValueBytes) {
    return kernels::InvalidArgument("tojson: the text passes " +
                                    std::to_string(kMaxValueBytes) + " bytes");
  }
  const std::string item_sep =
      o.separators ? o.separators->first : (o.indent ? "," : ", ");
  const std::string key_sep = o.separators ? o.separators->second : ": ";
  auto newline = [&](int d) {
    if (!o.indent) return;
    out->push_back('\n');
    out->append(static_cast<size_t>(*o.indent) * static_cast<size_t>(d), ' ');
  };
  switch (v.kind) {
    case Value::Kind::kNone: out->append("null"); return kernels::OkStatus();
    case Value::Kind::kBool: out->append(v.b ? "true" : "false"); return kernels::OkStatus();
    case Value::Kind::kInt: out->append(std::to_string(v.i)); return kernels::OkStatus();
    case Value::Kind::kFloat:
      if (std::isnan(v.f)) out->append("NaN");
      else if (std::isinf(v.f)) out->append(v.f < 0 ? "-Infinity" : "Infinity");
      else out->append(FloatRepr(v.f));
      return kernels::OkStatus();
    case Value::Kind::kString: JsonString(v.s, o.ensure_ascii, out); return kernels::OkStatus();
    case Value::Kind::kList: {
      out->push_back('[');
      if (!v.list->empty()) {
        for (size_t k = 0; k < v.list->size(); ++k) {
          if (k > 0) out->append(item_sep);
          newline(depth + 1);
          LP_RETURN_IF_ERROR(JsonValue((*v.list)[k], o, depth + 1, out));
        }
        newline(depth);
      }
      out->push_back(']');
      return kernels::OkStatus();
    }
    case Value::Kind::kDict:
    case Value::Kind::kNamespace: {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : *v.dict) entries.push_back(&e);
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](auto* a, auto* b) { return a->first < b->first; });
      }
      out->push_back('{');
      if (!entries.empty()) {
        for (size_t k = 0; k < entries.size(); ++k) {
          if (k > 0) out->append(item_sep);
          newline(depth + 1);
          JsonString(entries[k]->first, o.ensure_ascii, out);
          out->append(key_sep);
          LP_RETURN_IF_ERROR(JsonValue(entries[k]->second, o, depth + 1, out));
        }
        newline(depth);
      }
      out->push_back('}');
      return kernels::OkStatus();
    }
    case Value::Kind::kUndefined:
    case Value::Kind::kFunction:
      break;
  }
  return kernels::InvalidArgument(std::string("tojson: a ") + TypeName(v) +
                                  " value is not JSON serializable");
}

}  // namespace

namespace {

bool EqualAt(const Value& a, const Value& b, int depth) {
  const bool int_a = a.kind == Value::Kind::kInt || a.kind == Value::Kind::kBool;
  const bool int_b = b.kind == Value::Kind::kInt || b.kind == Value::Kind::kBool;
  if (int_a && int_b) {
    return (a.kind == Value::Kind::kBool ? a.b : a.i) == (b.kind == Value::Kind::kBool ? b.b : b.i);
  }
  if (auto x = Numeric(a), y = Numeric(b); x && y) return *x == *y;
  if (a.kind != b.kind) return false;
  // The same object is equal to itself; a namespace only to itself (Jinja2
  // defines no equality for it); past the print depth, unequal.
  if ((a.kind == Value::Kind::kList && a.list == b.list) ||
      ((a.kind == Value::Kind::kDict || a.kind == Value::Kind::kNamespace) && a.dict == b.dict)) {
    return true;
  }
  if (a.kind == Value::Kind::kNamespace || depth > kMaxPrintDepth) return false;
  switch (a.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.s == b.s;
    case Value::Kind::kList:
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k) {
        if (!EqualAt((*a.list)[k], (*b.list)[k], depth + 1)) return false;
      }
      return true;
    case Value::Kind::kDict:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [k, v] : *a.dict) {
        const Value* w = b.Find(k);
        if (w == nullptr || !EqualAt(v, *w, depth + 1)) return false;
      }
      return true;
    case Value::Kind::kFunction: return a.fn == b.fn;
    default: return false;
  }
}

}  // namespace

bool Equal(const Value& a, const Value& b) { return EqualAt(a, b, 0); }

namespace {

void AppendStr(const Value& v, bool repr, int depth, std::string* out);

void AppendRepr(const Value& v, int depth, std::string* out) {
  if (v.kind != Value::Kind::kString) {
    AppendStr(v, true, depth, out);
    return;
  }
  // Python picks single quotes unless the text has ' and no ".
  const bool dq = v.s.find('\'') != std::string::npos &&
                  v.s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  out->push_back(q);
  for (char c : v.s) {
    if (c == '\\') *out += "\\\\";
    else if (c == q) { out->push_back('\\'); out->push_back(c); }
    else if (c == '\n') *out += "\\n";
    else if (c == '\r') *out += "\\r";
    else if (c == '\t') *out += "\\t";
    else out->push_back(c);
  }
  out->push_back(q);
}

void AppendStr(const Value& v, bool repr, int depth, std::string* out) {
  if (out->size() > kMaxValueBytes) return;
  switch (v.kind) {
    case Value::Kind::kUndefined: return;
    case Value::Kind::kNone: *out += "None"; return;
    case Value::Kind::kBool: *out += v.b ? "True" : "False"; return;
    case Value::Kind::kInt: *out += std::to_string(v.i); return;
    case Value::Kind::kFloat: *out += FloatRepr(v.f); return;
    case Value::Kind::kString:
      if (repr) AppendRepr(v, depth, out);
      else *out += v.s;
      return;
    case Value::Kind::kFunction: *out += "<function>"; return;
    case Value::Kind::kList:
    case Value::Kind::kDict:
    case Value::Kind::kNamespace:
      break;
  }
  if (depth >= kMaxPrintDepth) {
    *out += "...";
    return;
  }
  if (v.kind == Value::Kind::kList) {
    out->push_back('[');
    for (size_t k = 0; k < v.list->size() && out->size() <= kMaxValueBytes; ++k) {
      if (k > 0) *out += ", ";
      AppendRepr((*v.list)[k], depth + 1, out);
    }
    out->push_back(']');
    return;
  }
  const bool ns = v.kind == Value::Kind::kNamespace;
  *out += ns ? "<Namespace {" : "{";
  for (size_t k = 0; k < v.dict->size() && out->size() <= kMaxValueBytes; ++k) {
    if (k > 0) *out += ", ";
    AppendRepr(Value::Str((*v.dict)[k].first), depth + 1, out);
    *out += ": ";
    AppendRepr((*v.dict)[k].second, depth + 1, out);
  }
  *out += ns ? "}>" : "}";
}

}  // namespace

std::string Repr(const Value& v) {
  std::string out;
  AppendRepr(v, 0, &out);
  return out;
}

std::string Str(const Value& v) {
  if (v.kind == Value::Kind::kString) return v.s;
  std::string out;
  AppendStr(v, false, 0, &out);
  return out;
}

const char* TypeName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return "undefined";
    case Value::Kind::kNone: return "none";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "str";
    case Value::Kind::kList: return "list";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kNamespace: return "namespace";
    case Value::Kind::kFunction: return "function";
  }
  return "?";
}

StatusOr<std::string> ToJson(const Value& v, const ToJsonOptions& options) {
  std::string out;
  LP_RETURN_IF_ERROR(JsonValue(v, options, 0, &out));
  return out;
}

namespace {

StatusOr<Value> FromJsonAt(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxPrintDepth) {
    return kernels::InvalidArgument("chat: the input nests deeper than " +
                                    std::to_string(kMaxPrintDepth));
  }
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::None();
    case nlohmann::ordered_json::value_t::boolean: return Value::Bool(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::Int(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::Int(static_cast<int64_t>(u));
      return Value::Float(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::Float(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::Str(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List l;
      for (const auto& x : j) {
        LP_ASSIGN_OR_RETURN(Value v, FromJsonAt(x, depth + 1));
        l.push_back(std::move(v));
      }
      return Value::MakeList(std::move(l));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) {
        LP_ASSIGN_OR_RETURN(Value v, FromJsonAt(it.value(), depth + 1));
        d.emplace_back(it.key(), std::move(v));
      }
      return Value::MakeDict(std::move(d));
    }
    default: return Value::None();
  }
}

}  // namespace

StatusOr<Value> FromJson(const nlohmann::ordered_json& j) { return FromJsonAt(j, 0); }

}  // namespace layerproof::text::internal::jinja
