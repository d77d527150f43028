#include "rpc/metrics.h"

#include <httplib.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <utility>

#include "rpc/http_pool.h"
#include "store/internal/str_cat.h"

namespace layerproof::rpc {
namespace {

using store::internal::Cat;

prometheus::MetricFamily Family(std::string name, std::string help,
                                prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void AddValue(prometheus::MetricFamily& f, double value,
              const SampledMetrics::Labels& labels = {}) {
  prometheus::ClientMetric m;
  for (const auto& [name, v] : labels) m.label.push_back({name, v});
  if (f.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

// Fields of /proc/self/stat after the command name (which may hold spaces
// and parentheses, so it is skipped up to its last ')'): index 0 is field
// 3 (state) of proc(5).
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), {});
  const size_t close = stat.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(stat.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return 0;
}

class ProcessCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> out;
    const std::vector<std::string> f = StatFields();
    // proc(5): utime 14, stime 15, num_threads 20, starttime 22, vsize 23,
    // rss 24 (1-based); f[0] is field 3.
    const auto field = [&](int n) -> double {
      return n - 3 < static_cast<int>(f.size()) ? std::stod(f[n - 3]) : 0.0;
    };
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    if (f.size() >= 22) {
      auto cpu = Family("process_cpu_seconds_total",
                        "Total user and system CPU time spent in seconds.",
                        MetricType::Counter);
      AddValue(cpu, (field(14) + field(15)) / ticks);
      out.push_back(std::move(cpu));
      auto threads =
          Family("process_threads", "Number of OS threads.", MetricType::Gauge);
      AddValue(threads, field(20));
      out.push_back(std::move(threads));
      auto start =
          Family("process_start_time_seconds",
                 "Start time of the process since unix epoch in seconds.",
                 MetricType::Gauge);
      AddValue(start, BootTimeSeconds() + field(22) / ticks);
      out.push_back(std::move(start));
      auto vsize = Family("process_virtual_memory_bytes",
                          "Virtual memory size in bytes.", MetricType::Gauge);
      AddValue(vsize, field(23));
      out.push_back(std::move(vsize));
      auto rss = Family("process_resident_memory_bytes",
                        "Resident memory size in bytes.", MetricType::Gauge);
      AddValue(rss, field(24) * page);
      out.push_back(std::move(rss));
    }
    std::error_code ec;
    double fds = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++fds;
    }
    auto open = Family("process_open_fds", "Number of open file descriptors.",
                       MetricType::Gauge);
    AddValue(open, fds);
    out.push_back(std::move(open));
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
      auto max =
          Family("process_max_fds", "Maximum number of open file descriptors.",
                 MetricType::Gauge);
      AddValue(max, limit.rlim_cur == RLIM_INFINITY
                        ? INFINITY
                        : static_cast<double>(limit.rlim_cur));
      out.push_back(std::move(max));
    }
    return out;
  }
};

}  // namespace

prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
          0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
}

prometheus::Histogram::BucketBoundaries SizeBuckets() {
  prometheus::Histogram::BucketBoundaries b;
  for (double v = 1; v <= 4096; v *= 2) b.push_back(v);
  return b;
}

void SampledMetrics::Add(std::string name, std::string help, Type type,
                         Sampler sample) {
  absl::MutexLock lock(&mu_);
  entries_.push_back(
      {std::move(name), std::move(help), type, std::move(sample)});
}

void SampledMetrics::Add(std::string name, std::string help, Type type,
                         std::function<double()> sample) {
  Add(std::move(name), std::move(help), type,
      Sampler([sample = std::move(sample)] {
        return std::vector<std::pair<Labels, double>>{{{}, sample()}};
      }));
}

std::vector<prometheus::MetricFamily> SampledMetrics::Collect() const {
  absl::MutexLock lock(&mu_);
  std::vector<prometheus::MetricFamily> out;
  for (const Entry& e : entries_) {
    auto f = Family(e.name, e.help,
                    e.type == Type::kCounter ? prometheus::MetricType::Counter
                                             : prometheus::MetricType::Gauge);
    for (const auto& [labels, value] : e.sample()) AddValue(f, value, labels);
    out.push_back(std::move(f));
  }
  return out;
}

std::shared_ptr<prometheus::Collectable> ProcessMetrics() {
  return std::make_shared<ProcessCollector>();
}

NodeMetrics::NodeMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      sampled_(std::make_shared<SampledMetrics>()),
      process_(ProcessMetrics()) {}

std::string NodeMetrics::Scrape() const {
  std::vector<prometheus::MetricFamily> all = registry_->Collect();
  for (auto* c : {static_cast<prometheus::Collectable*>(sampled_.get()),
                  process_.get()}) {
    std::vector<prometheus::MetricFamily> more = c->Collect();
    all.insert(all.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(all);
}

struct MetricsServer::Impl {
  httplib::Server server;
  std::thread listener;
  int port = 0;
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

int MetricsServer::port() const { return impl_->port; }

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& host, int port, const NodeMetrics& metrics) {
  auto impl = std::make_unique<Impl>();
  httplib::Server& s = impl->server;
  // A scrape is small and quick: two handler threads, short timeouts.
  s.new_task_queue = [] { return NewBoundedHttpPool(2, 16); };
  s.set_read_timeout(5);
  s.set_write_timeout(5);
  s.set_payload_max_length(4096);
  s.Get("/metrics",
        [&metrics](const httplib::Request&, httplib::Response& res) {
          res.set_content(metrics.Scrape(), "text/plain; version=0.0.4");
        });
  impl->port = port == 0 ? s.bind_to_any_port(host)
                         : (s.bind_to_port(host, port) ? port : -1);
  if (impl->port <= 0) {
    return absl::UnavailableError(
        Cat("metrics: cannot listen on ", host, ":", port));
  }
  impl->listener = std::thread([&s] { s.listen_after_bind(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

}  // namespace layerproof::rpc
