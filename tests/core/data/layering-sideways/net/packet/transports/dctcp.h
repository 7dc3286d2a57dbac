// A fixture of cmake/check_layers.cmake: a file of net/packet/transports that includes the rest
// of net/packet (accepted).
#pragma once

#include "net/packet/port.h"
