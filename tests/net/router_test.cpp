#include "net/router.h"

#include <gtest/gtest.h>

TEST(Router, Placeholder) {}
