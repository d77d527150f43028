#include "cli/model_commands.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cli/engine_setup.h"
#include "cli/flags.h"
#include "cli/print_error.h"
#include "cli/progress.h"
#include "kernels/golden.h"
#include "kernels/model/layer_hash.h"
#include "kernels/model/quantize_model.h"
#include "kernels/model/synth.h"
#if LAYERPROOF_WITH_TEXT
#include "text/gguf_tokenizer.h"
#include "text/model_text.h"
#include "text/synthetic_tokenizer.h"
#endif

namespace layerproof::cli {
namespace {

namespace km = kernels::model;
using Clock = std::chrono::steady_clock;

constexpr char kModelUsage[] =
    "usage: layerproof model synth --preset tiny|small|medium|qwen3-tiny "
    "[--seed N] --out DIR\n"
    "       layerproof model digest MODEL [--verify] [--json]\n"
    "       layerproof model quantize --type q8_0|q4_0|q4_k|q6_k --out "
    "FILE.gguf DIR\n"
    "  synth     write a seeded synthetic Llama-shaped model (HF format)\n"
    "  quantize  write the Hugging Face model in DIR as a GGUF file in a\n"
    "            llama.cpp block type (docs/model.md), and copy its\n"
    "            tokenizer files beside it\n"
    "  MODEL is a model directory or a .gguf file.\n"
    "  digest    print the model digest (cached beside the model; --verify "
    "re-hashes;\n"
    "            --json adds the tensor count and whether it was cached)\n"
    "exit: 0 done, 1 failed (unreadable or invalid model), 2 usage\n";

constexpr char kGenerateUsage[] =
    "usage: layerproof generate --model MODEL (--prompt TEXT | --prompt-ids "
    "1,2,3)\n"
    "         [--chat [--system TEXT]] [--max-tokens N] [--temperature T]\n"
    "         [--top-k K] [--top-p P]\n"
    "         [--seed S] [--backend ref|avx2|avx512|neon|cuda|auto] "
    "[--threads N]\n"
    "  Streams the text (or, for --prompt-ids, the ids) to stdout; timings\n"
    "  go to stderr. --prompt needs the model's tokenizer.json, and a build\n"
    "  with text/ (Oniguruma and utf8proc). --chat sends the prompt as a user\n"
    "  message (after --system's system message) through the model's chat\n"
    "  template, with the generation prompt, as transformers'\n"
    "  apply_chat_template does.\n"
    "exit: 0 done, 1 failed, 2 usage\n";

constexpr char kForwardUsage[] =
    "usage: layerproof forward --model MODEL --tokens 1,2,3 [--logits-out "
    "FILE]\n"
    "         [--backend NAME] [--threads N]\n"
    "  Prints JSON with the model digest and the SHA-256 of every layer's\n"
    "  output h^0..h^L (unsalted, docs/model.md); writes the logits of every\n"
    "  position as raw fp32 little-endian [positions x vocab].\n"
    "exit: 0 done, 1 failed, 2 usage\n";

int Usage(const char* usage, const std::string& error) {
  if (!error.empty()) PrintError("layerproof", error);
  std::fputs(usage, stderr);
  return 2;
}

int Fail(const kernels::Status& s) {
  PrintError("layerproof", s.ToString());
  return 1;
}

int Help(const char* usage) {
  std::fputs(usage, stdout);
  return 0;
}

int Synth(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return Help(kModelUsage);
  Flags flags({"--preset", "--seed", "--out"}, {});
  std::string error;
  if (!flags.Parse(args, &error)) return Usage(kModelUsage, error);
  if (!flags.Has("--preset") || !flags.Has("--out")) {
    return Usage(kModelUsage, "model synth needs --preset and --out");
  }
  const auto seed = flags.GetInt("--seed", 0, 0, INT64_MAX, &error);
  if (!seed) return Usage(kModelUsage, error);
  auto config = km::SynthPreset(flags.Get("--preset"));
  if (!config.ok()) return Usage(kModelUsage, config.status().message());
  km::SynthOptions options;
  options.seed = static_cast<uint64_t>(*seed);
  std::unique_ptr<ProgressBar> bar;
  options.progress = [&bar](int64_t done, int64_t total) {
    if (!bar)
      bar = std::make_unique<ProgressBar>("synthesising", total / 1000000,
                                          "M params");
    bar->Update(done / 1000000);
  };
  const auto start = Clock::now();
#if LAYERPROOF_WITH_TEXT
  const kernels::Status s =
      text::SynthesizeTextModel(*config, options, flags.Get("--out"));
#else
  // This build has no text/: the model gets no tokenizer.json.
  const kernels::Status s =
      km::SynthesizeModel(*config, options, flags.Get("--out"));
#endif
  bar.reset();
  if (!s.ok()) return Fail(s);
  std::printf("wrote %s: %s preset, seed %lld, %lld parameters (%.1f s)\n",
              flags.Get("--out").c_str(), flags.Get("--preset").c_str(),
              static_cast<long long>(*seed),
              static_cast<long long>(km::ParameterCount(*config)),
              std::chrono::duration<double>(Clock::now() - start).count());
  return 0;
}

int Digest(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return Help(kModelUsage);
  if (args.empty() || args[0].rfind("--", 0) == 0) {
    return Usage(kModelUsage,
                 "model digest needs a model directory or .gguf file");
  }
  Flags flags({}, {"--verify", "--json"});
  std::string error;
  if (!flags.Parse({args.begin() + 1, args.end()}, &error)) {
    return Usage(kModelUsage, error);
  }
  km::LoadOptions options;
  options.verify_digest = flags.Has("--verify");
  std::unique_ptr<ProgressBar> bar;
  std::mutex bar_mu;
  options.progress = [&](int64_t done, int64_t total) {
    std::lock_guard<std::mutex> lock(bar_mu);
    if (!bar) {
      bar = std::make_unique<ProgressBar>("hashing weights", total >> 20, "MiB",
                                          flags.Has("--json"));
    }
    bar->Update(done >> 20);
  };
  auto model = km::Model::Load(args[0], options);
  bar.reset();
  if (!model.ok()) return Fail(model.status());
  const std::string hex = kernels::HexDigest((*model)->digest().root);
  if (flags.Has("--json")) {
    std::printf(
        "{\"model_digest\": \"%s\", \"tensors\": %zu, \"from_cache\": %s, "
        "\"verified\": %s}\n",
        hex.c_str(), (*model)->tensors().size(),
        (*model)->digest().from_cache ? "true" : "false",
        flags.Has("--verify") ? "true" : "false");
    return 0;
  }
  std::printf("%s\n", hex.c_str());
  std::fprintf(
      stderr, "%zu tensors, %s\n", (*model)->tensors().size(),
      (*model)->digest().from_cache ? "from the digest cache" : "hashed");
  return 0;
}

int Quantize(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return Help(kModelUsage);
  if (args.empty() || args.back().rfind("--", 0) == 0) {
    return Usage(kModelUsage, "model quantize needs a model directory");
  }
  Flags flags({"--type", "--out"}, {});
  std::string error;
  if (!flags.Parse({args.begin(), args.end() - 1}, &error)) {
    return Usage(kModelUsage, error);
  }
  if (!flags.Has("--type") || !flags.Has("--out")) {
    return Usage(kModelUsage, "model quantize needs --type and --out");
  }
  const std::optional<kernels::DType> type =
      km::QuantTypeFromName(flags.Get("--type"));
  if (!type) {
    return Usage(kModelUsage, "--type: got \"" + flags.Get("--type") +
                                  "\", want " + km::kQuantTypeNames);
  }
  const auto start = Clock::now();
  std::string tokenizer_note;
  auto result =
      QuantizeModel(args.back(), *type, flags.Get("--out"), &tokenizer_note);
  if (!result.ok()) return Fail(result.status());
  std::string copied;
  for (const std::string& f : result->copied) copied += " " + f;
  std::printf("wrote %s: %s, %lld tensors, %.1f MiB (%.1f s)%s%s\n",
              flags.Get("--out").c_str(),
              std::string(kernels::DTypeName(*type)).c_str(),
              static_cast<long long>(result->tensors),
              double(result->bytes) / (1 << 20),
              std::chrono::duration<double>(Clock::now() - start).count(),
              copied.empty() ? "" : "; copied", copied.c_str());
  if (tokenizer_note.empty()) {
    std::printf(
        "tokenizer: written as tokenizer.ggml.* (llama.cpp reads it)\n");
  } else {
    PrintError("note", tokenizer_note);
  }
  return 0;
}

}  // namespace

int RunModelCommand(const std::vector<std::string>& args) {
  if (args.empty()) return Usage(kModelUsage, "");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    return Help(kModelUsage);
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "synth") return Synth(rest);
  if (args[0] == "digest") return Digest(rest);
  if (args[0] == "quantize") return Quantize(rest);
  return Usage(kModelUsage, "unknown model command \"" + args[0] + "\"");
}

// The prompt's ids, and how to print the output as it grows: the text
// (through the model's tokenizer) or, for --prompt-ids, the ids.
struct PromptCodec {
  std::vector<int32_t> prompt;
  std::string echo;  // Printed before the output.
  // The output so far; `final` once generation ended (nothing held back).
  std::function<std::string(const std::vector<int32_t>&, bool final)> render;
};

// Drops the U+FFFD that an incomplete UTF-8 sequence at the end of the
// decoded text became, so that it is printed once the sequence completes.
std::string WithoutTrailingReplacement(std::string text) {
  constexpr std::string_view kFffd = "\xEF\xBF\xBD";
  while (text.size() >= kFffd.size() &&
         text.compare(text.size() - kFffd.size(), kFffd.size(), kFffd) == 0) {
    text.resize(text.size() - kFffd.size());
  }
  return text;
}

kernels::StatusOr<PromptCodec> MakePromptCodec(
    const Flags& flags, const std::string& model_dir,
    const std::string& model_source) {
  PromptCodec codec;
  if (flags.Has("--prompt-ids")) {
    std::string error;
    auto ids = ParseTokenList(flags.Get("--prompt-ids"), &error);
    if (!ids) return kernels::InvalidArgument("--prompt-ids: " + error);
    codec.prompt = *ids;
    codec.render = [](const std::vector<int32_t>& out, bool) {
      std::string s;
      for (int32_t id : out) s += " " + std::to_string(id);
      return s;
    };
    return codec;
  }
#if LAYERPROOF_WITH_TEXT
  // tokenizer.json beside the model wins; else a GGUF's metadata.
  LP_ASSIGN_OR_RETURN(std::unique_ptr<text::ModelText> loaded_text,
                      text::LoadModelTextFor(model_dir, model_source));
  if (loaded_text == nullptr) {
    return kernels::Status(kernels::StatusCode::kNotFound,
                           model_dir + "/tokenizer.json: not found, and " +
                               model_source +
                               " has no tokenizer.ggml.* metadata; use "
                               "--prompt-ids");
  }
  std::shared_ptr<const text::ModelText> t = std::move(loaded_text);
  if (flags.Has("--chat")) {
    text::ChatInput chat;
    if (flags.Has("--system")) {
      chat.messages.push_back(
          {{"role", "system"}, {"content", flags.Get("--system")}});
    }
    chat.messages.push_back(
        {{"role", "user"}, {"content", flags.Get("--prompt")}});
    chat.add_generation_prompt = true;
    chat.now_unix_seconds = static_cast<int64_t>(std::time(nullptr));
    LP_ASSIGN_OR_RETURN(codec.prompt, t->EncodeChat(std::move(chat)));
  } else {
    LP_ASSIGN_OR_RETURN(codec.prompt, t->EncodePrompt(flags.Get("--prompt")));
    codec.echo = flags.Get("--prompt");
  }
  codec.render = [t](const std::vector<int32_t>& out, bool final) {
    auto text = t->tokenizer().Decode(out, /*skip_special=*/true);
    if (!text.ok()) return std::string();
    return final ? *std::move(text)
                 : WithoutTrailingReplacement(*std::move(text));
  };
  return codec;
#else
  (void)model_dir;
  (void)model_source;
  return kernels::Status(kernels::StatusCode::kUnimplemented,
                         "--prompt: this build has no tokenizer (text/ needs "
                         "Oniguruma and utf8proc); use --prompt-ids");
#endif
}

int RunGenerate(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return Help(kGenerateUsage);
  Flags flags({"--model", "--prompt", "--prompt-ids", "--system",
               "--max-tokens", "--temperature", "--top-k", "--top-p", "--seed",
               "--backend", "--threads"},
              {"--chat"});
  std::string error;
  if (!flags.Parse(args, &error)) return Usage(kGenerateUsage, error);
  if (!flags.Has("--model") ||
      flags.Has("--prompt") == flags.Has("--prompt-ids")) {
    return Usage(kGenerateUsage,
                 "generate needs --model and one of --prompt, --prompt-ids");
  }
  if ((flags.Has("--chat") || flags.Has("--system")) &&
      !flags.Has("--prompt")) {
    return Usage(kGenerateUsage, "--chat and --system need --prompt");
  }
  if (flags.Has("--system") && !flags.Has("--chat")) {
    return Usage(kGenerateUsage, "--system needs --chat");
  }
  const auto max_tokens = flags.GetInt("--max-tokens", 32, 1, 1 << 20, &error);
  const auto top_k = flags.GetInt("--top-k", 0, 0, INT32_MAX, &error);
  const auto seed = flags.GetInt("--seed", 0, 0, INT64_MAX, &error);
  const auto threads = flags.GetInt("--threads", 0, 0, 1024, &error);
  const auto temperature = flags.GetDouble("--temperature", 0, &error);
  const auto top_p = flags.GetDouble("--top-p", 1, &error);
  if (!max_tokens || !top_k || !seed || !threads || !temperature || !top_p) {
    return Usage(kGenerateUsage, error);
  }
  auto loaded = LoadEngine(flags.Get("--model"), flags.Get("--backend"),
                           static_cast<int>(*threads), /*full_context=*/false,
                           /*progress=*/true);
  if (!loaded.ok()) return Fail(loaded.status());
  // The tokenizer lives in the model directory (a GGUF file's directory),
  // or in the GGUF file's metadata.
  auto codec =
      MakePromptCodec(flags, loaded->model->dir(), loaded->model->source());
  if (!codec.ok()) return Fail(codec.status());
  const std::vector<int32_t>& prompt = codec->prompt;

  km::GenerationRequest request;
  request.prompt = prompt;
  request.max_new_tokens = *max_tokens;
  request.sampling.temperature = static_cast<float>(*temperature);
  request.sampling.top_k = static_cast<int32_t>(*top_k);
  request.sampling.top_p = static_cast<float>(*top_p);
  request.sampling.seed = static_cast<uint64_t>(*seed);
  km::Engine& engine = *loaded->engine;
  auto id = engine.Add(request);
  if (!id.ok()) return Fail(id.status());

  // Stream the output as it grows: render everything so far and print the
  // new suffix, so multi-byte characters split across tokens come out whole.
  std::fputs(codec->echo.c_str(), stdout);
  std::vector<int32_t> output;
  std::string printed;
  const auto start = Clock::now();
  Clock::time_point first_token;
  auto print_new = [&](bool final) {
    const std::string text = codec->render(output, final);
    if (text.size() > printed.size() &&
        text.compare(0, printed.size(), printed) == 0) {
      std::fputs(text.c_str() + printed.size(), stdout);
      std::fflush(stdout);
      printed = text;
    }
  };
  while (!engine.idle()) {
    std::vector<km::TokenEvent> events;
    const kernels::Status s = engine.Step(&events);
    if (!s.ok()) return Fail(s);
    for (const km::TokenEvent& e : events) {
      if (output.empty()) first_token = Clock::now();
      output.push_back(e.token);
    }
    print_new(/*final=*/false);
  }
  print_new(/*final=*/true);
  const auto end = Clock::now();
  const auto finished = engine.TakeFinished();
  const double prefill_s =
      std::chrono::duration<double>(first_token - start).count();
  const double decode_s =
      std::chrono::duration<double>(end - first_token).count();
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "[%s] prompt %zu tokens, generated %zu (%s); prefill %.1f ms "
      "(%.1f tokens/s), decode %.1f tokens/s\n",
      std::string(loaded->backend->name()).c_str(), prompt.size(),
      output.size(),
      finished.empty() ? "?" : km::FinishReasonName(finished[0].finish),
      prefill_s * 1e3, prompt.size() / prefill_s,
      output.size() > 1 ? (output.size() - 1) / decode_s : 0.0);
  return 0;
}

int RunForward(const std::vector<std::string>& args) {
  if (WantsHelp(args)) return Help(kForwardUsage);
  Flags flags({"--model", "--tokens", "--logits-out", "--backend", "--threads"},
              {});
  std::string error;
  if (!flags.Parse(args, &error)) return Usage(kForwardUsage, error);
  if (!flags.Has("--model") || !flags.Has("--tokens")) {
    return Usage(kForwardUsage, "forward needs --model and --tokens");
  }
  const auto threads = flags.GetInt("--threads", 0, 0, 1024, &error);
  if (!threads) return Usage(kForwardUsage, error);
  const auto tokens = ParseTokenList(flags.Get("--tokens"), &error);
  if (!tokens) return Usage(kForwardUsage, error);
  auto loaded = LoadEngine(flags.Get("--model"), flags.Get("--backend"),
                           static_cast<int>(*threads), /*full_context=*/false,
                           /*progress=*/true);
  if (!loaded.ok()) return Fail(loaded.status());
  const km::Model& model = *loaded->model;
  const int64_t n = static_cast<int64_t>(tokens->size());
  const int64_t width = model.config().hidden_size;

  // Hash each layer's rows as the tap delivers them, as the prover does.
  class HashingTap : public km::LayerTap {
   public:
    explicit HashingTap(int64_t layers)
        : bar_("forward", layers + 1, "layers") {}
    void OnLayerRows(km::SequenceId, int64_t layer, int64_t, const float* rows,
                     int64_t n, int64_t width) override {
      km::LayerHasher h(layer, width);
      h.AddRows(rows, n);
      hashes.push_back(kernels::HexDigest(h.Finish()));
      bar_.Update(layer + 1);
    }
    void Done() { bar_.Finish(); }
    std::vector<std::string> hashes;

   private:
    ProgressBar bar_;
  } tap(model.config().num_layers);
  std::vector<float> logits;
  const bool want_logits = flags.Has("--logits-out");
  if (want_logits) logits.resize(n * model.config().vocab_size);
  const kernels::Status s = loaded->engine->Forward(
      *tokens, &tap, 1, want_logits ? logits.data() : nullptr);
  tap.Done();
  if (!s.ok()) return Fail(s);
  if (want_logits) {
    std::ofstream out(flags.Get("--logits-out"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(logits.data()),
              static_cast<std::streamsize>(logits.size() * sizeof(float)));
    if (!out) {
      PrintError("layerproof", "cannot write " + flags.Get("--logits-out"));
      return 1;
    }
  }
  std::printf(
      "{\n  \"spec_version\": %d,\n  \"model_digest\": \"%s\",\n"
      "  \"backend\": \"%s\",\n  \"positions\": %lld,\n"
      "  \"width\": %lld,\n  \"vocab\": %lld,\n  \"layers\": [\n",
      kernels::kSpecVersion, kernels::HexDigest(model.digest().root).c_str(),
      std::string(loaded->backend->name()).c_str(), static_cast<long long>(n),
      static_cast<long long>(width),
      static_cast<long long>(model.config().vocab_size));
  for (size_t l = 0; l < tap.hashes.size(); ++l) {
    std::printf("    {\"layer\": %zu, \"sha256\": \"%s\"}%s\n", l,
                tap.hashes[l].c_str(), l + 1 < tap.hashes.size() ? "," : "");
  }
  std::printf("  ]\n}\n");
  return 0;
}

}  // namespace layerproof::cli
