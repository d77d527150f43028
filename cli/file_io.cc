#include "cli/file_io.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace layerproof::cli {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          size_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return absl::InvalidArgumentError(path + ": " + ec.message());
  if (size > max_bytes) {
    return absl::InvalidArgumentError(
        path + ": " + std::to_string(size) +
        " bytes, want <= " + std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(path + ": cannot open");
  std::string data(static_cast<size_t>(size), '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) {
    return absl::InvalidArgumentError(path + ": short read");
  }
  return data;
}

absl::Status WriteWholeFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return absl::PermissionDeniedError("cannot write " + path);
  return absl::OkStatus();
}

}  // namespace layerproof::cli
