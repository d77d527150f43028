// text/chat_template.h: the Jinja subset, known answers worked out by hand
// from Jinja2's rules (tests/peer/ compares real templates with Jinja2 and
// @huggingface/jinja), and every refusal.
#include "text/chat_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "text/internal/jinja_ast.h"
#include "text/internal/jinja_eval.h"

namespace layerproof::text {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

StatusOr<std::string> RenderWith(const std::string& source,
                                 const Json& messages,
                                 Json extra = Json::object()) {
  LP_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::Parse(source, "t.jinja"));
  ChatInput in;
  in.messages = messages;
  in.extra = std::move(extra);
  in.special_tokens["bos_token"] = "<s>";
  return t.Render(in);
}

std::string MustRender(const std::string& source, Json extra = Json::object()) {
  auto r =
      RenderWith(source, Json::array({{{"role", "user"}, {"content", "hi"}}}),
                 std::move(extra));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

TEST(ChatTemplateTest, WhitespaceControlAsTransformersConfiguresIt) {
  // trim_blocks drops the newline after a block tag; lstrip_blocks the
  // indentation before one; `-` strips all white space on its side; one
  // trailing newline of the template goes.
  EXPECT_EQ(MustRender("{% if true %}\n  a\n{% endif %}\n"), "  a\n");
  EXPECT_EQ(MustRender("x\n    {% if true %}y{% endif %}"), "x\ny");
  EXPECT_EQ(MustRender("a  \n  {{- 'b' -}}  \n c"), "abc");
  EXPECT_EQ(MustRender("{# note #}\nz"), "z");
  EXPECT_EQ(MustRender("{{ 'v' }}\nw"), "v\nw");  // Not after {{ }}.
}

TEST(ChatTemplateTest, ExpressionsFollowPython) {
  EXPECT_EQ(
      MustRender(
          "{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }}"),
      "3 -4 2 3.5 1024");
  EXPECT_EQ(MustRender("{{ 'a' ~ 1 ~ none }} {{ 'ab' * 2 }} {{ [1] + [2] }}"),
            "a1None abab [1, 2]");
  EXPECT_EQ(MustRender("{{ 1 if false }}|{{ 'y' if 0 else 'n' }}|{{ not 1 }}"),
            "|n|False");
  EXPECT_EQ(MustRender("{{ 'abc'[::-1] }} {{ 'abcdef'[1:4] }} {{ [1,2,3][-1] "
                       "}} {{ 'héllo'[1] }}"),
            "cba bcd 3 é");
  EXPECT_EQ(
      MustRender(
          "{{ 'b' in 'abc' }} {{ 2 not in [1, 3] }} {{ 'k' in {'k': 1} }}"),
      "True True True");
  EXPECT_EQ(MustRender("{{ 1 == 1.0 }} {{ [1, {'a': 'b'}] == [1, {'a': 'b'}] "
                       "}} {{ 0.1 + 0.2 }}"),
            "True True 0.30000000000000004");
}

TEST(ChatTemplateTest, MethodsFiltersAndTests) {
  EXPECT_EQ(MustRender("{{ ' a b '.split() }} {{ 'a,b,,c'.split(',') }} {{ "
                       "'x\\ny'.split('\\n', 1) }}"),
            "['a', 'b'] ['a', 'b', '', 'c'] ['x', 'y']");
  EXPECT_EQ(MustRender("{{ '\\n\\nx\\n'.lstrip('\\n') }}|{{ '  y  '.strip() "
                       "}}|{{ 'abc'.rstrip('c') }}"),
            "x\n|y|ab");
  EXPECT_EQ(
      MustRender(
          "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }}"),
      "True True");
  EXPECT_EQ(
      MustRender("{{ {'b': 1, 'a': [true, none, 0.5, 'é\"']} | tojson }}"),
      "{\"b\": 1, \"a\": [true, null, 0.5, \"é\\\"\"]}");
  EXPECT_EQ(MustRender("{{ {'a': [1]} | tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1\n  ]\n}");
  EXPECT_EQ(
      MustRender(
          "{{ messages | length }} {{ '  t  ' | trim }} {{ [3, 1] | first }}"),
      "1 t 3");
  EXPECT_EQ(MustRender("{{ messages | selectattr('role', 'equalto', 'user') | "
                       "list | length }}"
                       "{{ messages | rejectattr('role', 'equalto', 'user') | "
                       "list | length }}"
                       "{{ messages | map(attribute='content') | join(',') }}"),
            "10hi");
  EXPECT_EQ(
      MustRender("{{ x is defined }} {{ none is none }} {{ 'a' is string }} "
                 "{{ {} is mapping }} {{ 3 is odd }} {{ false is false }}"),
      "False True True True True True");
  EXPECT_EQ(MustRender("{{ x | default('d') }} {{ '' | default('e', true) }}"),
            "d e");
  EXPECT_EQ(MustRender("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v "
                       "}}{% endfor %}"),
            "a1b2");
}

TEST(ChatTemplateTest, LoopsScopesAndNamespaces) {
  EXPECT_EQ(
      MustRender(
          "{% for x in [1, 2, 3] if x != 2 %}{{ loop.index }}/{{ loop.length }}"
          "{{ ',' if not loop.last }}{% endfor %}"),
      "1/2,2/2");
  // A set inside a loop stays inside it; a namespace carries state out.
  EXPECT_EQ(MustRender("{% set a = 1 %}{% set ns = namespace(n=0) %}"
                       "{% for x in [5, 6] %}{% set a = x %}{% set ns.n = ns.n "
                       "+ x %}{% endfor %}"
                       "{{ a }} {{ ns.n }}"),
            "1 11");
  EXPECT_EQ(MustRender("{% for x in [] %}a{% else %}empty{% endfor %}"),
            "empty");
  EXPECT_EQ(
      MustRender("{% for x in range(5) %}{% if x == 3 %}{% break %}{% endif %}"
                 "{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
      "02");
  EXPECT_EQ(MustRender("{{ today }}", {{"today", "x"}}), "x");
}

TEST(ChatTemplateTest, MacrosBindArgumentsAndSeeOnlyTheTopLevel) {
  EXPECT_EQ(MustRender("{% macro greet(name, punct='!') %}Hi {{ name }}{{ "
                       "punct }}{% endmacro %}"
                       "{{ greet('a') }} {{ greet('b', '?') }} {{ "
                       "greet(punct='.', name='c') }}"),
            "Hi a! Hi b? Hi c.");
  // Recursion, and a macro does not see the caller's loop variable.
  EXPECT_EQ(MustRender("{% macro count(n) %}{{ n }}{% if n > 0 %},{{ count(n - "
                       "1) }}{% endif %}"
                       "{% endmacro %}{{ count(3) }}"),
            "3,2,1,0");
  EXPECT_EQ(
      MustRender(
          "{% set top = 'T' %}{% macro show() %}{{ top }}{{ x }}{% endmacro %}"
          "{% for x in [1] %}{{ show() }}{% endfor %}"),
      "T");
  EXPECT_FALSE(
      RenderWith("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", Json::array())
          .ok());
  EXPECT_FALSE(
      RenderWith("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}", Json::array())
          .ok());
  EXPECT_FALSE(RenderWith("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
                          Json::array())
                   .ok());
}

TEST(ChatTemplateTest, HostileExpressionsFailOrStayBounded) {
  // Each of these once crashed, hung or overflowed (review findings).
  EXPECT_EQ(MustRender("{{ 'abc'[1::9223372036854775807] }}|{{ "
                       "[1,2,3][::-9223372036854775807] }}"),
            "b|[3]");
  EXPECT_EQ(MustRender("{{ (-9223372036854775807 - 1) is divisibleby(-1) }}"),
            "True");
  EXPECT_FALSE(
      RenderWith("{{ -(-9223372036854775807 - 1) }}", Json::array()).ok());
  EXPECT_FALSE(
      RenderWith("{{ (-9223372036854775807 - 1) | abs }}", Json::array()).ok());
  EXPECT_FALSE(RenderWith("{{ 1e300 | int }}", Json::array()).ok());
  EXPECT_EQ(MustRender("{{ 1 ** 9223372036854775807 }} {{ 0 ** "
                       "9223372036854775807 }} {{ 2 ** 10 }}"),
            "1 0 1024");
  EXPECT_FALSE(
      RenderWith("{{ 3 ** 9223372036854775807 }}", Json::array()).ok());
  EXPECT_EQ(MustRender("[{{ '' * 9223372036854775807 }}]"), "[]");
  EXPECT_FALSE(
      RenderWith("{{ 'abcd' * 4611686018427387904 }}", Json::array()).ok());
  EXPECT_EQ(MustRender(
                "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns == ns }}"),
            "True");
  EXPECT_EQ(MustRender("{{ 9007199254740993 == 9007199254740992 }}"), "False");
  // Chains longer than the parser takes, and inputs nested too deeply.
  std::string chain = "{{ 1";
  for (int i = 0; i < 5000; ++i) chain += "+1";
  EXPECT_FALSE(ChatTemplate::Parse(chain + " }}", "t.jinja").ok());
  Json deep = Json::array();
  for (int i = 0; i < 1000; ++i) deep = Json::array({deep});
  EXPECT_FALSE(RenderWith("{{ messages }}",
                          Json::array({{{"role", "user"}, {"content", deep}}}))
                   .ok());
}

TEST(ChatTemplateTest, JinjaDetails) {
  // Unary minus binds tighter than a filter on it: (-1)|abs.
  EXPECT_EQ(MustRender("{{ -1 | abs }}"), "1");
  // An attribute of None is undefined, not an error.
  EXPECT_EQ(MustRender("{{ none.x is defined }}"), "False");
  // transformers' tojson(x, ensure_ascii, indent, ...).
  EXPECT_EQ(MustRender("{{ ['é'] | tojson(true) }}"), "[\"\\u00e9\"]");
  EXPECT_EQ(MustRender(
                "{{ '42.5' | int }} {{ true is number }} {{ '123' is lower }}"),
            "42 True False");
}

TEST(ChatTemplateTest, StrftimeNowUsesTheGivenClock) {
  auto t = ChatTemplate::Parse("{{ strftime_now('%d %b %Y') }}", "t.jinja");
  ASSERT_TRUE(t.ok());
  ChatInput in;
  in.now_unix_seconds = 1741348800;  // 2025-03-07 12:00 UTC
  EXPECT_EQ(*t->Render(in), "07 Mar 2025");
  in.now_unix_seconds.reset();
  auto undefined = t->Render(in);
  EXPECT_FALSE(undefined.ok());  // Without a clock it is not defined.
}

TEST(ChatTemplateTest, UnsupportedConstructsAreRefusedByName) {
  for (const auto& [source, what] :
       std::vector<std::pair<std::string, std::string>>{
           {"{% call m() %}x{% endcall %}", "{% call %}"},
           {"a\n{% include 'x' %}", "line 2: {% include %}"},
           {"{% raw %}x{% endraw %}", "{% raw %}"},
           {"{% set x %}y{% endset %}", "a {% set %} block"},
           {"{%+ if true %}{% endif %}", "`+` whitespace modifier"},
       }) {
    auto t = ChatTemplate::Parse(source, "t.jinja");
    ASSERT_FALSE(t.ok()) << source;
    EXPECT_EQ(t.status().code(), kernels::StatusCode::kUnimplemented) << source;
    EXPECT_THAT(t.status().message(), HasSubstr(what));
    EXPECT_THAT(t.status().message(), HasSubstr("t.jinja"));
  }
  auto f = RenderWith("{{ x | wordwrap }}", Json::array());
  EXPECT_EQ(f.status().code(), kernels::StatusCode::kUnimplemented);
  EXPECT_THAT(f.status().message(), HasSubstr("the filter 'wordwrap'"));
}

TEST(ChatTemplateTest, MalformedTemplatesNameTheLine) {
  for (const char* source :
       {"{% if x %}", "a\n\n{{ x ", "{% endfor %}", "{{ 'open }}",
        "{% for in x %}{% endfor %}", "{{ (((1) }}"}) {
    auto t = ChatTemplate::Parse(source, "t.jinja");
    ASSERT_FALSE(t.ok()) << source;
    EXPECT_THAT(t.status().message(), HasSubstr("t.jinja: line ")) << source;
  }
}

TEST(ChatTemplateTest, RenderErrorsAndLimits) {
  // The template's own refusal.
  auto refused = RenderWith("{{ raise_exception('roles must alternate') }}",
                            Json::array());
  EXPECT_EQ(refused.status().code(), kernels::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("roles must alternate"));
  // Python's errors: undefined attributes, str + list.
  EXPECT_FALSE(RenderWith("{{ messages[0].role }}", Json::array()).ok());
  EXPECT_FALSE(RenderWith("{{ 'a' + [1] }}", Json::array()).ok());
  // Runaway templates stop with an error.
  auto big = RenderWith(
      "{% for i in range(100000) %}{% for j in range(100000) %}x"
      "{% endfor %}{% endfor %}",
      Json::array());
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("t.jinja"));
  std::string nested =
      "{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}";
  // Doubling a string or a list stops at the value limits, not at memory.
  auto doubling = RenderWith(
      "{% set ns = namespace(s='ab', l=[1]) %}{% for i in range(64) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
      Json::array());
  ASSERT_FALSE(doubling.ok());
  EXPECT_THAT(doubling.status().message(), HasSubstr("passes"));
  // A namespace that holds itself prints to a bounded depth, and tojson of
  // it is refused: no endless recursion.
  auto self =
      RenderWith("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}",
                 Json::array());
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_THAT(*self, HasSubstr("..."));
  EXPECT_FALSE(
      RenderWith(
          "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}",
          Json::array())
          .ok());
  auto replaced = RenderWith(
      "{% set ns = namespace(s='a') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s.replace('a', 'aa') %}{% endfor %}",
      Json::array());
  EXPECT_FALSE(replaced.ok());
  EXPECT_FALSE(ChatTemplate::Parse(nested, "t.jinja").ok());
}

TEST(ChatTemplateTest, DeeplyNestedValuesAreFreedWithoutRecursion) {
  // 300,000 lists each inside the next: freed recursively, they overflowed
  // the stack when the render ended (a crash any template could cause).
  auto r = RenderWith(
      "{% set ns = namespace(x=[]) %}"
      "{% for j in range(3) %}{% for i in range(100000) %}"
      "{% set ns.x = [ns.x] %}{% endfor %}{% endfor %}{{ ns.x | length }}",
      Json::array());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "1");
}

TEST(ChatTemplateTest, BuiltinsThatWalkAValueStopAtTheDepthLimit) {
  // Two equal lists nested 100,000 deep, through the builtins that recurse
  // into a value: each stops at kMaxPrintDepth (64) levels, as unequal,
  // "[...]" or an error, instead of following the nesting down the stack.
  const std::string deep =
      "{% set ns = namespace(d=[], e=[]) %}{% for i in range(100000) %}"
      "{% set ns.d = [ns.d] %}{% set ns.e = [ns.e] %}{% endfor %}"
      "{% set d = ns.d %}{% set e = ns.e %}";
  auto r = RenderWith(
      deep +
          "{{ d == e }}|{{ d in [e] }}|{{ d | string | length }}|"
          "{{ (d ~ '') | length }}|{{ [d, e] | join(',') | length }}",
      Json::array());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 64 brackets, "...", 64 brackets.
  EXPECT_EQ(*r, "False|False|131|131|263");
  auto json = RenderWith(deep + "{{ d | tojson }}", Json::array());
  EXPECT_THAT(json.status().message(), HasSubstr("nested too deeply"));
  auto raised = RenderWith(deep + "{{ raise_exception(d) }}", Json::array());
  EXPECT_THAT(raised.status().message(), HasSubstr("[[...]]"));
}

TEST(ChatTemplateTest, ReferenceCyclesAreFreedWhenTheRenderEnds) {
  // A namespace that holds itself, directly or through a list, a dict or a
  // bound method, is no longer referenced once the render returns.
  for (const std::string source : {
           "{% set probe.me = probe %}",
           "{% set probe.l = [1, [probe]] %}",
           "{% set d = {'p': probe} %}{% set probe.f = d.items %}",
           "{% set ns = namespace(p=probe) %}{% set probe.ns = ns %}"
           "{{ ns == ns }}",
       }) {
    auto body = internal::jinja::ParseTemplate(source, "t.jinja");
    ASSERT_TRUE(body.ok()) << source;
    std::weak_ptr<internal::jinja::Dict> probe;
    {
      internal::jinja::Value globals = internal::jinja::Value::MakeDict();
      internal::jinja::Value ns = internal::jinja::Value::Namespace();
      probe = ns.dict;
      globals.Set("probe", std::move(ns));
      ASSERT_TRUE(internal::jinja::Render(*body, globals, "t.jinja").ok())
          << source;
    }
    EXPECT_TRUE(probe.expired()) << source;
  }
}

}  // namespace
}  // namespace layerproof::text
