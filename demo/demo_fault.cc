// DEMO-ONLY FAULT (see demo/demo_fault.h): never linked into a code path that
// `layerproof serve prover` can reach.
#include "demo/demo_fault.h"

#include <cstring>

namespace layerproof::demo {
namespace {

class FlipRowsTamper : public prover::RowsTamper {
 public:
  explicit FlipRowsTamper(int64_t layer) : layer_(layer) {}
  void Tamper(int64_t layer, int64_t /*pos0*/, float* rows, int64_t n,
              int64_t width) override {
    if (layer != layer_) return;
    for (int64_t r = 0; r < n; ++r) {
      uint32_t bits;
      std::memcpy(&bits, rows + r * width, 4);
      bits ^= 1u << 22;  // the top mantissa bit: survives every later add
      std::memcpy(rows + r * width, &bits, 4);
    }
  }

 private:
  int64_t layer_;
};

class DemoLayerTamper : public prover::ProverFaults {
 public:
  explicit DemoLayerTamper(uint32_t layer) : layer_(layer) {}
  std::unique_ptr<prover::RowsTamper> NewRowsTamper() override {
    return std::make_unique<FlipRowsTamper>(layer_);
  }

 private:
  uint32_t layer_;
};

}  // namespace

std::shared_ptr<prover::ProverFaults> NewDemoLayerTamper(uint32_t layer) {
  return std::make_shared<DemoLayerTamper>(layer);
}

}  // namespace layerproof::demo
