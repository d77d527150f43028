// SHA-256 per FIPS 180-4 §6.2: message schedule, 64 rounds, padding with a
// 1 bit, zeros and the 64-bit big-endian bit length (§5.1.1).

#include "kernels/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu_features.h"
#endif

namespace layerproof::kernels {
namespace {

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square
// roots of the first 8 primes.
constexpr std::array<uint32_t, 8> kInitialState = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t Rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

uint32_t LoadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

#if defined(__x86_64__)
// The same compression with the x86 SHA extensions (SHA-NI), `blocks`
// 64-byte blocks at a time: identical digests, ~6x the portable code's
// speed. The instructions keep the state as two vectors, ABEF and CDGH
// (lane 3 = A resp. C); each SHA256RNDS2 runs two rounds and returns the
// new ABEF, whose old value becomes the next CDGH. The message schedule is
// SHA256MSG1 (+σ0), an add of W[t-7] and SHA256MSG2 (+σ1), 4 words at a
// time. The target attribute confines the ISA to this one non-inline
// function, so no shared inline code is built for it (docs/kernels.md).
__attribute__((target("sha,sse4.1"))) void CompressBlocksShaNi(
    uint32_t* state, const uint8_t* data, size_t blocks) {
  const __m128i byte_swap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  // a..h -> ABEF = [f, e, b, a], CDGH = [h, g, d, c] (lane 0 first).
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  abcd = _mm_shuffle_epi32(abcd, 0xB1);  // [b, a, d, c]
  efgh = _mm_shuffle_epi32(efgh, 0x1B);  // [h, g, f, e]
  __m128i abef = _mm_alignr_epi8(abcd, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];  // W[4i .. 4i+3] for the last four groups, i mod 4
    for (int i = 0; i < 16; ++i) {
      __m128i words;
      if (i < 4) {
        words = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
            byte_swap);
      } else {
        // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16].
        __m128i t = _mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]);
        t = _mm_add_epi32(t,
                          _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
        words = _mm_sha256msg2_epu32(t, w[(i + 3) % 4]);
      }
      w[i % 4] = words;
      __m128i wk =
          _mm_add_epi32(words, _mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                   kRoundConstants.data() + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // rounds 4i, 4i+1
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // rounds 4i+2, 4i+3
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i abfe = _mm_shuffle_epi32(abef, 0x1B);  // [a, b, e, f]
  const __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xB1);  // [g, h, c, d]
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state),
                   _mm_blend_epi16(abfe, ghcd, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4),
                   _mm_alignr_epi8(ghcd, abfe, 8));
}

bool HaveShaNi() {
  static const bool have = CpuHasShaNi() && __builtin_cpu_supports("sse4.1");
  return have;
}
#else
bool HaveShaNi() { return false; }
#endif

}  // namespace

Sha256::Sha256(bool accelerated)
    : state_(kInitialState),
      buffer_{},
      accelerated_(accelerated && HaveShaNi()) {}

bool Sha256::AcceleratedAvailable() { return HaveShaNi(); }

void Sha256::CompressBlocks(const uint8_t* data, size_t blocks) {
#if defined(__x86_64__)
  if (accelerated_) {
    CompressBlocksShaNi(state_.data(), data, blocks);
    return;
  }
#endif
  for (; blocks > 0; --blocks, data += 64) Compress(data);
}

void Sha256::Compress(const uint8_t* block) {
  std::array<uint32_t, 64> w;
  for (int t = 0; t < 16; ++t) w[t] = LoadBigEndian32(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 =
        Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 =
        Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t big_s1 = Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25);
    const uint32_t ch = (e & f) ^ (~e & g);
    const uint32_t t1 = h + big_s1 + ch + kRoundConstants[t] + w[t];
    const uint32_t big_s0 = Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22);
    const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = big_s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::Update(const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_bytes_ += len;
  if (buffered_ > 0) {
    const size_t take = std::min(len, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    len -= take;
    if (buffered_ < buffer_.size()) return;
    CompressBlocks(buffer_.data(), 1);
    buffered_ = 0;
  }
  // Whole blocks straight from the caller's memory.
  if (len >= 64) {
    CompressBlocks(p, len / 64);
    p += len / 64 * 64;
    len %= 64;
  }
  if (len > 0) {
    std::memcpy(buffer_.data(), p, len);
    buffered_ = len;
  }
}

Sha256Digest Sha256::Final() {
  const uint64_t bit_length = total_bytes_ * 8;
  // Padding (§5.1.1): 0x80, zeros up to 56 mod 64, then the length.
  buffer_[buffered_++] = 0x80;
  if (buffered_ > 56) {
    std::memset(buffer_.data() + buffered_, 0, 64 - buffered_);
    CompressBlocks(buffer_.data(), 1);
    buffered_ = 0;
  }
  std::memset(buffer_.data() + buffered_, 0, 56 - buffered_);
  for (int i = 0; i < 8; ++i) {
    buffer_[56 + i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  }
  CompressBlocks(buffer_.data(), 1);
  buffered_ = 0;
  Sha256Digest digest;
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = static_cast<uint8_t>(state_[i] >> 24);
    digest[4 * i + 1] = static_cast<uint8_t>(state_[i] >> 16);
    digest[4 * i + 2] = static_cast<uint8_t>(state_[i] >> 8);
    digest[4 * i + 3] = static_cast<uint8_t>(state_[i]);
  }
  return digest;
}

Sha256Digest Sha256::Hash(const void* data, size_t len) {
  Sha256 h;
  h.Update(data, len);
  return h.Final();
}

std::string HexDigest(const Sha256Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * d.size(), '0');
  for (size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 0xF];
  }
  return out;
}

}  // namespace layerproof::kernels
