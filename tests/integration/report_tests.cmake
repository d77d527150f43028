# `layerproof report` end to end (issue 6; docs/reports.md): the real binary
# against an in-process verifier.
layerproof_test(NAME integration_report_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/report_test.cc
  DEPS layerproof_cluster LABELS integration)
target_compile_definitions(integration_report_test PRIVATE
  LP_LAYERPROOF_BINARY="$<TARGET_FILE:layerproof>")
add_dependencies(integration_report_test layerproof)
