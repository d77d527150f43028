// kernels/model/digest.h: the tensor, config and root hashes, and the
// digest cache beside the model.
//
// The Merkle tree follows RFC 6962 section 2.1; its expected roots below are
// written out node by node from that definition (leaf prefix 0x00, node
// prefix 0x01, split at the largest power of two below n).

#include "kernels/model/digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/model/model.h"
#include "tests/model/model_fixture.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::HasSubstr;

Sha256Digest Leaf(const Sha256Digest& d) {
  Sha256 h;
  const uint8_t zero = 0;
  h.Update(&zero, 1);
  h.Update(d.data(), d.size());
  return h.Final();
}

Sha256Digest Node(const Sha256Digest& a, const Sha256Digest& b) {
  Sha256 h;
  const uint8_t one = 1;
  h.Update(&one, 1);
  h.Update(a.data(), a.size());
  h.Update(b.data(), b.size());
  return h.Final();
}

Sha256Digest Digest(uint8_t fill) {
  Sha256Digest d;
  d.fill(fill);
  return d;
}

std::unique_ptr<Model> MustLoad(const std::string& dir,
                                const LoadOptions& options = {}) {
  StatusOr<std::unique_ptr<Model>> m = Model::Load(dir, options);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

LoadOptions Verify() {
  LoadOptions o;
  o.verify_digest = true;
  return o;
}

// Moves the mtime of `path` by `delta`.
void ShiftMtime(const std::string& path, std::chrono::nanoseconds delta) {
  const auto t = std::filesystem::last_write_time(path);
  std::filesystem::last_write_time(path, t + delta);
}

TEST(DigestTest, TensorHashFollowsTheSpecLayout) {
  const fixture::TestTensor t =
      fixture::MakeTensor("model.norm.weight", DType::kF16, {3, 2}, 7);
  TensorView v;
  v.name = t.name;
  v.dtype = t.dtype;
  v.shape = t.shape;
  v.data = t.bytes.data();
  v.bytes = t.bytes.size();

  std::string msg("layerproof.tensor.v1", 20);
  msg += '\0';
  msg += std::string("\x11\x00\x00\x00", 4);  // len("model.norm.weight")
  msg += t.name;
  msg += '\x02';                              // F16
  msg += std::string("\x02\x00\x00\x00", 4);  // ndim
  msg += std::string("\x03\x00\x00\x00\x00\x00\x00\x00", 8);
  msg += std::string("\x02\x00\x00\x00\x00\x00\x00\x00", 8);
  msg.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  EXPECT_EQ(HexDigest(HashTensor(v)),
            HexDigest(Sha256::Hash(msg.data(), msg.size())));

  // Every part of the layout is bound: dtype, shape and name.
  TensorView other = v;
  other.dtype = DType::kBF16;
  EXPECT_NE(HashTensor(other), HashTensor(v));
  other = v;
  other.shape = {2, 3};
  EXPECT_NE(HashTensor(other), HashTensor(v));
  other = v;
  other.name = "model.norm.weigh";
  EXPECT_NE(HashTensor(other), HashTensor(v));
}

TEST(DigestTest, ConfigHashIsOverTheCanonicalConfig) {
  const ModelConfig c = fixture::TinyConfig();
  const std::string text = WriteModelConfig(c);
  std::string msg("layerproof.config.v1", 20);
  msg += '\0';
  msg += text;
  EXPECT_EQ(HashConfig(c), Sha256::Hash(msg.data(), msg.size()));

  // Whitespace, key order and unknown keys in config.json do not matter.
  StatusOr<ModelConfig> reformatted = ParseModelConfig(
      R"({"torch_dtype": "bfloat16", "vocab_size": 32, "hidden_size": 16,
          "intermediate_size": 24, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2,
          "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
          "architectures": ["LlamaForCausalLM"], "bos_token_id": 1,
          "eos_token_id": [2], "use_cache": true})",
      "config.json");
  ASSERT_TRUE(reformatted.ok()) << reformatted.status().ToString();
  EXPECT_EQ(HashConfig(*reformatted), HashConfig(c));
  ModelConfig changed = c;
  changed.rope_theta = 10001.0;
  EXPECT_NE(HashConfig(changed), HashConfig(c));
}

TEST(DigestTest, RootIsRfc6962MerkleTreeHash) {
  const Sha256Digest cfg = Digest(0xC0);
  std::map<std::string, Sha256Digest> t;
  EXPECT_EQ(DigestRoot(t, cfg), Leaf(cfg));  // one leaf
  t["b"] = Digest(2);
  EXPECT_EQ(DigestRoot(t, cfg), Node(Leaf(Digest(2)), Leaf(cfg)));
  t["a"] = Digest(1);  // sorted by name: a, b, then the config
  EXPECT_EQ(DigestRoot(t, cfg),
            Node(Node(Leaf(Digest(1)), Leaf(Digest(2))), Leaf(cfg)));
  t["c"] = Digest(3);
  t["d"] = Digest(4);  // five leaves: split 4 + 1
  const Sha256Digest four = Node(Node(Leaf(Digest(1)), Leaf(Digest(2))),
                                 Node(Leaf(Digest(3)), Leaf(Digest(4))));
  EXPECT_EQ(DigestRoot(t, cfg), Node(four, Leaf(cfg)));
  t["e"] = Digest(5);
  t["f"] = Digest(6);  // seven leaves: 4 + (2 + 1)
  EXPECT_EQ(
      DigestRoot(t, cfg),
      Node(four, Node(Node(Leaf(Digest(5)), Leaf(Digest(6))), Leaf(cfg))));
}

TEST(DigestTest, ThreadCountDoesNotChangeTheDigest) {
  fixture::TempDir dir;
  const ModelConfig c = fixture::TinyConfig();
  fixture::WriteSafetensors(dir.File("m.safetensors"), fixture::TinyTensors(c));
  StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::Open(dir.File("m.safetensors"));
  ASSERT_TRUE(f.ok());
  const ModelDigest one = ComputeModelDigest(c, (*f)->tensors(), 1);
  EXPECT_FALSE(one.from_cache);
  EXPECT_EQ(one.tensor_hashes.size(), (*f)->tensors().size());
  EXPECT_EQ(one.config_hash, HashConfig(c));
  EXPECT_EQ(one.root, DigestRoot(one.tensor_hashes, one.config_hash));
  for (int threads : {0, 3, 64}) {
    const ModelDigest d = ComputeModelDigest(c, (*f)->tensors(), threads);
    EXPECT_EQ(d.root, one.root) << threads;
    EXPECT_EQ(d.tensor_hashes, one.tensor_hashes) << threads;
  }
  EXPECT_EQ(one.tensor_hashes.at("model.norm.weight"),
            HashTensor((*f)->tensors().at("model.norm.weight")));
}

TEST(DigestTest, RootIsIndependentOfFileLayoutAndShards) {
  const ModelConfig c = fixture::TinyConfig();
  std::vector<fixture::TestTensor> tensors = fixture::TinyTensors(c);
  fixture::TempDir one, two, three;
  fixture::WriteTinyModel(one.path(), c, tensors, 1);
  fixture::WriteTinyModel(two.path(), c, tensors, 2);
  std::reverse(tensors.begin(), tensors.end());  // other offsets in files
  fixture::WriteTinyModel(three.path(), c, tensors, 3);
  const auto a = MustLoad(one.path());
  const auto b = MustLoad(two.path());
  const auto d = MustLoad(three.path());
  ASSERT_TRUE(a && b && d);
  EXPECT_EQ(HexDigest(a->digest().root), HexDigest(b->digest().root));
  EXPECT_EQ(HexDigest(a->digest().root), HexDigest(d->digest().root));
  EXPECT_EQ(a->digest().tensor_hashes, d->digest().tensor_hashes);
}

TEST(DigestTest, RootChangesWhenOneByteChanges) {
  const ModelConfig c = fixture::TinyConfig();
  std::vector<fixture::TestTensor> tensors = fixture::TinyTensors(c);
  fixture::TempDir base, flipped;
  fixture::WriteTinyModel(base.path(), c, tensors);
  fixture::FindTensor(&tensors, "model.layers.1.self_attn.o_proj.weight")
      ->bytes[77] ^= 0x01;
  fixture::WriteTinyModel(flipped.path(), c, tensors);
  const auto a = MustLoad(base.path());
  const auto b = MustLoad(flipped.path());
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->digest().root, b->digest().root);
  for (const auto& [name, h] : a->digest().tensor_hashes) {
    EXPECT_EQ(h == b->digest().tensor_hashes.at(name),
              name != "model.layers.1.self_attn.o_proj.weight")
        << name;
  }
}

TEST(DigestTest, RootChangesWhenConfigChanges) {
  const ModelConfig c = fixture::TinyConfig();
  ModelConfig c2 = c;
  c2.rms_norm_eps = 1e-6;
  const std::vector<fixture::TestTensor> tensors = fixture::TinyTensors(c);
  fixture::TempDir a_dir, b_dir;
  fixture::WriteTinyModel(a_dir.path(), c, tensors);
  fixture::WriteTinyModel(b_dir.path(), c2, tensors);
  const auto a = MustLoad(a_dir.path());
  const auto b = MustLoad(b_dir.path());
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->digest().config_hash, b->digest().config_hash);
  EXPECT_NE(a->digest().root, b->digest().root);
  EXPECT_EQ(a->digest().tensor_hashes, b->digest().tensor_hashes);
}

class DigestCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture::WriteTinyModel(dir_.path(), config_, tensors_, shards_);
  }
  std::string CachePath() const { return dir_.File(kDigestCacheFile); }
  // Flips one hex digit of `tensor`'s hash in the cache file.
  void TamperCachedHash(const std::string& tensor) {
    std::string cache = fixture::ReadText(CachePath());
    const std::string key = "\"" + tensor + "\": \"";
    const size_t at = cache.find(key);
    ASSERT_NE(at, std::string::npos) << cache;
    char& digit = cache[at + key.size()];
    digit = digit == '0' ? '1' : '0';
    fixture::WriteText(CachePath(), cache);
  }

  fixture::TempDir dir_;
  ModelConfig config_ = fixture::TinyConfig();
  std::vector<fixture::TestTensor> tensors_ = fixture::TinyTensors(config_);
  int shards_ = 1;
};

TEST_F(DigestCacheTest, SecondLoadUsesTheCache) {
  const auto first = MustLoad(dir_.path());
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->digest().from_cache);
  ASSERT_TRUE(std::filesystem::exists(CachePath()));
  const auto second = MustLoad(dir_.path());
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->digest().from_cache);
  EXPECT_EQ(second->digest().root, first->digest().root);
  EXPECT_EQ(second->digest().config_hash, first->digest().config_hash);
  EXPECT_EQ(second->digest().tensor_hashes, first->digest().tensor_hashes);
}

TEST_F(DigestCacheTest, CacheRecordsFilesAndHashes) {
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  const std::string cache = fixture::ReadText(CachePath());
  EXPECT_THAT(cache, HasSubstr("\"format\": \"layerproof.digest-cache.v1\""));
  EXPECT_THAT(cache, HasSubstr("\"name\": \"config.json\""));
  EXPECT_THAT(cache, HasSubstr("\"name\": \"model.safetensors\""));
  EXPECT_THAT(cache, HasSubstr("\"mtime_ns\": "));
  EXPECT_THAT(
      cache, HasSubstr("\"size\": " + std::to_string(std::filesystem::file_size(
                                          dir_.File("model.safetensors")))));
  EXPECT_THAT(cache, HasSubstr("\"root\": \"" + HexDigest(m->digest().root)));
  EXPECT_THAT(
      cache,
      HasSubstr("\"model.norm.weight\": \"" +
                HexDigest(m->digest().tensor_hashes.at("model.norm.weight"))));
  // No temporary file is left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 3);  // config.json, model.safetensors, the cache
}

TEST_F(DigestCacheTest, MtimeChangeInvalidatesTheCache) {
  ASSERT_TRUE(MustLoad(dir_.path()));
  ShiftMtime(dir_.File("model.safetensors"), std::chrono::seconds(1));
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->digest().from_cache);
  const auto again = MustLoad(dir_.path());  // the cache was rewritten
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->digest().from_cache);
}

TEST_F(DigestCacheTest, SizeChangeInvalidatesTheCache) {
  ASSERT_TRUE(MustLoad(dir_.path()));
  const std::string path = dir_.File("model.safetensors");
  const auto mtime = std::filesystem::last_write_time(path);
  fixture::PatchHeader(path, "{", "{        ");  // 8 more bytes, same tensors
  std::filesystem::last_write_time(path, mtime);
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->digest().from_cache);
}

TEST_F(DigestCacheTest, ContentChangeWithNewMtimeGivesNewRoot) {
  const auto before = MustLoad(dir_.path());
  ASSERT_TRUE(before);
  const Sha256Digest old_root = before->digest().root;
  const std::string path = dir_.File("model.safetensors");
  std::string raw = fixture::ReadText(path);
  raw[raw.size() - 1] ^= 0x40;  // last byte of the last tensor
  fixture::WriteText(path, raw);
  ShiftMtime(path, std::chrono::seconds(2));
  const auto after = MustLoad(dir_.path());
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->digest().from_cache);
  EXPECT_NE(after->digest().root, old_root);
}

TEST_F(DigestCacheTest, ConfigChangeWithSameStampsIsNotServedFromCache) {
  ASSERT_TRUE(MustLoad(dir_.path()));
  const std::string path = dir_.File("config.json");
  const auto mtime = std::filesystem::last_write_time(path);
  std::string text = fixture::ReadText(path);
  const size_t at = text.find("1e-05");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 5, "2e-05");  // same size
  fixture::WriteText(path, text);
  std::filesystem::last_write_time(path, mtime);
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->digest().from_cache);
  EXPECT_EQ(m->config().rms_norm_eps, 2e-5);
  EXPECT_EQ(m->digest().config_hash, HashConfig(m->config()));
}

TEST_F(DigestCacheTest, VerifyDetectsTamperedCache) {
  ASSERT_TRUE(MustLoad(dir_.path()));
  TamperCachedHash("model.layers.0.mlp.up_proj.weight");
  const StatusOr<std::unique_ptr<Model>> m = Model::Load(dir_.path(), Verify());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(m.status().message(),
              HasSubstr("tensor model.layers.0.mlp.up_proj.weight: cached "));
  EXPECT_THAT(m.status().message(), HasSubstr(kDigestCacheFile));
}

TEST_F(DigestCacheTest, InconsistentCacheIsRehashedWithoutVerify) {
  const auto first = MustLoad(dir_.path());
  ASSERT_TRUE(first);
  TamperCachedHash("model.norm.weight");  // its root no longer matches
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->digest().from_cache);
  EXPECT_EQ(m->digest().root, first->digest().root);
  // The load rewrote a correct cache, which verify accepts.
  EXPECT_TRUE(MustLoad(dir_.path(), Verify()));
}

TEST_F(DigestCacheTest, VerifyCatchesASelfConsistentForgery) {
  // A forger who rewrites a tensor hash and the root to match fools a plain
  // load (that is what a cache is) but not --verify.
  const auto first = MustLoad(dir_.path());
  ASSERT_TRUE(first);
  const std::string tensor = "model.layers.1.self_attn.v_proj.weight";
  std::map<std::string, Sha256Digest> forged = first->digest().tensor_hashes;
  forged[tensor][0] ^= 0xFF;
  const Sha256Digest forged_root =
      DigestRoot(forged, first->digest().config_hash);
  std::string cache = fixture::ReadText(CachePath());
  for (const auto& [from, to] :
       {std::pair{HexDigest(first->digest().tensor_hashes.at(tensor)),
                  HexDigest(forged.at(tensor))},
        std::pair{HexDigest(first->digest().root), HexDigest(forged_root)}}) {
    const size_t at = cache.find(from);
    ASSERT_NE(at, std::string::npos);
    cache.replace(at, from.size(), to);
  }
  fixture::WriteText(CachePath(), cache);

  const auto fooled = MustLoad(dir_.path());
  ASSERT_TRUE(fooled);
  EXPECT_TRUE(fooled->digest().from_cache);
  EXPECT_EQ(fooled->digest().root, forged_root);
  const StatusOr<std::unique_ptr<Model>> m = Model::Load(dir_.path(), Verify());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(m.status().message(), HasSubstr("tensor " + tensor));
}

TEST_F(DigestCacheTest, VerifyWithAGoodCacheRehashesAndSucceeds) {
  const auto first = MustLoad(dir_.path());
  ASSERT_TRUE(first);
  const auto verified = MustLoad(dir_.path(), Verify());
  ASSERT_TRUE(verified);
  EXPECT_FALSE(verified->digest().from_cache);
  EXPECT_EQ(verified->digest().root, first->digest().root);
}

TEST_F(DigestCacheTest, MalformedCacheIsIgnoredAndReplaced) {
  for (const char* junk :
       {"not json", "[]", "{\"format\": \"layerproof.digest-cache.v1\"}",
        "{\"format\": \"other\", \"files\": [], \"tensors\": {}}"}) {
    fixture::WriteText(CachePath(), junk);
    const auto m = MustLoad(dir_.path());
    ASSERT_TRUE(m) << junk;
    EXPECT_FALSE(m->digest().from_cache) << junk;
    const auto again = MustLoad(dir_.path());
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->digest().from_cache) << junk;
  }
}

TEST_F(DigestCacheTest, NoCacheWrittenWhenDisabled) {
  LoadOptions o;
  o.write_digest_cache = false;
  const auto m = MustLoad(dir_.path(), o);
  ASSERT_TRUE(m);
  EXPECT_FALSE(std::filesystem::exists(CachePath()));
}

TEST_F(DigestCacheTest, ReadOnlyDirectoryStillLoads) {
  std::filesystem::permissions(dir_.path(),
                               std::filesystem::perms::owner_write |
                                   std::filesystem::perms::group_write |
                                   std::filesystem::perms::others_write,
                               std::filesystem::perm_options::remove);
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->digest().from_cache);
  if (::geteuid() != 0) {  // root writes anyway
    EXPECT_FALSE(std::filesystem::exists(CachePath()));
  }
}

class ShardedDigestCacheTest : public DigestCacheTest {
 protected:
  ShardedDigestCacheTest() { shards_ = 2; }
};

TEST_F(ShardedDigestCacheTest, EveryShardIsInTheKey) {
  ASSERT_TRUE(MustLoad(dir_.path()));
  const auto cached = MustLoad(dir_.path());
  ASSERT_TRUE(cached);
  EXPECT_TRUE(cached->digest().from_cache);
  EXPECT_THAT(fixture::ReadText(CachePath()),
              HasSubstr("\"name\": \"model-00002-of-00002.safetensors\""));
  ShiftMtime(dir_.File("model-00002-of-00002.safetensors"),
             std::chrono::milliseconds(1));
  const auto m = MustLoad(dir_.path());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->digest().from_cache);
}

}  // namespace
}  // namespace layerproof::kernels::model
