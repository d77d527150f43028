// Tests for store/envelope and store/commitment: the DSSE pre-authentication
// encoding, signing and verifying envelopes (round trip, every kind of
// tampering, unknown keys, size limits, malformed bytes, payloads verified
// as received), the records' validation messages, and the salted digests.
//
// Known-answer source: the PAE example of the DSSE protocol
// (https://github.com/secure-systems-lab/dsse/blob/master/protocol.md,
// "Test Vectors": payload type "http://example.com/HelloWorld", payload
// "hello world").
#include "store/envelope.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/commitment.h"
#include "store/crypto.h"
#include "tests/store/records_fixture.h"

namespace layerproof::store {
namespace {

using ::testing::HasSubstr;

constexpr size_t kLimit = 1 << 20;

// A deterministic key: the 32-byte seed b, b, ..., b.
Ed25519PrivateKey KeyFromSeedByte(uint8_t b) {
  std::array<uint8_t, 32> seed;
  seed.fill(b);
  auto key = Ed25519PrivateKey::FromSeed(Bytes(seed));
  EXPECT_TRUE(key.ok()) << key.status();
  return std::move(key).value();
}

using fixture::Filled;
using fixture::ValidCommitment;
using fixture::ValidVerdict;

v1::Envelope ParseEnvelopeProto(const std::string& bytes) {
  v1::Envelope e;
  EXPECT_TRUE(e.ParseFromString(bytes));
  return e;
}

class EnvelopeTest : public ::testing::Test {
 protected:
  EnvelopeTest() : key_(KeyFromSeedByte(0x11)), other_(KeyFromSeedByte(0x22)) {
    keys_.Add(key_.public_key());
    keys_.Add(other_.public_key());
  }

  std::string Sign(std::string payload,
                   std::string_view type = kCommitmentPayloadType) {
    auto env = SignEnvelope(type, std::move(payload), key_);
    EXPECT_TRUE(env.ok()) << env.status();
    return env.ok() ? *env : std::string();
  }

  absl::StatusOr<VerifiedEnvelope> Verify(
      const std::string& bytes,
      std::string_view type = kCommitmentPayloadType) {
    return VerifyEnvelope(bytes, keys_, type, kLimit);
  }

  Ed25519PrivateKey key_;
  Ed25519PrivateKey other_;
  KeyRing keys_;
};

// ---------------------------------------------------------------------------
// PAE.

TEST(PreAuthEncoding, DsseSpecExample) {
  EXPECT_EQ(PreAuthEncoding("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
}

TEST(PreAuthEncoding, EmptyAndBinary) {
  EXPECT_EQ(PreAuthEncoding("", ""), "DSSEv1 0  0 ");
  const std::string body("a\0 b", 4);
  EXPECT_EQ(PreAuthEncoding("t", body), std::string("DSSEv1 1 t 4 a\0 b", 17));
}

// ---------------------------------------------------------------------------
// Sign and verify.

TEST_F(EnvelopeTest, RoundTrip) {
  const std::string payload = ValidCommitment().SerializeAsString();
  const std::string env = Sign(payload);
  auto v = Verify(env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->payload, payload);
  EXPECT_EQ(v->payload_type, kCommitmentPayloadType);
  ASSERT_EQ(v->key_ids.size(), 1u);
  EXPECT_EQ(v->key_ids[0], key_.public_key().KeyId());

  const v1::Envelope e = ParseEnvelopeProto(env);
  ASSERT_EQ(e.signatures_size(), 1);
  EXPECT_EQ(e.signatures(0).sig().size(), 64u);
  EXPECT_EQ(e.signatures(0).keyid().size(), 32u);
  // The signature is over PAE(type, payload), checked independently.
  EXPECT_TRUE(
      key_.public_key()
          .Verify(AsBytes(PreAuthEncoding(kCommitmentPayloadType, payload)),
                  AsBytes(e.signatures(0).sig()))
          .ok());

  auto c = ParseCommitment(v->payload);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->prover_id(), "prover-eu-1");
}

TEST_F(EnvelopeTest, SignCommitmentAndVerdict) {
  auto env = SignCommitment(ValidCommitment(), key_);
  ASSERT_TRUE(env.ok()) << env.status();
  auto v = Verify(*env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(ParseCommitment(v->payload).ok());

  auto venv = SignVerdict(ValidVerdict(), key_);
  ASSERT_TRUE(venv.ok()) << venv.status();
  auto vv = Verify(*venv, kVerdictPayloadType);
  ASSERT_TRUE(vv.ok()) << vv.status();
  auto verdict = ParseVerdict(vv->payload);
  ASSERT_TRUE(verdict.ok()) << verdict.status();
  EXPECT_EQ(verdict->commitment_leaf_index(), 7u);
}

TEST_F(EnvelopeTest, SignRefusesInvalidRecordsAndEmptyType) {
  v1::Commitment c = ValidCommitment();
  c.set_request_id("short");
  auto env = SignCommitment(c, key_);
  ASSERT_FALSE(env.ok());
  EXPECT_THAT(env.status().message(), HasSubstr("Commitment.request_id"));

  v1::Verdict v = ValidVerdict();
  v.set_outcome(v1::VERDICT_UNSPECIFIED);
  EXPECT_FALSE(SignVerdict(v, key_).ok());

  auto empty = SignEnvelope("", "x", key_);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(EnvelopeTest, TwoSignersBothReported) {
  const std::string payload = "body";
  v1::Envelope e = ParseEnvelopeProto(Sign(payload));
  auto sig =
      other_.Sign(AsBytes(PreAuthEncoding(kCommitmentPayloadType, payload)));
  ASSERT_TRUE(sig.ok());
  auto* s = e.add_signatures();
  const Sha256Hash id = other_.public_key().KeyId();
  s->set_keyid(id.data(), id.size());
  s->set_sig(sig->data(), sig->size());
  auto v = Verify(e.SerializeAsString());
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->key_ids.size(), 2u);
  EXPECT_EQ(v->key_ids[0], key_.public_key().KeyId());
  EXPECT_EQ(v->key_ids[1], id);
}

TEST_F(EnvelopeTest, TamperedPayloadFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  e.set_payload("paylaod");
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("does not verify"));
}

TEST_F(EnvelopeTest, TamperedTypeFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  e.set_payload_type(std::string(kVerdictPayloadType));
  const std::string bytes = e.SerializeAsString();
  // Expected commitment: the type itself is refused.
  auto as_commitment = Verify(bytes);
  ASSERT_FALSE(as_commitment.ok());
  EXPECT_THAT(as_commitment.status().message(),
              HasSubstr("Envelope.payload_type"));
  // Expected verdict: the type matches, but the signature covered the
  // commitment type (PAE binds it).
  auto as_verdict = Verify(bytes, kVerdictPayloadType);
  ASSERT_FALSE(as_verdict.ok());
  EXPECT_THAT(as_verdict.status().message(), HasSubstr("does not verify"));
}

TEST_F(EnvelopeTest, WrongExpectedTypeFails) {
  auto v = Verify(Sign("payload"), kVerdictPayloadType);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(),
              HasSubstr(std::string(kVerdictPayloadType)));
}

TEST_F(EnvelopeTest, TamperedSignatureFails) {
  const v1::Envelope good = ParseEnvelopeProto(Sign("payload"));
  for (size_t i : {size_t{0}, size_t{31}, size_t{32}, size_t{63}}) {
    v1::Envelope e = good;
    (*e.mutable_signatures(0)->mutable_sig())[i] ^= 0x01;
    auto v = Verify(e.SerializeAsString());
    ASSERT_FALSE(v.ok()) << "byte " << i;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST_F(EnvelopeTest, KeyIdOfAnotherKnownKeyFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  const Sha256Hash id = other_.public_key().KeyId();
  e.mutable_signatures(0)->set_keyid(id.data(), id.size());
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("does not verify"));
}

TEST_F(EnvelopeTest, UnknownKeyIdIsPermissionDeniedNamingIt) {
  Ed25519PrivateKey stranger = KeyFromSeedByte(0x33);
  auto env = SignEnvelope(kCommitmentPayloadType, "payload", stranger);
  ASSERT_TRUE(env.ok());
  auto v = Verify(*env);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(v.status().message(),
              HasSubstr(HexEncode(Bytes(stranger.public_key().KeyId()))));

  // A flipped keyid bit is an unknown key too.
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  (*e.mutable_signatures(0)->mutable_keyid())[0] ^= 0x80;
  EXPECT_EQ(Verify(e.SerializeAsString()).status().code(),
            absl::StatusCode::kPermissionDenied);

  // An empty key ring trusts nobody.
  EXPECT_EQ(
      VerifyEnvelope(Sign("payload"), KeyRing(), kCommitmentPayloadType, kLimit)
          .status()
          .code(),
      absl::StatusCode::kPermissionDenied);
}

TEST_F(EnvelopeTest, OneBadSignatureAmongGoodOnesFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  auto* s = e.add_signatures();
  const Sha256Hash id = other_.public_key().KeyId();
  s->set_keyid(id.data(), id.size());
  s->set_sig(Filled(64, '\x00'));
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("signatures[1]"));
}

TEST_F(EnvelopeTest, NoSignaturesFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  e.clear_signatures();
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("Envelope.signatures: got 0"));
}

TEST_F(EnvelopeTest, TooManySignaturesFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  while (e.signatures_size() <= kMaxEnvelopeSignatures) {
    *e.add_signatures() = e.signatures(0);
  }
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("Envelope.signatures: got 17"));
}

TEST_F(EnvelopeTest, DuplicateSignerFails) {
  v1::Envelope e = ParseEnvelopeProto(Sign("payload"));
  *e.add_signatures() = e.signatures(0);
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("signatures[1].keyid"));
}

TEST_F(EnvelopeTest, WrongLengthKeyIdOrSigFails) {
  const v1::Envelope good = ParseEnvelopeProto(Sign("payload"));
  v1::Envelope e = good;
  e.mutable_signatures(0)->mutable_keyid()->pop_back();
  auto v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(),
            "Envelope.signatures[0].keyid: got 31 bytes, want 32");

  e = good;
  e.mutable_signatures(0)->mutable_sig()->push_back('\0');
  v = Verify(e.SerializeAsString());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(),
            "Envelope.signatures[0].sig: got 65 bytes, want 64");
}

TEST_F(EnvelopeTest, OversizedIsRefusedBeforeParsing) {
  const std::string env = Sign(Filled(1000, 'x'));
  EXPECT_TRUE(
      VerifyEnvelope(env, keys_, kCommitmentPayloadType, env.size()).ok());
  auto v = VerifyEnvelope(env, keys_, kCommitmentPayloadType, env.size() - 1);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(),
              HasSubstr("want <= " + std::to_string(env.size() - 1)));
  // Garbage over the limit reports the limit, not "malformed".
  auto g =
      VerifyEnvelope(Filled(100, '\xff'), keys_, kCommitmentPayloadType, 10);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("want <= 10"));
}

TEST_F(EnvelopeTest, MalformedBytesFail) {
  for (const std::string& bad :
       {std::string("\xff\xff\xff\xff", 4),
        std::string("\x0a\x05"
                    "ab",
                    4),
        std::string("\x1a\x80", 2), std::string(1, '\x08')}) {
    auto v = Verify(bad);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(v.status().message(), "Envelope: malformed");
  }
}

TEST_F(EnvelopeTest, EveryTruncationFails) {
  const std::string env = Sign(ValidCommitment().SerializeAsString());
  for (size_t n = 0; n < env.size(); ++n) {
    auto v = Verify(env.substr(0, n));
    EXPECT_FALSE(v.ok()) << "prefix of " << n << " bytes";
  }
}

TEST_F(EnvelopeTest, RandomGarbageFails) {
  std::mt19937 rng(20261130);
  for (int trial = 0; trial < 500; ++trial) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_FALSE(Verify(bytes).ok()) << "trial " << trial;
  }
}

TEST_F(EnvelopeTest, RandomBitFlipsFail) {
  const std::string env = Sign(ValidCommitment().SerializeAsString());
  for (size_t i = 0; i < env.size(); ++i) {
    std::string bad = env;
    bad[i] ^= static_cast<char>(1 << (i % 8));
    EXPECT_FALSE(Verify(bad).ok()) << "byte " << i;
  }
}

// Regression (issue 13, item 5): unknown fields survived parsing and the
// leaf is the exact bytes, so anyone who saw an envelope could log a
// re-encoded copy first and lock the honest prover out of its request id.
// Every record now has one encoding; each variant below is refused.
TEST_F(EnvelopeTest, NonCanonicalPayloadsAreRefused) {
  const std::string canonical = ValidCommitment().SerializeAsString();
  ASSERT_TRUE(ParseCommitment(canonical).ok());
  const std::vector<std::pair<const char*, std::string>> variants = {
      // Field 1000, varint 42: unknown to this build.
      {"unknown field", canonical + std::string("\xc0\x3e\x2a", 3)},
      // A second prover_id (the last wins when parsed), written first.
      {"repeated field", std::string("\x12\x03"
                                     "old",
                                     5) +
                             canonical},
      // prompt_tokens = 0 written out explicitly (field 6, varint).
      {"explicit default", canonical + std::string("\x30\x00", 2)},
  };
  for (const auto& [what, payload] : variants) {
    SCOPED_TRACE(what);
    auto v = Verify(Sign(payload));
    ASSERT_TRUE(v.ok()) << v.status();  // the signature is over these bytes
    auto c = ParseCommitment(v->payload);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(std::string(c.status().message())
                    .starts_with("Commitment: not in canonical encoding"))
        << c.status();
  }
}

TEST_F(EnvelopeTest, EnvelopeWithUnknownFieldsOrReorderedIsRefused) {
  const std::string env = Sign("payload");
  ASSERT_TRUE(Verify(env).ok());
  // Field 15, length-delimited: an envelope extension this build lacks.
  auto extended = Verify(env + std::string("\x7a\x02"
                                           "hi",
                                           4));
  EXPECT_TRUE(std::string(extended.status().message())
                  .starts_with("Envelope: not in canonical encoding"))
      << extended.status();
  // The same fields in another order.
  v1::Envelope parsed;
  ASSERT_TRUE(parsed.ParseFromString(env));
  v1::Envelope type_only;
  type_only.set_payload_type(parsed.payload_type());
  v1::Envelope rest = parsed;
  rest.clear_payload_type();
  auto reordered =
      Verify(rest.SerializeAsString() + type_only.SerializeAsString());
  EXPECT_TRUE(std::string(reordered.status().message())
                  .starts_with("Envelope: not in canonical encoding"))
      << reordered.status();
}

TEST(KeyRing, AddIsIdempotentAndFindByKeyId) {
  KeyRing ring;
  Ed25519PrivateKey a = KeyFromSeedByte(0x44);
  EXPECT_EQ(ring.Find(a.public_key().KeyId()), nullptr);
  ring.Add(a.public_key());
  ring.Add(a.public_key());
  EXPECT_EQ(ring.size(), 1u);
  const Ed25519PublicKey* found = ring.Find(a.public_key().KeyId());
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->raw(), a.public_key().raw());
}

// ---------------------------------------------------------------------------
// Record validation.

struct CommitmentCase {
  const char* name;
  void (*mutate)(v1::Commitment&);
  const char* message;  // exact, or a prefix ending in ':'
};

TEST(ParseCommitment, ValidPasses) {
  auto c = ParseCommitment(ValidCommitment().SerializeAsString());
  ASSERT_TRUE(c.ok()) << c.status();
}

TEST(ParseCommitment, ErrorsNameTheField) {
  const std::vector<CommitmentCase> cases = {
      {"layer_hash_short",
       [](v1::Commitment& c) { c.mutable_layer_hashes(3)->pop_back(); },
       "Commitment.layer_hashes[3]: got 31 bytes, want 32"},
      {"request_id", [](v1::Commitment& c) { c.set_request_id("abc"); },
       "Commitment.request_id: got 3 bytes, want 16"},
      {"prover_id_empty", [](v1::Commitment& c) { c.clear_prover_id(); },
       "Commitment.prover_id: got 0 characters, want 1..256"},
      {"prover_id_space", [](v1::Commitment& c) { c.set_prover_id("a b"); },
       "Commitment.prover_id: got byte 0x20 at offset 1, want printable "
       "ASCII without spaces (0x21..0x7e)"},
      {"prover_id_long",
       [](v1::Commitment& c) { c.set_prover_id(std::string(257, 'p')); },
       "Commitment.prover_id: got 257 characters, want 1..256"},
      {"model_digest", [](v1::Commitment& c) { c.clear_model_digest(); },
       "Commitment.model_digest: got 0 bytes, want 32"},
      {"spec_version", [](v1::Commitment& c) { c.set_spec_version(0); },
       "Commitment.spec_version: got 0, want >= 1"},
      {"prompt_digest",
       [](v1::Commitment& c) { c.set_prompt_digest(Filled(33, 'a')); },
       "Commitment.prompt_digest: got 33 bytes, want 32"},
      {"prompt_tokens", [](v1::Commitment& c) { c.set_prompt_tokens(0); },
       "Commitment.prompt_tokens: got 0, want >= 1"},
      {"output_digest", [](v1::Commitment& c) { c.clear_output_digest(); },
       "Commitment.output_digest: got 0 bytes, want 32"},
      {"output_tokens", [](v1::Commitment& c) { c.set_output_tokens(0); },
       "Commitment.output_tokens: got 0, want >= 1"},
      {"too_many_tokens",
       [](v1::Commitment& c) { c.set_output_tokens(0xffffffffu); },
       "Commitment.prompt_tokens + output_tokens: got 4294967300, want <= "
       "16777216"},
      {"sampling_missing", [](v1::Commitment& c) { c.clear_sampling(); },
       "Commitment.sampling: got nothing, want the sampling parameters"},
      {"temperature_nan",
       [](v1::Commitment& c) {
         c.mutable_sampling()->set_temperature(std::nanf(""));
       },
       "Commitment.sampling.temperature: got nan, want 0 (greedy) or "
       "0.001..1000"},
      // Regression (issue 13): the smallest denormal overflowed logits/T.
      {"temperature_denormal",
       [](v1::Commitment& c) {
         c.mutable_sampling()->set_temperature(1.4e-45f);
       },
       "Commitment.sampling.temperature: got 1.4013e-45, want 0 (greedy) or "
       "0.001..1000"},
      {"temperature_negative",
       [](v1::Commitment& c) { c.mutable_sampling()->set_temperature(-1); },
       "Commitment.sampling.temperature: got -1, want 0 (greedy) or "
       "0.001..1000"},
      {"top_k", [](v1::Commitment& c) { c.mutable_sampling()->set_top_k(-1); },
       "Commitment.sampling.top_k: got -1, want >= 0"},
      {"top_p_unset",
       [](v1::Commitment& c) { c.mutable_sampling()->clear_top_p(); },
       "Commitment.sampling.top_p: got 0, want 0 < top_p <= 1 (1: no nucleus "
       "cut)"},
      {"seed_digest", [](v1::Commitment& c) { c.clear_seed_digest(); },
       "Commitment.seed_digest: got 0 bytes, want 32"},
      {"num_layers_zero", [](v1::Commitment& c) { c.set_num_layers(0); },
       "Commitment.num_layers: got 0, want 1..1024"},
      {"num_layers_big", [](v1::Commitment& c) { c.set_num_layers(1025); },
       "Commitment.num_layers: got 1025, want 1..1024"},
      {"layer_hash_count",
       [](v1::Commitment& c) { c.mutable_layer_hashes()->RemoveLast(); },
       "Commitment.layer_hashes: got 4 hashes, want num_layers + 1 = 5"},
      {"hidden_size", [](v1::Commitment& c) { c.set_hidden_size(0); },
       "Commitment.hidden_size: got 0, want 1..1048576"},
      {"nonce", [](v1::Commitment& c) { c.set_client_nonce(Filled(65, 'n')); },
       "Commitment.client_nonce: got 65 bytes, want <= 64"},
      {"created_at", [](v1::Commitment& c) { c.set_created_at_unix_nanos(-5); },
       "Commitment.created_at_unix_nanos: got -5, want > 0"},
      {"finish_unspecified",
       [](v1::Commitment& c) {
         c.set_finish_reason(v1::FINISH_REASON_UNSPECIFIED);
       },
       "Commitment.finish_reason: got 0, want STOP, MAX_TOKENS, CONTEXT_FULL "
       "or CANCELLED"},
      {"finish_unknown",
       [](v1::Commitment& c) {
         c.set_finish_reason(static_cast<v1::FinishReason>(99));
       },
       "Commitment.finish_reason: got 99, want STOP, MAX_TOKENS, CONTEXT_FULL "
       "or CANCELLED"},
      {"max_new_tokens", [](v1::Commitment& c) { c.set_max_new_tokens(2); },
       "Commitment.max_new_tokens: got 2, want >= output_tokens (3)"},
      {"stop_count",
       [](v1::Commitment& c) {
         for (int i = 0; i < 64; ++i) c.add_stop_token_ids(i);
       },
       "Commitment.stop_token_ids: got 65 ids, want <= 64"},
      {"stop_negative", [](v1::Commitment& c) { c.add_stop_token_ids(-1); },
       "Commitment.stop_token_ids[1]: got -1, want >= 0"},
      {"max_context", [](v1::Commitment& c) { c.set_max_context(7); },
       "Commitment.max_context: got 7, want >= prompt_tokens + output_tokens "
       "(8)"},
      {"max_tokens_claim",
       [](v1::Commitment& c) {
         c.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
       },
       "Commitment.finish_reason: got MAX_TOKENS, want a reason the counts "
       "allow (output_tokens < max_new_tokens)"},
      {"context_full_claim",
       [](v1::Commitment& c) {
         c.set_finish_reason(v1::FINISH_REASON_CONTEXT_FULL);
       },
       "Commitment.finish_reason: got CONTEXT_FULL, want a reason the counts "
       "allow (MAX_TOKENS comes first; the context must be full)"},
      {"cancelled_at_limit",
       [](v1::Commitment& c) {
         c.set_finish_reason(v1::FINISH_REASON_CANCELLED);
         c.set_max_new_tokens(3);
       },
       "Commitment.finish_reason: got CANCELLED, want a reason the counts "
       "allow (the output reached a limit)"},
  };
  for (const CommitmentCase& tc : cases) {
    v1::Commitment c = ValidCommitment();
    tc.mutate(c);
    // Through the wire, as a verifier sees it.
    auto parsed = ParseCommitment(c.SerializeAsString());
    ASSERT_FALSE(parsed.ok()) << tc.name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << tc.name;
    EXPECT_EQ(parsed.status().message(), tc.message) << tc.name;
  }
}

TEST(ParseCommitment, BoundaryValuesPass) {
  v1::Commitment c = ValidCommitment();
  c.set_client_nonce(Filled(64, 'n'));
  c.set_prover_id(std::string(256, '~'));
  c.mutable_sampling()->set_temperature(0);
  c.mutable_sampling()->set_top_k(0);
  c.mutable_sampling()->set_top_p(1);
  c.set_num_layers(kMaxLayers);
  c.clear_layer_hashes();
  for (uint32_t l = 0; l <= kMaxLayers; ++l)
    c.add_layer_hashes(Filled(32, 'h'));
  EXPECT_TRUE(ParseCommitment(c.SerializeAsString()).ok());
  c.clear_client_nonce();
  EXPECT_TRUE(ValidateCommitment(c).ok());
}

TEST(CheckStopRule, HonestEndingsPass) {
  v1::Commitment c = ValidCommitment();  // 3 outputs, stop id 2, STOP
  size_t allowed = 0;
  EXPECT_TRUE(CheckStopRule(c, std::vector<int32_t>{5, 6, 2}, &allowed).ok());
  EXPECT_EQ(allowed, 3u);
  c.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
  c.set_max_new_tokens(3);
  ASSERT_TRUE(ValidateCommitment(c).ok());
  EXPECT_TRUE(CheckStopRule(c, std::vector<int32_t>{5, 6, 7}, &allowed).ok());
  c.set_ignore_eos(true);  // stop ids are ordinary tokens then
  EXPECT_TRUE(CheckStopRule(c, std::vector<int32_t>{2, 2, 2}, &allowed).ok());
  c = ValidCommitment();
  c.set_finish_reason(v1::FINISH_REASON_CANCELLED);
  EXPECT_TRUE(CheckStopRule(c, std::vector<int32_t>{5, 6, 7}, &allowed).ok());
}

TEST(CheckStopRule, RunningPastAStopIdFails) {
  v1::Commitment c = ValidCommitment();
  c.set_finish_reason(v1::FINISH_REASON_CANCELLED);
  size_t allowed = 0;
  const absl::Status s =
      CheckStopRule(c, std::vector<int32_t>{5, 2, 7}, &allowed);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "output token 1 is a stop id, but generation went on to 3 tokens");
  EXPECT_EQ(allowed, 2u);
}

TEST(CheckStopRule, CuttingShortWithAFalseStopFails) {
  v1::Commitment c = ValidCommitment();  // claims STOP
  size_t allowed = 0;
  const absl::Status s =
      CheckStopRule(c, std::vector<int32_t>{5, 6, 7}, &allowed);
  EXPECT_EQ(s.message(),
            "the finish reason is STOP, but the last output token is not a "
            "stop id");
  EXPECT_EQ(allowed, 4u);  // generation had to go on
  c.set_finish_reason(v1::FINISH_REASON_CANCELLED);
  EXPECT_EQ(CheckStopRule(c, std::vector<int32_t>{5, 6, 2}, &allowed).message(),
            "the last output token is a stop id, but the finish reason is "
            "FINISH_REASON_CANCELLED");
  EXPECT_EQ(allowed, 3u);
}

TEST(ValidateNodeId, NamesTheField) {
  EXPECT_TRUE(ValidateNodeId("x", "prover-1").ok());
  EXPECT_EQ(ValidateNodeId("ProverOptions.prover_id", "a b").message(),
            "ProverOptions.prover_id: got byte 0x20 at offset 1, want "
            "printable ASCII without spaces (0x21..0x7e)");
}

TEST(ParseCommitment, MalformedBytes) {
  auto c =
      ParseCommitment(std::string("\x0a\x10"
                                  "short",
                                  7));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "Commitment: malformed");
  // Invalid UTF-8 in a proto3 string field does not parse.
  v1::Commitment ok = ValidCommitment();
  ok.clear_prover_id();
  std::string bytes = ok.SerializeAsString() + std::string("\x12\x01\xff", 3);
  auto bad = ParseCommitment(bytes);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Commitment: malformed");
}

struct VerdictCase {
  const char* name;
  void (*mutate)(v1::Verdict&);
  const char* message;
};

v1::Verdict MismatchVerdict() {
  v1::Verdict v = ValidVerdict();
  v.set_outcome(v1::FAIL_MISMATCH);
  v.mutable_mismatch()->set_layer(3);
  v.mutable_mismatch()->set_expected(Filled(32, 'e'));
  v.mutable_mismatch()->set_got(Filled(32, 'g'));
  return v;
}

TEST(ParseVerdict, ValidPasses) {
  EXPECT_TRUE(ParseVerdict(ValidVerdict().SerializeAsString()).ok());
  EXPECT_TRUE(ParseVerdict(MismatchVerdict().SerializeAsString()).ok());
  v1::Verdict t = ValidVerdict();
  t.set_outcome(v1::FAIL_TIMEOUT);
  t.clear_audited_layers();
  t.set_head_checked(false);
  t.set_detail("opening deadline of 30 s passed — no chunk arrived");
  EXPECT_TRUE(ParseVerdict(t.SerializeAsString()).ok());
}

TEST(ParseVerdict, ErrorsNameTheField) {
  const std::vector<VerdictCase> cases = {
      {"request_id", [](v1::Verdict& v) { v.clear_request_id(); },
       "Verdict.request_id: got 0 bytes, want 16"},
      {"outcome",
       [](v1::Verdict& v) { v.set_outcome(v1::VERDICT_UNSPECIFIED); },
       "Verdict.outcome: got 0, want PASS, a FAIL_* outcome or "
       "INCONCLUSIVE"},
      {"outcome_unknown",
       [](v1::Verdict& v) {
         v.set_outcome(static_cast<v1::VerdictOutcome>(42));
       },
       "Verdict.outcome: got 42, want PASS, a FAIL_* outcome or "
       "INCONCLUSIVE"},
      {"mismatch_on_pass",
       [](v1::Verdict& v) { v.mutable_mismatch()->set_layer(1); },
       "Verdict.mismatch: got present, want absent for PASS"},
      {"mismatch_missing",
       [](v1::Verdict& v) { v.set_outcome(v1::FAIL_MISMATCH); },
       "Verdict.mismatch: got absent, want present for FAIL_MISMATCH"},
      {"mismatch_layer",
       [](v1::Verdict& v) {
         v = MismatchVerdict();
         v.mutable_mismatch()->set_layer(1026);
       },
       "Verdict.mismatch.layer: got 1026, want 0..1025"},
      {"mismatch_expected",
       [](v1::Verdict& v) {
         v = MismatchVerdict();
         v.mutable_mismatch()->set_expected("x");
       },
       "Verdict.mismatch.expected: got 1 bytes, want 32"},
      {"mismatch_same",
       [](v1::Verdict& v) {
         v = MismatchVerdict();
         v.mutable_mismatch()->set_got(Filled(32, 'e'));
       },
       "Verdict.mismatch.got: got the expected digest, want a different "
       "digest"},
      {"layers_zero", [](v1::Verdict& v) { v.set_audited_layers(0, 0); },
       "Verdict.audited_layers[0]: got 0, want 1..1024 (strictly ascending)"},
      {"layers_order", [](v1::Verdict& v) { v.set_audited_layers(1, 1); },
       "Verdict.audited_layers[1]: got 1, want 2..1024 (strictly ascending)"},
      {"layers_big", [](v1::Verdict& v) { v.set_audited_layers(1, 1025); },
       "Verdict.audited_layers[1]: got 1025, want 2..1024 (strictly "
       "ascending)"},
      {"pass_without_head", [](v1::Verdict& v) { v.set_head_checked(false); },
       "Verdict.head_checked: got false, want true for PASS"},
      {"audit_seed", [](v1::Verdict& v) { v.set_audit_seed("seed"); },
       "Verdict.audit_seed: got 4 bytes, want 32"},
      {"leaf_index_absent",
       [](v1::Verdict& v) { v.clear_commitment_leaf_index(); },
       "Verdict.commitment_leaf_index: got absent, want present unless the "
       "outcome is FAIL_SIGNATURE or FAIL_UNLOGGED"},
      {"unlogged_without_promise",
       [](v1::Verdict& v) {
         v.clear_commitment_leaf_index();
         v.set_outcome(v1::FAIL_UNLOGGED);
       },
       "Verdict.unlogged_promise: got absent, want the presented promise for "
       "FAIL_UNLOGGED"},
      {"unlogged_with_leaf_index",
       [](v1::Verdict& v) {
         v.set_outcome(v1::FAIL_UNLOGGED);
         v.set_unlogged_promise("p");
       },
       "Verdict.commitment_leaf_index: got present, want absent for "
       "FAIL_UNLOGGED (the log holds no such leaf)"},
      {"promise_on_pass", [](v1::Verdict& v) { v.set_unlogged_promise("p"); },
       "Verdict.unlogged_promise: got present, want empty unless the outcome "
       "is FAIL_UNLOGGED"},
      {"leaf_hash", [](v1::Verdict& v) { v.clear_commitment_leaf_hash(); },
       "Verdict.commitment_leaf_hash: got 0 bytes, want 32"},
      {"refused_submitter_on_pass",
       [](v1::Verdict& v) { v.set_refused_submitter("prover-1"); },
       "Verdict.refused_submitter: got present, want empty unless the log "
       "refused the envelope (FAIL_SIGNATURE without a leaf index)"},
      {"verifier_id", [](v1::Verdict& v) { v.clear_verifier_id(); },
       "Verdict.verifier_id: got 0 characters, want 1..256"},
      {"created_at", [](v1::Verdict& v) { v.set_created_at_unix_nanos(0); },
       "Verdict.created_at_unix_nanos: got 0, want > 0"},
      {"detail", [](v1::Verdict& v) { v.set_detail(std::string(4097, 'd')); },
       "Verdict.detail: got 4097 bytes, want <= 4096"},
  };
  for (const VerdictCase& tc : cases) {
    v1::Verdict v = ValidVerdict();
    tc.mutate(v);
    auto parsed = ParseVerdict(v.SerializeAsString());
    ASSERT_FALSE(parsed.ok()) << tc.name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << tc.name;
    EXPECT_EQ(parsed.status().message(), tc.message) << tc.name;
  }
}

TEST(ValidateVerdict, InvalidUtf8DetailBuiltInMemory) {
  // Parsing already refuses it; a verdict built in memory is checked too.
  v1::Verdict v = ValidVerdict();
  v.set_detail(std::string("\xc0\xaf", 2));  // overlong '/'
  absl::Status s = ValidateVerdict(v);
  EXPECT_EQ(s.message(), "Verdict.detail: got invalid UTF-8, want UTF-8 text");
}

// A promise is due at log_by, or seven days after it was made, whichever
// is first; no overflow near INT64_MAX.
TEST(PromiseDue, LogByCappedAtTheMaximumWindow) {
  v1::SubmissionPromise p;
  p.set_promised_at_unix_nanos(1000);
  p.set_log_by_unix_nanos(2000);
  EXPECT_EQ(PromiseDueUnixNanos(p), 2000);
  p.set_log_by_unix_nanos(INT64_MAX);
  EXPECT_EQ(PromiseDueUnixNanos(p), 1000 + kMaxPromiseWindowNanos);
  p.set_promised_at_unix_nanos(INT64_MAX - 5);
  EXPECT_EQ(PromiseDueUnixNanos(p), INT64_MAX);
}

// SubmissionPromise (records.proto): what Audit.PresentPromise accepts.
TEST(ValidateSubmissionPromise, EveryFieldIsChecked) {
  v1::SubmissionPromise p;
  p.set_request_id(Filled(16, 'r'));
  p.set_commitment_leaf_hash(Filled(32, 'h'));
  p.set_prover_id("prover-1");
  p.set_log_origin("layerproof/verifier-1");
  p.set_promised_at_unix_nanos(1000);
  p.set_log_by_unix_nanos(2000);
  ASSERT_TRUE(ParseSubmissionPromise(p.SerializeAsString()).ok());
  const std::vector<
      std::pair<std::function<void(v1::SubmissionPromise&)>, std::string>>
      cases = {
          {[](v1::SubmissionPromise& x) { x.set_request_id("r"); },
           "SubmissionPromise.request_id: got 1 bytes, want 16"},
          {[](v1::SubmissionPromise& x) { x.clear_commitment_leaf_hash(); },
           "SubmissionPromise.commitment_leaf_hash: got 0 bytes, want 32"},
          {[](v1::SubmissionPromise& x) { x.set_prover_id("a b"); },
           "SubmissionPromise.prover_id: got byte 0x20 at offset 1, want "
           "printable ASCII without spaces (0x21..0x7e)"},
          {[](v1::SubmissionPromise& x) { x.clear_log_origin(); },
           "SubmissionPromise.log_origin: got 0 bytes, want 1..1024"},
          {[](v1::SubmissionPromise& x) { x.set_promised_at_unix_nanos(0); },
           "SubmissionPromise.promised_at_unix_nanos: got 0, want > 0"},
          // Regression (issue 13, item 3): a promise without a deadline.
          {[](v1::SubmissionPromise& x) { x.clear_log_by_unix_nanos(); },
           "SubmissionPromise.log_by_unix_nanos: got 0, want > "
           "promised_at_unix_nanos (1000)"},
      };
  for (const auto& [mutate, message] : cases) {
    v1::SubmissionPromise bad = p;
    mutate(bad);
    auto parsed = ParseSubmissionPromise(bad.SerializeAsString());
    ASSERT_FALSE(parsed.ok()) << message;
    EXPECT_EQ(parsed.status().message(), message);
  }
}

TEST(ParseVerdict, MalformedBytes) {
  auto v = ParseVerdict(std::string("\x18\xff", 2));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "Verdict: malformed");
}

// ---------------------------------------------------------------------------
// Salted digests.

std::string Le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

TEST(ParseVerdict, RefusedSignatureHasNoLeafIndex) {
  // A FAIL_SIGNATURE reached at submission names the refused envelope by
  // its leaf hash alone.
  v1::Verdict v = ValidVerdict();
  v.set_outcome(v1::FAIL_SIGNATURE);
  v.set_head_checked(false);
  v.clear_audited_layers();
  v.clear_commitment_leaf_index();
  auto parsed = ParseVerdict(v.SerializeAsString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->has_commitment_leaf_index());
}

TEST(DigestKey, IsSaltThenRequestId) {
  const std::string salt = Filled(kSaltBytes, 's');
  const std::string id = Filled(kRequestIdBytes, 'i');
  EXPECT_EQ(DigestKey(AsBytes(salt), AsBytes(id)), salt + id);
}

TEST(SeedFromNonce, MatchesItsDefinition) {
  const std::string nonce = "client nonce";
  std::string msg("layerproof.nonce-seed.v1\0", 25);
  msg += Le(nonce.size(), 4) + nonce;
  const Sha256Hash d = Sha256Hasher::Digest(msg);
  uint64_t want = 0;
  for (int i = 0; i < 8; ++i) want |= uint64_t{d[i]} << (8 * i);
  EXPECT_EQ(SeedFromNonce(AsBytes(nonce)), want);
  EXPECT_NE(SeedFromNonce(AsBytes(std::string("other nonce"))), want);
}

TEST(TokenDigest, MatchesItsDefinition) {
  const std::string salt = Filled(kSaltBytes, '\x5a');
  const std::vector<int32_t> ids = {1, -2, 70000};
  std::string msg("layerproof.tokens.v1\0", 21);
  msg += Le(32, 4) + salt + Le(3, 8);
  for (int32_t id : ids) msg += Le(static_cast<uint32_t>(id), 4);
  EXPECT_EQ(TokenDigest(AsBytes(salt), ids), Sha256Hasher::Digest(msg));
}

TEST(TokenDigest, DependsOnSaltIdsOrderAndLength) {
  const std::string salt_a = Filled(kSaltBytes, 'a');
  const std::string salt_b = Filled(kSaltBytes, 'b');
  const std::vector<int32_t> ids = {10, 20, 30};
  const Sha256Hash base = TokenDigest(AsBytes(salt_a), ids);
  EXPECT_EQ(TokenDigest(AsBytes(salt_a), ids), base);
  EXPECT_NE(TokenDigest(AsBytes(salt_b), ids), base);
  EXPECT_NE(TokenDigest(AsBytes(salt_a), std::vector<int32_t>{30, 20, 10}),
            base);
  EXPECT_NE(TokenDigest(AsBytes(salt_a), std::vector<int32_t>{10, 20}), base);
  EXPECT_NE(TokenDigest(AsBytes(salt_a), std::vector<int32_t>{10, 20, 31}),
            base);
  // Salt and ids are framed: moving bytes between them changes the digest.
  const std::string longer = salt_a + Le(10, 4);
  EXPECT_NE(TokenDigest(AsBytes(longer), std::vector<int32_t>{20, 30}), base);
  // Empty sequences still depend on the salt.
  EXPECT_NE(TokenDigest(AsBytes(salt_a), {}), TokenDigest(AsBytes(salt_b), {}));
}

TEST(SeedDigest, MatchesItsDefinitionAndDependsOnSaltAndSeed) {
  const std::string salt = Filled(kSaltBytes, '\x01');
  std::string msg("layerproof.seed.v1\0", 19);
  msg += Le(32, 4) + salt + Le(0x0123456789abcdefull, 8);
  EXPECT_EQ(SeedDigest(AsBytes(salt), 0x0123456789abcdefull),
            Sha256Hasher::Digest(msg));
  EXPECT_NE(SeedDigest(AsBytes(salt), 1), SeedDigest(AsBytes(salt), 2));
  EXPECT_NE(SeedDigest(AsBytes(salt), 1),
            SeedDigest(AsBytes(Filled(kSaltBytes, '\x02')), 1));
  // Domain separation: a seed is never a one-token sequence's digest.
  EXPECT_NE(SeedDigest(AsBytes(salt), 7),
            TokenDigest(AsBytes(salt), std::vector<int32_t>{7}));
}

}  // namespace
}  // namespace layerproof::store
