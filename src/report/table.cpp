#include "report/table.h"

#include <algorithm>
#include <stdexcept>

#include "core/output_text.h"

namespace mfabric::report {

Table::Table(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  for (std::string& cell : header_)
    cell = printable(cell);
  align_.resize(header_.size(), Align::Right);
  if (!align_.empty() && align.empty()) align_[0] = Align::Left;
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != header_.size()) {
    throw std::logic_error("Table::add_row: row has a different number of cells than the header");
  }
  for (std::string& cell : cells)
    cell = printable(cell);
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c)
    width[c] = display_width(header_[c]);
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], display_width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - display_width(cells[c]), ' ');
      if (c > 0) out += "  ";
      out += align_[c] == Align::Left ? cells[c] + pad : pad + cells[c];
    }
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  std::size_t total = 0;
  for (std::size_t c = 0; c < width.size(); ++c)
    total += width[c] + (c > 0 ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_)
    out += line(row);
  return out;
}

}  // namespace mfabric::report
