// Prometheus metrics for every node (docs/operations.md "Metrics"): a
// prometheus-cpp Registry for what is counted where it happens (counters,
// histograms), SampledMetrics for values read when scraped (queue depths,
// log size, counters a node already keeps), the standard process metrics
// (process_* from /proc/self, which prometheus-cpp does not provide), and
// MetricsServer, which serves them all as the text exposition format on
// GET /metrics (cpp-httplib, the HTTP library of the prover's API).
//
// Thread safety: Registry and SampledMetrics are thread-safe; the sample
// functions run on the scraping thread and must be thread-safe themselves.
#ifndef LAYERPROOF_RPC_METRICS_H_
#define LAYERPROOF_RPC_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace layerproof::rpc {

// Histogram buckets: latencies in seconds (0.5 ms .. 60 s) and sizes
// (1 .. 4096, powers of two).
prometheus::Histogram::BucketBoundaries LatencyBuckets();
prometheus::Histogram::BucketBoundaries SizeBuckets();

// Metrics whose values are read at scrape time.
class SampledMetrics final : public prometheus::Collectable {
 public:
  enum class Type { kCounter, kGauge };
  using Labels = std::map<std::string, std::string>;
  // One labelled value per element; called at each scrape.
  using Sampler = std::function<std::vector<std::pair<Labels, double>>()>;

  // `name` must be a valid metric name, unique among this node's metrics.
  void Add(std::string name, std::string help, Type type, Sampler sample);
  // The same for one unlabelled value.
  void Add(std::string name, std::string help, Type type,
           std::function<double()> sample);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Entry {
    std::string name, help;
    Type type;
    Sampler sample;
  };
  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds and process_threads, as the Prometheus client
// libraries of other languages export them.
std::shared_ptr<prometheus::Collectable> ProcessMetrics();

// A node's metrics: its registry, its sampled metrics and the process
// metrics, with `node` (prover, verifier, auditor) as a constant label on
// none of them (Prometheus adds job and instance).
class NodeMetrics {
 public:
  NodeMetrics();
  prometheus::Registry& registry() { return *registry_; }
  SampledMetrics& sampled() { return *sampled_; }
  // The text exposition of everything (format 0.0.4).
  std::string Scrape() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<SampledMetrics> sampled_;
  std::shared_ptr<prometheus::Collectable> process_;
};

// GET /metrics on host:port (port 0: a free one), plaintext: metrics carry
// counts and durations, never request contents or keys. `metrics` must
// outlive the server.
class MetricsServer {
 public:
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& host, int port, const NodeMetrics& metrics);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  int port() const;

  struct Impl;

 private:
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_METRICS_H_
