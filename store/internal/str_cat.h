// Cat(): string concatenation with the standard library. Debian's Abseil
// has its own absl::string_view, so absl::StrCat does not take a
// std::string_view (docs/store.md). Thread safety: pure.
#ifndef LAYERPROOF_STORE_INTERNAL_STR_CAT_H_
#define LAYERPROOF_STORE_INTERNAL_STR_CAT_H_

#include <string>
#include <string_view>
#include <type_traits>

namespace layerproof::store::internal {

inline void AppendPart(std::string& out, std::string_view s) { out.append(s); }
inline void AppendPart(std::string& out, const char* s) { out.append(s); }
inline void AppendPart(std::string& out, const std::string& s) {
  out.append(s);
}
template <typename T>
requires std::is_integral_v<T>
void AppendPart(std::string& out, T v) { out.append(std::to_string(v)); }

template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (AppendPart(out, parts), ...);
  return out;
}

}  // namespace layerproof::store::internal

#endif  // LAYERPROOF_STORE_INTERNAL_STR_CAT_H_
