// What every fuzz target of tests/fuzz asserts, and a reader of the fuzzed
// bytes. A failed check aborts (libFuzzer then saves the input as a crash;
// the corpus replay of the ordinary build fails the test).
//
// Every error a parser returns on hostile bytes must be printable
// (kernels/printable.h, issue 17 item 6): LP_FUZZ_CHECK_PRINTABLE(status).
#ifndef LAYERPROOF_TESTS_FUZZ_FUZZ_CHECK_H_
#define LAYERPROOF_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "kernels/printable.h"

// Aborts with the condition and where it failed.
#define LP_FUZZ_CHECK(cond)                                            \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                   \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

// Aborts when `status` (an absl::Status or a kernels::Status, or anything
// with ok() and message()) is an error whose message is not printable; the
// message is shown escaped.
#define LP_FUZZ_CHECK_PRINTABLE(status)                                 \
  ::layerproof::fuzz::CheckPrintable((status).ok(), (status).message(), \
                                     __FILE__, __LINE__)

namespace layerproof::fuzz {

// `message`: a std::string, std::string_view or absl::string_view (Debian's
// Abseil has its own).
template <typename Message>
void CheckPrintable(bool ok, const Message& m, const char* file, int line) {
  const std::string_view message(m.data(), m.size());
  if (ok || kernels::IsPrintable(message)) return;
  std::fprintf(stderr, "%s:%d: fuzz check failed: unprintable error: %s\n",
               file, line, kernels::Printable(message).c_str());
  std::abort();
}

// Reads the fuzzed bytes front to back; past the end every read is zero
// or empty.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - at_; }
  uint8_t U8() { return at_ < size_ ? data_[at_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(U8() | U8() << 8); }
  uint32_t U32() { return U16() | static_cast<uint32_t>(U16()) << 16; }
  uint64_t U64() { return U32() | static_cast<uint64_t>(U32()) << 32; }
  float F32() {
    const uint32_t bits = U32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  // Up to n bytes (fewer at the end).
  std::string Bytes(size_t n) {
    n = n < remaining() ? n : remaining();
    std::string out(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return out;
  }
  // A u16 length, then that many bytes.
  std::string Sized() { return Bytes(U16()); }
  std::string Rest() { return Bytes(remaining()); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace layerproof::fuzz

#endif  // LAYERPROOF_TESTS_FUZZ_FUZZ_CHECK_H_
