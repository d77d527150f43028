// The syntax tree of a chat template, and the parser that builds it: the
// subset of Jinja2 that real chat templates use (docs/text.md lists it),
// with transformers' settings (trim_blocks, lstrip_blocks, no trailing
// newline). Any other construct is refused at parse time with an error
// that names it and its line.
//
// Thread safety: a parsed tree is immutable.
#ifndef LAYERPROOF_TEXT_INTERNAL_JINJA_AST_H_
#define LAYERPROOF_TEXT_INTERNAL_JINJA_AST_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/internal/jinja_value.h"

namespace layerproof::text::internal::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind : uint8_t {
    kLiteral,  // literal
    kName,     // name
    kList,     // args
    kTuple,    // args
    kDict,     // kwargs-like pairs in `pairs`
    kAttr,     // args[0] . name
    kItem,     // args[0] [ args[1] ]
    kSlice,    // args[0] [ args[1] : args[2] : args[3] ] (null parts absent)
    kCall,     // args[0] ( args[1..], kwargs )
    kFilter,   // args[0] | name ( args[1..], kwargs )
    kTest,     // args[0] is [not] name ( args[1..] )
    kNot,      // not args[0]
    kNeg,      // - args[0]
    kBinary,   // args[0] op args[1]: + - * / // % ** ~ == != < > <= >= in
    kAnd,      // args[0] and args[1]
    kOr,       // args[0] or args[1]
    kCond,     // args[1] if args[0] else args[2] (args[2] may be null)
  };
  Kind kind = Kind::kLiteral;
  int line = 0;
  Value literal;
  std::string name;  // name, attribute, filter, test or operator
  bool negated = false;  // `is not`, `not in`
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::pair<ExprPtr, ExprPtr>> pairs;  // kDict
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind : uint8_t {
    kText,
    kOutput,
    kIf,
    kFor,
    kSet,
    kBreak,
    kContinue,
    kMacro
  };
  Kind kind = Kind::kText;
  int line = 0;
  std::string text;  // kText
  ExprPtr expr;      // kOutput, kSet value, kFor iterable
  // kIf: (condition, body) per branch; a null condition is `else`.
  std::vector<std::pair<ExprPtr, Body>> branches;
  // kFor: the loop variables; kSet: {name} or {namespace, attribute};
  // kMacro: {name, parameter names...}.
  std::vector<std::string> targets;
  std::vector<ExprPtr> defaults;  // kMacro: per parameter, null when none
  ExprPtr filter;  // kFor: the `if` after the iterable (may be null)
  Body body, else_body;  // kFor; kMacro: body
};

// Parses template source; errors name `file` and the line.
StatusOr<Body> ParseTemplate(std::string_view source, std::string_view file);

}  // namespace layerproof::text::internal::jinja

#endif  // LAYERPROOF_TEXT_INTERNAL_JINJA_AST_H_
