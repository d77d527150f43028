target_sources(layerproof PRIVATE demo.cc)
