#include "text/internal/jinja_builtins.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "text/internal/regex.h"
#include "text/internal/unicode.h"

namespace layerproof::text::internal::jinja {
namespace {

using kernels::OkStatus;

constexpr int64_t kMaxRange = 100000;

// The code points of valid UTF-8 `s`, each as its UTF-8 bytes.
std::vector<std::string> Chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t pos = 0, len = 0; pos < s.size(); pos += len) {
    DecodeUtf8(s, pos, &len);
    out.push_back(s.substr(pos, len));
  }
  return out;
}

// Python's str.isspace() for one code point.
bool PySpace(char32_t c) {
  return IsWhiteSpace(c) || (c >= 0x1C && c <= 0x1F);
}

std::string Lower(std::string s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

Status NeedArgs(const CallArgs& a, size_t lo, size_t hi, const std::string& what) {
  if (a.positional.size() < lo || a.positional.size() > hi) {
    return ErrorAt(a.line, what + " takes " +
                               (lo == hi ? std::to_string(lo)
                                         : std::to_string(lo) + " to " + std::to_string(hi)) +
                               " arguments, got " + std::to_string(a.positional.size()));
  }
  return OkStatus();
}

// The argument at `k`, else the keyword `name`, else `fallback`.
Value Arg(const CallArgs& a, size_t k, const char* name, Value fallback) {
  if (k < a.positional.size()) return a.positional[k];
  if (const Value* v = a.Keyword(name)) return *v;
  return fallback;
}

StatusOr<Value> StrMethod(const std::string& s, const std::string& name,
                          CallArgs& a) {
  if (name == "startswith" || name == "endswith") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 1, 1, name));
    const Value& p = a.positional[0];
    std::vector<std::string> options;
    if (p.is_string()) options.push_back(p.s);
    else if (p.is_list()) {
      for (const Value& x : *p.list) {
        if (!x.is_string()) return ErrorAt(a.line, name + ": want str or tuple of str");
        options.push_back(x.s);
      }
    } else {
      return ErrorAt(a.line, name + ": want str or tuple of str");
    }
    for (const std::string& o : options) {
      if (o.size() > s.size()) continue;
      if (name == "startswith" ? s.compare(0, o.size(), o) == 0
                               : s.compare(s.size() - o.size(), o.size(), o) == 0) {
        return Value::Bool(true);
      }
    }
    return Value::Bool(false);
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 0, 1, name));
    const Value chars = Arg(a, 0, "chars", Value::None());
    if (!chars.is_none() && !chars.is_string()) return ErrorAt(a.line, name + ": want str");
    return Value::Str(Strip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 0, 2, name));
    const Value sep = Arg(a, 0, "sep", Value::None());
    const Value max = Arg(a, 1, "maxsplit", Value::Int(-1));
    if (max.kind != Value::Kind::kInt) return ErrorAt(a.line, "split: maxsplit must be an int");
    List parts;
    int64_t left = max.i;
    if (sep.is_none()) {
      // Runs of white space separate; none at the ends.
      const std::vector<std::string> cs = Chars(s);
      std::string cur;
      bool in_word = false;
      size_t k = 0;
      for (; k < cs.size(); ++k) {
        size_t len = 0;
        const bool sp = PySpace(DecodeUtf8(cs[k], 0, &len));
        if (sp && in_word) {
          parts.push_back(Value::Str(cur));
          cur.clear();
          in_word = false;
          if (left > 0 && --left == 0) {
            ++k;
            while (k < cs.size() && PySpace(DecodeUtf8(cs[k], 0, &len))) ++k;
            std::string rest;
            for (; k < cs.size(); ++k) rest += cs[k];
            if (!rest.empty()) parts.push_back(Value::Str(rest));
            return Value::MakeList(std::move(parts));
          }
        } else if (!sp) {
          cur += cs[k];
          in_word = true;
        }
      }
      if (in_word) parts.push_back(Value::Str(cur));
      return Value::MakeList(std::move(parts));
    }
    if (!sep.is_string()) return ErrorAt(a.line, "split: sep must be a str");
    if (sep.s.empty()) return ErrorAt(a.line, "split: empty separator");
    size_t pos = 0;
    for (size_t hit; left != 0 && (hit = s.find(sep.s, pos)) != std::string::npos;
         pos = hit + sep.s.size()) {
      parts.push_back(Value::Str(s.substr(pos, hit - pos)));
      if (left > 0) --left;
    }
    parts.push_back(Value::Str(s.substr(pos)));
    return Value::MakeList(std::move(parts));
  }
  if (name == "upper" || name == "lower") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 0, 0, name));
    return Value::Str(Lower(s, name == "upper"));
  }
  if (name == "capitalize" || name == "title") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 0, 0, name));
    std::string r = Lower(s, false);
    bool start = true;
    for (char& c : r) {
      const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      if (start && alpha) c = static_cast<char>(c >= 'a' ? c - 32 : c);
      if (name == "capitalize") start = false;
      else start = !alpha;
    }
    return Value::Str(std::move(r));
  }
  if (name == "replace") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 2, 3, name));
    const Value& from = a.positional[0];
    const Value& to = a.positional[1];
    const Value count = Arg(a, 2, "count", Value::Int(-1));
    if (!from.is_string() || !to.is_string() || count.kind != Value::Kind::kInt) {
      return ErrorAt(a.line, "replace: want (str, str[, int])");
    }
    std::string r;
    int64_t left = count.i;
    if (from.s.empty()) return ErrorAt(a.line, "replace: empty pattern is not supported");
    size_t pos = 0;
    for (size_t hit; left != 0 && (hit = s.find(from.s, pos)) != std::string::npos;
         pos = hit + from.s.size()) {
      r += s.substr(pos, hit - pos) + to.s;
      if (r.size() > kMaxValueBytes) return ErrorAt(a.line, "replace: the result passes the size limit");
      if (left > 0) --left;
    }
    r += s.substr(pos);
    return Value::Str(std::move(r));
  }
  if (name == "find") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 1, 1, name));
    if (!a.positional[0].is_string()) return ErrorAt(a.line, "find: want a str");
    const size_t at = s.find(a.positional[0].s);
    if (at == std::string::npos) return Value::Int(-1);
    return Value::Int(static_cast<int64_t>(CountCodePoints(s.substr(0, at))));
  }
  if (name == "join") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 1, 1, name));
    LP_ASSIGN_OR_RETURN(List items, Iterate(a.positional[0], a.line));
    std::string r;
    for (size_t k = 0; k < items.size(); ++k) {
      if (!items[k].is_string()) return ErrorAt(a.line, "join: items must be str");
      if (k > 0) r += s;
      r += items[k].s;
      if (r.size() > kMaxValueBytes) return ErrorAt(a.line, "join: the result passes the size limit");
    }
    return Value::Str(std::move(r));
  }
  return ErrorAt(a.line, "str has no method " + name);
}

StatusOr<Value> DictMethod(const Value& d, const std::string& name, CallArgs& a) {
  if (name == "items" || name == "keys" || name == "values") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 0, 0, name));
    List l;
    for (const auto& [k, v] : *d.dict) {
      if (name == "items") l.push_back(Value::MakeList({Value::Str(k), v}));
      else if (name == "keys") l.push_back(Value::Str(k));
      else l.push_back(v);
    }
    return Value::MakeList(std::move(l));
  }
  if (name == "get") {
    LP_RETURN_IF_ERROR(NeedArgs(a, 1, 2, name));
    if (!a.positional[0].is_string()) return Value::None();
    const Value* v = d.Find(a.positional[0].s);
    if (v != nullptr) return *v;
    return a.positional.size() > 1 ? a.positional[1] : Value::None();
  }
  return ErrorAt(a.line, "dict has no method " + name);
}

bool IsStrMethod(const std::string& n) {
  static const char* const kNames[] = {"startswith", "endswith", "strip", "lstrip",
                                       "rstrip", "split", "upper", "lower",
                                       "capitalize", "title", "replace", "find", "join"};
  return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

// The attribute `attr` of an item, for selectattr / map; dotted paths
// ("function.name") go one level at a time.
StatusOr<Value> Attribute(const Value& item, const std::string& attr, int line) {
  Value cur = item;
  size_t pos = 0;
  while (true) {
    const size_t dot = attr.find('.', pos);
    const std::string part = attr.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (cur.is_undefined()) return cur;
    LP_ASSIGN_OR_RETURN(cur, GetItem(cur, Value::Str(part), line));
    if (dot == std::string::npos) return cur;
    pos = dot + 1;
  }
}

int64_t Length(const Value& v) {
  if (v.is_string()) return static_cast<int64_t>(CountCodePoints(v.s));
  if (v.is_list()) return static_cast<int64_t>(v.list->size());
  if (v.has_items()) return static_cast<int64_t>(v.dict->size());
  return 0;
}

}  // namespace

Status ErrorAt(int line, const std::string& what) {
  return kernels::InvalidArgument("line " + std::to_string(line) + ": " + what);
}

Status CheckSize(const Value& v, int line) {
  if (v.is_string() && v.s.size() > kMaxValueBytes) {
    return ErrorAt(line, "a string passes " + std::to_string(kMaxValueBytes) + " bytes");
  }
  if (v.is_list() && v.list->size() > kMaxListItems) {
    return ErrorAt(line, "a list passes " + std::to_string(kMaxListItems) + " items");
  }
  return OkStatus();
}

std::string Strip(const std::string& s, const Value& chars, bool left, bool right) {
  const std::vector<std::string> cs = Chars(s);
  std::vector<std::string> set;
  if (chars.is_string()) set = Chars(chars.s);
  auto strip = [&](const std::string& c) {
    if (chars.is_string()) return std::find(set.begin(), set.end(), c) != set.end();
    size_t len = 0;
    return PySpace(DecodeUtf8(c, 0, &len));
  };
  size_t b = 0, e = cs.size();
  if (left) {
    while (b < e && strip(cs[b])) ++b;
  }
  if (right) {
    while (e > b && strip(cs[e - 1])) --e;
  }
  std::string out;
  for (size_t k = b; k < e; ++k) out += cs[k];
  return out;
}

StatusOr<List> Iterate(const Value& v, int line) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return List{};
    case Value::Kind::kList: return *v.list;
    case Value::Kind::kDict: {
      List keys;
      for (const auto& [k, x] : *v.dict) keys.push_back(Value::Str(k));
      return keys;
    }
    case Value::Kind::kString: {
      List chars;
      for (std::string& c : Chars(v.s)) chars.push_back(Value::Str(std::move(c)));
      return chars;
    }
    default:
      return ErrorAt(line, std::string("a ") + TypeName(v) + " is not iterable");
  }
}

StatusOr<Value> GetAttr(const Value& obj, const std::string& name, int line) {
  if (obj.is_undefined()) {
    return ErrorAt(line, (obj.name.empty() ? std::string("an undefined value")
                                           : "'" + obj.name + "' is undefined and") +
                             " has no attribute '" + name + "'");
  }
  if (obj.is_none()) return Value::Undefined(name);  // Jinja: undefined, not an error
  if (obj.is_string() && IsStrMethod(name)) {
    const std::string s = obj.s;
    return Value::Func([s, name](CallArgs& a) { return StrMethod(s, name, a); });
  }
  if (obj.is_mapping() && (name == "items" || name == "keys" || name == "values" || name == "get")) {
    const Value d = obj;
    return Value::Func([d, name](CallArgs& a) { return DictMethod(d, name, a); });
  }
  if (obj.has_items()) {
    if (const Value* v = obj.Find(name)) return *v;
  }
  return Value::Undefined(name);
}

StatusOr<Value> GetItem(const Value& obj, const Value& key, int line) {
  if (obj.is_undefined()) {
    return ErrorAt(line, (obj.name.empty() ? std::string("an undefined value")
                                           : "'" + obj.name + "' is undefined and") +
                             " cannot be indexed");
  }
  if (obj.is_none()) return Value::Undefined("item of None");
  if (obj.has_items() && key.is_string()) {
    if (const Value* v = obj.Find(key.s)) return *v;
    if (obj.is_mapping()) return GetAttr(obj, key.s, line);
    return Value::Undefined(key.s);
  }
  if ((obj.is_list() || obj.is_string()) && (key.kind == Value::Kind::kInt)) {
    const std::vector<std::string> cs = obj.is_string() ? Chars(obj.s) : std::vector<std::string>{};
    const auto n = static_cast<int64_t>(obj.is_list() ? obj.list->size() : cs.size());
    int64_t k = key.i < 0 ? key.i + n : key.i;
    if (k < 0 || k >= n) return Value::Undefined("index " + std::to_string(key.i));
    return obj.is_list() ? (*obj.list)[k] : Value::Str(cs[k]);
  }
  if (key.is_string()) return GetAttr(obj, key.s, line);
  return Value::Undefined("item");
}

StatusOr<Value> Slice(const Value& obj, const Value& start, const Value& stop,
                      const Value& step, int line) {
  if (!obj.is_list() && !obj.is_string()) {
    return ErrorAt(line, std::string("cannot slice a ") + TypeName(obj));
  }
  for (const Value* v : {&start, &stop, &step}) {
    if (!v->is_none() && v->kind != Value::Kind::kInt) return ErrorAt(line, "slice indices must be ints");
  }
  const std::vector<std::string> cs = obj.is_string() ? Chars(obj.s) : std::vector<std::string>{};
  const auto n = static_cast<int64_t>(obj.is_list() ? obj.list->size() : cs.size());
  const int64_t st = step.is_none() ? 1 : step.i;
  if (st == 0) return ErrorAt(line, "slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    int64_t x = v.i < 0 ? v.i + n : v.i;
    if (st > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t b = clamp(start, st > 0 ? 0 : n - 1);
  const int64_t e = clamp(stop, st > 0 ? n : -1);
  List items;
  std::string text;
  // The item count first, so a huge step cannot overflow the index.
  const int64_t span = st > 0 ? e - b : b - e;
  const uint64_t mag = st > 0 ? static_cast<uint64_t>(st) : uint64_t{0} - static_cast<uint64_t>(st);
  const int64_t count = span <= 0 ? 0 : static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / mag + 1);
  for (int64_t j = 0; j < count; ++j) {
    const int64_t k = static_cast<int64_t>(static_cast<uint64_t>(b) +
                                           static_cast<uint64_t>(j) * static_cast<uint64_t>(st));
    if (obj.is_list()) items.push_back((*obj.list)[k]);
    else text += cs[k];
  }
  return obj.is_list() ? Value::MakeList(std::move(items)) : Value::Str(std::move(text));
}

StatusOr<bool> ApplyTest(const std::string& name, const Value& v, CallArgs& a) {
  const Value* arg = a.positional.empty() ? nullptr : &a.positional[0];
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number() || v.kind == Value::Kind::kBool;
  if (name == "integer") return v.kind == Value::Kind::kInt;
  if (name == "float") return v.kind == Value::Kind::kFloat;
  if (name == "boolean") return v.kind == Value::Kind::kBool;
  if (name == "true") return v.kind == Value::Kind::kBool && v.b;
  if (name == "false") return v.kind == Value::Kind::kBool && !v.b;
  if (name == "mapping") return v.is_mapping();
  if (name == "iterable") return v.is_list() || v.is_string() || v.is_mapping();
  if (name == "sequence") return v.is_list() || v.is_string() || v.is_mapping();
  if (name == "callable") return v.kind == Value::Kind::kFunction;
  if (name == "lower" || name == "upper") {
    // Python's islower()/isupper(): at least one cased character (ASCII
    // here), and none of the other case.
    if (!v.is_string()) return false;
    bool cased = false;
    for (char c : v.s) cased |= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return cased && Lower(v.s, name == "upper") == v.s;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (v.kind != Value::Kind::kInt) return ErrorAt(a.line, name + ": want an int");
    if (name == "divisibleby") {
      if (arg == nullptr || arg->kind != Value::Kind::kInt || arg->i == 0) {
        return ErrorAt(a.line, "divisibleby: want a nonzero int");
      }
      return arg->i == -1 || v.i % arg->i == 0;  // INT64_MIN % -1 traps
    }
    return (v.i % 2 != 0) == (name == "odd");
  }
  static const char* const kCompare[][2] = {
      {"equalto", "=="}, {"eq", "=="}, {"==", "=="}, {"sameas", "=="},
      {"ne", "!="}, {"!=", "!="}, {"lt", "<"}, {"<", "<"}, {"le", "<="},
      {"<=", "<="}, {"gt", ">"}, {">", ">"}, {"ge", ">="}, {">=", ">="}};
  for (const auto& [test, op] : kCompare) {
    if (name != test) continue;
    if (arg == nullptr) return ErrorAt(a.line, name + " needs an argument");
    const std::string o = op;
    if (o == "==") return Equal(v, *arg);
    if (o == "!=") return !Equal(v, *arg);
    if (v.is_number() && arg->is_number()) {
      const double x = v.kind == Value::Kind::kInt ? v.i : v.f;
      const double y = arg->kind == Value::Kind::kInt ? arg->i : arg->f;
      return o == "<" ? x < y : o == "<=" ? x <= y : o == ">" ? x > y : x >= y;
    }
    if (v.is_string() && arg->is_string()) {
      const int c = v.s.compare(arg->s);
      return o == "<" ? c < 0 : o == "<=" ? c <= 0 : o == ">" ? c > 0 : c >= 0;
    }
    return ErrorAt(a.line, name + ": cannot compare a " + TypeName(v) + " and a " + TypeName(*arg));
  }
  if (name == "in") {
    if (arg == nullptr) return ErrorAt(a.line, "in needs an argument");
    if (arg->is_string()) return v.is_string() && arg->s.find(v.s) != std::string::npos;
    if (arg->is_list()) {
      for (const Value& x : *arg->list) {
        if (Equal(v, x)) return true;
      }
      return false;
    }
    if (arg->has_items()) return v.is_string() && arg->Find(v.s) != nullptr;
    return false;
  }
  return kernels::Status(kernels::StatusCode::kUnimplemented,
                         "line " + std::to_string(a.line) + ": the test '" + name +
                             "' is not supported");
}

StatusOr<Value> ApplyFilter(const std::string& name, const Value& v, CallArgs& a) {
  if (name == "tojson") {
    ToJsonOptions o;
    // transformers' tojson(x, ensure_ascii=False, indent=None,
    // separators=None, sort_keys=False): positional in that order.
    const Value indent = Arg(a, 1, "indent", Value::None());
    if (indent.kind == Value::Kind::kInt) o.indent = indent.i;
    else if (!indent.is_none()) return ErrorAt(a.line, "tojson: indent must be an int");
    if (o.indent && (*o.indent < 0 || *o.indent > 64)) return ErrorAt(a.line, "tojson: indent out of range");
    const Value sep_arg = Arg(a, 2, "separators", Value::None());
    if (const Value* s = sep_arg.is_none() ? nullptr : &sep_arg) {
      if (!s->is_list() || s->list->size() != 2 || !(*s->list)[0].is_string() ||
          !(*s->list)[1].is_string()) {
        return ErrorAt(a.line, "tojson: separators must be two strings");
      }
      o.separators = std::make_pair((*s->list)[0].s, (*s->list)[1].s);
    }
    o.sort_keys = Truthy(Arg(a, 3, "sort_keys", Value::Bool(false)));
    o.ensure_ascii = Truthy(Arg(a, 0, "ensure_ascii", Value::Bool(false)));
    LP_ASSIGN_OR_RETURN(std::string j, ToJson(v, o));
    return Value::Str(std::move(j));
  }
  if (name == "trim") {
    return Value::Str(Strip(Str(v), Arg(a, 0, "chars", Value::None()), true, true));
  }
  if (name == "length" || name == "count") return Value::Int(Length(v));
  if (name == "string") return Value::Str(Str(v));
  if (name == "safe") return v;
  if (name == "upper" || name == "lower") return Value::Str(Lower(Str(v), name == "upper"));
  if (name == "capitalize" || name == "title") {
    CallArgs none;
    none.line = a.line;
    return StrMethod(Str(v), name, none);
  }
  if (name == "replace") return StrMethod(Str(v), "replace", a);
  if (name == "list") {
    LP_ASSIGN_OR_RETURN(List items, Iterate(v, a.line));
    return Value::MakeList(std::move(items));
  }
  if (name == "first" || name == "last") {
    LP_ASSIGN_OR_RETURN(List items, Iterate(v, a.line));
    if (items.empty()) return Value::Undefined(name);
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (v.is_string()) {
      std::vector<std::string> cs = Chars(v.s);
      std::string r;
      for (auto it = cs.rbegin(); it != cs.rend(); ++it) r += *it;
      return Value::Str(std::move(r));
    }
    LP_ASSIGN_OR_RETURN(List items, Iterate(v, a.line));
    std::reverse(items.begin(), items.end());
    return Value::MakeList(std::move(items));
  }
  if (name == "join") {
    const Value sep = Arg(a, 0, "d", Value::Str(""));
    const Value attr = Arg(a, 1, "attribute", Value::None());
    LP_ASSIGN_OR_RETURN(List items, Iterate(v, a.line));
    std::string r;
    for (size_t k = 0; k < items.size(); ++k) {
      if (k > 0) r += Str(sep);
      Value item = items[k];
      if (attr.is_string()) {
        LP_ASSIGN_OR_RETURN(item, Attribute(item, attr.s, a.line));
      }
      r += Str(item);
      if (r.size() > kMaxValueBytes) return ErrorAt(a.line, "join: the result passes the size limit");
    }
    return Value::Str(std::move(r));
  }
  if (name == "default" || name == "d") {
    const Value fallback = Arg(a, 0, "default_value", Value::Str(""));
    const bool boolean = Truthy(Arg(a, 1, "boolean", Value::Bool(false)));
    if (v.is_undefined() || (boolean && !Truthy(v))) return fallback;
    return v;
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::MakeList();
    if (!v.is_mapping()) return ErrorAt(a.line, "items: want a dict");
    CallArgs none;
    none.line = a.line;
    return DictMethod(v, "items", none);
  }
  if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
    const bool by_attr = name == "selectattr" || name == "rejectattr";
    const bool keep_if = name == "selectattr" || name == "select";
    if (by_attr && (a.positional.empty() || !a.positional[0].is_string())) {
      return ErrorAt(a.line, name + " needs an attribute name");
    }
    const size_t test_at = by_attr ? 1 : 0;
    LP_ASSIGN_OR_RETURN(List items, Iterate(v, a.line));
    List kept;
    for (const Value& item : items) {
      Value subject = item;
      if (by_attr) {
        LP_ASSIGN_OR_RETURN(subject, Attribute(item, a.positional[0].s, a.line));
      }
      bool pass;
      if (a.positional.size() <= test_at) {
        pass = Truthy(subject);
      } else {
        if (!a.positional[test_at].is_string()) return ErrorAt(a.line, name + ": the test must be a name");
        CallArgs targs;
        targs.line = a.line;
        targs.positional.assign(a.positional.begin() + test_at + 1, a.positional.end());
        LP_ASSIGN_OR_RETURN(pass, ApplyTest(a.positional[test_at].s, subject, targs));
      }
      if (pass == keep_if) kept.push_back(item);
    }
    return Value::MakeList(std::move(kept));
  }
  if (name == "map") {
    LP_ASSIGN_OR_RETURN(List items, Iterate(v, a.line));
    List out;
    const Value* attr = a.Keyword("attribute");
    for (const Value& item : items) {
      if (attr != nullptr) {
        if (!attr->is_string()) return ErrorAt(a.line, "map: attribute must be a str");
        LP_ASSIGN_OR_RETURN(Value x, Attribute(item, attr->s, a.line));
        if (x.is_undefined()) {
          if (const Value* d = a.Keyword("default")) x = *d;
        }
        out.push_back(std::move(x));
      } else if (!a.positional.empty() && a.positional[0].is_string()) {
        CallArgs fargs;
        fargs.line = a.line;
        fargs.positional.assign(a.positional.begin() + 1, a.positional.end());
        LP_ASSIGN_OR_RETURN(Value x, ApplyFilter(a.positional[0].s, item, fargs));
        out.push_back(std::move(x));
      } else {
        return ErrorAt(a.line, "map needs attribute= or a filter name");
      }
    }
    return Value::MakeList(std::move(out));
  }
  if (name == "int") {
    if (v.kind == Value::Kind::kInt) return v;
    if (v.kind == Value::Kind::kFloat) {
      if (!(std::fabs(v.f) < 9.2e18)) return ErrorAt(a.line, "int: float out of range");
      return Value::Int(static_cast<int64_t>(v.f));
    }
    if (v.kind == Value::Kind::kBool) return Value::Int(v.b);
    if (v.is_string()) {
      try {
        size_t used = 0;
        const int64_t x = std::stoll(v.s, &used);
        if (used == v.s.size()) return Value::Int(x);
      } catch (...) {
      }
      try {  // Jinja falls back to int(float(value)).
        size_t used = 0;
        const double x = std::stod(v.s, &used);
        if (used == v.s.size() && std::fabs(x) < 9.2e18) {
          return Value::Int(static_cast<int64_t>(x));
        }
      } catch (...) {
      }
    }
    return Arg(a, 0, "default", Value::Int(0));
  }
  if (name == "abs") {
    if (v.kind == Value::Kind::kInt) {
      if (v.i == INT64_MIN) return ErrorAt(a.line, "abs: integer overflow");
      return Value::Int(v.i < 0 ? -v.i : v.i);
    }
    if (v.kind == Value::Kind::kFloat) return Value::Float(std::fabs(v.f));
    return ErrorAt(a.line, "abs: want a number");
  }
  if (name == "indent") {
    const Value width = Arg(a, 0, "width", Value::Int(4));
    const bool first = Truthy(Arg(a, 1, "first", Value::Bool(false)));
    const bool blank = Truthy(Arg(a, 2, "blank", Value::Bool(false)));
    if (width.kind != Value::Kind::kInt || width.i < 0 || width.i > 64) {
      return ErrorAt(a.line, "indent: width must be an int in [0, 64]");
    }
    const std::string pad(static_cast<size_t>(width.i), ' ');
    const std::string s = Str(v);
    std::string r;
    size_t pos = 0;
    bool first_line = true;
    while (true) {
      const size_t nl = s.find('\n', pos);
      const std::string line = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if ((first_line ? first : true) && (blank || !line.empty())) r += pad;
      r += line;
      if (nl == std::string::npos) break;
      r += '\n';
      pos = nl + 1;
      first_line = false;
    }
    return Value::Str(std::move(r));
  }
  return kernels::Status(kernels::StatusCode::kUnimplemented,
                         "line " + std::to_string(a.line) + ": the filter '" + name +
                             "' is not supported");
}

Value Globals() {
  Dict g;
  g.emplace_back("namespace", Value::Func([](CallArgs& a) -> StatusOr<Value> {
    Value ns = Value::Namespace();
    for (const Value& p : a.positional) {
      if (!p.is_mapping()) return ErrorAt(a.line, "namespace: positional arguments must be dicts");
      for (const auto& [k, v] : *p.dict) ns.Set(k, v);
    }
    for (const auto& [k, v] : a.keyword) ns.Set(k, v);
    return ns;
  }));
  g.emplace_back("dict", Value::Func([](CallArgs& a) -> StatusOr<Value> {
    if (!a.positional.empty()) return ErrorAt(a.line, "dict: only keyword arguments are supported");
    Value d = Value::MakeDict();
    for (const auto& [k, v] : a.keyword) d.Set(k, v);
    return d;
  }));
  g.emplace_back("raise_exception", Value::Func([](CallArgs& a) -> StatusOr<Value> {
    const std::string msg = a.positional.empty() ? "" : Str(a.positional[0]);
    return kernels::Status(kernels::StatusCode::kFailedPrecondition,
                           "line " + std::to_string(a.line) + ": the template refused the "
                           "messages: " + msg);
  }));
  g.emplace_back("range", Value::Func([](CallArgs& a) -> StatusOr<Value> {
    LP_RETURN_IF_ERROR(NeedArgs(a, 1, 3, "range"));
    for (const Value& p : a.positional) {
      if (p.kind != Value::Kind::kInt) return ErrorAt(a.line, "range: want ints");
    }
    int64_t start = 0, stop = 0, step = 1;
    if (a.positional.size() == 1) {
      stop = a.positional[0].i;
    } else {
      start = a.positional[0].i;
      stop = a.positional[1].i;
      if (a.positional.size() == 3) step = a.positional[2].i;
    }
    if (step == 0) return ErrorAt(a.line, "range: step must not be zero");
    List l;
    for (int64_t k = start; step > 0 ? k < stop : k > stop;) {
      if (static_cast<int64_t>(l.size()) >= kMaxRange) {
        return ErrorAt(a.line, "range longer than " + std::to_string(kMaxRange));
      }
      l.push_back(Value::Int(k));
      if (__builtin_add_overflow(k, step, &k)) break;
    }
    return Value::MakeList(std::move(l));
  }));
  return Value::MakeDict(std::move(g));
}

}  // namespace layerproof::text::internal::jinja
