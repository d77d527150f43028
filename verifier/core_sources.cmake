# The verifier's audit core (the draw, the re-executor, the opening client),
# included by verifier/CMakeLists.txt.
set(LP_VERIFIER_CORE_SRCS
  audit_policy.cc
  re_executor.cc
  internal/opening_checks.cc
  opening_client.cc
)
