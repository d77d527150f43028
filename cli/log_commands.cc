// `layerproof log ...`: offline checks of the log's Merkle proofs and roots
// (store/merkle.h). They need nothing but hashes, so clients and third
// parties can run them anywhere; `fsck` checks a log directory read-only
// with the public key. Exit codes: 0 verified (or printed), 1 a well-formed
// proof that does not verify (fsck: an inconsistent log), 2 malformed input
// or usage.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/flags.h"
#include "cli/print_error.h"
#include "cli/store_commands.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"

namespace layerproof::cli {
namespace {

constexpr int kVerified = 0;
constexpr int kNotVerified = 1;
constexpr int kBadInput = 2;

// One subcommand. To add one (fsck, ...), write its Run function and add a
// row to kSubcommands.
struct Subcommand {
  const char* name;
  const char* usage;  // flags, after "layerproof log NAME"
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

int BadInput(const std::string& command, const std::string& message) {
  PrintError("layerproof log " + command, message);
  return kBadInput;
}

// A parsed command line, or the exit code to return.
struct Parsed {
  Flags flags;
  std::optional<int> exit_code;
};

Parsed ParseFlags(const std::string& command,
                  const std::set<std::string>& required,
                  const std::vector<std::string>& args) {
  Parsed parsed{Flags(required, {}), std::nullopt};
  std::string error;
  if (!parsed.flags.Parse(args, &error)) {
    parsed.exit_code = BadInput(command, error);
    return parsed;
  }
  for (const std::string& flag : required) {
    if (!parsed.flags.Has(flag)) {
      parsed.exit_code = BadInput(command, flag + ": missing");
      return parsed;
    }
  }
  return parsed;
}

// Decimal uint64 (no sign, no spaces); *error names the flag otherwise.
std::optional<uint64_t> GetSize(const Flags& flags, const std::string& flag,
                                std::string* error) {
  const std::string text = flags.Get(flag);
  uint64_t value = 0;
  bool ok = !text.empty() && text.size() <= 20;
  for (char c : text) {
    if (!ok) break;
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) ok = false;
    value = value * 10 + digit;
  }
  if (!ok) {
    *error = flag + ": got \"" + text + "\", want an integer in 0 .. " +
             std::to_string(UINT64_MAX);
    return std::nullopt;
  }
  return value;
}

std::optional<store::Sha256Hash> GetHash(const Flags& flags,
                                         const std::string& flag,
                                         std::string* error) {
  absl::StatusOr<store::Sha256Hash> hash = store::ParseHash(flags.Get(flag));
  if (!hash.ok()) {
    *error = flag + ": " + std::string(hash.status().message());
    return std::nullopt;
  }
  return *hash;
}

std::optional<std::vector<store::Sha256Hash>> GetProof(const Flags& flags,
                                                       std::string* error) {
  absl::StatusOr<std::vector<store::Sha256Hash>> proof =
      store::ParseProof(flags.Get("--proof"));
  if (!proof.ok()) {
    *error = "--proof: " + std::string(proof.status().message());
    return std::nullopt;
  }
  return *std::move(proof);
}

// Reports a verification result: OK is 0, FailedPrecondition (a proof that
// does not verify) is 1, anything else (malformed) is 2.
int Report(const std::string& command, const absl::Status& status) {
  if (status.ok()) {
    std::printf("verified\n");
    return kVerified;
  }
  if (status.code() == absl::StatusCode::kFailedPrecondition) {
    std::printf("NOT verified: %s\n", std::string(status.message()).c_str());
    return kNotVerified;
  }
  return BadInput(command, std::string(status.message()));
}

int RunVerifyInclusion(const std::vector<std::string>& args) {
  const std::string command = "verify-inclusion";
  Parsed parsed = ParseFlags(
      command, {"--leaf-hash", "--index", "--size", "--root", "--proof"}, args);
  if (parsed.exit_code) return *parsed.exit_code;
  const Flags& flags = parsed.flags;
  std::string error;
  const auto leaf_hash = GetHash(flags, "--leaf-hash", &error);
  if (!leaf_hash) return BadInput(command, error);
  const auto index = GetSize(flags, "--index", &error);
  if (!index) return BadInput(command, error);
  const auto size = GetSize(flags, "--size", &error);
  if (!size) return BadInput(command, error);
  const auto root = GetHash(flags, "--root", &error);
  if (!root) return BadInput(command, error);
  const auto proof = GetProof(flags, &error);
  if (!proof) return BadInput(command, error);
  return Report(command, store::VerifyInclusion(*leaf_hash, *index, *size,
                                                *proof, *root));
}

int RunVerifyConsistency(const std::vector<std::string>& args) {
  const std::string command = "verify-consistency";
  Parsed parsed = ParseFlags(
      command,
      {"--old-size", "--new-size", "--old-root", "--new-root", "--proof"},
      args);
  if (parsed.exit_code) return *parsed.exit_code;
  const Flags& flags = parsed.flags;
  std::string error;
  const auto old_size = GetSize(flags, "--old-size", &error);
  if (!old_size) return BadInput(command, error);
  const auto new_size = GetSize(flags, "--new-size", &error);
  if (!new_size) return BadInput(command, error);
  const auto old_root = GetHash(flags, "--old-root", &error);
  if (!old_root) return BadInput(command, error);
  const auto new_root = GetHash(flags, "--new-root", &error);
  if (!new_root) return BadInput(command, error);
  const auto proof = GetProof(flags, &error);
  if (!proof) return BadInput(command, error);
  return Report(command,
                store::VerifyConsistency(*old_size, *new_size, *old_root,
                                         *new_root, *proof));
}

int RunRoot(const std::vector<std::string>& args) {
  const std::string command = "root";
  Parsed parsed = ParseFlags(command, {"--leaves-file"}, args);
  if (parsed.exit_code) return *parsed.exit_code;
  const std::string path = parsed.flags.Get("--leaves-file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(command, "--leaves-file: cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return BadInput(command, "--leaves-file: cannot read " + path);
  absl::StatusOr<std::vector<std::string>> leaves =
      store::ParseLeafLines(text.str());
  if (!leaves.ok()) {
    return BadInput(command, "--leaves-file " + path + ": " +
                                 std::string(leaves.status().message()));
  }
  std::printf("%s\n", store::HexEncode(store::RootOfLeaves(*leaves)).c_str());
  return kVerified;
}

// Exit 0 with the size and root when the log is consistent, 1 with the first
// inconsistency (DataLoss), 2 when the key or the directory cannot be read.
int RunFsck(const std::vector<std::string>& args) {
  const std::string command = "fsck";
  Parsed parsed =
      ParseFlags(command, {"--db", "--origin", "--key-name", "--pub"}, args);
  if (parsed.exit_code) return *parsed.exit_code;
  const Flags& flags = parsed.flags;
  if (flags.Get("--origin").empty())
    return BadInput(command, "--origin: empty");
  if (flags.Get("--key-name").empty()) {
    return BadInput(command, "--key-name: empty");
  }
  absl::StatusOr<store::Ed25519PublicKey> key =
      store::ReadPublicKeyFile(flags.Get("--pub"));
  if (!key.ok()) {
    return BadInput(command, "--pub: " + std::string(key.status().message()));
  }
  const store::CheckpointVerifier verifier(flags.Get("--key-name"), *key);
  absl::StatusOr<store::LogFsckReport> report = store::RocksDbLog::Fsck(
      flags.Get("--db"), flags.Get("--origin"), verifier);
  if (!report.ok()) {
    if (report.status().code() == absl::StatusCode::kDataLoss) {
      std::printf("INCONSISTENT: %s\n",
                  std::string(report.status().message()).c_str());
      return kNotVerified;
    }
    return BadInput(command, "--db: " + std::string(report.status().message()));
  }
  std::printf("consistent\nsize %llu\nroot %s\ncheckpoint size %llu\n",
              static_cast<unsigned long long>(report->size),
              store::HexEncode(report->root).c_str(),
              static_cast<unsigned long long>(report->checkpoint_size));
  return kVerified;
}

constexpr Subcommand kSubcommands[] = {
    {"verify-inclusion",
     "--leaf-hash H --index I --size N --root R --proof h1,h2,...",
     "check that the leaf with hash H is leaf I of the tree (N, R)",
     RunVerifyInclusion},
    {"verify-consistency",
     "--old-size M --new-size N --old-root R1 --new-root R2 --proof h1,...",
     "check that the tree (M, R1) is a prefix of the tree (N, R2)",
     RunVerifyConsistency},
    {"root", "--leaves-file F",
     "print the RFC 6962 root of F: one leaf per line, the hex of its data\n"
     "      (an empty line is an empty leaf)",
     RunRoot},
    {"fsck", "--db DIR --origin ORIGIN --key-name NAME --pub KEY.pub",
     "re-derive the tree of the log in DIR from its leaves (read-only) and\n"
     "      check it against the last checkpoint, signed by KEY.pub",
     RunFsck},
};

void PrintUsage(std::FILE* out) {
  std::fputs("usage: layerproof log <subcommand> [flags]\n", out);
  for (const Subcommand& sub : kSubcommands) {
    std::fprintf(out, "  %s %s\n      %s\n", sub.name, sub.usage, sub.summary);
  }
  std::fputs(
      "Hashes are 64 hex digits; an empty --proof \"\" is the empty proof.\n"
      "Exit: 0 verified, 1 not verified (fsck: inconsistent), 2 malformed\n"
      "input.\n",
      out);
}

}  // namespace

int RunLogCommand(const std::vector<std::string>& args) {
  if (args.empty()) {
    PrintUsage(stderr);
    return kBadInput;
  }
  if (args[0] == "--help" || args[0] == "help") {
    PrintUsage(stdout);
    return 0;
  }
  for (const Subcommand& sub : kSubcommands) {
    if (args[0] == sub.name) {
      for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") {
          std::printf("usage: layerproof log %s %s\n      %s\n", sub.name,
                      sub.usage, sub.summary);
          std::puts("Exit: 0 verified, 1 not verified, 2 malformed input.");
          return 0;
        }
      }
      return sub.run(std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  PrintError("layerproof log", "unknown subcommand \"" + args[0] + "\"");
  PrintUsage(stderr);
  return kBadInput;
}

}  // namespace layerproof::cli
