// The cheating provers the integration tests share, injected through the
// test-only hooks of prover/internal/prover_faults.h (docs/protocol.md
// "Cheating"). Test code only: demo/demo_fault.h is the product's one
// DEMO-ONLY fault. Thread safety: see ProverFaults.
#ifndef LAYERPROOF_TESTS_INTEGRATION_TEST_FAULTS_H_
#define LAYERPROOF_TESTS_INTEGRATION_TEST_FAULTS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "prover/internal/prover_faults.h"

namespace layerproof::integration {

// The block the row tampers change (of tiny's 4).
inline constexpr uint32_t kTamperedLayer = 2;

inline void FlipBit22(float* x) {
  uint32_t bits;
  std::memcpy(&bits, x, 4);
  bits ^= 1u << 22;  // the top mantissa bit: the change survives every add
  std::memcpy(x, &bits, 4);
}

// Flips one bit of every row of layer kTamperedLayer, consistently in
// commitments and openings.
class FlipBitTamper : public prover::RowsTamper {
 public:
  void Tamper(int64_t layer, int64_t, float* rows, int64_t n,
              int64_t width) override {
    if (layer != kTamperedLayer) return;
    for (int64_t r = 0; r < n; ++r) FlipBit22(rows + r * width);
  }
};

// A prover whose committed and opened rows go through a fresh `Tamper`.
template <typename Tamper>
class RowsFaults : public prover::ProverFaults {
 public:
  std::unique_ptr<prover::RowsTamper> NewRowsTamper() override {
    return std::make_unique<Tamper>();
  }
};

// Serves tokens its sampler did not choose: the last one, plus one.
class WrongTokenFaults : public prover::ProverFaults {
 public:
  explicit WrongTokenFaults(int32_t vocab) : vocab_(vocab) {}
  void TamperOutputTokens(std::vector<int32_t>& output) override {
    output.back() = (output.back() + 1) % vocab_;
  }

 private:
  int32_t vocab_;
};

// Opens rows that differ from the committed ones.
class BadOpeningFaults : public prover::ProverFaults {
 public:
  void TamperOpenedRows(int64_t, int64_t, float* rows, int64_t,
                        int64_t) override {
    FlipBit22(rows);
  }
};

// Hands out promises and never logs the commitments.
class SkipSubmissionFaults : public prover::ProverFaults {
 public:
  bool SkipSubmission() override { return true; }
};

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_TEST_FAULTS_H_
