// Writes the seeds of the record, log and report fuzz targets into
// tests/fuzz/corpus/<target>/ (the argument is the corpus directory):
// records signed with the fixed keys (fuzz_keys.h) by the product's own
// signing code, checkpoints and proofs of the fixed log (fuzz_log.h), a
// FAIL_TIMEOUT and a PASS evidence bundle logged in a two-entry log, opening
// streams, and a compliance report built by the verifier's report builder.
// Deterministic: every run writes the same bytes. Not part of `all`:
//   cmake --build build --target fuzz_make_corpus &&
//   build/tests/fuzz/fuzz_make_corpus tests/fuzz/corpus
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "check/bundle_check.h"
#include "check/report_format.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/inference.pb.h"
#include "layerproof/v1/log.pb.h"
#include "layerproof/v1/opening.pb.h"
#include "store/envelope.h"
#include "store/memory_log.h"
#include "store/merkle.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_log.h"
#include "tests/fuzz/fuzz_model.h"
#include "tests/fuzz/fuzz_proto.h"
#include "tests/store/records_fixture.h"
#include "verifier/audit_store.h"
#include "verifier/report_builder.h"

namespace fs = std::filesystem;
namespace fuzz = layerproof::fuzz;
namespace store = layerproof::store;
namespace v1 = layerproof::v1;

namespace {

fs::path root;

template <typename T>
T Must(absl::StatusOr<T> v, const char* what) {
  if (!v.ok()) {
    std::fprintf(stderr, "make_corpus: %s: %s\n", what,
                 v.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(v);
}

void Write(const std::string& target, const std::string& name,
           const std::string& bytes) {
  fs::create_directories(root / target);
  std::ofstream(root / target / name, std::ios::binary) << bytes;
}

std::string Str(const store::Sha256Hash& h) {
  return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}

std::string U16(size_t n) {
  return std::string{static_cast<char>(n & 0xff), static_cast<char>(n >> 8)};
}

std::string Note(uint64_t size) {
  static const auto signer = fuzz::LogSigner();
  return Must(signer->Sign(fuzz::FuzzCheckpoint(size)), "sign");
}

v1::LogInclusion Inclusion(const store::InMemoryTree& tree,
                           const std::string& note, uint64_t index,
                           uint64_t size) {
  v1::LogInclusion inc;
  inc.set_leaf_index(index);
  inc.set_tree_size(size);
  inc.set_checkpoint(note);
  for (const auto& h :
       Must(store::InclusionProof(tree, index, size), "proof")) {
    inc.add_inclusion_proof(Str(h));
  }
  return inc;
}

void Records() {
  v1::Commitment c = store::fixture::ValidCommitment();
  c.set_prover_id(fuzz::kProverId);
  Write("commitment", "valid", fuzz::Deterministic(c));
  c.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
  c.set_max_new_tokens(c.output_tokens());
  Write("commitment", "max_tokens", fuzz::Deterministic(c));
  v1::Verdict v = store::fixture::ValidVerdict();
  Write("verdict", "pass", fuzz::Deterministic(v));
  v.set_outcome(v1::FAIL_MISMATCH);
  v.mutable_mismatch()->set_layer(3);
  v.mutable_mismatch()->set_expected(std::string(32, '\x0a'));
  v.mutable_mismatch()->set_got(std::string(32, '\x0b'));
  v.set_detail("layer 3 differs");
  Write("verdict", "fail_mismatch", fuzz::Deterministic(v));
  v1::SubmissionPromise p;
  p.set_request_id(std::string(16, '\x01'));
  p.set_commitment_leaf_hash(std::string(32, '\x07'));
  p.set_prover_id(fuzz::kProverId);
  p.set_log_origin(fuzz::kLogOrigin);
  p.set_promised_at_unix_nanos(1764460000000000000);
  p.set_log_by_unix_nanos(1764460060000000000);
  Write("verdict", "promise", fuzz::Deterministic(p));

  Write("envelope", "commitment",
        Must(store::SignCommitment(store::fixture::ValidCommitment(),
                                   fuzz::ProverKey()),
             "sign commitment"));
  Write("envelope", "verdict",
        Must(store::SignVerdict(store::fixture::ValidVerdict(),
                                fuzz::VerifierKey()),
             "sign verdict"));
  Write("envelope", "promise",
        Must(store::SignEnvelope(store::kSubmissionPromisePayloadType,
                                 fuzz::Deterministic(p), fuzz::ProverKey()),
             "sign promise"));
}

void LogFormats() {
  const store::InMemoryTree& tree = fuzz::FuzzTree();
  const uint64_t n = fuzz::kFuzzLogSize;
  Write("checkpoint", "empty", Note(0));
  Write("checkpoint", "one", Note(1));
  Write("checkpoint", "full", Note(n));
  store::Checkpoint ext = fuzz::FuzzCheckpoint(5);
  ext.extensions = {"extension line"};
  Write("checkpoint", "extension", Must(fuzz::LogSigner()->Sign(ext), "sign"));
  Write("checkpoint", "base64",
        store::Base64Encode(store::AsBytes(std::string("layerproof"))));

  // Inclusion: wire (0), text (1), raw (2).
  for (auto [index, size] :
       {std::pair<uint64_t, uint64_t>{0, 1}, {5, 6}, {13, n}, {n - 1, n}}) {
    Write("inclusion_proof",
          "wire_" + std::to_string(index) + "_" + std::to_string(size),
          std::string(1, '\0') +
              fuzz::Deterministic(Inclusion(tree, Note(size), index, size)));
    std::string raw = {2, static_cast<char>(size), static_cast<char>(index), 0};
    raw += std::string(32, '\0');
    for (const auto& h : Must(store::InclusionProof(tree, index, size), "p")) {
      raw += Str(h);
    }
    Write("inclusion_proof",
          "raw_" + std::to_string(index) + "_" + std::to_string(size), raw);
  }
  const auto proof = Must(store::InclusionProof(tree, 13, n), "proof");
  std::string text = std::string(1, '\1');
  for (size_t i = 0; i < proof.size(); ++i) {
    text += (i ? "," : "") + store::HexEncode(proof[i]);
  }
  Write("inclusion_proof", "text_proof", text);
  Write("inclusion_proof", "text_leaves",
        "\1"
        "6c6561662d30\n\n6c6561662d31\r\n");

  // Consistency: wire (0), raw (1).
  for (auto [old_size, new_size] : {std::pair<uint64_t, uint64_t>{0, 5},
                                    {1, 2},
                                    {7, 19},
                                    {16, n},
                                    {n, n}}) {
    v1::GetConsistencyProofResponse response;
    std::string raw = {1, static_cast<char>(old_size),
                       static_cast<char>(new_size), 0};
    raw += std::string(32, '\0');
    for (const auto& h :
         Must(store::ConsistencyProof(tree, old_size, new_size), "proof")) {
      response.add_proof(Str(h));
      raw += Str(h);
    }
    const std::string note = Note(new_size);
    const std::string name =
        std::to_string(old_size) + "_" + std::to_string(new_size);
    Write("consistency_proof", "wire_" + name,
          std::string{0, static_cast<char>(old_size)} + U16(note.size()) +
              note + fuzz::Deterministic(response));
    Write("consistency_proof", "raw_" + name, raw);
  }
}

void OpeningStreams() {
  // layers {1, 3}: count 2, gaps 1 and 1; positions 3, hidden 4 (small
  // shapes), limit 1 MiB.
  auto stream = [](uint32_t positions, uint32_t hidden, size_t rows_per_chunk) {
    std::string out = {
        2, 1, 1, 0, static_cast<char>(positions), static_cast<char>(hidden),
        10};
    v1::OpenChunk header;
    header.mutable_header()->set_positions(positions);
    header.mutable_header()->set_hidden_size(hidden);
    header.mutable_header()->add_layers(1);
    header.mutable_header()->add_layers(3);
    header.mutable_header()->set_salt(std::string(32, '\x05'));
    header.mutable_header()->add_prompt_token_ids(1);
    header.mutable_header()->add_output_token_ids(2);
    std::string bytes = fuzz::Deterministic(header);
    out += U16(bytes.size()) + bytes;
    for (uint32_t layer : {1u, 3u}) {
      for (uint32_t p = 0; p < positions; p += rows_per_chunk) {
        const uint32_t n = std::min<uint32_t>(rows_per_chunk, positions - p);
        v1::OpenChunk rows;
        rows.mutable_rows()->set_layer(layer);
        rows.mutable_rows()->set_position0(p);
        std::string data(n * hidden * 4, '\0');
        for (size_t i = 0; i < data.size(); i += 4) data[i + 3] = '\x3f';
        rows.mutable_rows()->set_data(data);
        bytes = fuzz::Deterministic(rows);
        out += U16(bytes.size()) + bytes;
      }
    }
    return out;
  };
  Write("opening_stream", "one_chunk_per_layer", stream(3, 4, 3));
  Write("opening_stream", "row_per_chunk", stream(3, 4, 1));
  Write("opening_stream", "wide", stream(2, 16, 1));
}

// A commitment and its verdict, logged at 0 and 1; the bundle of `verdict`.
void Bundles() {
  const fuzz::FuzzModel& model = fuzz::TheFuzzModel();
  v1::Commitment c = store::fixture::ValidCommitment();
  c.set_prover_id(fuzz::kProverId);
  c.set_model_digest(model.digest);
  c.set_num_layers(model.model->config().num_layers);
  c.set_hidden_size(model.model->config().hidden_size);
  c.clear_layer_hashes();
  for (int l = 0; l <= c.num_layers(); ++l) {
    c.add_layer_hashes(std::string(32, static_cast<char>(0x10 + l)));
  }
  const std::string commitment =
      Must(store::SignCommitment(c, fuzz::ProverKey()), "sign");
  for (bool pass : {false, true}) {
    v1::Verdict v = store::fixture::ValidVerdict();
    v.set_commitment_leaf_index(0);
    v.set_commitment_leaf_hash(Str(store::LeafHash(commitment)));
    v.set_verifier_id(fuzz::kVerifierId);
    if (!pass) {
      v.set_outcome(v1::FAIL_TIMEOUT);
      v.set_head_checked(false);
      v.clear_audited_layers();
      v.set_detail("opening: not complete by the deadline");
    }
    const std::string verdict =
        Must(store::SignVerdict(v, fuzz::VerifierKey()), "sign");
    store::InMemoryTree tree;
    tree.Append(commitment);
    tree.Append(verdict);
    store::Checkpoint cp;
    cp.origin = fuzz::kLogOrigin;
    cp.size = 2;
    cp.root = tree.Root();
    const std::string note = Must(fuzz::LogSigner()->Sign(cp), "sign");
    v1::EvidenceBundle b;
    b.set_format_version(layerproof::check::kEvidenceFormatVersion);
    b.set_log_origin(fuzz::kLogOrigin);
    b.set_commitment_envelope(commitment);
    *b.mutable_commitment_inclusion() = Inclusion(tree, note, 0, 2);
    b.set_verdict_envelope(verdict);
    *b.mutable_verdict_inclusion() = Inclusion(tree, note, 1, 2);
    if (pass) {
      v1::OpeningHeader* h = b.mutable_opening();
      h->set_commitment_envelope(commitment);
      h->set_salt(std::string(32, '\x05'));
      for (int i = 0; i < 5; ++i) h->add_prompt_token_ids(1 + i);
      for (int i = 0; i < 3; ++i) h->add_output_token_ids(10 + i);
      h->set_positions(7);
      h->set_hidden_size(c.hidden_size());
      h->add_layers(0);
      h->add_layers(2);
      for (uint32_t k : {0u, 2u}) {
        v1::OpenedLayer* l = b.add_opened_layers();
        l->set_layer(k);
        l->set_data(std::string(7 * c.hidden_size() * 4, '\0'));
      }
    }
    Write("evidence_bundle", pass ? "pass_unhashed_opening" : "fail_timeout",
          fuzz::Deterministic(b));
  }
}

void Report() {
  store::LogOptions options;
  options.origin = fuzz::kLogOrigin;
  options.signer = fuzz::LogSigner();
  auto log = Must(store::MemoryLog::Create(options), "log");
  v1::Commitment c = store::fixture::ValidCommitment();
  c.set_prover_id(fuzz::kProverId);
  Must(log->Append(Must(store::SignCommitment(c, fuzz::ProverKey()), "sign")),
       "append");
  const fs::path dir = fs::temp_directory_path() /
                       ("lp_make_corpus_" + std::to_string(::getpid()));
  auto audits =
      Must(layerproof::verifier::AuditStore::Open(dir.string()), "audit store");
  layerproof::verifier::ReportInputs in;
  in.from_unix_nanos = 0;
  in.to_unix_nanos = int64_t{1} << 62;
  in.verifier_id = fuzz::kVerifierId;
  in.log_origin = fuzz::kLogOrigin;
  in.generated_at = absl::FromUnixNanos(1796136600000000000);
  in.checkpoint_note = Must(log->LatestCheckpoint(), "checkpoint");
  in.checkpoint = Must(fuzz::LogVerifier().Verify(in.checkpoint_note), "cp");
  auto report =
      Must(layerproof::verifier::BuildReport(*log, *audits, in), "report");
  audits.reset();
  fs::remove_all(dir);
  const std::string payload = report.dump();
  const std::string envelope =
      Must(store::SignEnvelope(layerproof::check::kReportPayloadType, payload,
                               fuzz::VerifierKey()),
           "sign report");
  Write(
      "report", "dsse_json",
      std::string(1, '\0') +
          Must(layerproof::check::ReportEnvelopeToDsseJson(envelope), "dsse"));
  Write("report", "envelope", std::string(1, '\1') + envelope);
  Write("report", "payload", std::string(1, '\2') + payload);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus tests/fuzz/corpus\n");
    return 2;
  }
  root = argv[1];
  Records();
  LogFormats();
  OpeningStreams();
  Bundles();
  Report();
  std::printf("make_corpus: seeds written under %s\n", root.c_str());
  return 0;
}
