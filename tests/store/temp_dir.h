// A fresh directory under the system's temporary directory for a store test,
// removed with everything in it when the object goes.
#ifndef LAYERPROOF_TESTS_STORE_TEMP_DIR_H_
#define LAYERPROOF_TESTS_STORE_TEMP_DIR_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace layerproof::store::fixture {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "lp_store") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX"))
            .string();
    const char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace layerproof::store::fixture

#endif  // LAYERPROOF_TESTS_STORE_TEMP_DIR_H_
