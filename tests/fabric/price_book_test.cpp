// PriceBook: the paper's Table 4 and YAML price files (tests/fabric/data/prices_*.yaml).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/cost.h"

namespace mfabric::fabric {
namespace {

std::string data(const std::string& name) {
  return std::string(MFABRIC_TEST_DATA_DIR) + "/" + name;
}

void expect_prices(const LinkPrices& p, double transceiver, double nic, double switch_port,
                   double ocs_port, double patch_panel_port, double fibre_per_m) {
  EXPECT_DOUBLE_EQ(p.transceiver, transceiver);
  EXPECT_DOUBLE_EQ(p.nic, nic);
  EXPECT_DOUBLE_EQ(p.switch_port, switch_port);
  EXPECT_DOUBLE_EQ(p.ocs_port, ocs_port);
  EXPECT_DOUBLE_EQ(p.patch_panel_port, patch_panel_port);
  EXPECT_DOUBLE_EQ(p.fibre_per_m, fibre_per_m);
}

TEST(PriceBook, PaperDefaultsAreTable4) {
  const PriceBook book = PriceBook::paper_defaults();
  expect_prices(book.at(Rate::gbps(100)), 99, 659, 187, 520, 100, 0.3);
  expect_prices(book.at(Rate::gbps(200)), 239, 1079, 374, 520, 100, 0.3);
  expect_prices(book.at(Rate::gbps(400)), 659, 1499, 1090, 520, 100, 0.3);
  expect_prices(book.at(Rate::gbps(800)), 1399, 2248, 1400, 520, 100, 0.3);
  EXPECT_DOUBLE_EQ(book.fibre_length_m(), 500);
  std::vector<double> speeds;
  for (const auto& [bps, prices] : book.speeds())
    speeds.push_back(bps);
  EXPECT_EQ(speeds, (std::vector<double>{100e9, 200e9, 400e9, 800e9}));
}

TEST(PriceBook, AtAcceptsParsedRates) {
  const PriceBook book = PriceBook::paper_defaults();
  EXPECT_DOUBLE_EQ(book.at(parse_rate("400Gbps")).nic, 1499);
  EXPECT_DOUBLE_EQ(book.at(parse_rate("0.4T")).nic, 1499);
  EXPECT_DOUBLE_EQ(book.at(parse_rate("50GB/s")).nic, 1499);
}

TEST(PriceBook, AtUnknownSpeedListsTheKnownOnes) {
  const PriceBook book = PriceBook::paper_defaults();
  try {
    book.at(Rate::gbps(300));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "link");
    EXPECT_EQ(e.message(),
              "no prices for link speed 300G (known: 100G, 200G, 400G, 800G); add it to a price "
              "file");
  }
  EXPECT_THROW(PriceBook().at(Rate::gbps(400)), Error);
}

TEST(PriceBook, PriceAtInterpolatesAndScales) {
  const PriceBook book = PriceBook::paper_defaults();
  // A known speed: Table 4.
  EXPECT_DOUBLE_EQ(book.price_at(Rate::gbps(400)).nic, 1499);
  // 300G: halfway between 200G and 400G.
  const LinkPrices p300 = book.price_at(Rate::gbps(300));
  EXPECT_DOUBLE_EQ(p300.transceiver, (239 + 659) / 2.0);
  EXPECT_DOUBLE_EQ(p300.nic, (1079 + 1499) / 2.0);
  EXPECT_DOUBLE_EQ(p300.switch_port, (374 + 1090) / 2.0);
  EXPECT_DOUBLE_EQ(p300.ocs_port, 520);
  // 50G: half of 100G's active parts; the passive ones as at 100G.
  const LinkPrices p50 = book.price_at(Rate::gbps(50));
  EXPECT_DOUBLE_EQ(p50.transceiver, 49.5);
  EXPECT_DOUBLE_EQ(p50.nic, 329.5);
  EXPECT_DOUBLE_EQ(p50.switch_port, 93.5);
  EXPECT_DOUBLE_EQ(p50.ocs_port, 520);
  EXPECT_DOUBLE_EQ(p50.fibre_per_m, 0.3);
  // 1.6T: twice 800G's active parts.
  const LinkPrices p1600 = book.price_at(Rate::gbps(1600));
  EXPECT_DOUBLE_EQ(p1600.transceiver, 2798);
  EXPECT_DOUBLE_EQ(p1600.nic, 4496);
  EXPECT_DOUBLE_EQ(p1600.switch_port, 2800);
  EXPECT_DOUBLE_EQ(p1600.patch_panel_port, 100);
}

TEST(PriceBook, SetAddsASpeed) {
  PriceBook book = PriceBook::paper_defaults();
  book.set(Rate::gbps(1600), LinkPrices{1, 2, 3, 4, 5, 6});
  expect_prices(book.at(parse_rate("1.6T")), 1, 2, 3, 4, 5, 6);
  book.set_fibre_length_m(20);
  EXPECT_DOUBLE_EQ(book.fibre_length_m(), 20);
}

TEST(PriceBookLoad, OverridesAndAddsSpeeds) {
  const PriceBook book = PriceBook::load(data("prices_override.yaml"));
  EXPECT_DOUBLE_EQ(book.fibre_length_m(), 100);
  // Only the fields given change; the rest keep Table 4's values.
  expect_prices(book.at(Rate::gbps(400)), 600, 1400, 1090, 520, 100, 0.3);
  expect_prices(book.at(Rate::gbps(100)), 99, 659, 187, 520, 100, 0.3);
  expect_prices(book.at(Rate::gbps(800)), 1399, 2248, 1400, 520, 100, 0.3);
  expect_prices(book.at(Rate::gbps(1600)), 2500, 3500, 2000, 520, 100, 0.3);
  EXPECT_EQ(book.speeds().size(), 5u);
}

TEST(PriceBookLoad, SpeedKeysInAnyRateSpelling) {
  const PriceBook book = PriceBook::load(data("prices_gbps_keys.yaml"));
  expect_prices(book.at(Rate::gbps(100)), 99, 659, 200, 520, 100, 0.3);
  expect_prices(book.at(parse_rate("1.6T")), 1, 2, 3, 4, 5, 6);
  EXPECT_EQ(book.speeds().size(), 5u);
}

TEST(PriceBookLoad, EmptyFileMeansDefaults) {
  const PriceBook book = PriceBook::load(data("prices_empty.yaml"));
  expect_prices(book.at(Rate::gbps(400)), 659, 1499, 1090, 520, 100, 0.3);
  EXPECT_DOUBLE_EQ(book.fibre_length_m(), 500);
  EXPECT_EQ(book.speeds().size(), 4u);
}

TEST(PriceBookLoad, ExampleFileLoads) {
  // examples/prices.yaml is documentation; it must stay loadable.
  const PriceBook book =
      PriceBook::load(std::string(MFABRIC_TEST_DATA_DIR) + "/../../../examples/prices.yaml");
  EXPECT_NO_THROW(book.at(parse_rate("1.6T")));
}

// Loads `path`, expects an Error whose source is `path`, whose field is `field`, and whose text
// contains every string in `parts`.
void expect_load_error(const std::string& path, const std::string& field,
                       const std::vector<std::string>& parts) {
  try {
    PriceBook::load(path);
    ADD_FAILURE() << path << ": no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.source(), path) << what;
    EXPECT_EQ(e.field(), field) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    if (!field.empty()) {
      EXPECT_NE(what.find(field), std::string::npos) << what;
    }
    for (const std::string& part : parts) {
      EXPECT_NE(what.find(part), std::string::npos) << "'" << what << "' lacks '" << part << "'";
    }
  }
}

TEST(PriceBookLoad, MissingFile) {
  expect_load_error(data("no_such_prices.yaml"), "", {"price file not found"});
}

TEST(PriceBookLoad, DirectoryInsteadOfFile) {
  expect_load_error(std::string(MFABRIC_TEST_DATA_DIR), "", {"is a directory"});
}

TEST(PriceBookLoad, SyntaxErrorGivesTheLine) {
  expect_load_error(data("prices_syntax_error.yaml"), "", {"YAML syntax error", "line "});
}

TEST(PriceBookLoad, TopLevelMustBeAMap) {
  expect_load_error(data("prices_not_a_map.yaml"), "", {"expected a map", "got a list"});
}

TEST(PriceBookLoad, UnknownTopLevelKey) {
  expect_load_error(data("prices_unknown_key.yaml"), "fibre_length",
                    {"unknown key", "fibre_length_m, link_speeds"});
}

TEST(PriceBookLoad, UnknownPriceFieldListsTheKnownOnes) {
  expect_load_error(data("prices_unknown_field.yaml"), "link_speeds.400G.nics",
                    {"unknown price field",
                     "transceiver, nic, switch_port, ocs_port, patch_panel_port, fibre_per_m"});
}

TEST(PriceBookLoad, NonNumericPrice) {
  expect_load_error(data("prices_not_numeric.yaml"), "link_speeds.400G.nic",
                    {"expected a non-negative price in dollars, got 'abc'"});
}

TEST(PriceBookLoad, NegativePrice) {
  expect_load_error(data("prices_negative.yaml"), "link_speeds.800G.switch_port",
                    {"non-negative", "'-5'"});
}

TEST(PriceBookLoad, NewSpeedMustGiveAllSixPrices) {
  expect_load_error(data("prices_new_speed_incomplete.yaml"), "link_speeds.1.6T",
                    {"1.6T", "missing: ocs_port, patch_panel_port, fibre_per_m"});
}

TEST(PriceBookLoad, BadSpeedKey) {
  expect_load_error(data("prices_bad_speed.yaml"), "link_speeds.fast",
                    {"expected a link speed such as '400G'", "'fast'"});
}

TEST(PriceBookLoad, NegativeFibreLength) {
  expect_load_error(data("prices_negative_fibre_length.yaml"), "fibre_length_m",
                    {"non-negative fibre length in metres", "'-1'"});
}

// Edge cases written to temporary files.
class PriceBookLoadTemp : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("mfabric_price_book_") + info->name() + ".yaml");
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove(path_, ignored);
  }

 private:
  std::filesystem::path path_;
};

TEST_F(PriceBookLoadTemp, ZeroSpeedKey) {
  expect_load_error(write("link_speeds:\n  0G: {nic: 1}\n"), "link_speeds.0G", {"positive"});
}

TEST_F(PriceBookLoadTemp, UnitlessSpeedKey) {
  expect_load_error(write("link_speeds:\n  400: {nic: 1}\n"), "link_speeds.400",
                    {"expected a link speed", "no unit"});
}

TEST_F(PriceBookLoadTemp, SameSpeedTwice) {
  expect_load_error(write("link_speeds:\n  400G: {nic: 1}\n  400Gbps: {nic: 2}\n"),
                    "link_speeds.400Gbps", {"400G", "twice"});
}

TEST_F(PriceBookLoadTemp, SameFieldTwice) {
  expect_load_error(write("link_speeds:\n  400G: {nic: 1, nic: 2}\n"), "link_speeds.400G.nic",
                    {"twice"});
}

TEST_F(PriceBookLoadTemp, SpeedValueMustBeAMap) {
  expect_load_error(write("link_speeds:\n  400G: 1400\n"), "link_speeds.400G",
                    {"expected a map of prices", "got '1400'"});
}

TEST_F(PriceBookLoadTemp, LinkSpeedsMustBeAMap) {
  expect_load_error(write("link_speeds: [400G]\n"), "link_speeds",
                    {"expected a map from link speed", "got a list"});
}

TEST_F(PriceBookLoadTemp, InfinityAndEmptyPricesAreRejected) {
  expect_load_error(write("link_speeds:\n  400G: {nic: .inf}\n"), "link_speeds.400G.nic",
                    {"'.inf'"});
  expect_load_error(write("link_speeds:\n  400G: {nic: }\n"), "link_speeds.400G.nic",
                    {"got nothing"});
  expect_load_error(write("link_speeds:\n  400G: {nic: [1]}\n"), "link_speeds.400G.nic",
                    {"got a list"});
  expect_load_error(write("link_speeds:\n  400G: {nic: 12abc}\n"), "link_speeds.400G.nic",
                    {"'12abc'"});
}

TEST_F(PriceBookLoadTemp, ScalarTopLevel) {
  expect_load_error(write("400G\n"), "", {"expected a map at the top level", "'400G'"});
}

TEST_F(PriceBookLoadTemp, NumbersInEveryForm) {
  const PriceBook book = PriceBook::load(
      write("fibre_length_m: 0\nlink_speeds:\n  400G: {nic: 1.4e3, transceiver: \"600\", "
            "switch_port: +7, ocs_port: 0}\n"));
  EXPECT_DOUBLE_EQ(book.fibre_length_m(), 0);
  expect_prices(book.at(Rate::gbps(400)), 600, 1400, 7, 0, 100, 0.3);
}

TEST_F(PriceBookLoadTemp, SyntaxErrorLineIsOneBased) {
  // The unclosed flow map starts on line 2; yaml-cpp reports where it gave up, which is after it.
  try {
    PriceBook::load(write("link_speeds:\n  400G: {nic: 1400\n"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("YAML syntax error at line"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("line 0"), std::string::npos) << e.what();
  }
}

// Prices far above any real part made costs overflow the int64 the tables printed through
// ("-$-0", JSON null). Files are held to kMaxUnitPriceUsd per item and kMaxFibreLengthM.
TEST_F(PriceBookLoadTemp, PricesAboveTheMaximumAreRejectedByName) {
  expect_load_error(write("link_speeds:\n  400G:\n    nic: 1e16\n"), "link_speeds.400G.nic",
                    {"at most 1000000000 dollars", "'1e16'"});
  expect_load_error(write("link_speeds:\n  400G: {fibre_per_m: 1000000001}\n"),
                    "link_speeds.400G.fibre_per_m", {"at most 1000000000 dollars per metre"});
  // Beyond what a double holds: too large, not "not a number".
  expect_load_error(write("link_speeds:\n  400G: {ocs_port: 1e999}\n"), "link_speeds.400G.ocs_port",
                    {"at most", "'1e999'"});
  expect_load_error(write("fibre_length_m: 100001\n"), "fibre_length_m",
                    {"at most 100000 metres", "'100001'"});
  // Tiny negatives and negative overflow stay "non-negative" errors.
  expect_load_error(write("link_speeds:\n  400G: {nic: -1e999}\n"), "link_speeds.400G.nic",
                    {"non-negative", "'-1e999'"});
}

TEST_F(PriceBookLoadTemp, PricesAtTheMaximumAreAccepted) {
  const PriceBook book =
      PriceBook::load(write("fibre_length_m: 1e5\nlink_speeds:\n  400G: {nic: 1e9}\n"));
  EXPECT_DOUBLE_EQ(book.at(Rate::gbps(400)).nic, kMaxUnitPriceUsd);
  EXPECT_DOUBLE_EQ(book.fibre_length_m(), kMaxFibreLengthM);
}

TEST(PriceCheck, PriceRefusesValuesBeyondTheCapsSetInCode) {
  BillOfMaterials bom;
  bom.nics = 1;
  LinkPrices prices{1, 1, 1, 1, 1, 1};
  EXPECT_DOUBLE_EQ(price(bom, prices, 10).total(), 1);
  prices.nic = 1e16;
  try {
    price(bom, prices, 10);
    FAIL() << "priced a $1e16 NIC";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "nic");
  }
  prices.nic = std::nan("");
  EXPECT_THROW(price(bom, prices, 10), Error);
  prices.nic = 1;
  EXPECT_THROW(price(bom, prices, 1e300), Error);
}

TEST(PriceCheck, TinyOversubscriptionIsAnErrorNotAnOverflow) {
  // 1024 / 1e-300 uplinks is infinite; converting it to an integer was undefined behaviour.
  try {
    paper_bill_of_materials("fat-tree", 128, 8, 0, 1e-300, CostConvention::Paper);
    FAIL() << "counted infinitely many uplinks";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "oversubscription");
  }
}

}  // namespace
}  // namespace mfabric::fabric
