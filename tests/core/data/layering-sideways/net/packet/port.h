// A fixture of cmake/check_layers.cmake: a file of net/packet that includes its own subfolder
// (accepted) and the top of net/ (accepted).
#pragma once

#include "net/backend.h"
#include "net/packet/transports/dctcp.h"
