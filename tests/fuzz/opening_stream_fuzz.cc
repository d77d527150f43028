// Fuzzes the reassembly of a streamed opening (check/opening_stream.h), the
// chunks a prover sends the verifier's opening client. The input fixes the
// request (layers, and the positions and hidden_size a commitment fixes,
// small or large), a size limit of 1 KiB..1 MiB, then the stream: each
// chunk a u16 length and a serialised OpenChunk. An opening that
// assembles has exactly positions x hidden_size floats per layer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "check/opening_stream.h"
#include "layerproof/v1/opening.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace check = layerproof::check;
namespace fuzz = layerproof::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  std::vector<uint32_t> layers(in.U8() % 5);
  uint32_t k = 0;
  for (uint32_t& layer : layers) {
    k += in.U8() % 4;
    layer = k++;
  }
  const uint8_t shape = in.U8();
  // Mostly small shapes (so that rows fit a seed), sometimes any.
  const uint64_t positions = shape & 0x80 ? in.U32() : in.U8() % 9;
  const uint64_t hidden_size = shape & 0x40 ? in.U32() : in.U8() % 17;
  const uint64_t max_bytes = uint64_t{1} << (10 + in.U8() % 11);
  check::OpeningAssembler assembler(layers, positions, hidden_size, max_bytes);
  while (in.remaining() > 0) {
    layerproof::v1::OpenChunk chunk;
    if (!chunk.ParseFromString(in.Sized())) return 0;
    const absl::Status added = assembler.Add(chunk);
    LP_FUZZ_CHECK_PRINTABLE(added);
    if (!added.ok()) return 0;
  }
  auto opening = assembler.Finish();
  LP_FUZZ_CHECK_PRINTABLE(opening.status());
  if (!opening.ok()) return 0;
  LP_FUZZ_CHECK(opening->layers.size() == layers.size());
  for (uint32_t layer : layers) {
    LP_FUZZ_CHECK(opening->layers.count(layer) == 1);
    LP_FUZZ_CHECK(opening->layers.at(layer).size() == positions * hidden_size);
  }
  return 0;
}
