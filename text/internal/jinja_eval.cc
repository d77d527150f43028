#include "text/internal/jinja_eval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/internal/jinja_builtins.h"

namespace layerproof::text::internal::jinja {
namespace {

using kernels::OkStatus;

enum class Flow : uint8_t { kNormal, kBreak, kContinue };

std::optional<double> AsDouble(const Value& v) {
  if (v.kind == Value::Kind::kInt) return static_cast<double>(v.i);
  if (v.kind == Value::Kind::kFloat) return v.f;
  if (v.kind == Value::Kind::kBool) return v.b ? 1.0 : 0.0;
  return std::nullopt;
}
bool IsIntLike(const Value& v) {
  return v.kind == Value::Kind::kInt || v.kind == Value::Kind::kBool;
}
int64_t AsInt(const Value& v) { return v.kind == Value::Kind::kBool ? v.b : v.i; }

class Evaluator {
 public:
  Evaluator(const Value& globals, const RenderLimits& limits)
      : globals_(globals), builtins_(Globals()), limits_(limits) {
    scopes_.emplace_back();
  }

  // Setting an attribute is the only way a template changes an object
  // after creating it, so every reference cycle (`{% set ns.me = ns %}`)
  // passes through a namespace assigned to. Emptying those when the render
  // ends breaks every cycle, which reference counts alone would leak.
  ~Evaluator() {
    std::vector<std::shared_ptr<Dict>> alive;
    for (const auto& [raw, weak] : assigned_) {
      if (std::shared_ptr<Dict> ns = weak.lock())
        alive.push_back(std::move(ns));
    }
    for (const std::shared_ptr<Dict>& ns : alive) ns->clear();
  }
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  Status Run(const Body& body, Flow* flow) {
    for (const NodePtr& n : body) {
      LP_RETURN_IF_ERROR(Exec(*n, flow));
      if (*flow != Flow::kNormal) return OkStatus();
    }
    return OkStatus();
  }

  std::string& out() { return out_; }

 private:
  Status Emit(const std::string& s, int line) {
    out_ += s;
    if (out_.size() > limits_.max_output_bytes || out_.size() > kMaxValueBytes) {
      return ErrorAt(line, "output passes " +
                               std::to_string(limits_.max_output_bytes) + " bytes");
    }
    return OkStatus();
  }

  Status Exec(const Node& n, Flow* flow) {
    switch (n.kind) {
      case Node::Kind::kText:
        return Emit(n.text, n.line);
      case Node::Kind::kOutput: {
        LP_ASSIGN_OR_RETURN(Value v, Eval(*n.expr));
        return Emit(Str(v), n.line);
      }
      case Node::Kind::kIf:
        for (const auto& [cond, body] : n.branches) {
          bool take = cond == nullptr;
          if (!take) {
            LP_ASSIGN_OR_RETURN(Value c, Eval(*cond));
            take = Truthy(c);
          }
          if (take) return Run(body, flow);
        }
        return OkStatus();
      case Node::Kind::kSet: {
        LP_ASSIGN_OR_RETURN(Value v, Eval(*n.expr));
        if (n.targets.size() == 1) {
          scopes_.back()[n.targets[0]] = std::move(v);
          return OkStatus();
        }
        Value ns = Lookup(n.targets[0]);
        if (ns.kind != Value::Kind::kNamespace) {
          return ErrorAt(n.line, "cannot set an attribute of " + n.targets[0] +
                                     " (a " + TypeName(ns) + ", not a namespace)");
        }
        ns.Set(n.targets[1], std::move(v));
        RememberAssigned(ns);
        return OkStatus();
      }
      case Node::Kind::kFor:
        return ExecFor(n);
      case Node::Kind::kMacro: {
        const Node* macro = &n;
        scopes_.back()[n.targets[0]] = Value::Func(
            [this, macro](CallArgs& a) { return CallMacro(*macro, a); });
        return OkStatus();
      }
      case Node::Kind::kBreak:
        *flow = Flow::kBreak;
        return OkStatus();
      case Node::Kind::kContinue:
        *flow = Flow::kContinue;
        return OkStatus();
    }
    return OkStatus();
  }

  // A macro call: its parameters bound (positional, then keyword, then the
  // defaults, evaluated now; Undefined when none) in a scope that sees the
  // template's top level, not the caller's locals, as Jinja2's macros do;
  // the body renders into a string of its own.
  StatusOr<Value> CallMacro(const Node& m, CallArgs& a) {
    const std::string& name = m.targets[0];
    const size_t params = m.targets.size() - 1;
    if (a.positional.size() > params) {
      return ErrorAt(a.line, "macro '" + name + "' takes at most " + std::to_string(params) +
                                 " arguments, got " + std::to_string(a.positional.size()));
    }
    if (++macro_depth_ > kMaxMacroDepth) {
      --macro_depth_;
      return ErrorAt(a.line, "macros nested deeper than " + std::to_string(kMaxMacroDepth));
    }
    std::vector<std::map<std::string, Value>> saved;
    saved.swap(scopes_);
    scopes_.push_back(saved.front());
    scopes_.emplace_back();
    Status s = OkStatus();
    for (size_t k = 0; k < params && s.ok(); ++k) {
      const std::string& p = m.targets[k + 1];
      if (k < a.positional.size()) {
        scopes_.back()[p] = a.positional[k];
      } else if (const Value* v = a.Keyword(p)) {
        scopes_.back()[p] = *v;
      } else if (m.defaults[k] != nullptr) {
        StatusOr<Value> v = Eval(*m.defaults[k]);
        if (v.ok()) scopes_.back()[p] = *std::move(v);
        else s = v.status();
      } else {
        scopes_.back()[p] = Value::Undefined(p);
      }
    }
    for (const auto& [k, v] : a.keyword) {
      if (std::find(m.targets.begin() + 1, m.targets.end(), k) == m.targets.end() && s.ok()) {
        s = ErrorAt(a.line, "macro '" + name + "' has no parameter '" + k + "'");
      }
    }
    std::string rendered;
    if (s.ok()) {
      std::string outer;
      outer.swap(out_);
      Flow flow = Flow::kNormal;
      s = Run(m.body, &flow);
      rendered.swap(out_);
      out_.swap(outer);
    }
    scopes_.swap(saved);
    --macro_depth_;
    LP_RETURN_IF_ERROR(s);
    return Value::Str(std::move(rendered));
  }

  Status Bind(const std::vector<std::string>& targets, const Value& item, int line) {
    auto& scope = scopes_.back();
    if (targets.size() == 1) {
      scope[targets[0]] = item;
      return OkStatus();
    }
    if (!item.is_list() || item.list->size() != targets.size()) {
      return ErrorAt(line, "cannot unpack a " + std::string(TypeName(item)) + " into " +
                               std::to_string(targets.size()) + " loop variables");
    }
    for (size_t k = 0; k < targets.size(); ++k) scope[targets[k]] = (*item.list)[k];
    return OkStatus();
  }

  Status ExecFor(const Node& n) {
    LP_ASSIGN_OR_RETURN(Value seq, Eval(*n.expr));
    LP_ASSIGN_OR_RETURN(List items, Iterate(seq, n.line));
    scopes_.emplace_back();
    // The `if` filter runs before the loop, so loop.length counts only
    // what it keeps.
    if (n.filter != nullptr) {
      List kept;
      for (const Value& item : items) {
        LP_RETURN_IF_ERROR(Bind(n.targets, item, n.line));
        LP_ASSIGN_OR_RETURN(Value keep, Eval(*n.filter));
        if (Truthy(keep)) kept.push_back(item);
      }
      items = std::move(kept);
    }
    const auto count = static_cast<int64_t>(items.size());
    Status result = OkStatus();
    for (int64_t k = 0; k < count; ++k) {
      if (++iterations_ > limits_.max_iterations) {
        result = ErrorAt(n.line, "loops ran more than " +
                                     std::to_string(limits_.max_iterations) + " times");
        break;
      }
      Value loop = Value::MakeDict({
          {"index", Value::Int(k + 1)},
          {"index0", Value::Int(k)},
          {"revindex", Value::Int(count - k)},
          {"revindex0", Value::Int(count - k - 1)},
          {"first", Value::Bool(k == 0)},
          {"last", Value::Bool(k == count - 1)},
          {"length", Value::Int(count)},
          {"previtem", k > 0 ? items[k - 1] : Value::Undefined("previtem")},
          {"nextitem", k + 1 < count ? items[k + 1] : Value::Undefined("nextitem")},
      });
      scopes_.back()["loop"] = std::move(loop);
      result = Bind(n.targets, items[k], n.line);
      if (!result.ok()) break;
      Flow flow = Flow::kNormal;
      result = Run(n.body, &flow);
      if (!result.ok() || flow == Flow::kBreak) break;
    }
    if (result.ok() && count == 0 && !n.else_body.empty()) {
      Flow flow = Flow::kNormal;
      result = Run(n.else_body, &flow);
    }
    scopes_.pop_back();
    return result;
  }

  Value Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    if (const Value* v = globals_.Find(name)) return *v;
    if (const Value* v = builtins_.Find(name)) return *v;
    return Value::Undefined(name);
  }

  Status Args(const Expr& e, size_t first, CallArgs* args) {
    args->line = e.line;
    for (size_t k = first; k < e.args.size(); ++k) {
      LP_ASSIGN_OR_RETURN(Value v, Eval(*e.args[k]));
      args->positional.push_back(std::move(v));
    }
    for (const auto& [name, ex] : e.kwargs) {
      LP_ASSIGN_OR_RETURN(Value v, Eval(*ex));
      args->keyword.emplace_back(name, std::move(v));
    }
    return OkStatus();
  }

  StatusOr<Value> Eval(const Expr& e) {
    if (++depth_ > 256) return ErrorAt(e.line, "expression evaluation too deep");
    StatusOr<Value> v = EvalInner(e);
    --depth_;
    return v;
  }

  StatusOr<Value> EvalInner(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        return e.literal;
      case Expr::Kind::kName:
        return Lookup(e.name);
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        List l;
        for (const ExprPtr& a : e.args) {
          LP_ASSIGN_OR_RETURN(Value v, Eval(*a));
          l.push_back(std::move(v));
        }
        return Value::MakeList(std::move(l));
      }
      case Expr::Kind::kDict: {
        Value d = Value::MakeDict();
        for (const auto& [k, v] : e.pairs) {
          LP_ASSIGN_OR_RETURN(Value key, Eval(*k));
          if (!key.is_string()) return ErrorAt(e.line, "dict keys must be strings");
          LP_ASSIGN_OR_RETURN(Value val, Eval(*v));
          d.Set(key.s, std::move(val));
        }
        return d;
      }
      case Expr::Kind::kAttr: {
        LP_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
        return GetAttr(obj, e.name, e.line);
      }
      case Expr::Kind::kItem: {
        LP_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
        LP_ASSIGN_OR_RETURN(Value key, Eval(*e.args[1]));
        return GetItem(obj, key, e.line);
      }
      case Expr::Kind::kSlice: {
        LP_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
        Value parts[3] = {Value::None(), Value::None(), Value::None()};
        for (int k = 0; k < 3; ++k) {
          if (e.args[k + 1]) {
            LP_ASSIGN_OR_RETURN(parts[k], Eval(*e.args[k + 1]));
          }
        }
        return Slice(obj, parts[0], parts[1], parts[2], e.line);
      }
      case Expr::Kind::kCall: {
        LP_ASSIGN_OR_RETURN(Value fn, Eval(*e.args[0]));
        if (fn.kind != Value::Kind::kFunction) {
          const std::string what = e.args[0]->kind == Expr::Kind::kName
                                       ? e.args[0]->name
                                       : std::string("a ") + TypeName(fn);
          return ErrorAt(e.line, what + " is not callable" +
                                     (fn.is_undefined() ? " (undefined)" : ""));
        }
        CallArgs args;
        LP_RETURN_IF_ERROR(Args(e, 1, &args));
        LP_ASSIGN_OR_RETURN(Value r, (*fn.fn)(args));
        LP_RETURN_IF_ERROR(CheckSize(r, e.line));
        return r;
      }
      case Expr::Kind::kFilter: {
        LP_ASSIGN_OR_RETURN(Value target, Eval(*e.args[0]));
        CallArgs args;
        LP_RETURN_IF_ERROR(Args(e, 1, &args));
        LP_ASSIGN_OR_RETURN(Value r, ApplyFilter(e.name, target, args));
        LP_RETURN_IF_ERROR(CheckSize(r, e.line));
        return r;
      }
      case Expr::Kind::kTest: {
        LP_ASSIGN_OR_RETURN(Value target, Eval(*e.args[0]));
        CallArgs args;
        LP_RETURN_IF_ERROR(Args(e, 1, &args));
        LP_ASSIGN_OR_RETURN(bool r, ApplyTest(e.name, target, args));
        return Value::Bool(r != e.negated);
      }
      case Expr::Kind::kNot: {
        LP_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0]));
        return Value::Bool(!Truthy(v));
      }
      case Expr::Kind::kNeg: {
        LP_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0]));
        if (v.kind == Value::Kind::kInt) {
          if (v.i == INT64_MIN) return ErrorAt(e.line, "integer overflow");
          return Value::Int(-v.i);
        }
        if (v.kind == Value::Kind::kFloat) return Value::Float(-v.f);
        return ErrorAt(e.line, std::string("bad operand for unary -: ") + TypeName(v));
      }
      case Expr::Kind::kAnd: {
        LP_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        if (!Truthy(a)) return a;
        return Eval(*e.args[1]);
      }
      case Expr::Kind::kOr: {
        LP_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        if (Truthy(a)) return a;
        return Eval(*e.args[1]);
      }
      case Expr::Kind::kCond: {
        LP_ASSIGN_OR_RETURN(Value c, Eval(*e.args[0]));
        if (Truthy(c)) return Eval(*e.args[1]);
        if (!e.args[2]) return Value::Undefined("else branch");
        return Eval(*e.args[2]);
      }
      case Expr::Kind::kBinary: {
        LP_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        LP_ASSIGN_OR_RETURN(Value b, Eval(*e.args[1]));
        LP_ASSIGN_OR_RETURN(Value r, Binary(e.name, a, b, e.negated, e.line));
        LP_RETURN_IF_ERROR(CheckSize(r, e.line));
        return r;
      }
    }
    return ErrorAt(e.line, "unknown expression");
  }

  static StatusOr<Value> Binary(const std::string& op, const Value& a,
                                const Value& b, bool negated, int line) {
    auto bad = [&]() {
      return ErrorAt(line, "unsupported operand types for " + op + ": " +
                               TypeName(a) + " and " + TypeName(b));
    };
    if (op == "==") return Value::Bool(Equal(a, b));
    if (op == "!=") return Value::Bool(!Equal(a, b));
    if (op == "~") return Value::Str(Str(a) + Str(b));
    if (op == "in") {
      bool found = false;
      if (b.is_string()) {
        if (!a.is_string()) return bad();
        found = b.s.find(a.s) != std::string::npos;
      } else if (b.is_list()) {
        for (const Value& x : *b.list) found |= Equal(a, x);
      } else if (b.has_items()) {
        found = a.is_string() && b.Find(a.s) != nullptr;
      } else if (!b.is_undefined()) {
        return bad();
      }
      return Value::Bool(found != negated);
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      int cmp = 0;
      if (IsIntLike(a) && IsIntLike(b)) {
        cmp = AsInt(a) < AsInt(b) ? -1 : AsInt(a) > AsInt(b) ? 1 : 0;
      } else if (auto x = AsDouble(a), y = AsDouble(b); x && y) {
        cmp = *x < *y ? -1 : *x > *y ? 1 : 0;
      } else if (a.is_string() && b.is_string()) {
        cmp = a.s.compare(b.s);
      } else {
        return bad();
      }
      const bool r = op == "<" ? cmp < 0 : op == ">" ? cmp > 0 : op == "<=" ? cmp <= 0 : cmp >= 0;
      return Value::Bool(r);
    }
    if (op == "+") {
      if (a.is_string() && b.is_string()) return Value::Str(a.s + b.s);
      if (a.is_list() && b.is_list()) {
        if (a.list->size() + b.list->size() > kMaxListItems) {
          return ErrorAt(line, "a list passes " + std::to_string(kMaxListItems) + " items");
        }
        List l = *a.list;
        l.insert(l.end(), b.list->begin(), b.list->end());
        return Value::MakeList(std::move(l));
      }
    }
    if (op == "*") {
      const Value* text = a.is_string() ? &a : b.is_string() ? &b : nullptr;
      const Value* times = a.is_string() ? &b : &a;
      if (text != nullptr && IsIntLike(*times)) {
        const int64_t n = AsInt(*times);
        if (text->s.empty() || n <= 0) return Value::Str("");
        if (static_cast<uint64_t>(n) > kMaxValueBytes / text->s.size()) {
          return ErrorAt(line, "string repetition too long");
        }
        std::string r;
        for (int64_t k = 0; k < n; ++k) r += text->s;
        return Value::Str(std::move(r));
      }
    }
    const auto x = AsDouble(a), y = AsDouble(b);
    if (!x || !y) return bad();
    if (IsIntLike(a) && IsIntLike(b) && op != "/" && op != "**") {
      const int64_t p = AsInt(a), q = AsInt(b);
      int64_t r = 0;
      if (op == "+") {
        if (__builtin_add_overflow(p, q, &r)) return ErrorAt(line, "integer overflow");
      } else if (op == "-") {
        if (__builtin_sub_overflow(p, q, &r)) return ErrorAt(line, "integer overflow");
      } else if (op == "*") {
        if (__builtin_mul_overflow(p, q, &r)) return ErrorAt(line, "integer overflow");
      } else if (op == "//" || op == "%") {
        if (q == 0) return ErrorAt(line, "integer division or modulo by zero");
        if (p == INT64_MIN && q == -1) return ErrorAt(line, "integer overflow");
        int64_t d = p / q, m = p % q;
        if (m != 0 && ((m < 0) != (q < 0))) {  // Python floors.
          d -= 1;
          m += q;
        }
        r = op == "//" ? d : m;
      } else {
        return bad();
      }
      return Value::Int(r);
    }
    if (op == "+") return Value::Float(*x + *y);
    if (op == "-") return Value::Float(*x - *y);
    if (op == "*") return Value::Float(*x * *y);
    if (op == "/" || op == "//" || op == "%") {
      if (*y == 0) return ErrorAt(line, "division by zero");
      if (op == "/") return Value::Float(*x / *y);
      const double d = std::floor(*x / *y);
      return Value::Float(op == "//" ? d : *x - d * *y);
    }
    if (op == "**") {
      if (IsIntLike(a) && IsIntLike(b) && AsInt(b) >= 0) {
        // Exponentiation by squaring: O(log exponent).
        int64_t r = 1, base = AsInt(a);
        for (int64_t k = AsInt(b); k > 0; k >>= 1) {
          if ((k & 1) && __builtin_mul_overflow(r, base, &r)) {
            return ErrorAt(line, "integer overflow");
          }
          if (k > 1 && __builtin_mul_overflow(base, base, &base)) {
            if (base == 0 || r == 0) break;
            return ErrorAt(line, "integer overflow");
          }
        }
        return Value::Int(r);
      }
      return Value::Float(std::pow(*x, *y));
    }
    return bad();
  }

  // Keyed by address: a dead namespace's entry is replaced by the live one
  // that reuses its address, so the map stays as small as the namespaces
  // alive at once.
  void RememberAssigned(const Value& ns) {
    std::weak_ptr<Dict>& entry = assigned_[ns.dict.get()];
    if (entry.lock() != ns.dict) entry = ns.dict;
  }

  const Value& globals_;
  Value builtins_;
  std::unordered_map<const Dict*, std::weak_ptr<Dict>> assigned_;
  RenderLimits limits_;
  std::vector<std::map<std::string, Value>> scopes_;
  std::string out_;
  int64_t iterations_ = 0;
  int depth_ = 0;
  int macro_depth_ = 0;
  static constexpr int kMaxMacroDepth = 32;
};

}  // namespace

StatusOr<std::string> Render(const Body& body, const Value& globals,
                             std::string_view file, const RenderLimits& limits) {
  Evaluator ev(globals, limits);
  Flow flow = Flow::kNormal;
  Status s = ev.Run(body, &flow);
  if (!s.ok()) {
    return kernels::Status(s.code(), std::string(file) + ": " + s.message());
  }
  return std::move(ev.out());
}

}  // namespace layerproof::text::internal::jinja
