#include "verifier/opening_client.h"

#include <bit>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "store/commitment.h"
#include "store/rpc/grpc_status.h"

namespace layerproof::verifier {
namespace {

absl::Status Malformed(std::string what) {
  return absl::InvalidArgumentError(
      absl::StrCat("Opening stream: ", std::move(what)));
}

// Reassembles one opening's chunks, checking each as it arrives
// (opening_client.h lists the rules).
class OpeningAssembler {
 public:
  OpeningAssembler(const std::vector<uint32_t>& layers, uint64_t max_bytes)
      : layers_(layers), max_bytes_(max_bytes) {}

  absl::Status Add(v1::OpenChunk& chunk) {
    const int64_t index = chunks_++;
    if (chunk.has_header()) {
      if (have_header_) {
        return Malformed(absl::StrCat("chunk ", index,
                                      ": a second header, want one header"));
      }
      have_header_ = true;
      return TakeHeader(std::move(*chunk.mutable_header()));
    }
    if (!chunk.has_rows()) {
      return Malformed(absl::StrCat("chunk ", index,
                                    ": empty, want a header "
                                    "or activation rows"));
    }
    if (!have_header_) {
      return Malformed(absl::StrCat(
          "chunk ", index, ": activation rows, want the header first"));
    }
    return TakeRows(index, chunk.rows());
  }

  absl::StatusOr<Opening> Finish() {
    if (!have_header_) return Malformed("ended without a header");
    if (current_ < layers_.size()) {
      return Malformed(absl::StrCat(
          "ended after ", rows_, " of ", opening_.header.positions(),
          " rows of h^", layers_[current_], " (", layers_.size() - current_,
          " requested layers incomplete)"));
    }
    return std::move(opening_);
  }

 private:
  absl::Status TakeHeader(v1::OpeningHeader header) {
    if (header.layers_size() != static_cast<int>(layers_.size()) ||
        !std::equal(layers_.begin(), layers_.end(), header.layers().begin())) {
      std::string got;
      for (uint32_t k : header.layers()) {
        absl::StrAppend(&got, got.empty() ? "" : ",", k);
      }
      std::string want;
      for (uint32_t k : layers_) {
        absl::StrAppend(&want, want.empty() ? "" : ",", k);
      }
      return Malformed(absl::StrCat("OpeningHeader.layers: got [", got,
                                    "], want [", want, "] (as requested)"));
    }
    if (header.positions() < 1) {
      return Malformed("OpeningHeader.positions: got 0, want >= 1");
    }
    if (header.hidden_size() < 1 ||
        header.hidden_size() > store::kMaxHiddenSize) {
      return Malformed(absl::StrCat("OpeningHeader.hidden_size: got ",
                                    header.hidden_size(), ", want 1..",
                                    store::kMaxHiddenSize));
    }
    row_bytes_ = uint64_t{header.hidden_size()} * sizeof(float);
    const uint64_t layer_bytes = uint64_t{header.positions()} * row_bytes_;
    if (!layers_.empty() && layer_bytes > max_bytes_ / layers_.size()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("Opening stream: ", layers_.size(), " layers of ",
                       layer_bytes, " bytes (positions ", header.positions(),
                       " x hidden_size ", header.hidden_size(),
                       " x 4) exceed the limit of ", max_bytes_, " bytes"));
    }
    opening_.header = std::move(header);
    return absl::OkStatus();
  }

  absl::Status TakeRows(int64_t index, const v1::ActivationRows& rows) {
    if (current_ >= layers_.size()) {
      return Malformed(absl::StrCat("chunk ", index, ": rows of h^",
                                    rows.layer(),
                                    " after every requested layer was "
                                    "complete, want the end of the stream"));
    }
    const uint32_t layer = layers_[current_];
    if (rows.layer() != layer) {
      return Malformed(
          absl::StrCat("chunk ", index, ": ActivationRows.layer: got ",
                       rows.layer(), ", want ", layer,
                       " (layers in requested order, each complete "
                       "before the next)"));
    }
    if (rows.position0() != rows_) {
      return Malformed(absl::StrCat(
          "chunk ", index, ": ActivationRows.position0: got ", rows.position0(),
          ", want ", rows_, " (rows contiguous in position order)"));
    }
    const std::string& data = rows.data();
    if (data.empty() || data.size() % row_bytes_ != 0) {
      return Malformed(absl::StrCat("chunk ", index,
                                    ": ActivationRows.data: got ", data.size(),
                                    " bytes, want a non-empty multiple of ",
                                    row_bytes_, " (hidden_size x 4)"));
    }
    const uint64_t n = data.size() / row_bytes_;
    const uint64_t positions = opening_.header.positions();
    if (n > positions - rows_) {
      return Malformed(absl::StrCat(
          "chunk ", index, ": rows ", rows_, "..", rows_ + n - 1, " of h^",
          layer, ", want rows < ", positions, " (OpeningHeader.positions)"));
    }
    std::vector<float>& out = opening_.layers[layer];
    if (out.empty()) out.reserve(positions * opening_.header.hidden_size());
    const size_t at = out.size();
    out.resize(at + data.size() / sizeof(float));
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out.data() + at, data.data(), data.size());
    } else {
      for (size_t i = 0; i < data.size() / 4; ++i) {
        const auto* b = reinterpret_cast<const uint8_t*>(data.data()) + 4 * i;
        const uint32_t bits = uint32_t{b[0]} | uint32_t{b[1]} << 8 |
                              uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
        out[at + i] = std::bit_cast<float>(bits);
      }
    }
    rows_ += n;
    if (rows_ == positions) {
      ++current_;
      rows_ = 0;
    }
    return absl::OkStatus();
  }

  const std::vector<uint32_t>& layers_;
  const uint64_t max_bytes_;
  Opening opening_;
  bool have_header_ = false;
  int64_t chunks_ = 0;
  uint64_t row_bytes_ = 0;
  size_t current_ = 0;  // index in layers_ of the layer being received
  uint64_t rows_ = 0;   // rows of that layer received so far
};

}  // namespace

GrpcOpeningSource::GrpcOpeningSource(GrpcOpeningSourceOptions options)
    : options_(options) {}

absl::Status GrpcOpeningSource::AddProver(const std::string& prover_id,
                                          const std::string& address,
                                          const rpc::TlsOptions& tls) {
  LP_ASSIGN_OR_RETURN(
      std::shared_ptr<grpc::Channel> channel,
      rpc::MakeChannel(address, tls, options_.max_message_bytes));
  Prover p{address,
           std::shared_ptr<v1::Opening::Stub>(v1::Opening::NewStub(channel))};
  absl::MutexLock lock(&mu_);
  provers_[prover_id] = std::move(p);
  return absl::OkStatus();
}

absl::StatusOr<Opening> GrpcOpeningSource::Open(
    std::string_view prover_id, std::string_view request_id,
    const std::vector<uint32_t>& layers, absl::Time deadline) {
  std::shared_ptr<v1::Opening::Stub> stub;
  std::string address;
  {
    absl::MutexLock lock(&mu_);
    auto it = provers_.find(prover_id);
    if (it == provers_.end()) {
      return absl::NotFoundError(
          absl::StrCat("no Opening address registered for prover \"",
                       std::string(prover_id), "\""));
    }
    stub = it->second.stub;
    address = it->second.address;
  }
  const std::string call = absl::StrCat(
      "Opening.Open at ", address, " (prover ", std::string(prover_id), ")");
  if (absl::Now() >= deadline) {
    return absl::DeadlineExceededError(
        absl::StrCat(call, ": the deadline passed before the call"));
  }

  v1::OpenRequest request;
  request.set_request_id(std::string(request_id));
  for (uint32_t k : layers) request.add_layers(k);
  grpc::ClientContext context;  // must outlive the reader
  context.set_deadline(absl::ToChronoTime(deadline));
  std::unique_ptr<grpc::ClientReader<v1::OpenChunk>> reader =
      stub->Open(&context, request);

  OpeningAssembler assembler(layers, options_.max_opening_bytes);
  absl::Status malformed;
  v1::OpenChunk chunk;
  while (reader->Read(&chunk)) {
    malformed = assembler.Add(chunk);
    if (!malformed.ok()) {
      context.TryCancel();
      while (reader->Read(&chunk)) {
      }
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!malformed.ok()) {
    return absl::Status(malformed.code(),
                        absl::StrCat(call, ": ", malformed.message()));
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError(
        absl::StrCat(call, ": deadline exceeded: ", status.error_message()));
  }
  if (!status.ok()) {
    const absl::Status s = rpc::FromGrpcStatus(status);
    return absl::Status(s.code(), absl::StrCat(call, ": ", s.message()));
  }
  absl::StatusOr<Opening> opening = assembler.Finish();
  if (!opening.ok()) {
    return absl::Status(opening.status().code(),
                        absl::StrCat(call, ": ", opening.status().message()));
  }
  return opening;
}

}  // namespace layerproof::verifier
