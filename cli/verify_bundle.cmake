# `layerproof verify-bundle` (cli/verify_bundle.cc): offline checks of an
# evidence bundle; the logic lives in verifier/bundle_check.cc.
target_sources(layerproof PRIVATE verify_bundle.cc)
