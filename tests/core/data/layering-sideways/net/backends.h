// A fixture of cmake/check_layers.cmake: the top of net/ joins its subfolders (accepted).
#pragma once

#include "net/flow/uses_packet.h"
#include "net/packet/port.h"
