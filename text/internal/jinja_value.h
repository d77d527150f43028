// The values of the chat-template interpreter: Python's None, bool, int,
// float, str, list and dict, Jinja's Undefined, namespace() objects and
// built-in functions, with Python's rules for truth, equality, str() and
// transformers' tojson (json.dumps with ensure_ascii=False).
//
// Lists, dicts and namespaces are shared by reference, as in Python, so
// `set ns.x = ...` inside a loop is seen after it.
//
// Thread safety: a Value is not synchronized; each render has its own.
#ifndef LAYERPROOF_TEXT_INTERNAL_JINJA_VALUE_H_
#define LAYERPROOF_TEXT_INTERNAL_JINJA_VALUE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/status.h"

namespace layerproof::text::internal::jinja {

using kernels::Status;
using kernels::StatusOr;

// No string a template builds may pass this, nor a list this many items,
// so doubling a value in a loop cannot exhaust memory before the output
// limit is reached; str() and tojson stop there too, and at this nesting
// depth (a namespace can hold itself).
inline constexpr size_t kMaxValueBytes = size_t{4} << 20;
inline constexpr size_t kMaxListItems = size_t{1} << 20;
inline constexpr int kMaxPrintDepth = 64;

struct Value;
using List = std::vector<Value>;
// Insertion-ordered, like Python's dict.
using Dict = std::vector<std::pair<std::string, Value>>;

struct CallArgs;
using Function = std::function<StatusOr<Value>(CallArgs&)>;

struct Value {
  enum class Kind : uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kNamespace,
    kFunction
  };
  Kind kind = Kind::kUndefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::shared_ptr<List> list;       // kList
  std::shared_ptr<Dict> dict;       // kDict, kNamespace
  std::shared_ptr<Function> fn;     // kFunction
  std::string name;                 // kUndefined: what was looked up

  static Value Undefined(std::string what = "");
  static Value None();
  static Value Bool(bool v);
  static Value Int(int64_t v);
  static Value Float(double v);
  static Value Str(std::string v);
  static Value MakeList(List v = {});
  static Value MakeDict(Dict v = {});
  static Value Namespace(Dict v = {});
  static Value Func(Function f);

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_none() const { return kind == Kind::kNone; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_mapping() const { return kind == Kind::kDict; }
  bool has_items() const { return kind == Kind::kDict || kind == Kind::kNamespace; }

  // The entry `key` of a dict or namespace, or nullptr.
  const Value* Find(const std::string& key) const;
  // Sets `key` in a dict or namespace (adds it at the end when new).
  void Set(const std::string& key, Value v);
};

// Python truth: None, False, 0, 0.0, "", [], {} and Undefined are false.
bool Truthy(const Value& v);
// Python ==, deep for lists and dicts (1 == 1.0 and True == 1 hold).
bool Equal(const Value& a, const Value& b);
// Python str(): None -> "None", True -> "True", floats as repr, lists and
// dicts as repr; Undefined -> "". Containers nested past kMaxPrintDepth
// print as "..."; the text stops once it passes kMaxValueBytes (callers
// then refuse it by its size).
std::string Str(const Value& v);
// Python repr() (strings quoted as Python quotes them).
std::string Repr(const Value& v);
// A type name for error messages: "str", "list", "undefined", ...
const char* TypeName(const Value& v);

struct ToJsonOptions {
  std::optional<int64_t> indent;
  std::optional<std::pair<std::string, std::string>> separators;
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(v, ...): transformers' tojson filter. Undefined and functions
// cannot be written (error).
StatusOr<std::string> ToJson(const Value& v, const ToJsonOptions& options);

// From nlohmann JSON (numbers: integers stay int, others float); nesting
// deeper than kMaxPrintDepth is InvalidArgument.
StatusOr<Value> FromJson(const nlohmann::ordered_json& j);

}  // namespace layerproof::text::internal::jinja

#endif  // LAYERPROOF_TEXT_INTERNAL_JINJA_VALUE_H_
