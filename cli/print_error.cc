#include "cli/print_error.h"

#include <cstdio>
#include <string>

#include "kernels/printable.h"

namespace layerproof::cli {

void PrintError(std::string_view prefix, std::string_view message) {
  const std::string line =
      std::string(prefix) + ": " + kernels::Printable(message) + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace layerproof::cli
