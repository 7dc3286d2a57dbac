// Price files (fabric::PriceBook::load, docs/cost-model.md), then pricing a bill of materials at
// every speed the file leaves in the book. The input's repeat markers are expanded
// (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fabric/cost.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> path = fuzz::expanded_scratch_file("prices.yaml", data, size);
  if (!path) return -1;
  fuzz::expect_only_mfabric_errors([&] {
    const fabric::PriceBook book = fabric::PriceBook::load(*path);
    const fabric::BillOfMaterials bom{1024, 2048, 1536, 512, 256, 1024};
    for (const auto& [bps, prices] : book.speeds()) {
      const fabric::LinkPrices& looked_up = book.at(Rate::bits_per_second(bps));
      volatile double sink = fabric::price(bom, looked_up, book.fibre_length_m()).total();
      (void)sink;
      (void)prices;
    }
  });
  return 0;
}
