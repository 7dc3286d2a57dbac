// A plain-text table for terminal output: columns are sized to their widest cell (in
// characters, not bytes), numbers are right-aligned, text left-aligned. Cells go through
// printable() (core/output_text.h): a name holding a newline, a control character or invalid
// UTF-8 cannot break the table or the terminal.
#pragma once

#include <string>
#include <vector>

namespace mfabric::report {

class Table {
 public:
  enum class Align { Left, Right };

  explicit Table(std::vector<std::string> header, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace mfabric::report
