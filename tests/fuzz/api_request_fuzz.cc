// Fuzzes the OpenAI-compatible API's request bodies (openai/api_request.h
// ParseApiRequest), as the prover's HTTP API receives them, on a served
// model with the synthetic tokenizer and a chat template (as `model synth`
// writes them). The first byte picks the endpoint and whether a model has
// text at all; then a u16-sized X-LayerProof-Nonce header; the rest is the
// body. A request that parsed has a prompt within the context.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "openai/api_request.h"
#include "tests/fuzz/fuzz_check.h"
#include "text/model_text.h"
#include "text/synthetic_tokenizer.h"

namespace fuzz = layerproof::fuzz;
namespace openai = layerproof::openai;

namespace {

constexpr char kChatTemplate[] =
    "<|begin_of_text|>{% for message in messages %}{{ message['role'] }}: "
    "{{ message['content'] }}\n{% endfor %}{% if add_generation_prompt %}"
    "assistant:{% endif %}";

const layerproof::text::ModelText& Text() {
  static const auto* text = [] {
    auto t = layerproof::text::ModelText::FromJson(
        layerproof::text::BuildSyntheticTokenizerJson(512, 1), "",
        std::string(kChatTemplate), "synth");
    if (!t.ok()) std::abort();
    return t->release();
  }();
  return *text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  const uint8_t flags = in.U8();
  const std::string nonce = in.Sized();
  const std::string body = in.Rest();
  openai::ServedModel served;
  served.name = "synth";
  served.max_new_tokens = 64;
  served.max_context = 256;
  served.text = flags & 2 ? nullptr : &Text();
  const auto endpoint = flags & 1 ? openai::Endpoint::kChatCompletions
                                  : openai::Endpoint::kCompletions;
  auto request = openai::ParseApiRequest(endpoint, body, nonce, served);
  LP_FUZZ_CHECK_PRINTABLE(request.status());
  if (!request.ok()) return 0;
  LP_FUZZ_CHECK(request->stop.size() <= openai::kMaxStopSequences);
  for (const std::string& stop : request->stop) {
    LP_FUZZ_CHECK(!stop.empty() &&
                  stop.size() <= openai::kMaxStopSequenceBytes);
  }
  LP_FUZZ_CHECK(request->generate.max_tokens() >= 1);
  return 0;
}
