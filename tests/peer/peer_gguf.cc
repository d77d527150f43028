// peer_gguf: LayerProof's side of the GGUF peer test (tests/peer/
// gguf_peer.mjs, against @huggingface/gguf).
//   peer_gguf write OUT_DIR
//     synthesizes small models (model synth, in-process), writes them as
//     GGUF files with WriteGgufModel in every tensor type, plus one file of
//     every metadata value type written with GgufWriter, and prints each
//     file's path on its own line.
//   peer_gguf dump FILE
//     prints our reader's view of FILE as JSON lines: a header line
//     {"version", "alignment", "data_offset", "tensor_count", "kv_count"},
//     one {"kv", "type", "subtype", "value"} per key (integers as decimal
//     strings, so 64-bit values survive JSON), one {"tensor", "ggml_type",
//     "ne", "shape", "offset"} per tensor in file order (offset absolute),
//     and {"model": "ok"} or {"model": ERROR} from ReadGgufModel.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/model/gguf.h"
#include "kernels/model/gguf_model.h"
#include "kernels/model/gguf_writer.h"
#include "kernels/model/model.h"
#include "kernels/model/synth.h"

namespace {

using Json = nlohmann::ordered_json;
using namespace layerproof::kernels;
using namespace layerproof::kernels::model;

void Answer(const Json& out) {
  std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

Json ValueJson(const GgufValue& v) {
  switch (v.type()) {
    case GgufValueType::kString:
      return std::string(*v.AsString());
    case GgufValueType::kBool:
      return *v.AsBool();
    case GgufValueType::kFloat32:
    case GgufValueType::kFloat64:
      return *v.AsFloat();
    case GgufValueType::kArray: {
      Json a = Json::array();
      for (const GgufValue& e : v.Elements()) a.push_back(ValueJson(e));
      return a;
    }
    case GgufValueType::kInt8:
    case GgufValueType::kInt16:
    case GgufValueType::kInt32:
    case GgufValueType::kInt64:
      return std::to_string(*v.AsInt());
    default:
      return std::to_string(*v.AsUint());
  }
}

int Dump(const std::string& path) {
  auto f = GgufFile::Open(path);
  if (!f.ok()) {
    std::fprintf(stderr, "peer_gguf: %s\n", f.status().ToString().c_str());
    return 1;
  }
  const GgufFile& g = **f;
  Answer({{"version", g.version()},
          {"alignment", g.alignment()},
          {"data_offset", g.data_offset()},
          {"tensor_count", g.tensor_infos().size()},
          {"kv_count", g.metadata().size()}});
  for (const auto& [key, v] : g.metadata()) {
    Json line = {{"kv", key}, {"type", uint32_t(v.type())}};
    if (v.type() == GgufValueType::kArray) {
      line["subtype"] = uint32_t(v.array_type());
    }
    line["value"] = ValueJson(v);
    Answer(line);
  }
  for (const GgufTensorInfo& t : g.tensor_infos()) {
    const TensorView& v = g.tensors().at(t.name);
    Answer({{"tensor", t.name},
            {"ggml_type", t.ggml_type},
            {"ne", t.ne},
            {"shape", v.shape},
            {"offset", uint64_t(v.data - g.base())}});
  }
  auto parts = ReadGgufModel(g);
  Answer({{"model", parts.ok() ? "ok" : parts.status().ToString()}});
  return 0;
}

ModelConfig Llama() {
  ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  c.model_type = "llama";
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  c.vocab_size = 512;
  c.max_positions = 256;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 500000.0;
  c.eos_token_ids = {2};
  c.bos_token_id = 1;
  return c;
}

Status WriteModel(const ModelConfig& c, const std::string& dir,
                  const std::string& stem, const std::vector<DType>& types,
                  std::vector<std::string>* written) {
  SynthOptions o;
  o.seed = 3;
  LP_RETURN_IF_ERROR(SynthesizeModel(c, o, dir + "/" + stem + "-hf"));
  LoadOptions lo;
  lo.write_digest_cache = false;
  LP_ASSIGN_OR_RETURN(std::unique_ptr<Model> m,
                      Model::Load(dir + "/" + stem + "-hf", lo));
  for (DType t : types) {
    std::string name(DTypeName(t));
    for (char& ch : name) ch = char(std::tolower(ch));
    const std::string path = dir + "/" + stem + "-" + name + ".gguf";
    GgufExportOptions eo;
    eo.name = "peer " + stem;
    LP_RETURN_IF_ERROR(WriteGgufModel(*m, t, path, eo));
    written->push_back(path);
  }
  return OkStatus();
}

// Every metadata value type, nested arrays included, and alignment 64.
Status WriteMetadataFile(const std::string& path) {
  GgufWriter w(64);
  w.SetUint8("t.u8", 255);
  w.SetInt8("t.i8", -128);
  w.SetUint16("t.u16", 65535);
  w.SetInt16("t.i16", -32768);
  w.SetUint32("t.u32", 4294967295u);
  w.SetInt32("t.i32", -2147483647 - 1);
  w.SetUint64("t.u64", 18446744073709551615ull);
  w.SetInt64("t.i64", -9223372036854775807ll - 1);
  w.SetFloat32("t.f32", 3.14159274f);
  w.SetFloat64("t.f64", -1e-300);
  w.SetBool("t.bool", true);
  w.SetString("t.str", "h\xc3\xa9llo, \xe4\xb8\x96\xe7\x95\x8c");
  w.SetStringArray("t.strs", {"", "a", "<|im_end|>"});
  w.SetInt32Array("t.i32s", {-5, 0, 7});
  w.SetUint32Array("t.u32s", {1, 4294967295u});
  w.SetFloat32Array("t.f32s", {0.1f, -0.0f, 1e30f});
  std::string nested;  // [[1, 2], [3]] of uint16
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) nested.push_back(char(uint8_t(v >> (8 * i))));
  };
  put(uint32_t(GgufValueType::kArray), 4);
  put(2, 8);
  put(uint32_t(GgufValueType::kUint16), 4);
  put(2, 8);
  put(1, 2);
  put(2, 2);
  put(uint32_t(GgufValueType::kUint16), 4);
  put(1, 8);
  put(3, 2);
  w.SetEncoded("t.nested", GgufValueType::kArray, nested);
  w.Declare("a", DType::kF32, {3});
  w.Declare("b", DType::kQ6_K, {2, 256});
  w.Declare("c", DType::kBF16, {2, 1, 5});
  LP_RETURN_IF_ERROR(w.Begin(path));
  const std::vector<unsigned char> zeros(1024, 0);
  LP_RETURN_IF_ERROR(w.WriteTensorData(zeros.data(), 12));
  LP_RETURN_IF_ERROR(w.WriteTensorData(zeros.data(), 420));
  LP_RETURN_IF_ERROR(w.WriteTensorData(zeros.data(), 20));
  return w.Finish();
}

int Write(const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  const std::vector<DType> all = {DType::kF32,  DType::kF16,  DType::kBF16,
                                  DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                                  DType::kQ6_K};
  ModelConfig qwen3 = Llama();
  qwen3.architecture = "Qwen3ForCausalLM";
  qwen3.model_type = "qwen3";
  qwen3.qk_norm = true;
  qwen3.head_dim = 128;
  qwen3.tie_word_embeddings = true;
  qwen3.eos_token_ids = {2, 5};
  ModelConfig qwen2 = Llama();
  qwen2.architecture = "Qwen2ForCausalLM";
  qwen2.model_type = "qwen2";
  qwen2.qkv_bias = true;
  qwen2.tie_word_embeddings = true;
  // Llama-3 RoPE scaling (a rope_freqs tensor) and an FFN of 352, whose
  // down_proj falls back from Q4_K to Q4_0: a file of mixed types.
  ModelConfig llama3 = Llama();
  llama3.intermediate_size = 352;
  llama3.rope_scaling.type = RopeScaling::Type::kLlama3;
  llama3.rope_scaling.factor = 32.0;
  Status s = WriteModel(Llama(), dir, "llama", all, &written);
  if (s.ok()) s = WriteModel(qwen3, dir, "qwen3", {DType::kQ8_0}, &written);
  if (s.ok()) s = WriteModel(qwen2, dir, "qwen2", {DType::kQ6_K}, &written);
  if (s.ok()) s = WriteModel(llama3, dir, "llama3", {DType::kQ4_K}, &written);
  if (s.ok()) {
    written.push_back(dir + "/metadata.gguf");
    s = WriteMetadataFile(written.back());
  }
  if (!s.ok()) {
    std::fprintf(stderr, "peer_gguf: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const std::string& p : written) std::cout << p << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "write") return Write(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "dump") return Dump(argv[2]);
  std::fprintf(stderr, "usage: peer_gguf write OUT_DIR | dump FILE\n");
  return 2;
}
