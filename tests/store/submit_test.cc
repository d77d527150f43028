// Admission to the log (store/submit.h): bad envelopes get a clear error and
// nothing is appended; good ones are appended as their exact bytes, once.
#include "store/submit.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/memory_log.h"
#include "tests/store/records_fixture.h"

namespace layerproof::store {
namespace {

constexpr size_t kMaxBytes = 64 * 1024;

using fixture::ValidCommitment;

Ed25519PrivateKey Key(uint8_t fill) {
  std::array<uint8_t, 32> seed;
  seed.fill(fill);
  return *Ed25519PrivateKey::FromSeed(seed);
}

class SubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LogOptions o;
    o.origin = "layerproof.test/submit";
    o.signer = std::make_shared<CheckpointSigner>(
        *CheckpointSigner::Create("log", Key(9)));
    log_ = *MemoryLog::Create(std::move(o));
    keys_.Add(prover_.public_key());
  }

  // Submits and, on failure, checks that nothing was appended.
  absl::StatusOr<AppendResult> Submit(
      std::string bytes, std::string_view type = kCommitmentPayloadType) {
    const uint64_t before = log_->Size();
    absl::StatusOr<AppendResult> r =
        SubmitEnvelope(*log_, std::move(bytes), keys_, type, kMaxBytes);
    if (!r.ok()) {
      EXPECT_EQ(log_->Size(), before) << r.status();
    }
    return r;
  }

  Ed25519PrivateKey prover_ = Key(1);
  KeyRing keys_;
  std::unique_ptr<Log> log_;
};

TEST_F(SubmitTest, AppendsTheExactEnvelopeBytesOnce) {
  const std::string env = *SignCommitment(ValidCommitment(), prover_);
  absl::StatusOr<AppendResult> r = Submit(env);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->index, 0u);
  EXPECT_FALSE(r->duplicate);
  EXPECT_EQ(*log_->Entry(0), env);
  absl::StatusOr<AppendResult> again = Submit(env);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->index, 0u);
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(log_->Size(), 1u);
}

TEST_F(SubmitTest, MalformedEnvelopesAreRefused) {
  const std::string env = *SignCommitment(ValidCommitment(), prover_);
  for (const std::string& bad :
       {std::string(), std::string("\xff\xff\xff"),
        env.substr(0, env.size() / 2), std::string(kMaxBytes + 1, 'x')}) {
    absl::StatusOr<AppendResult> r = Submit(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << r.status();
  }
}

TEST_F(SubmitTest, BadSignaturesAndUnknownKeysAreRefused) {
  v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(*SignCommitment(ValidCommitment(), prover_)));
  (*e.mutable_signatures(0)->mutable_sig())[10] ^= 0x01;
  absl::StatusOr<AppendResult> bad_sig = Submit(e.SerializeAsString());
  ASSERT_FALSE(bad_sig.ok());
  EXPECT_EQ(bad_sig.status().code(), absl::StatusCode::kInvalidArgument);

  const std::string foreign = *SignCommitment(ValidCommitment(), Key(2));
  absl::StatusOr<AppendResult> r = Submit(foreign);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(std::string(r.status().message())
                .find(HexEncode(Key(2).public_key().KeyId())),
            std::string::npos)
      << r.status();
  EXPECT_EQ(log_->Size(), 0u);
}

TEST_F(SubmitTest, WrongTypesAndInvalidRecordsAreRefused) {
  const std::string env = *SignCommitment(ValidCommitment(), prover_);
  absl::StatusOr<AppendResult> r = Submit(env, kVerdictPayloadType);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Submit(env, "application/octet-stream").ok());

  // Correctly signed, but the record is not a valid commitment.
  v1::Commitment c = ValidCommitment();
  c.set_model_digest("short");
  const std::string invalid =
      *SignEnvelope(kCommitmentPayloadType, c.SerializeAsString(), prover_);
  r = Submit(invalid);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("model_digest"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(log_->Size(), 0u);
}

}  // namespace
}  // namespace layerproof::store
