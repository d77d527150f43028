# Tests of the verifier's audit core (included by tests/verifier/CMakeLists.txt).
layerproof_test(NAME verifier_audit_policy_test SRCS audit_policy_test.cc
  DEPS layerproof::verifier)
layerproof_test(NAME verifier_re_executor_test SRCS re_executor_test.cc
  DEPS layerproof::verifier)
layerproof_test(NAME verifier_opening_client_test SRCS opening_client_test.cc
  DEPS layerproof::verifier layerproof::rpc)
