#include "report/html_page.h"

#include "core/provenance.h"

#include "core/output_text.h"

namespace mfabric::report {
namespace {

constexpr const char* kStyleText = R"(body { margin: 0; background: #f6f6f4; color: #222;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; }
.summary { color: #555; margin: 0 0 12px; }
ul.how { margin: 4px 0 8px; padding-left: 22px; }
figure { background: #fff; border: 1px solid #ddd; border-radius: 6px; margin: 20px 0;
  padding: 12px 16px; }
figcaption { margin-bottom: 8px; }
figure svg { display: block; width: 100%; height: auto; }
figure svg text { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; }
p.missing { color: #8a4b00; background: #fff6e5; padding: 8px 12px; border-radius: 4px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; width: 100%; }
th, td { border: 1px solid #ddd; padding: 4px 7px; text-align: left; vertical-align: top; }
th { background: #eeeeea; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody td:nth-child(-n+3) { white-space: nowrap; }
.table-wrap { overflow-x: auto; }
tbody tr:nth-child(even) { background: #fafaf8; }
tr.failed td { background: #fdecea; }
td.error { color: #9b1c1c; }
code { font-size: 13px; }
)";

}  // namespace

const char* report_style() {
  return kStyleText;
}

std::string html_text(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // C0 controls (but tab and line breaks) and DEL are not allowed in HTML text.
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
            c == '\x7f')
          out += kReplacementCharacter;
        else
          out += c;
    }
  }
  return out;
}

std::string provenance_html() {
  return "<p class=\"provenance\">Made by mfabric " + html_text(mfabric_version()) +
         (command_line().empty() ? std::string()
                                 : "; command: <code>" + html_text(command_line()) + "</code>") +
         "</p>\n";
}

}  // namespace mfabric::report
