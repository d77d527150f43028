# `layerproof demo` (issue 6): the nodes, the client load, the auditor's
# steps, the summary and the DEMO-ONLY fault of prover-2.
target_sources(layerproof PRIVATE demo.cc demo_cluster.cc demo_load.cc
  demo_setup.cc demo_artifacts.cc demo_summary.cc demo_logs.cc demo_fault.cc)
