# The HTML compliance report (verifier/report_html.h), included by
# tests/verifier/CMakeLists.txt. LP_REPORT_HTML_OUT=<path> makes it write
# its sample page there (scripts/test-browser.sh).
layerproof_test(NAME report_html_test SRCS report_html_test.cc
  DEPS layerproof::verifier)
