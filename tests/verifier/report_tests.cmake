# Compliance reports (issue 6; docs/reports.md): detection bounds, the scan
# of the log, and the Report service over gRPC.
layerproof_test(NAME verifier_detection_bounds_test
  SRCS detection_bounds_test.cc DEPS layerproof::verifier)
layerproof_test(NAME verifier_report_builder_test
  SRCS report_builder_test.cc DEPS layerproof::verifier)
layerproof_test(NAME verifier_report_service_test
  SRCS report_service_test.cc
  DEPS layerproof::verifier layerproof::rpc layerproof::test_certs)
