target_sources(layerproof PRIVATE verify_bundle.cc)
