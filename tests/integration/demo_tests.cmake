# `layerproof demo` end to end (issue 6): the real binary with the default
# load, its --json summary, its files. One CTest test (not discovered) so
# that its TIMEOUT is set here: it must finish well within 3 minutes on a
# 2-core machine.
add_executable(integration_demo_test demo_test.cc)
layerproof_apply_flags(integration_demo_test)
target_link_libraries(integration_demo_test PRIVATE
  nlohmann_json::nlohmann_json GTest::gtest GTest::gtest_main)
target_compile_definitions(integration_demo_test PRIVATE
  LP_LAYERPROOF_BINARY="$<TARGET_FILE:layerproof>")
add_dependencies(integration_demo_test layerproof)
add_test(NAME integration_demo_test COMMAND integration_demo_test)
set_tests_properties(integration_demo_test PROPERTIES
  LABELS integration TIMEOUT 180)
