// Renders a parsed chat template: Jinja2's semantics for the subset the
// parser accepts, with Python's operators, string and dict methods, and
// the filters, tests and globals that chat templates use (docs/text.md).
// Work is bounded: output, loop iterations and call depth have limits, and
// exceeding one is an error, so a hostile template cannot hang a server.
//
// Thread safety: Render keeps its state per call; a Body may be rendered
// from many threads at once.
#ifndef LAYERPROOF_TEXT_INTERNAL_JINJA_EVAL_H_
#define LAYERPROOF_TEXT_INTERNAL_JINJA_EVAL_H_

#include <string>
#include <string_view>

#include "text/internal/jinja_ast.h"
#include "text/internal/jinja_value.h"

namespace layerproof::text::internal::jinja {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  int line = 0;
  // The keyword `name`, or nullptr.
  const Value* Keyword(std::string_view name) const {
    for (const auto& [k, v] : keyword) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

struct RenderLimits {
  size_t max_output_bytes = size_t{4} << 20;
  int64_t max_iterations = 1'000'000;  // Loop bodies run, in all.
};

// Renders `body` with the variables of `globals` (a dict). Errors name
// `file` and the line.
StatusOr<std::string> Render(const Body& body, const Value& globals,
                             std::string_view file,
                             const RenderLimits& limits = {});

}  // namespace layerproof::text::internal::jinja

#endif  // LAYERPROOF_TEXT_INTERNAL_JINJA_EVAL_H_
