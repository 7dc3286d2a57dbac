#include "report/gnuplot.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/output_text.h"

extern char** environ;

namespace mfabric::report {
namespace {

namespace fs = std::filesystem;

// A directory only this process can read, removed with everything in it when it goes out of
// scope (also when a plot fails).
class PrivateTempDir {
 public:
  explicit PrivateTempDir(const std::string& field) {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "mfabric-gnuplot-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw Error("", field,
                  fmt::format("cannot create a temporary directory in {}: {}",
                              printable(base.string()), std::strerror(errno)));
    path_ = pattern;
  }
  ~PrivateTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_output_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The line of gnuplot's error output that says what went wrong ("<script>" line N: message),
// without the temporary script's path; else the first line that is not an echo marker.
std::string error_line(const std::string& err) {
  std::istringstream lines(err);
  std::string line, first;
  while (std::getline(lines, line)) {
    const std::size_t located = line.find("\" line ");
    if (!line.empty() && line.front() == '"' && located != std::string::npos)
      return printable(line.substr(located + 2, 200));
    if (first.empty() && line.find_first_not_of(" \t^") != std::string::npos) first = line;
  }
  return first.empty() ? "no message" : printable(first.substr(0, 200));
}

// The environment of the child: ours, with a fixed locale so that numbers are read and written
// with a decimal point whatever the user's locale.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("LC_ALL=") || entry.starts_with("LC_NUMERIC=")) continue;
    env.emplace_back(entry);
  }
  env.emplace_back("LC_ALL=C.UTF-8");
  return env;
}

// Waits for `pid` up to `timeout_s`; kills it past that. Returns the wait status, or nothing on
// a timeout.
std::optional<int> wait_with_timeout(pid_t pid, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return std::nullopt;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return std::nullopt;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

bool is_id_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
         c == ':';
}

}  // namespace

std::optional<std::string> find_on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr || program.empty()) return std::nullopt;
  std::string_view rest(path);
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    // An empty entry means the current directory (POSIX); a report never runs a program found
    // there, so empty and relative entries are skipped.
    if (!dir.empty() && dir.front() == '/') {
      const std::string candidate = fmt::format("{}/{}", dir, program);
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

std::string require_gnuplot(const std::string& field) {
  std::optional<std::string> gnuplot = find_on_path("gnuplot");
  if (!gnuplot)
    throw Error("", field, "gnuplot not found: install gnuplot (scripts/install-deps.sh)");
  return *std::move(gnuplot);
}

std::string gnuplot_string(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out = "'";
  for (char c : valid) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'')
      out += "''";
    else if (u < 0x20 || u == 0x7f)
      out += ' ';
    else
      out += c;
  }
  // C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F) are left: gnuplot passes them through as
  // text, and the SVG is then read as UTF-8 like the rest of the page.
  out += "'";
  return out;
}

std::string gnuplot_number(double x) {
  if (!std::isfinite(x)) throw Error("internal: a non-finite number reached a gnuplot script");
  return fmt::format("{}", x);
}

std::string run_gnuplot(const std::string& script, const std::string& field, double timeout_s) {
  const std::string gnuplot = require_gnuplot(field);
  PrivateTempDir dir(field);
  const fs::path script_file = dir.path() / "plot.gp";
  const fs::path svg_file = dir.path() / "plot.svg";
  const fs::path err_file = dir.path() / "stderr.txt";
  {
    std::ofstream out(script_file, std::ios::binary);
    out << script;
    if (!out.flush())
      throw Error("", field, fmt::format("cannot write {}", printable(script_file.string())));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, svg_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = "gnuplot", arg1 = "-d", arg2 = script_file.string();
  std::vector<char*> argv = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  std::vector<std::string> env = child_environment();
  std::vector<char*> envp;
  for (std::string& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int spawned =
      ::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw Error("", field,
                fmt::format("cannot run {}: {}", printable(gnuplot), std::strerror(spawned)));

  const std::optional<int> status = wait_with_timeout(pid, timeout_s);
  if (!status) throw Error("", field, fmt::format("gnuplot did not finish within {} s", timeout_s));
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
    throw Error("", field, "gnuplot failed: " + error_line(read_output_file(err_file)));
  std::string svg = read_output_file(svg_file);
  if (svg.find("<svg") == std::string::npos || svg.find("</svg>") == std::string::npos)
    throw Error("", field, "gnuplot wrote no SVG: " + error_line(read_output_file(err_file)));
  return svg;
}

std::string inline_svg(std::string_view svg, std::string_view id_prefix) {
  // Drop everything before the <svg element (the XML declaration, comments).
  const std::size_t start = svg.find("<svg");
  if (start != std::string_view::npos) svg.remove_prefix(start);

  // Definitions (id='x') and references ('#x', "#x", url(#x)) are only looked for inside tags,
  // never in text, which holds user data (gnuplot escapes < and & there, so a tag ends at '>').
  auto definition_at = [&](std::size_t i) {
    return svg.compare(i, 3, "id=") == 0 && i > 0 &&
           std::isspace(static_cast<unsigned char>(svg[i - 1])) && i + 3 < svg.size() &&
           (svg[i + 3] == '\'' || svg[i + 3] == '"');
  };
  auto reference_at = [&](std::size_t i) {
    return svg[i] == '#' && i > 0 && (svg[i - 1] == '\'' || svg[i - 1] == '"' || svg[i - 1] == '(');
  };
  auto name_end = [&](std::size_t from) {
    while (from < svg.size() && is_id_char(svg[from]))
      ++from;
    return from;
  };

  std::set<std::string, std::less<>> ids;
  bool in_tag = false;
  for (std::size_t i = 0; i < svg.size(); ++i) {
    if (svg[i] == '<') in_tag = true;
    if (svg[i] == '>') in_tag = false;
    if (in_tag && definition_at(i)) ids.emplace(svg.substr(i + 4, name_end(i + 4) - i - 4));
  }

  std::string out;
  out.reserve(svg.size() + svg.size() / 50);
  in_tag = false;
  std::size_t i = 0;
  while (i < svg.size()) {
    if (svg[i] == '<') in_tag = true;
    if (svg[i] == '>') in_tag = false;
    const bool definition = in_tag && definition_at(i);
    if (definition || (in_tag && reference_at(i))) {
      const std::size_t name_start = definition ? i + 4 : i + 1;
      const std::size_t end = name_end(name_start);
      const std::string_view name = svg.substr(name_start, end - name_start);
      if (ids.contains(name)) {
        out.append(svg.substr(i, name_start - i));
        out.append(id_prefix);
        out.append(name);
        i = end;
        continue;
      }
    }
    out += svg[i];
    ++i;
  }
  return out;
}

std::string gnuplot_svg_canvas(int width, int height) {
  return fmt::format(
      "set encoding utf8\n"
      "set terminal svg size {},{} fixed noenhanced font 'sans,13' background rgb 'white'\n",
      width, height);
}

std::string gnuplot_tic_list(const std::vector<std::string>& labels) {
  std::string tics;
  for (std::size_t i = 0; i < labels.size(); ++i)
    tics += fmt::format("{}{} {}", i > 0 ? ", " : "", gnuplot_string(labels[i]), i);
  return tics;
}

std::string gnuplot_tics(const std::vector<GnuplotTic>& tics) {
  std::string list;
  for (const GnuplotTic& tic : tics) {
    if (!std::isfinite(tic.at)) continue;
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", gnuplot_string(tic.label),
                        gnuplot_number(tic.at));
  }
  return list;
}

std::string gnuplot_data_block(const std::string& name,
                               const std::vector<std::vector<double>>& rows) {
  std::string text = fmt::format("${} << EOD\n", name);
  for (const std::vector<double>& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) text += ' ';
      text += gnuplot_number(row[i]);
    }
    text += '\n';
  }
  text += "EOD\n";
  return text;
}

}  // namespace mfabric::report
