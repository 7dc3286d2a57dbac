#include <cstdio>

int main() {
  std::puts("mfabric");
  return 0;
}
