# `layerproof report` (issue 6; docs/reports.md): fetch, verify and write a
# signed compliance report, or render a saved one.
target_sources(layerproof PRIVATE report_command.cc)
