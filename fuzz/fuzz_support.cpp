#include "fuzz_support.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace mfabric::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDirPrefix = "mfabric-fuzz-";

fs::path scratch_root() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec)) return "/dev/shm";
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') return tmp;
  return "/tmp";
}

// A crashed harness cannot clean up after itself; the next one removes what dead processes left.
void remove_stale_dirs(const fs::path& root) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + kDirPrefix.size(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      fs::remove_all(entry.path(), ec);
    }
  }
}

void remove_own_dir() {
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
}

}  // namespace

const std::string& scratch_dir() {
  // Never destroyed: remove_own_dir runs at exit, after static destructors may have run.
  static const std::string* const dir = [] {
    const fs::path root = scratch_root();
    remove_stale_dirs(root);
    const fs::path d = root / (std::string(kDirPrefix) + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit(remove_own_dir);
    return new std::string(d.string());
  }();
  return *dir;
}

std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) property_failed("cannot write the scratch file " + path);
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) property_failed("cannot write the scratch file " + path);
  return path;
}

void remove_scratch(const std::string& name) {
  ::unlink((scratch_dir() + "/" + name).c_str());
}

std::vector<std::string_view> split(std::string_view text, std::string_view separator,
                                    std::size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const std::size_t at = text.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + separator.size());
  }
  parts.push_back(text);
  return parts;
}

void property_failed(const std::string& what) {
  std::fprintf(stderr, "mfabric fuzz: property failed: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace mfabric::fuzz
