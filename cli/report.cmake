target_sources(layerproof PRIVATE report_command.cc)
