# Offline verification of evidence bundles (`layerproof verify-bundle`,
# docs/formats.md), included by verifier/CMakeLists.txt.
set(LP_VERIFIER_BUNDLE_SRCS bundle_check.cc)
