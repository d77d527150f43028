# The HTML rendering of compliance reports (issue 6; docs/reports.md):
# the page (report_html.cc) and its hand-written SVG charts (report_svg.cc).
# Included by verifier/CMakeLists.txt.
set(LP_VERIFIER_REPORT_HTML_SRCS
  report_html.cc
  report_svg.cc
)
