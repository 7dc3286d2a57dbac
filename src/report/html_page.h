// What mfabric's HTML reports (compare's and sweep's report.html) share: the style sheet and
// HTML-escaped text.
#pragma once

#include <string>
#include <string_view>

namespace mfabric::report {

// The CSS of mfabric's HTML reports (compare and sweep pages look alike).
const char* report_style();

// `text` for HTML text or a quoted attribute: valid UTF-8 with & < > " ' as references.
std::string html_text(std::string_view text);

// <p class="provenance">: the mfabric build and the command line that made the page, one line
// (core/provenance.h), so that tools comparing two pages of the same results can leave it out.
std::string provenance_html();

}  // namespace mfabric::report
