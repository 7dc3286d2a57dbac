// A net/ header that includes sim/: the layering check must refuse it.
#pragma once
#include "fabric/topology.h"
#include "sim/engine.h"
