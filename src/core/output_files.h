// Writing output files so that a reader only ever sees complete output: a file is either its
// previous content or its new content, and a directory of files written as a set (`mfabric
// simulate --out DIR`) holds either the previous complete set or the new complete set, never a
// mix. No temporary file survives an error, SIGINT, SIGTERM or SIGHUP. Every command that
// writes a file goes through these two functions (docs/cli.md, "Output files").
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace mfabric {

// Produces one file's content into a stream. It may throw; then nothing is written.
using ContentWriter = std::function<void(std::ostream&)>;

// Replaces the file at `path` atomically: the content goes to a hidden temporary file in the
// same directory (".NAME.tmp.PID.N"), is flushed to disk (fsync) and renamed over `path`. A
// symbolic link at `path` is followed (its target is replaced). The directory must exist, and
// `path` must be a regular file or missing: a device (/dev/null), a FIFO, a socket or a dangling
// symbolic link is an error, since the rename would replace the node with a file.
// Errors (a missing directory, a directory at `path`, a full disk, a throwing writer) are
// mfabric::Error naming `path`, with the previous file left untouched.
void write_file_atomically(const std::string& path, std::string_view content);
void write_file_atomically(const std::string& path, const ContentWriter& write);

// The checks write_file_atomically makes before writing anything, without writing: for a command
// to refuse a bad output path before a long run rather than after it.
void check_output_file(const std::string& path);

// One file of a set: its name inside the directory (no '/') and its content.
struct OutputFile {
  std::string name;
  ContentWriter write;
};

// Writes `files` as the complete content of directory `dir`:
//  - the files are written into a fresh sibling ".NAME.staging.PID", flushed to disk, and the
//    staging directory is swapped with `dir` in one step (renameat2 RENAME_EXCHANGE; a plain
//    rename when `dir` does not exist yet); the previous set is then deleted;
//  - `dir` may be missing (it and any missing parents are created), empty, or hold nothing but
//    files of this set (the previous run's output). Anything else in it, `dir` being a file, or
//    `dir` or its parent not being writable, is an mfabric::Error before anything is written:
//    the set replaces the whole directory, so mfabric refuses to delete files it did not write;
//  - a symbolic link `dir` is followed; the new directory keeps the previous one's permissions;
//  - on any error, and on SIGINT, SIGTERM or SIGHUP, `dir` is left as it was and the staging
//    directory is removed; leftovers of a run killed by SIGKILL are removed by the next write
//    to the same `dir`.
// On a file system without RENAME_EXCHANGE the swap is two renames (`dir` to ".NAME.old.PID",
// staging to `dir`); a signal between them puts the previous set back.
void write_output_set(const std::string& dir, const std::vector<OutputFile>& files);
// The same for a set whose files are optional: `names` lists every file the set may hold (a
// fixed list, the files' names among them), `files` those written this time. `dir` may hold
// any of `names` (a previous run's files, written with other options), and afterwards holds
// exactly `files`: a previous run's optional file that this run does not write is gone with
// the rest of the previous set.
void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      const std::vector<std::string>& names);

// The checks write_output_set makes before writing anything, without writing: for a command to
// refuse a bad DIR before a long run rather than after it. `names` are the set's file names.
void check_output_set(const std::string& dir, const std::vector<std::string>& names);

namespace detail {
// write_output_set, with the two-rename swap forced when use_exchange is false (for tests of
// the fallback on file systems that have RENAME_EXCHANGE).
void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      bool use_exchange);
void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      const std::vector<std::string>& names, bool use_exchange);
}  // namespace detail

}  // namespace mfabric
