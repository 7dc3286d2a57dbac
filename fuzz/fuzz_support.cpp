#include "fuzz_support.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
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

constexpr std::string_view kMarkerOpen = "@@";
constexpr std::string_view kMarkerClose = ")@@";
constexpr std::string_view kIndex = "@@#@@";
constexpr std::size_t kMaxCountDigits = 7;  // kMaxRepeat has 7

// A repeat marker "@@<count>(<segment>)@@" starting at raw[at] (which is "@@").
struct Repeat {
  std::size_t count = 0;
  std::string_view segment;
  std::size_t end = 0;  // just past the closing ")@@"
};

std::optional<Repeat> repeat_at(std::string_view raw, std::size_t at) {
  std::size_t i = at + kMarkerOpen.size();
  std::size_t count = 0, digits = 0;
  while (i < raw.size() && raw[i] >= '0' && raw[i] <= '9' && digits < kMaxCountDigits) {
    count = count * 10 + static_cast<std::size_t>(raw[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0 || count > kMaxRepeat || i >= raw.size() || raw[i] != '(') return std::nullopt;
  const std::size_t begin = i + 1;
  const std::size_t close = raw.find(kMarkerClose, begin);
  if (close == std::string_view::npos) return std::nullopt;
  return Repeat{count, raw.substr(begin, close - begin), close + kMarkerClose.size()};
}

}  // namespace

std::optional<std::string> expand_repeats(std::string_view raw, std::size_t max_bytes) {
  std::string out;
  // Appends, or says the output would be over max_bytes (out.size() <= max_bytes throughout, so
  // the sum cannot wrap).
  const auto append = [&](std::string_view piece) {
    if (piece.size() > max_bytes - out.size()) return false;
    out.append(piece);
    return true;
  };
  std::size_t pos = 0;
  while (pos < raw.size()) {
    const std::size_t at = raw.find(kMarkerOpen, pos);
    if (at == std::string_view::npos) {
      if (!append(raw.substr(pos))) return std::nullopt;
      break;
    }
    if (!append(raw.substr(pos, at - pos))) return std::nullopt;
    const std::optional<Repeat> r = repeat_at(raw, at);
    if (!r) {
      // Not a marker: keep one '@' and look again from the next (so "@@@2(x)@@" is "@xx").
      if (!append(raw.substr(at, 1))) return std::nullopt;
      pos = at + 1;
      continue;
    }
    pos = r->end;
    if (r->segment.find(kIndex) == std::string_view::npos) {
      // The common case, sized up front so that an over-long expansion costs nothing.
      if (r->segment.size() > 0 && r->count > (max_bytes - out.size()) / r->segment.size()) {
        return std::nullopt;
      }
      out.reserve(out.size() + r->count * r->segment.size());
      for (std::size_t k = 0; k < r->count; ++k)
        out.append(r->segment);
      continue;
    }
    for (std::size_t k = 0; k < r->count; ++k) {
      char digits[24];
      const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, k);
      (void)ec;  // 24 characters hold any size_t
      const std::string_view index(digits, static_cast<std::size_t>(end - digits));
      std::string_view rest = r->segment;
      for (std::size_t hole; (hole = rest.find(kIndex)) != std::string_view::npos;) {
        if (!append(rest.substr(0, hole)) || !append(index)) return std::nullopt;
        rest.remove_prefix(hole + kIndex.size());
      }
      if (!append(rest)) return std::nullopt;
    }
  }
  return out;
}

std::size_t max_expanded_bytes() {
  static const std::size_t cap = [] {
    const char* env = std::getenv("MFABRIC_FUZZ_MAX_EXPANDED");
    if (env == nullptr || *env == '\0') return kMaxExpandedBytes;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(env, &end, 10);
    if (*end != '\0') property_failed("MFABRIC_FUZZ_MAX_EXPANDED is not a number of bytes");
    return std::min<std::size_t>(static_cast<std::size_t>(n), kMaxExpandedBytes);
  }();
  return cap;
}

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

std::optional<std::string> expanded_scratch_file(const std::string& name, const std::uint8_t* data,
                                                 std::size_t size) {
  const std::optional<std::string> text = expanded_text(data, size);
  if (!text) return std::nullopt;
  return write_scratch(name, *text);
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
