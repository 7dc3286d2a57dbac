// JSON input files (routing traces, demand files): one parser front end so that every JSON
// input reports errors the same way.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mfabric {

// Parses `text`, the contents of `source`. Errors are mfabric::Error naming the source: a syntax
// error with nlohmann's line and column ("invalid JSON: parse error at line 3, column 5: ...");
// a number too large for a double ("1e999", which nlohmann reports without a position) with
// its JSON path as the field ("records[3].tokens[2][1]"), its line and column, and
// `number_rule` saying what numbers the file holds.
nlohmann::json parse_json_input(const std::string& text, const std::string& source,
                                const std::string& number_rule);

}  // namespace mfabric
