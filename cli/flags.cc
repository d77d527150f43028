#include "cli/flags.h"

#include <cerrno>
#include <cstdlib>

namespace layerproof::cli {

bool Flags::Parse(const std::vector<std::string>& args, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // --flag=value, as manifests and systemd units often write it.
    if (const size_t eq = a.find('='); a.starts_with("--") && eq != a.npos) {
      const std::string name = a.substr(0, eq);
      if (valued_.count(name)) {
        values_[name] = a.substr(eq + 1);
        continue;
      }
      *error = switches_.count(name) ? name + " takes no value"
                                     : "unknown argument \"" + name + "\"";
      return false;
    }
    if (switches_.count(a)) {
      values_[a] = "";
    } else if (valued_.count(a)) {
      if (i + 1 >= args.size()) {
        *error = a + ": missing value";
        return false;
      }
      values_[a] = args[++i];
    } else {
      *error = "unknown argument \"" + a + "\"";
      return false;
    }
  }
  return true;
}

std::string Flags::Get(const std::string& flag, const std::string& def) const {
  auto it = values_.find(flag);
  return it == values_.end() ? def : it->second;
}

std::optional<int64_t> Flags::GetInt(const std::string& flag, int64_t def,
                                     int64_t min, int64_t max,
                                     std::string* error) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return def;
  const char* s = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (it->second.empty() || *end != '\0' || errno != 0 || v < min || v > max) {
    *error = flag + ": got \"" + it->second + "\", want an integer in " +
             std::to_string(min) + " .. " + std::to_string(max);
    return std::nullopt;
  }
  return v;
}

std::optional<double> Flags::GetDouble(const std::string& flag, double def,
                                       std::string* error) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return def;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || errno != 0) {
    *error = flag + ": got \"" + it->second + "\", want a number";
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<int32_t>> ParseTokenList(const std::string& text,
                                                   std::string* error) {
  std::vector<int32_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < 0 || v > INT32_MAX) {
      *error = "--tokens: item " + std::to_string(out.size()) + " (\"" + item +
               "\") is not a token id";
      return std::nullopt;
    }
    out.push_back(static_cast<int32_t>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

}  // namespace layerproof::cli
