#include "verifier/report_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "store/internal/str_cat.h"

namespace layerproof::verifier::report_svg {
namespace {

using store::internal::Cat;

template <typename... Parts>
void Append(std::string* out, const Parts&... parts) {
  (store::internal::AppendPart(*out, parts), ...);
}

constexpr int kWidth = 720;
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
constexpr size_t kMaxTimelineBars = 30;
constexpr size_t kMaxProverBars = 20;
constexpr size_t kMaxProverCurves = 6;

// Appends the code point starting at s[i] when it is valid UTF-8 (no
// overlong forms, surrogates or C0/C1 controls but tab, LF, CR), else
// U+FFFD; returns the number of bytes consumed.
size_t AppendRepaired(std::string_view s, size_t i, std::string& out) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += kReplacement;
    } else if (c == 0x7F) {
      out += kReplacement;
    } else {
      out += static_cast<char>(c);
    }
    return 1;
  }
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    if (c == 0xC2) lo = 0xA0;  // no C1 controls
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  }
  if (len == 0 || i + len > s.size() || b(i + 1) < lo || b(i + 1) > hi) {
    out += kReplacement;
    return 1;
  }
  for (size_t k = 2; k < len; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) {
      out += kReplacement;
      return 1;
    }
  }
  out.append(s.substr(i, len));
  return len;
}

std::string Repaired(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) i += AppendRepaired(s, i, out);
  return out;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A coordinate.
std::string C(double v) { return Fixed(v, 1); }

// The smallest 1, 2 or 5 times a power of ten >= v (v > 0).
double NiceCeil(double v) {
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

struct KindFill {
  const char* pattern;  // "" for a solid fill
  const char* background;
  const char* foreground;
};
// Distinct in lightness and pattern, so that greyscale prints stay
// readable: PASS light and solid, each failure kind darker or hatched.
constexpr KindFill kKindFills[] = {
    {"", "#c6e7c6", ""},              // PASS
    {"diag", "#8c1c13", "#ffffff"},   // FAIL_MISMATCH
    {"cross", "#d9822b", "#ffffff"},  // FAIL_OPENING
    {"dots", "#f1d27a", "#4a3800"},   // FAIL_TIMEOUT
    {"", "#3d2f7a", ""},              // FAIL_SIGNATURE
    {"horiz", "#8a8a8a", "#ffffff"},  // FAIL_MODEL
    {"vert", "#bdbdbd", "#222222"},   // INCONCLUSIVE
    {"diag", "#1f1f1f", "#ffffff"},   // FAIL_UNLOGGED
    {"vert", "#bdbdbd", "#222222"},   // any other kind
};
constexpr size_t kNumFills = std::size(kKindFills);

size_t FillIndex(size_t kind) { return std::min(kind, kNumFills - 1); }

std::string FillRef(std::string_view id, size_t kind) {
  const KindFill& f = kKindFills[FillIndex(kind)];
  if (f.pattern[0] == '\0') return f.background;
  return Cat("url(#", id, "-k", FillIndex(kind), ")");
}

std::string Defs(std::string_view id) {
  std::string out = "<defs>";
  for (size_t k = 0; k < kNumFills; ++k) {
    const KindFill& f = kKindFills[k];
    const std::string_view p = f.pattern;
    if (p.empty()) continue;
    Append(
        &out, "<pattern id=\"", id, "-k", k,
        "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\"",
        p == "diag" || p == "cross" ? " patternTransform=\"rotate(45)\"" : "",
        "><rect width=\"6\" height=\"6\" fill=\"", f.background, "\"/>");
    const std::string stroke =
        Cat("\" stroke=\"", f.foreground, "\" stroke-width=\"1.6\"/>");
    if (p == "diag" || p == "vert" || p == "cross") {
      Append(&out, "<line x1=\"1\" y1=\"0\" x2=\"1\" y2=\"6", stroke);
    }
    if (p == "horiz" || p == "cross") {
      Append(&out, "<line x1=\"0\" y1=\"1\" x2=\"6\" y2=\"1", stroke);
    }
    if (p == "dots") {
      Append(&out, "<circle cx=\"3\" cy=\"3\" r=\"1.3\" fill=\"", f.foreground,
             "\"/>");
    }
    out += "</pattern>";
  }
  return out + "</defs>";
}

std::string Open(std::string_view id, int height, std::string_view title,
                 std::string_view description) {
  return Cat("<svg class=\"chart\" id=\"", HtmlEscape(id), "\" viewBox=\"0 0 ",
             kWidth, " ", height, "\" role=\"img\" aria-label=\"",
             HtmlEscape(title), ": ", HtmlEscape(description),
             "\" font-family=\"DejaVu Sans, Arial, "
             "Helvetica, sans-serif\" font-size=\"12\"><title>",
             HtmlEscape(title), "</title><desc>", HtmlEscape(description),
             "</desc>", Defs(id), "<rect width=\"", kWidth, "\" height=\"",
             height, "\" fill=\"#ffffff\"/>");
}

std::string Text(double x, double y, std::string_view text,
                 std::string_view attrs = "") {
  return Cat("<text x=\"", C(x), "\" y=\"", C(y), "\"",
             attrs.empty() ? "" : " ", attrs, ">", HtmlEscape(text), "</text>");
}

std::string Line(double x1, double y1, double x2, double y2,
                 std::string_view attrs) {
  return Cat("<line x1=\"", C(x1), "\" y1=\"", C(y1), "\" x2=\"", C(x2),
             "\" y2=\"", C(y2), "\" ", attrs, "/>");
}

std::string Rect(double x, double y, double w, double h, std::string_view fill,
                 std::string_view tooltip) {
  return Cat("<rect x=\"", C(x), "\" y=\"", C(y), "\" width=\"",
             C(std::max(w, 0.0)), "\" height=\"", C(std::max(h, 0.0)),
             "\" fill=\"", fill,
             "\" stroke=\"#000000\" stroke-width=\"0.6\"><title>",
             HtmlEscape(tooltip), "</title></rect>");
}

std::string Swatch(double x, double y, std::string_view fill,
                   std::string_view label) {
  return Cat("<rect x=\"", C(x), "\" y=\"", C(y - 11),
             "\" width=\"14\" height=\"14\" fill=\"", fill,
             "\" stroke=\"#000000\" stroke-width=\"0.6\"/>",
             Text(x + 20, y, label));
}

// "prover-1: 95 % f ≥ 58.0 %, 99 % f ≥ 82.0 %", or "…: detected".
std::string LegendText(const CurveSeries& s, size_t max_label) {
  std::string out = Cat(Ellipsize(s.label, max_label), ": ");
  if (s.failures > 0) return out + "detected";
  if (!s.f95 && !s.f99) return out + "not enough audits";
  const char* sep = "";
  for (const auto& [f, level] :
       {std::pair{s.f95, "95 %"}, std::pair{s.f99, "99 %"}}) {
    if (!f) continue;
    Append(&out, sep, level, " f \xE2\x89\xA5 ", Percent(*f));
    sep = ", ";
  }
  return out;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  const std::string repaired = Repaired(text);
  std::string out;
  out.reserve(repaired.size() + repaired.size() / 8);
  for (char c : repaired) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Ellipsize(std::string_view text, size_t max_chars) {
  const std::string repaired = Repaired(text);
  size_t chars = 0;
  for (size_t i = 0; i < repaired.size(); ++i) {
    if ((static_cast<unsigned char>(repaired[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars) return repaired.substr(0, i) + "\xE2\x80\xA6";
    ++chars;
  }
  return repaired;
}

std::string Percent(double fraction, int decimals) {
  return Fixed(fraction * 100, decimals) + " %";
}

std::string TimelineChart(std::string_view id,
                          std::span<const TimelineBucket> buckets,
                          std::string_view caption) {
  // Merge neighbouring buckets so that at most kMaxTimelineBars remain.
  const size_t group = std::max<size_t>(
      1, (buckets.size() + kMaxTimelineBars - 1) / kMaxTimelineBars);
  struct Bar {
    std::string label;
    double pass = 0, fail = 0;
  };
  std::vector<Bar> bars;
  double total = 0, max_total = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (i % group == 0) bars.push_back({buckets[i].label});
    bars.back().pass += static_cast<double>(buckets[i].pass);
    bars.back().fail += static_cast<double>(buckets[i].fail);
  }
  for (const Bar& b : bars) {
    total += b.pass + b.fail;
    max_total = std::max(max_total, b.pass + b.fail);
  }
  constexpr int kHeight = 320;
  constexpr double left = 60, right = 705, top = 40, bottom = 250;
  const std::string title = "Audits over time";
  const std::string axis = group > 1
                               ? Cat(caption, " (", group, " buckets per bar)")
                               : std::string(caption);
  std::string out =
      Open(id, kHeight, title,
           Cat("stacked bars of passed and failed audits per time bucket; ",
               Fixed(total, 0), " audits in ", bars.size(), " bars"));
  const double y_max = max_total > 0 ? NiceCeil(max_total) : 1;
  const auto y_of = [&](double v) {
    return bottom - v / y_max * (bottom - top);
  };
  for (int t = 0; t <= 5; ++t) {
    const double v = y_max * t / 5;
    Append(&out,
           Line(left, y_of(v), right, y_of(v),
                "stroke=\"#d0d0d0\" stroke-width=\"0.8\""),
           Text(left - 6, y_of(v) + 4, Fixed(v, y_max >= 5 || t == 0 ? 0 : 1),
                "text-anchor=\"end\""));
  }
  Append(&out, Text(16, (top + bottom) / 2, "audits",
                    "text-anchor=\"middle\" transform=\"rotate(-90 16 145)\""));
  if (bars.empty() || max_total == 0) {
    Append(&out, Text((left + right) / 2, (top + bottom) / 2,
                      "No audits in this window",
                      "text-anchor=\"middle\" font-size=\"16\""));
  }
  const double slot = bars.empty() ? 0 : (right - left) / bars.size();
  const size_t label_every = std::max<size_t>(1, (bars.size() + 7) / 8);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double x = left + slot * i + slot * 0.15, w = slot * 0.7;
    const double cx = x + w / 2;
    const std::string tip = Cat(b.label, ": ", Fixed(b.pass, 0), " pass, ",
                                Fixed(b.fail, 0), " fail");
    Append(&out,
           Rect(x, y_of(b.pass), w, bottom - y_of(b.pass), FillRef(id, 0), tip),
           Rect(x, y_of(b.pass + b.fail), w,
                y_of(b.pass) - y_of(b.pass + b.fail), FillRef(id, 1), tip));
    const double top_y = y_of(b.pass + b.fail);
    if (b.pass + b.fail > 0) {
      Append(&out, Text(cx, top_y - 4, Fixed(b.pass + b.fail, 0),
                        "text-anchor=\"middle\" font-size=\"10\""));
    }
    if (b.fail > 0) {
      Append(&out, Text(cx, top_y - 16, Cat(Fixed(b.fail, 0), "\xE2\x9C\x97"),
                        "text-anchor=\"middle\" font-size=\"10\" "
                        "font-weight=\"bold\" fill=\"#8c1c13\""));
    }
    if (i % label_every == 0) {
      Append(&out, Line(cx, bottom, cx, bottom + 4, "stroke=\"#000\""),
             Text(cx, bottom + 16, Ellipsize(b.label, 16),
                  "text-anchor=\"middle\" font-size=\"10\""));
    }
  }
  Append(&out, Line(left, bottom, right, bottom, "stroke=\"#000\""),
         Line(left, top, left, bottom, "stroke=\"#000\""),
         Text((left + right) / 2, bottom + 34, axis, "text-anchor=\"middle\""),
         Swatch(left, kHeight - 16, FillRef(id, 0), "pass"),
         Swatch(left + 90, kHeight - 16, FillRef(id, 1),
                "fail (\xE2\x9C\x97 = failures in the bar)"),
         Text(right, kHeight - 16, "number above a bar = audits in it",
              "text-anchor=\"end\" font-size=\"11\""),
         "</svg>");
  return out;
}

std::string VerdictChart(std::string_view id,
                         std::span<const std::string> kinds,
                         const VerdictRow& totals,
                         std::span<const VerdictRow> provers) {
  constexpr double label_x = 10, bar_x = 190, bar_w = 380;
  const size_t shown = std::min(provers.size(), kMaxProverBars);
  double all = 0, max_kind = 0;
  for (size_t k = 0; k < kinds.size() && k < totals.counts.size(); ++k) {
    all += static_cast<double>(totals.counts[k]);
    max_kind = std::max(max_kind, static_cast<double>(totals.counts[k]));
  }
  std::string out;  // the body; Open() goes in front once the height is known
  double y = 24;
  Append(&out,
         Text(label_x, y, "All provers, by verdict", "font-weight=\"bold\""));
  y += 10;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const double n =
        k < totals.counts.size() ? static_cast<double>(totals.counts[k]) : 0;
    const double w = max_kind > 0 ? n / max_kind * bar_w : 0;
    Append(&out, Text(label_x, y + 14, kinds[k]),
           Rect(bar_x, y + 2, w, 16, FillRef(id, k),
                Cat(kinds[k], ": ", Fixed(n, 0))),
           Text(bar_x + w + 6, y + 14,
                Cat(Fixed(n, 0),
                    all > 0 ? " (" + Percent(n / all) + ")" : std::string())));
    y += 22;
  }
  y += 26;
  Append(&out, Text(label_x, y, "By prover (bar length = audits)",
                    "font-weight=\"bold\""));
  y += 8;
  double max_prover = 0;
  for (size_t p = 0; p < shown; ++p) {
    double sum = 0;
    for (int64_t c : provers[p].counts) sum += static_cast<double>(c);
    max_prover = std::max(max_prover, sum);
  }
  if (shown == 0) {
    Append(&out, Text(bar_x, y + 16, "No provers in this window"));
  }
  for (size_t p = 0; p < shown; ++p) {
    const VerdictRow& row = provers[p];
    double x = bar_x, sum = 0, failed = 0;
    std::string segments;
    for (size_t k = 0; k < row.counts.size() && k < kinds.size(); ++k) {
      const double n = static_cast<double>(row.counts[k]);
      sum += n;
      if (k > 0) failed += n;
      if (n <= 0) continue;
      const double w = n / max_prover * bar_w;
      Append(&segments, Rect(x, y + 4, w, 16, FillRef(id, k),
                             Cat(row.label, " ", kinds[k], ": ", Fixed(n, 0))));
      x += w;
    }
    Append(&out, "<g>", Text(label_x, y + 16, Ellipsize(row.label, 24)),
           segments,
           Text(x + 6, y + 16,
                Cat(Fixed(sum, 0), " audits, ", Fixed(failed, 0), " failed"),
                failed > 0 ? "font-weight=\"bold\"" : ""),
           "</g>");
    y += 26;
  }
  if (provers.size() > shown) {
    Append(&out, Text(label_x, y + 14,
                      Cat("+ ", provers.size() - shown,
                          " more provers: see the table")));
  }
  y += shown == 0 ? 50 : 24;
  if (provers.size() > shown) y += 20;
  for (size_t k = 0; k < kinds.size(); ++k) {
    Append(&out, Swatch(label_x + 230 * (k % 3), y + 22 * (k / 3),
                        FillRef(id, k), kinds[k]));
  }
  const int height = static_cast<int>(y + 22 * ((kinds.size() + 2) / 3));
  return Open(id, height, "Verdict breakdown",
              Cat("audits by verdict kind (", Fixed(all, 0),
                  " audits), then by prover")) +
         out + "</svg>";
}

std::string DetectionChart(std::string_view id, const CurveSeries& overall,
                           std::span<const CurveSeries> provers) {
  const size_t shown = std::min(provers.size(), kMaxProverCurves);
  // The overall series on a row of its own, then the provers in 2 columns.
  const size_t legend_rows = 1 + (shown + 1) / 2;
  const int height = static_cast<int>(358 + 20 * (legend_rows - 1) + 12 +
                                      (provers.size() > shown ? 20 : 0));
  constexpr double left = 60, right = 700, top = 20, bottom = 300;
  const auto x_of = [&](double f) { return left + f * (right - left); };
  const auto y_of = [&](double c) { return bottom - c * (bottom - top); };
  std::string out =
      Open(id, height, "Detection confidence",
           Cat("confidence 1 - M(f) that the audits would have caught a "
               "prover falsifying a fraction f of its requests; ",
               overall.f95 ? "f ruled out at 95 %: " + Percent(*overall.f95)
                           : "no f ruled out at 95 %",
               overall.f99 ? ", at 99 %: " + Percent(*overall.f99) : ""));
  for (int t = 0; t <= 10; ++t) {
    const double v = t / 10.0;
    Append(&out,
           Line(x_of(v), top, x_of(v), bottom,
                "stroke=\"#e0e0e0\" stroke-width=\"0.8\""),
           Text(x_of(v), bottom + 16, Percent(v, 0),
                "text-anchor=\"middle\" font-size=\"10\""));
    if (t % 2 == 0) {
      Append(&out,
             Line(left, y_of(v), right, y_of(v),
                  "stroke=\"#e0e0e0\" stroke-width=\"0.8\""),
             Text(left - 6, y_of(v) + 4, Percent(v, 0),
                  "text-anchor=\"end\" font-size=\"10\""));
    }
  }
  for (double level : {0.95, 0.99}) {
    Append(
        &out,
        Line(left, y_of(level), right, y_of(level),
             "stroke=\"#000\" stroke-width=\"0.8\" stroke-dasharray=\"2 2\""),
        Text(left + 6, y_of(level) + (level < 0.97 ? 12 : -3),
             Cat(Percent(level, 0), " confidence"), "font-size=\"10\""));
  }
  constexpr const char* kDashes[] = {"7 3", "2 3", "10 3 2 3",
                                     "4 4", "1 2", "12 2"};
  constexpr const char* kGreys[] = {"#505050", "#707070", "#404040",
                                    "#808080", "#303030", "#606060"};
  const auto polyline = [&](const CurveSeries& s, std::string_view style) {
    std::string pts;
    for (const CurvePoint& p : s.points) {
      Append(&pts, C(x_of(p.f)), ",", C(y_of(p.confidence)), " ");
    }
    return Cat("<polyline fill=\"none\" points=\"", pts, "\" ", style,
               "><title>", HtmlEscape(s.label), "</title></polyline>");
  };
  for (size_t p = 0; p < shown; ++p) {
    Append(&out, polyline(provers[p], Cat("stroke=\"", kGreys[p],
                                          "\" stroke-width=\"1.6\" "
                                          "stroke-dasharray=\"",
                                          kDashes[p], "\"")));
  }
  Append(&out, polyline(overall, "stroke=\"#000\" stroke-width=\"3\""));
  const auto mark = [&](std::optional<double> f, double level,
                        double label_dy) {
    if (!f) return std::string();
    const double x = x_of(*f), y = y_of(level);
    return Cat(
        Line(x, y, x, bottom, "stroke=\"#000\" stroke-dasharray=\"4 2\""),
        "<circle cx=\"", C(x), "\" cy=\"", C(y),
        "\" r=\"4\" fill=\"#ffffff\" stroke=\"#000\" stroke-width=\"2\"/>",
        Text(x < (left + right) / 2 ? x + 8 : x - 8, y + label_dy,
             Cat("f \xE2\x89\xA5 ", Percent(*f), " ruled out at ",
                 Percent(level, 0)),
             x < (left + right) / 2 ? "font-size=\"11\" font-weight=\"bold\""
                                    : "font-size=\"11\" font-weight=\"bold\" "
                                      "text-anchor=\"end\""));
  };
  Append(&out, mark(overall.f95, 0.95, 24), mark(overall.f99, 0.99, -8));
  // The provers' ruled-out f: small dots in their grey (values in the
  // legend).
  for (size_t p = 0; p < shown; ++p) {
    for (const auto& [f, level] :
         {std::pair{provers[p].f95, 0.95}, std::pair{provers[p].f99, 0.99}}) {
      if (!f) continue;
      Append(&out, "<circle cx=\"", C(x_of(*f)), "\" cy=\"", C(y_of(level)),
             "\" r=\"3\" fill=\"", kGreys[p], "\"><title>",
             HtmlEscape(Cat(provers[p].label, ": f \xE2\x89\xA5 ", Percent(*f),
                            " ruled out at ", Percent(level, 0))),
             "</title></circle>");
    }
  }
  if (overall.failures > 0) {
    Append(&out, Text((left + right) / 2, (top + bottom) / 2 + 30,
                      Cat(overall.failures,
                          " failed audits: cheating was "
                          "detected, not bounded"),
                      "text-anchor=\"middle\" font-size=\"14\" "
                      "font-weight=\"bold\" fill=\"#8c1c13\""));
  } else if (!overall.f95 && !overall.f99) {
    Append(&out, Text((left + right) / 2, (top + bottom) / 2 + 30,
                      "Not enough audits to rule out any f",
                      "text-anchor=\"middle\" font-size=\"14\""));
  }
  Append(&out, Line(left, bottom, right, bottom, "stroke=\"#000\""),
         Line(left, top, left, bottom, "stroke=\"#000\""),
         Text((left + right) / 2, bottom + 34,
              "f = fraction of requests in which the prover falsified a step",
              "text-anchor=\"middle\""),
         Text(16, (top + bottom) / 2, "confidence of detection",
              "text-anchor=\"middle\" transform=\"rotate(-90 16 160)\""));
  double y = bottom + 58;
  Append(
      &out,
      Line(left, y - 4, left + 40, y - 4, "stroke=\"#000\" stroke-width=\"3\""),
      Text(left + 48, y, LegendText(overall, 40), "font-size=\"11\""));
  for (size_t p = 0; p < shown; ++p) {
    const double lx = left + 320 * (p % 2);
    const double ly = y + 20 * (1 + p / 2);
    Append(&out,
           Line(lx, ly - 4, lx + 40, ly - 4,
                Cat("stroke=\"", kGreys[p],
                    "\" stroke-width=\"1.6\" stroke-dasharray=\"", kDashes[p],
                    "\"")),
           Text(lx + 48, ly, LegendText(provers[p], 24), "font-size=\"11\""));
  }
  if (provers.size() > shown) {
    Append(&out, Text(left, height - 6,
                      Cat("+ ", provers.size() - shown,
                          " more provers: see the table"),
                      "font-size=\"11\""));
  }
  return out + "</svg>";
}

}  // namespace layerproof::verifier::report_svg
