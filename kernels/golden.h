// Golden vectors: the cross-hardware contract (docs/determinism.md §6).
//
// A fixed list of cases, each running one op on seeded inputs (Philox, with
// ±0, subnormals, ±inf, NaN and near-overflow values mixed in) and hashing
// the output bytes with SHA-256. tests/golden/kernels.golden holds the
// expected hashes, made by the ref backend; it is compiled into the binary so
// `layerproof selftest` needs no files. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_GOLDEN_H_
#define LAYERPROOF_KERNELS_GOLDEN_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace layerproof::kernels {

// The spec version every golden hash belongs to (docs/determinism.md §7).
// Bumped by any change that can alter a result bit.
inline constexpr int kSpecVersion = 1;

struct GoldenResult {
  std::string name;
  std::string sha256_hex;  // empty when status is not OK
  Status status;
};

// Names of all cases, in file order.
std::vector<std::string> GoldenCaseNames();

// Runs every case on `backend`.
std::vector<GoldenResult> RunGoldenCases(Backend& backend);

// Parses the golden file: "spec_version N" then "name sha256hex" lines;
// '#' starts a comment. Fails on a malformed line or a spec_version other
// than kSpecVersion.
StatusOr<std::map<std::string, std::string>> ParseGoldenFile(
    std::string_view text);

// Renders results as a golden file.
std::string FormatGoldenFile(const std::vector<GoldenResult>& results);

// tests/golden/kernels.golden as compiled into this binary.
std::string_view EmbeddedGoldenFile();

// Seeded test inputs: n floats uniform in [-scale, scale), and when
// `specials` every 11th element replaced by one of ±0, ±subnormal, ±inf,
// NaN and ±3.4e38 in turn. Same bits on every platform.
std::vector<float> GoldenFloats(uint32_t stream, int64_t n, float scale,
                                bool specials);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_GOLDEN_H_
