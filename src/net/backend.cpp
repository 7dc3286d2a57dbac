#include "net/backend.h"

#include "core/error.h"

namespace mfabric::net {

namespace {
[[noreturn]] void no_circuits() {
  throw Error("", "simulation.backend", "this network backend does not model optical circuits");
}
}  // namespace

fabric::LinkId Backend::connect(fabric::NodeId, fabric::NodeId) {
  no_circuits();
}
void Backend::disconnect(fabric::LinkId) {
  no_circuits();
}
void Backend::resume_paused() {
  no_circuits();
}
void Backend::resume_paused(int, int) {
  no_circuits();
}
void Backend::reroute(int, int) {
  no_circuits();
}

}  // namespace mfabric::net
