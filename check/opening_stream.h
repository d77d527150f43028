// The reassembly of a streamed opening (opening.proto Opening.Open): the
// chunks a prover streams, one header then ActivationRows, checked one by
// one as they arrive and gathered into a check::Opening. The verifier's
// opening client (verifier/opening_client.h) feeds it what the stream
// delivers; it is apart from the client so that the rules are one unit,
// without gRPC, that the fuzz target (tests/fuzz/opening_stream_fuzz.cc)
// drives with hostile chunks.
//
// Rules (anything else is InvalidArgument "opening malformed: ..." naming
// the chunk and the field):
//   - the first chunk is the header, and there is exactly one;
//   - the header passes CheckOpeningHeaderShape (the requested layers, the
//     commitment's positions and hidden_size), checked before anything is
//     allocated;
//   - positions x hidden_size x 4 x layers is at most max_bytes, checked
//     from the header before anything is allocated (ResourceExhausted,
//     "opening too large: ...");
//   - the layers' rows come in the requested order, each layer complete
//     before the next starts, rows contiguous in position order from 0;
//   - each chunk's data is non-empty, a whole number of rows (hidden_size x
//     4 bytes each) and does not run past `positions`;
//   - at Finish, every layer has exactly `positions` rows.
//
// Thread safety: an OpeningAssembler is used by one thread at a time.
#ifndef LAYERPROOF_CHECK_OPENING_STREAM_H_
#define LAYERPROOF_CHECK_OPENING_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "check/re_executor.h"
#include "layerproof/v1/opening.pb.h"

namespace layerproof::check {

class OpeningAssembler {
 public:
  // `layers`: the k values requested, in order (must outlive the
  // assembler); `positions` and `hidden_size`: what the commitment fixes;
  // `max_bytes`: the most activation bytes the opening may carry.
  OpeningAssembler(const std::vector<uint32_t>& layers, uint64_t positions,
                   uint64_t hidden_size, uint64_t max_bytes)
      : layers_(layers),
        positions_(positions),
        hidden_size_(hidden_size),
        max_bytes_(max_bytes) {}
  OpeningAssembler(const OpeningAssembler&) = delete;
  OpeningAssembler& operator=(const OpeningAssembler&) = delete;

  // Takes the next chunk (its header is moved out). After an error the
  // stream is malformed and the assembler must not be used again.
  absl::Status Add(v1::OpenChunk& chunk);

  // The opening, once the stream has ended: InvalidArgument when it ended
  // without a header or before every requested layer was complete.
  absl::StatusOr<Opening> Finish();

 private:
  absl::Status TakeHeader(v1::OpeningHeader header);
  absl::Status TakeRows(int64_t index, const v1::ActivationRows& rows);

  const std::vector<uint32_t>& layers_;
  const uint64_t positions_;
  const uint64_t hidden_size_;
  const uint64_t max_bytes_;
  Opening opening_;
  bool have_header_ = false;
  int64_t chunks_ = 0;
  uint64_t row_bytes_ = 0;
  size_t current_ = 0;  // index in layers_ of the layer being received
  uint64_t rows_ = 0;   // rows of that layer received so far
};

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_OPENING_STREAM_H_
