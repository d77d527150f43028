// Column-panel weight packing and the chunk-tree schedule shared by the x86
// fast GEMMs (avx2_gemm.cc, avx512_gemm.cc); docs/determinism.md §3.1.
//
// Packed layout. W[n][k] is cut into column panels of kNR consecutive n;
// panel p holds W[p*NR .. p*NR+NR)[0 .. K) k-major, one row of NR weights per
// k, so a micro-kernel reads NR weights of one k with contiguous loads:
//   fp32: row k = W[p*NR + j][k] for j in [0, NR)             (NR * 4 bytes)
//   fp16: row k = W[p*NR + j][k] for j in [0, NR)             (NR * 2 bytes)
//   bf16: row k = NR/2 dwords, dword i = W[p*NR + i][k] in its low half and
//         W[p*NR + NR/2 + i][k] in its high half              (NR * 2 bytes)
// The bf16 interleave lets one vector load of NR/2 dwords split into the two
// fp32 vectors of columns [0, NR/2) and [NR/2, NR) with one shift left by 16
// and one AND with 0xFFFF0000: the exact bf16 upcast of kernels/dtype.h.
// The last panel is padded with zero weights; padded outputs are computed but
// never stored. Packing moves bits only, it never rounds.
//
// Chunk-tree schedule. Each output is the halving-tree sum of its chunk
// partials (kernels/ref/reduction.h). The kernels produce the partials in
// ascending chunk order and combine them on a stack in the tree's post-order:
// after chunk c is pushed, merges[c] times the two top entries (left below,
// right on top) are replaced by left + right. This is exactly the recursion
// T(n) = T(ceil(n/2)) + T(floor(n/2)), only evaluated leaves-first.
//
// Everything here sits in an unnamed namespace on purpose: this header is
// compiled into translation units built with different -m flags, and a
// function with external linkage compiled with AVX-512 enabled could be the
// copy the linker keeps for AVX2-only machines. Internal linkage gives each
// ISA its own copy. Thread safety: PanelPacked is immutable after
// construction; ChunkTreeSchedule and AlignedBuffer are plain values.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_PANELS_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_PANELS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kernels/backend.h"
#include "kernels/ref/reduction.h"

namespace layerproof::kernels::cpu {
namespace {  // NOLINT(build/namespaces): see the file comment.

inline int64_t CeilDivI(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Uninitialised, 64-byte-aligned storage that only grows (packed weights and
// the kernels' scratch). Not copyable.
// Buffers of 2 MiB or more are 2 MiB aligned and ask Linux for transparent
// huge pages: the kernels stream weights panel by panel, and with 4 KiB pages
// every few KiB cost a TLB miss and stop the hardware prefetcher.
template <typename T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t n) { Reserve(n); }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // Makes room for n elements; the contents are lost when it grows.
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    std::free(data_);
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t align = n * sizeof(T) >= kHuge ? kHuge : 64;
    const size_t bytes = (n * sizeof(T) + align - 1) / align * align;
    data_ = static_cast<T*>(std::aligned_alloc(align, bytes));
    if (data_ == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == kHuge) madvise(data_, bytes, MADV_HUGEPAGE);  // a hint only
#endif
    capacity_ = n;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

// W packed into column panels of width nr (see the file comment).
class PanelPacked final : public PackedWeights {
 public:
  PanelPacked(BackendKind kind, const WeightView& w, int64_t nr)
      : PackedWeights(kind, w.rows, w.cols, w.dtype),
        nr_(nr),
        panels_(CeilDivI(w.rows, nr)),
        panel_bytes_(w.cols * nr * DTypeSize(w.dtype)),
        bytes_(static_cast<size_t>(panels_ * panel_bytes_)) {
    if (w.dtype == DType::kF32) {
      Fill<uint32_t>(w, /*interleave=*/false);
    } else {
      Fill<uint16_t>(w, /*interleave=*/w.dtype == DType::kBF16);
    }
  }

  int64_t nr() const { return nr_; }
  int64_t panels() const { return panels_; }
  // Panel p, 64-byte aligned: k() rows of nr() weights.
  const unsigned char* panel(int64_t p) const {
    return bytes_.data() + p * panel_bytes_;
  }
  int64_t panel_bytes() const { return panel_bytes_; }

 private:
  // Copies W into the panels, element type T; with `interleave`, panel column
  // j < nr/2 goes to slot 2j and column nr/2 + j to slot 2j + 1 (bf16).
  template <typename T>
  void Fill(const WeightView& w, bool interleave) {
    const int64_t k_len = w.cols;
    const auto* src = static_cast<const unsigned char*>(w.data);
    const int64_t half = nr_ / 2;
    for (int64_t p = 0; p < panels_; ++p) {
      auto* dst = reinterpret_cast<T*>(bytes_.data() + p * panel_bytes_);
      const int64_t cols = std::min(nr_, w.rows - p * nr_);
      if (cols < nr_) std::memset(dst, 0, static_cast<size_t>(panel_bytes_));
      const unsigned char* rows = src + p * nr_ * k_len * sizeof(T);
      for (int64_t k = 0; k < k_len; ++k) {
        T* out = dst + k * nr_;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t slot =
              !interleave ? j : (j < half ? 2 * j : 2 * (j - half) + 1);
          // `w.data` needs no alignment.
          std::memcpy(out + slot, rows + (j * k_len + k) * sizeof(T),
                      sizeof(T));
        }
      }
    }
  }

  int64_t nr_;
  int64_t panels_;
  int64_t panel_bytes_;
  AlignedBuffer<unsigned char> bytes_;
};

// The post-order evaluation of the halving tree over `chunks` leaves (see the
// file comment). For chunk c: the leaf goes to stack slot sp[c]; then merges[c]
// merges leave the result in slot sp[c] - merges[c].
class ChunkTreeSchedule {
 public:
  explicit ChunkTreeSchedule(int64_t chunks) : chunks_(chunks) {
    sp_.Reserve(static_cast<size_t>(chunks));
    merges_.Reserve(static_cast<size_t>(chunks));
    for (int64_t c = 0; c < chunks; ++c) merges_[c] = 0;
    int64_t next_leaf = 0;
    Visit(chunks, &next_leaf);
    int32_t sp = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sp_[c] = sp;
      depth_ = std::max(depth_, sp + 1);
      sp += 1 - merges_[c];
    }
  }
  ChunkTreeSchedule(const ChunkTreeSchedule&) = delete;
  ChunkTreeSchedule& operator=(const ChunkTreeSchedule&) = delete;

  int64_t chunks() const { return chunks_; }
  int32_t depth() const { return depth_; }  // stack slots needed
  int32_t sp(int64_t c) const { return sp_[c]; }
  int32_t merges(int64_t c) const { return merges_[c]; }

 private:
  // T(n) = T(ceil(n/2)) + T(floor(n/2)): the merge of a subtree happens right
  // after its last leaf.
  void Visit(int64_t n, int64_t* next_leaf) {
    if (n == 1) {
      ++*next_leaf;
      return;
    }
    Visit((n + 1) / 2, next_leaf);
    Visit(n / 2, next_leaf);
    ++merges_[*next_leaf - 1];
  }

  int64_t chunks_;
  int32_t depth_ = 0;
  AlignedBuffer<int32_t> sp_;
  AlignedBuffer<int32_t> merges_;
};

}  // namespace
}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_PANELS_H_
