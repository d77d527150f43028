// Placeholder until issue 6 fills it in.
#include <cstdio>

#include "cli/store_commands.h"

namespace layerproof::cli {

int RunDemo(const std::vector<std::string>& /*args*/) {
  std::fputs("layerproof: not built yet\n", stderr);
  return 2;
}

}  // namespace layerproof::cli
