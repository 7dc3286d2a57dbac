#include "core/error.h"

namespace mfabric {
namespace {

std::string compose(const std::string& source, const std::string& field,
                    const std::string& message) {
  std::string out;
  if (!source.empty()) out += source + ": ";
  if (!field.empty()) out += field + ": ";
  return out + message;
}

}  // namespace

Error::Error(std::string source, std::string field, std::string message)
    : std::runtime_error(compose(source, field, message)),
      source_(std::move(source)),
      field_(std::move(field)),
      message_(std::move(message)) {}

Error Error::in(const std::string& source, const std::string& field) const {
  std::string combined = field;
  if (!field_.empty()) combined = combined.empty() ? field_ : combined + "." + field_;
  return Error(source_.empty() ? source : source_, combined, message_);
}

}  // namespace mfabric
