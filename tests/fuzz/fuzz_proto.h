// Protobuf helpers of the fuzz targets: deterministic serialisation (the
// records' canonical encoding, store/envelope.h).
#ifndef LAYERPROOF_TESTS_FUZZ_FUZZ_PROTO_H_
#define LAYERPROOF_TESTS_FUZZ_FUZZ_PROTO_H_

#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"

namespace layerproof::fuzz {

inline std::string Deterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace layerproof::fuzz

#endif  // LAYERPROOF_TESTS_FUZZ_FUZZ_PROTO_H_
