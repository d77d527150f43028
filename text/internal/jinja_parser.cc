// ParseTemplate(): template text to tags (with Jinja2's whitespace rules),
// tags to expression tokens, tokens to the tree of jinja_ast.h.
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/internal/jinja_ast.h"
#include "text/internal/unicode.h"

namespace layerproof::text::internal::jinja {
namespace {

using kernels::InvalidArgument;
using kernels::OkStatus;

constexpr int kMaxDepth = 64;   // Nested blocks and expressions.
constexpr int kMaxChain = 256;  // Links of one operator or postfix chain.
// Real templates are a few KiB with tags of tens of tokens; these bound the
// tree (and the recursion that frees it) whatever the input.
constexpr size_t kMaxTokensPerTag = 10000;
constexpr size_t kMaxTemplateBytes = size_t{1} << 20;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

// One piece of the template: text, or the inside of a tag.
struct Piece {
  enum class Kind : uint8_t { kText, kExpr, kStmt } kind;
  std::string text;
  int line;
};

class Errors {
 public:
  explicit Errors(std::string_view file) : file_(file) {}
  Status At(int line, const std::string& what) const {
    return InvalidArgument(file_ + ": line " + std::to_string(line) + ": " +
                           what);
  }
  Status Unsupported(int line, const std::string& what) const {
    return kernels::Status(kernels::StatusCode::kUnimplemented,
                           file_ + ": line " + std::to_string(line) + ": " +
                               what + " is not supported");
  }

 private:
  std::string file_;
};

// Splits the source into text and tags with transformers' Jinja settings:
// trim_blocks (the newline after a block or comment tag goes), lstrip_blocks
// (spaces and tabs before a block or comment tag on its line go), `-`
// inside a tag delimiter strips all white space on that side, newlines are
// \n, and one trailing newline is dropped.
StatusOr<std::vector<Piece>> Split(std::string source, const Errors& err) {
  std::string src;
  src.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      src.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      src.push_back(source[i]);
    }
  }
  if (!src.empty() && src.back() == '\n') src.pop_back();

  std::vector<Piece> out;
  size_t pos = 0;
  int line = 1;
  bool strip_next = false;  // The previous tag ended with `-`.
  auto lines_in = [](std::string_view s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  };
  while (pos <= src.size()) {
    size_t open = src.find('{', pos);
    while (open != std::string::npos && open + 1 < src.size() &&
           src[open + 1] != '{' && src[open + 1] != '%' && src[open + 1] != '#') {
      open = src.find('{', open + 1);
    }
    if (open != std::string::npos && open + 1 >= src.size()) open = std::string::npos;
    std::string text = src.substr(pos, open == std::string::npos ? std::string::npos
                                                                  : open - pos);
    const bool at_line_start = pos == 0 || src[pos - 1] == '\n';
    const int text_line = line;
    line += lines_in(text);
    if (strip_next) {
      size_t k = 0;
      while (k < text.size() && IsSpace(text[k])) ++k;
      text.erase(0, k);
    }
    if (open == std::string::npos) {
      if (!text.empty()) out.push_back({Piece::Kind::kText, text, text_line});
      break;
    }
    const char type = src[open + 1];
    const bool minus_left = open + 2 < src.size() && src[open + 2] == '-';
    if (open + 2 < src.size() && src[open + 2] == '+') {
      return err.Unsupported(line, "the `+` whitespace modifier");
    }
    if (minus_left) {
      while (!text.empty() && IsSpace(text.back())) text.pop_back();
    } else if (type != '{') {
      // lstrip_blocks: spaces and tabs from the line start to the tag.
      const size_t nl = text.rfind('\n');
      const size_t from = nl == std::string::npos ? 0 : nl + 1;
      if (nl != std::string::npos || at_line_start) {
        bool blank = true;
        for (size_t k = from; k < text.size(); ++k) {
          blank &= text[k] == ' ' || text[k] == '\t';
        }
        if (blank) text.erase(from);
      }
    }
    if (!text.empty()) out.push_back({Piece::Kind::kText, text, text_line});

    // Find the tag's end, outside string literals.
    const size_t body = open + 2 + (minus_left ? 1 : 0);
    const std::string close = type == '{' ? "}}" : type == '%' ? "%}" : "#}";
    size_t end = std::string::npos;
    if (type == '#') {
      end = src.find("#}", body);
    } else {
      char quote = 0;
      for (size_t k = body; k + 1 < src.size(); ++k) {
        const char c = src[k];
        if (quote != 0) {
          if (c == '\\') ++k;
          else if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == close[0] && src[k + 1] == close[1]) {
          end = k;
          break;
        }
      }
    }
    if (end == std::string::npos) {
      return err.At(line, std::string("unclosed ") + "{" + type + " tag");
    }
    bool minus_right = end > body && src[end - 1] == '-';
    std::string inside = src.substr(body, end - body - (minus_right ? 1 : 0));
    const int tag_line = line;
    line += lines_in(src.substr(open, end + 2 - open));
    if (type == '{') out.push_back({Piece::Kind::kExpr, inside, tag_line});
    if (type == '%') out.push_back({Piece::Kind::kStmt, inside, tag_line});
    pos = end + 2;
    strip_next = minus_right;
    // trim_blocks: the first newline after a block or comment tag.
    if (!minus_right && type != '{' && pos < src.size() && src[pos] == '\n') {
      ++pos;
      ++line;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Expression tokens.

struct Token {
  enum class Kind : uint8_t { kName, kInt, kFloat, kString, kOp, kEnd } kind;
  std::string text;  // name, operator, or the string's value
  int64_t i = 0;
  double f = 0;
};

Status Unescape(std::string_view raw, int line, const Errors& err,
                std::string* out) {
  for (size_t k = 0; k < raw.size(); ++k) {
    const char c = raw[k];
    if (c != '\\' || k + 1 >= raw.size()) {
      out->push_back(c);
      continue;
    }
    const char e = raw[++k];
    switch (e) {
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'r': out->push_back('\r'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'v': out->push_back('\v'); break;
      case '0': out->push_back('\0'); break;
      case '\\': out->push_back('\\'); break;
      case '\'': out->push_back('\''); break;
      case '"': out->push_back('"'); break;
      case '\n': break;  // A line continuation.
      case 'x': case 'u': case 'U': {
        const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t d = 1; d <= n; ++d) {
          if (k + d >= raw.size() || !std::isxdigit(static_cast<unsigned char>(raw[k + d]))) {
            return err.At(line, "bad \\" + std::string(1, e) + " escape");
          }
          cp = cp * 16 + static_cast<uint32_t>(std::stoi(std::string(1, raw[k + d]), nullptr, 16));
        }
        k += n;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          return err.At(line, "escape is not a Unicode scalar value");
        }
        AppendUtf8(cp, out);
        break;
      }
      default:  // Python keeps an unknown escape as written.
        out->push_back('\\');
        out->push_back(e);
    }
  }
  return OkStatus();
}

StatusOr<std::vector<Token>> Tokenize(std::string_view s, int line,
                                      const Errors& err) {
  static const char* const kOps[] = {"**", "//", "==", "!=", "<=", ">=", "+",
                                     "-",  "*",  "/",  "%",  "~",  "<",  ">",
                                     "=",  "(",  ")",  "[",  "]",  "{",  "}",
                                     ",",  ".",  ":",  "|"};
  std::vector<Token> out;
  size_t k = 0;
  while (k < s.size()) {
    const char c = s[k];
    if (IsSpace(c)) {
      ++k;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = k;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
      out.push_back({Token::Kind::kName, std::string(s.substr(k, e - k))});
      k = e;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t e = k;
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      bool is_float = false;
      if (e + 1 < s.size() && s[e] == '.' && std::isdigit(static_cast<unsigned char>(s[e + 1]))) {
        is_float = true;
        ++e;
        while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      }
      if (e < s.size() && (s[e] == 'e' || s[e] == 'E')) {
        size_t x = e + 1;
        if (x < s.size() && (s[x] == '+' || s[x] == '-')) ++x;
        if (x < s.size() && std::isdigit(static_cast<unsigned char>(s[x]))) {
          is_float = true;
          e = x;
          while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
        }
      }
      const std::string num(s.substr(k, e - k));
      Token t{is_float ? Token::Kind::kFloat : Token::Kind::kInt, num};
      try {
        if (is_float) t.f = std::stod(num);
        else t.i = std::stoll(num);
      } catch (...) {
        return err.At(line, "number " + num + " out of range");
      }
      out.push_back(std::move(t));
      k = e;
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t e = k + 1;
      while (e < s.size() && s[e] != c) e += s[e] == '\\' ? 2 : 1;
      if (e >= s.size()) return err.At(line, "unclosed string literal");
      Token t{Token::Kind::kString, ""};
      LP_RETURN_IF_ERROR(Unescape(s.substr(k + 1, e - k - 1), line, err, &t.text));
      out.push_back(std::move(t));
      k = e + 1;
      continue;
    }
    bool matched = false;
    for (const char* op : kOps) {
      const std::string_view o(op);
      if (s.substr(k, o.size()) == o) {
        out.push_back({Token::Kind::kOp, std::string(o)});
        k += o.size();
        matched = true;
        break;
      }
    }
    if (!matched) {
      return err.At(line, "unexpected character '" + std::string(1, c) + "'");
    }
  }
  if (out.size() > kMaxTokensPerTag) {
    return err.At(line, "a tag of more than " + std::to_string(kMaxTokensPerTag) + " tokens");
  }
  out.push_back({Token::Kind::kEnd, ""});
  return out;
}

// ---------------------------------------------------------------------------
// Expressions.

class ExprParser {
 public:
  ExprParser(std::vector<Token> tokens, int line, const Errors& err)
      : t_(std::move(tokens)), line_(line), err_(err) {}

  StatusOr<ExprPtr> Parse(bool allow_ternary = true) {
    if (++depth_ > kMaxDepth) return err_.At(line_, "expression nested too deeply");
    auto r = allow_ternary ? Ternary() : Or();
    --depth_;
    return r;
  }

  bool AtName(std::string_view n) const {
    return t_[p_].kind == Token::Kind::kName && t_[p_].text == n;
  }
  bool AtOp(std::string_view o) const {
    return t_[p_].kind == Token::Kind::kOp && t_[p_].text == o;
  }
  bool AtEnd() const { return t_[p_].kind == Token::Kind::kEnd; }
  const Token& Next() { return t_[p_++]; }
  Status Expect(std::string_view op) {
    if (!AtOp(op)) return err_.At(line_, "expected '" + std::string(op) + "', got " + Describe());
    ++p_;
    return OkStatus();
  }
  StatusOr<std::string> ExpectName() {
    if (t_[p_].kind != Token::Kind::kName) return err_.At(line_, "expected a name, got " + Describe());
    return t_[p_++].text;
  }
  Status ExpectEnd() {
    if (!AtEnd()) return err_.At(line_, "unexpected " + Describe());
    return OkStatus();
  }
  std::string Describe() const {
    const Token& t = t_[p_];
    if (t.kind == Token::Kind::kEnd) return "end of tag";
    if (t.kind == Token::Kind::kString) return "a string";
    return "'" + t.text + "'";
  }
  int line() const { return line_; }

 private:
  ExprPtr Make(Expr::Kind k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line_;
    return e;
  }

  StatusOr<ExprPtr> Ternary() {
    LP_ASSIGN_OR_RETURN(ExprPtr value, Or());
    if (!AtName("if")) return value;
    ++p_;
    LP_ASSIGN_OR_RETURN(ExprPtr cond, Or());
    ExprPtr other;
    if (AtName("else")) {
      ++p_;
      LP_ASSIGN_OR_RETURN(other, Parse());
    }
    ExprPtr e = Make(Expr::Kind::kCond);
    e->args.push_back(std::move(cond));
    e->args.push_back(std::move(value));
    e->args.push_back(std::move(other));
    return e;
  }

  StatusOr<ExprPtr> Or() {
    LP_ASSIGN_OR_RETURN(ExprPtr left, And());
    int chain = 0;
    while (AtName("or")) {
      LP_RETURN_IF_ERROR(Link(&chain));
      ++p_;
      LP_ASSIGN_OR_RETURN(ExprPtr right, And());
      ExprPtr e = Make(Expr::Kind::kOr);
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

  StatusOr<ExprPtr> And() {
    LP_ASSIGN_OR_RETURN(ExprPtr left, Not());
    int chain = 0;
    while (AtName("and")) {
      LP_RETURN_IF_ERROR(Link(&chain));
      ++p_;
      LP_ASSIGN_OR_RETURN(ExprPtr right, Not());
      ExprPtr e = Make(Expr::Kind::kAnd);
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

  StatusOr<ExprPtr> Not() {
    if (AtName("not")) {
      ++p_;
      if (++depth_ > kMaxDepth) return err_.At(line_, "expression nested too deeply");
      LP_ASSIGN_OR_RETURN(ExprPtr inner, Not());
      --depth_;
      ExprPtr e = Make(Expr::Kind::kNot);
      e->args.push_back(std::move(inner));
      return e;
    }
    return Compare();
  }

  StatusOr<ExprPtr> Compare() {
    LP_ASSIGN_OR_RETURN(ExprPtr left, Math1());
    int chain = 0;
    while (true) {
      LP_RETURN_IF_ERROR(Link(&chain));
      std::string op;
      bool negated = false;
      if (AtOp("==") || AtOp("!=") || AtOp("<") || AtOp(">") || AtOp("<=") || AtOp(">=")) {
        op = Next().text;
      } else if (AtName("in")) {
        ++p_;
        op = "in";
      } else if (AtName("not") && t_[p_ + 1].kind == Token::Kind::kName && t_[p_ + 1].text == "in") {
        p_ += 2;
        op = "in";
        negated = true;
      } else {
        break;
      }
      LP_ASSIGN_OR_RETURN(ExprPtr right, Math1());
      ExprPtr e = Make(Expr::Kind::kBinary);
      e->name = op;
      e->negated = negated;
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

  StatusOr<ExprPtr> Binary(std::initializer_list<std::string_view> ops,
                           StatusOr<ExprPtr> (ExprParser::*next)()) {
    LP_ASSIGN_OR_RETURN(ExprPtr left, (this->*next)());
    int chain = 0;
    while (true) {
      bool found = false;
      for (std::string_view op : ops) found |= AtOp(op);
      if (!found) return left;
      LP_RETURN_IF_ERROR(Link(&chain));
      const std::string op = Next().text;
      LP_ASSIGN_OR_RETURN(ExprPtr right, (this->*next)());
      ExprPtr e = Make(Expr::Kind::kBinary);
      e->name = op;
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
  }
  StatusOr<ExprPtr> Math1() { return Binary({"+", "-"}, &ExprParser::Concat); }
  StatusOr<ExprPtr> Concat() { return Binary({"~"}, &ExprParser::Math2); }
  StatusOr<ExprPtr> Math2() { return Binary({"*", "/", "//", "%"}, &ExprParser::Pow); }
  StatusOr<ExprPtr> Pow() { return Binary({"**"}, &ExprParser::Unary); }

  // As Jinja2's parse_unary: the operand of - or + takes no filters, and
  // the filters after it apply to the negation (-1|abs is 1).
  StatusOr<ExprPtr> Unary() { return UnaryWith(true); }
  StatusOr<ExprPtr> UnaryWith(bool with_filter) {
    ExprPtr e;
    if (AtOp("-") || AtOp("+")) {
      const bool neg = Next().text == "-";
      if (++depth_ > kMaxDepth) return err_.At(line_, "expression nested too deeply");
      LP_ASSIGN_OR_RETURN(ExprPtr inner, UnaryWith(false));
      --depth_;
      if (neg) {
        e = Make(Expr::Kind::kNeg);
        e->args.push_back(std::move(inner));
      } else {
        e = std::move(inner);
      }
    } else {
      LP_ASSIGN_OR_RETURN(e, Primary());
    }
    LP_ASSIGN_OR_RETURN(e, Postfix(std::move(e)));
    if (!with_filter) return e;
    return FilterExpr(std::move(e));
  }

  // Left-associative chains (a + b + ...) and postfix chains (a.b.c) grow
  // the tree one level per link: bounded like nesting, so that freeing the
  // tree cannot overflow the stack.
  Status Link(int* chain) {
    if (++*chain > kMaxChain) return err_.At(line_, "expression chain too long");
    return OkStatus();
  }

  Status Args(Expr* e) {
    LP_RETURN_IF_ERROR(Expect("("));
    while (!AtOp(")")) {
      if (t_[p_].kind == Token::Kind::kName && t_[p_ + 1].kind == Token::Kind::kOp &&
          t_[p_ + 1].text == "=") {
        std::string key = Next().text;
        ++p_;
        LP_ASSIGN_OR_RETURN(ExprPtr v, Parse());
        e->kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        if (!e->kwargs.empty()) return err_.At(line_, "positional argument after a keyword argument");
        LP_ASSIGN_OR_RETURN(ExprPtr v, Parse());
        e->args.push_back(std::move(v));
      }
      if (!AtOp(",")) break;
      ++p_;
    }
    return Expect(")");
  }

  StatusOr<ExprPtr> Postfix(ExprPtr e) {
    int chain = 0;
    while (true) {
      LP_RETURN_IF_ERROR(Link(&chain));
      if (AtOp(".")) {
        ++p_;
        LP_ASSIGN_OR_RETURN(std::string name, ExpectName());
        ExprPtr a = Make(Expr::Kind::kAttr);
        a->name = std::move(name);
        a->args.push_back(std::move(e));
        e = std::move(a);
      } else if (AtOp("[")) {
        ++p_;
        ExprPtr parts[3];
        bool slice = false;
        for (int k = 0; k < 3; ++k) {
          if (!AtOp(":") && !AtOp("]")) {
            LP_ASSIGN_OR_RETURN(parts[k], Parse());
          }
          if (k < 2 && AtOp(":")) {
            ++p_;
            slice = true;
          } else {
            break;
          }
        }
        LP_RETURN_IF_ERROR(Expect("]"));
        if (slice) {
          ExprPtr s = Make(Expr::Kind::kSlice);
          s->args.push_back(std::move(e));
          for (ExprPtr& p : parts) s->args.push_back(std::move(p));
          e = std::move(s);
        } else {
          if (!parts[0]) return err_.At(line_, "empty subscript");
          ExprPtr i = Make(Expr::Kind::kItem);
          i->args.push_back(std::move(e));
          i->args.push_back(std::move(parts[0]));
          e = std::move(i);
        }
      } else if (AtOp("(")) {
        ExprPtr c = Make(Expr::Kind::kCall);
        c->args.push_back(std::move(e));
        LP_RETURN_IF_ERROR(Args(c.get()));
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  StatusOr<ExprPtr> FilterExpr(ExprPtr e) {
    int chain = 0;
    while (true) {
      LP_RETURN_IF_ERROR(Link(&chain));
      if (AtOp("|")) {
        ++p_;
        LP_ASSIGN_OR_RETURN(std::string name, ExpectName());
        ExprPtr f = Make(Expr::Kind::kFilter);
        f->name = std::move(name);
        f->args.push_back(std::move(e));
        if (AtOp("(")) LP_RETURN_IF_ERROR(Args(f.get()));
        e = std::move(f);
      } else if (AtName("is")) {
        ++p_;
        ExprPtr t = Make(Expr::Kind::kTest);
        if (AtName("not")) {
          ++p_;
          t->negated = true;
        }
        LP_ASSIGN_OR_RETURN(t->name, ExpectName());
        t->args.push_back(std::move(e));
        if (AtOp("(")) {
          LP_RETURN_IF_ERROR(Args(t.get()));
        } else if (t_[p_].kind == Token::Kind::kString || t_[p_].kind == Token::Kind::kInt ||
                   t_[p_].kind == Token::Kind::kFloat ||
                   (t_[p_].kind == Token::Kind::kName && !AtName("and") && !AtName("or") &&
                    !AtName("if") && !AtName("else") && !AtName("not") && !AtName("in") &&
                    !AtName("is"))) {
          // A test's single argument without parentheses: `is equalto 3`.
          LP_ASSIGN_OR_RETURN(ExprPtr arg, Primary());
          LP_ASSIGN_OR_RETURN(arg, Postfix(std::move(arg)));
          t->args.push_back(std::move(arg));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  StatusOr<ExprPtr> Primary() {
    const Token& t = t_[p_];
    switch (t.kind) {
      case Token::Kind::kString: {
        ExprPtr e = Make(Expr::Kind::kLiteral);
        std::string s = Next().text;
        // Adjacent literals concatenate, as in Python.
        while (t_[p_].kind == Token::Kind::kString) s += Next().text;
        e->literal = Value::Str(std::move(s));
        return e;
      }
      case Token::Kind::kInt: {
        ExprPtr e = Make(Expr::Kind::kLiteral);
        e->literal = Value::Int(Next().i);
        return e;
      }
      case Token::Kind::kFloat: {
        ExprPtr e = Make(Expr::Kind::kLiteral);
        e->literal = Value::Float(Next().f);
        return e;
      }
      case Token::Kind::kName: {
        const std::string n = Next().text;
        ExprPtr e = Make(Expr::Kind::kLiteral);
        if (n == "true" || n == "True") e->literal = Value::Bool(true);
        else if (n == "false" || n == "False") e->literal = Value::Bool(false);
        else if (n == "none" || n == "None") e->literal = Value::None();
        else {
          e->kind = Expr::Kind::kName;
          e->name = n;
        }
        return e;
      }
      case Token::Kind::kOp:
        if (t.text == "(") {
          ++p_;
          if (AtOp(")")) {
            ++p_;
            return Make(Expr::Kind::kTuple);
          }
          LP_ASSIGN_OR_RETURN(ExprPtr first, Parse());
          if (!AtOp(",")) {
            LP_RETURN_IF_ERROR(Expect(")"));
            return first;
          }
          ExprPtr tuple = Make(Expr::Kind::kTuple);
          tuple->args.push_back(std::move(first));
          while (AtOp(",")) {
            ++p_;
            if (AtOp(")")) break;
            LP_ASSIGN_OR_RETURN(ExprPtr v, Parse());
            tuple->args.push_back(std::move(v));
          }
          LP_RETURN_IF_ERROR(Expect(")"));
          return tuple;
        }
        if (t.text == "[") {
          ++p_;
          ExprPtr list = Make(Expr::Kind::kList);
          while (!AtOp("]")) {
            LP_ASSIGN_OR_RETURN(ExprPtr v, Parse());
            list->args.push_back(std::move(v));
            if (!AtOp(",")) break;
            ++p_;
          }
          LP_RETURN_IF_ERROR(Expect("]"));
          return list;
        }
        if (t.text == "{") {
          ++p_;
          ExprPtr dict = Make(Expr::Kind::kDict);
          while (!AtOp("}")) {
            LP_ASSIGN_OR_RETURN(ExprPtr k, Parse());
            LP_RETURN_IF_ERROR(Expect(":"));
            LP_ASSIGN_OR_RETURN(ExprPtr v, Parse());
            dict->pairs.emplace_back(std::move(k), std::move(v));
            if (!AtOp(",")) break;
            ++p_;
          }
          LP_RETURN_IF_ERROR(Expect("}"));
          return dict;
        }
        break;
      default:
        break;
    }
    return err_.At(line_, "unexpected " + Describe());
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  int line_;
  const Errors& err_;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------
// Statements.

class Parser {
 public:
  Parser(std::vector<Piece> pieces, const Errors& err)
      : pieces_(std::move(pieces)), err_(err) {}

  // Parses until one of `stops` (a statement keyword) or the end; sets
  // *stop to the keyword found ("" at the end).
  Status ParseBody(Body* out, std::initializer_list<std::string_view> stops,
                   std::string* stop, ExprParser** stop_tag, int depth) {
    if (depth > kMaxDepth) return err_.At(Line(), "blocks nested too deeply");
    while (p_ < pieces_.size()) {
      Piece& piece = pieces_[p_++];
      if (piece.kind == Piece::Kind::kText) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::kText;
        n->line = piece.line;
        n->text = std::move(piece.text);
        out->push_back(std::move(n));
        continue;
      }
      LP_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(piece.text, piece.line, err_));
      current_ = std::make_unique<ExprParser>(std::move(tokens), piece.line, err_);
      ExprParser& ep = *current_;
      if (piece.kind == Piece::Kind::kExpr) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::kOutput;
        n->line = piece.line;
        LP_ASSIGN_OR_RETURN(n->expr, ep.Parse());
        LP_RETURN_IF_ERROR(ep.ExpectEnd());
        out->push_back(std::move(n));
        continue;
      }
      LP_ASSIGN_OR_RETURN(std::string keyword, ep.ExpectName());
      for (std::string_view s : stops) {
        if (keyword == s) {
          *stop = keyword;
          *stop_tag = current_.get();
          owned_.push_back(std::move(current_));
          return OkStatus();
        }
      }
      LP_RETURN_IF_ERROR(Statement(keyword, ep, piece.line, out, depth));
    }
    *stop = "";
    return OkStatus();
  }

  int Line() const {
    return p_ < pieces_.size() ? pieces_[p_].line : (pieces_.empty() ? 1 : pieces_.back().line);
  }

 private:
  Status Statement(const std::string& keyword, ExprParser& ep, int line, Body* out,
                   int depth) {
    auto n = std::make_unique<Node>();
    n->line = line;
    if (keyword == "if") {
      n->kind = Node::Kind::kIf;
      LP_ASSIGN_OR_RETURN(ExprPtr cond, ep.Parse());
      LP_RETURN_IF_ERROR(ep.ExpectEnd());
      while (true) {
        Body body;
        std::string stop;
        ExprParser* tag = nullptr;
        LP_RETURN_IF_ERROR(ParseBody(&body, {"elif", "else", "endif"}, &stop, &tag, depth + 1));
        if (stop.empty()) return err_.At(line, "{% if %} without {% endif %}");
        n->branches.emplace_back(std::move(cond), std::move(body));
        if (stop == "endif") {
          LP_RETURN_IF_ERROR(tag->ExpectEnd());
          break;
        }
        if (stop == "elif") {
          LP_ASSIGN_OR_RETURN(cond, tag->Parse());
          LP_RETURN_IF_ERROR(tag->ExpectEnd());
          continue;
        }
        LP_RETURN_IF_ERROR(tag->ExpectEnd());  // else
        Body else_body;
        LP_RETURN_IF_ERROR(ParseBody(&else_body, {"endif"}, &stop, &tag, depth + 1));
        if (stop.empty()) return err_.At(line, "{% if %} without {% endif %}");
        LP_RETURN_IF_ERROR(tag->ExpectEnd());
        n->branches.emplace_back(nullptr, std::move(else_body));
        break;
      }
    } else if (keyword == "for") {
      n->kind = Node::Kind::kFor;
      while (true) {
        LP_ASSIGN_OR_RETURN(std::string target, ep.ExpectName());
        n->targets.push_back(std::move(target));
        if (!ep.AtOp(",")) break;
        ep.Next();
      }
      if (!ep.AtName("in")) return err_.At(line, "expected 'in' in {% for %}");
      ep.Next();
      LP_ASSIGN_OR_RETURN(n->expr, ep.Parse(/*allow_ternary=*/false));
      if (ep.AtName("if")) {
        ep.Next();
        LP_ASSIGN_OR_RETURN(n->filter, ep.Parse(/*allow_ternary=*/false));
      }
      if (ep.AtName("recursive")) return err_.Unsupported(line, "a recursive loop");
      LP_RETURN_IF_ERROR(ep.ExpectEnd());
      std::string stop;
      ExprParser* tag = nullptr;
      LP_RETURN_IF_ERROR(ParseBody(&n->body, {"else", "endfor"}, &stop, &tag, depth + 1));
      if (stop.empty()) return err_.At(line, "{% for %} without {% endfor %}");
      LP_RETURN_IF_ERROR(tag->ExpectEnd());
      if (stop == "else") {
        LP_RETURN_IF_ERROR(ParseBody(&n->else_body, {"endfor"}, &stop, &tag, depth + 1));
        if (stop.empty()) return err_.At(line, "{% for %} without {% endfor %}");
        LP_RETURN_IF_ERROR(tag->ExpectEnd());
      }
    } else if (keyword == "set") {
      n->kind = Node::Kind::kSet;
      LP_ASSIGN_OR_RETURN(std::string target, ep.ExpectName());
      n->targets.push_back(std::move(target));
      if (ep.AtOp(".")) {
        ep.Next();
        LP_ASSIGN_OR_RETURN(std::string attr, ep.ExpectName());
        n->targets.push_back(std::move(attr));
      }
      if (ep.AtOp(",")) return err_.Unsupported(line, "{% set %} of several names");
      if (!ep.AtOp("=")) return err_.Unsupported(line, "a {% set %} block");
      ep.Next();
      LP_ASSIGN_OR_RETURN(n->expr, ep.Parse());
      LP_RETURN_IF_ERROR(ep.ExpectEnd());
    } else if (keyword == "macro") {
      n->kind = Node::Kind::kMacro;
      LP_ASSIGN_OR_RETURN(std::string name, ep.ExpectName());
      n->targets.push_back(std::move(name));
      LP_RETURN_IF_ERROR(ep.Expect("("));
      while (!ep.AtOp(")")) {
        LP_ASSIGN_OR_RETURN(std::string param, ep.ExpectName());
        n->targets.push_back(std::move(param));
        ExprPtr fallback;
        if (ep.AtOp("=")) {
          ep.Next();
          LP_ASSIGN_OR_RETURN(fallback, ep.Parse());
        }
        n->defaults.push_back(std::move(fallback));
        if (!ep.AtOp(",")) break;
        ep.Next();
      }
      LP_RETURN_IF_ERROR(ep.Expect(")"));
      LP_RETURN_IF_ERROR(ep.ExpectEnd());
      std::string stop;
      ExprParser* tag = nullptr;
      LP_RETURN_IF_ERROR(ParseBody(&n->body, {"endmacro"}, &stop, &tag, depth + 1));
      if (stop.empty()) return err_.At(line, "{% macro %} without {% endmacro %}");
      LP_RETURN_IF_ERROR(tag->ExpectEnd());
    } else if (keyword == "break" || keyword == "continue") {
      n->kind = keyword == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
      LP_RETURN_IF_ERROR(ep.ExpectEnd());
    } else if (keyword == "generation" || keyword == "endgeneration") {
      return OkStatus();  // transformers' assistant-mask markers: no output.
    } else {
      return err_.Unsupported(line, "{% " + keyword + " %}");
    }
    out->push_back(std::move(n));
    return OkStatus();
  }

  std::vector<Piece> pieces_;
  size_t p_ = 0;
  const Errors& err_;
  std::unique_ptr<ExprParser> current_;
  std::vector<std::unique_ptr<ExprParser>> owned_;
};

}  // namespace

StatusOr<Body> ParseTemplate(std::string_view source, std::string_view file) {
  const Errors err(file);
  if (source.size() > kMaxTemplateBytes) {
    return err.At(1, "the template is " + std::to_string(source.size()) +
                         " bytes, more than " + std::to_string(kMaxTemplateBytes));
  }
  LP_ASSIGN_OR_RETURN(std::vector<Piece> pieces, Split(std::string(source), err));
  Parser parser(std::move(pieces), err);
  Body body;
  std::string stop;
  ExprParser* tag = nullptr;
  LP_RETURN_IF_ERROR(parser.ParseBody(&body, {"endif", "endfor", "elif", "else", "endmacro"},
                                      &stop, &tag, 0));
  if (!stop.empty()) {
    return err.At(tag->line(), "{% " + stop + " %} without its opening tag");
  }
  return body;
}

}  // namespace layerproof::text::internal::jinja
