#include "core/provenance.h"

#include "core/output_text.h"
#include "mfabric_git_describe.h"

namespace mfabric {
namespace {

std::string& stored_command_line() {
  static std::string line;
  return line;
}

std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos)
    return word;
  std::string out = "'";
  for (const char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string mfabric_version() {
  return std::string(MFABRIC_PROJECT_VERSION) + " (git " + MFABRIC_GIT_DESCRIBE + ")";
}

void set_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i)
    line += (i == 0 ? "" : " ") + shell_word(i == 0 ? std::string("mfabric") : argv[i]);
  stored_command_line() = line;
}

const std::string& command_line() {
  return stored_command_line();
}

nlohmann::json provenance_json() {
  return {{"mfabric", mfabric_version()}, {"command", command_line()}};
}

std::string provenance_csv_comment() {
  std::string line = "# mfabric " + mfabric_version();
  if (!command_line().empty()) line += "; command: " + command_line();
  return printable(line) + "\n";
}

}  // namespace mfabric
