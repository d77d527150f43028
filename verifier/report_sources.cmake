# Compliance reports (issue 6; docs/reports.md): detection bounds, the scan
# of the log into the report JSON, its signed forms, the Report service.
set(LP_VERIFIER_REPORT_SRCS
  detection_bounds.cc
  report_builder.cc
  report_format.cc
  report_service.cc
)
