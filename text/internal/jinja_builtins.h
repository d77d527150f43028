// The filters, tests, methods and global functions of the chat-template
// interpreter, with Python's and Jinja2's meanings (docs/text.md lists
// them). Anything else is an error naming it.
#ifndef LAYERPROOF_TEXT_INTERNAL_JINJA_BUILTINS_H_
#define LAYERPROOF_TEXT_INTERNAL_JINJA_BUILTINS_H_

#include <string>

#include "text/internal/jinja_eval.h"
#include "text/internal/jinja_value.h"

namespace layerproof::text::internal::jinja {

// An error at `line` of the template being rendered (the file name is
// added by Render).
Status ErrorAt(int line, const std::string& what);

// Refuses a value past kMaxValueBytes / kMaxListItems (jinja_value.h).
Status CheckSize(const Value& v, int line);

StatusOr<Value> ApplyFilter(const std::string& name, const Value& target,
                            CallArgs& args);
StatusOr<bool> ApplyTest(const std::string& name, const Value& target,
                         CallArgs& args);
// `obj.name` as Jinja's getattr finds it: a bound method of a str or dict,
// a dict's or namespace's entry, else Undefined. Error on Undefined/None.
StatusOr<Value> GetAttr(const Value& obj, const std::string& name, int line);
// `obj[key]` as Jinja's getitem: entries, list and str indexes (negative
// from the end), else Undefined.
StatusOr<Value> GetItem(const Value& obj, const Value& key, int line);
// Python slicing of a list or str.
StatusOr<Value> Slice(const Value& obj, const Value& start, const Value& stop,
                      const Value& step, int line);
// The global functions: namespace, raise_exception, range, dict.
Value Globals();
// The items a for loop runs over (list items, dict keys, str characters).
StatusOr<List> Iterate(const Value& v, int line);
// Python's str.strip(chars) (white space when chars is Undefined/None).
std::string Strip(const std::string& s, const Value& chars, bool left,
                  bool right);

}  // namespace layerproof::text::internal::jinja

#endif  // LAYERPROOF_TEXT_INTERNAL_JINJA_BUILTINS_H_
