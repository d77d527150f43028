// Status and StatusOr for the kernels module.
//
// kernels/ must build alone on a bare CUDA machine and cross-compile for
// aarch64, where Abseil is not installed, so it carries this minimal pair
// instead of absl::Status. The codes are numerically Abseil's (and gRPC's);
// store/ converts with ToAbslStatus(). Thread safety: value types, no shared
// state.
#ifndef LAYERPROOF_KERNELS_STATUS_H_
#define LAYERPROOF_KERNELS_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace layerproof::kernels {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 3,
  kNotFound = 5,
  kFailedPrecondition = 9,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status Unavailable(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {}  // NOLINT: implicit
  StatusOr(T value) : v_(std::move(value)) {}         // NOLINT: implicit

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? OkStatus() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace layerproof::kernels

#define LP_KERNELS_CONCAT_INNER(a, b) a##b
#define LP_KERNELS_CONCAT(a, b) LP_KERNELS_CONCAT_INNER(a, b)

// Both macros work with kernels::Status/StatusOr and with absl::Status/
// StatusOr (store/ and the services use the same names).
#define LP_RETURN_IF_ERROR(expr)             \
  do {                                       \
    auto lp_status_ = (expr);                \
    if (!lp_status_.ok()) return lp_status_; \
  } while (0)

#define LP_ASSIGN_OR_RETURN(lhs, expr) \
  LP_ASSIGN_OR_RETURN_IMPL(LP_KERNELS_CONCAT(lp_statusor_, __LINE__), lhs, expr)
#define LP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#endif  // LAYERPROOF_KERNELS_STATUS_H_
