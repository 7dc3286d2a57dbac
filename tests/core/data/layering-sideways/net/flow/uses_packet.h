// A fixture of cmake/check_layers.cmake: a file of net/flow that includes net/packet (refused).
#pragma once

#include "net/packet/port.h"
