# Evidence bundles from the in-process cluster verified offline by
# verifier/bundle_check.h and by the `layerproof verify-bundle` binary.
layerproof_test(NAME integration_bundle_test SRCS bundle_test.cc
  DEPS layerproof_cluster LABELS integration)
target_compile_definitions(integration_bundle_test PRIVATE
  LP_LAYERPROOF_BINARY="$<TARGET_FILE:layerproof>")
add_dependencies(integration_bundle_test layerproof)
