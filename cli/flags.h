// A small --flag value parser for the subcommands: every flag must be
// known, every value present and well-formed, with errors that name the
// flag. Thread safety: value type.
#ifndef LAYERPROOF_CLI_FLAGS_H_
#define LAYERPROOF_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace layerproof::cli {

class Flags {
 public:
  // `valued`: flags that take a value; `switches`: flags that do not.
  Flags(std::set<std::string> valued, std::set<std::string> switches)
      : valued_(std::move(valued)), switches_(std::move(switches)) {}

  // Parses args ("--flag value" or "--flag=value"; switches take no
  // value); on failure returns false with *error naming the argument.
  bool Parse(const std::vector<std::string>& args, std::string* error);

  bool Has(const std::string& flag) const { return values_.count(flag) > 0; }
  std::string Get(const std::string& flag, const std::string& def = "") const;
  // Typed getters: *error names the flag on a malformed value.
  std::optional<int64_t> GetInt(const std::string& flag, int64_t def,
                                int64_t min, int64_t max,
                                std::string* error) const;
  std::optional<double> GetDouble(const std::string& flag, double def,
                                  std::string* error) const;

 private:
  std::set<std::string> valued_, switches_;
  std::map<std::string, std::string> values_;
};

// Whether `args` holds --help or -h anywhere: the subcommand then prints
// its usage on stdout and exits 0, whatever else is on the line.
bool WantsHelp(const std::vector<std::string>& args);

// Comma-separated token ids ("1,2,3"); nullopt with *error on bad input.
std::optional<std::vector<int32_t>> ParseTokenList(const std::string& text,
                                                   std::string* error);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_FLAGS_H_
