// Facts about the machine the benchmarks report beside their figures.
// Thread safety: pure reads of sysfs.
#ifndef LAYERPROOF_BENCH_MACHINE_H_
#define LAYERPROOF_BENCH_MACHINE_H_

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace layerproof::bench {

// Size of the largest (last-level) data or unified cache of cpu0, from sysfs.
inline int64_t LastLevelCacheBytes() {
  int64_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_f(dir + "level"), size_f(dir + "size"),
        type_f(dir + "type");
    int level = 0;
    std::string size, type;
    if (!(level_f >> level) || !(size_f >> size) || !(type_f >> type)) break;
    if (type == "Instruction") continue;
    int64_t bytes = std::atoll(size.c_str());
    if (size.back() == 'K') bytes <<= 10;
    if (size.back() == 'M') bytes <<= 20;
    if (level > best_level) {
      best_level = level;
      best = bytes;
    }
  }
  return best > 0 ? best : int64_t{64} << 20;
}

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_MACHINE_H_
