#include "common/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace lockstep {
namespace {

class JsonTest : public ::testing::Test {};

TEST_F(JsonTest, QuoteEscapesQuotesAndBackslashes) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("plain text"), "\"plain text\"");
  EXPECT_EQ(JsonQuote("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(JsonQuote("C:\\runs\\1"), "\"C:\\\\runs\\\\1\"");
}

TEST_F(JsonTest, QuoteEscapesEveryControlCharacter) {
  EXPECT_EQ(JsonQuote("a\nb\tc\rd"), "\"a\\nb\\tc\\rd\"");
  EXPECT_EQ(JsonQuote(std::string(1, '\0')), "\"\\u0000\"");
  EXPECT_EQ(JsonQuote("\x01\x1f"), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonQuote("\b\f"), "\"\\u0008\\u000c\"");
  for (int c = 0; c < 0x20; ++c) {
    const std::string quoted = JsonQuote(std::string(1, static_cast<char>(c)));
    for (char q : quoted.substr(1, quoted.size() - 2)) {
      EXPECT_GE(static_cast<unsigned char>(q), 0x20)
          << "raw control char left for " << c;
    }
  }
}

TEST_F(JsonTest, QuoteKeepsSpaceDelAndUtf8) {
  EXPECT_EQ(JsonQuote(" \x7f"), "\" \x7f\"");
  EXPECT_EQ(JsonQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST_F(JsonTest, ObjectJoinsFieldsInOrder) {
  JsonObject o;
  EXPECT_EQ(o.str(), "{}");
  o.Add("s", "x").Add("i", -3).Add("u", uint32_t{7}).Add("b", true);
  o.Add("f", false).AddNull("n");
  EXPECT_EQ(o.str(),
            "{\"s\":\"x\",\"i\":-3,\"u\":7,\"b\":true,\"f\":false,\"n\":null}");
}

TEST_F(JsonTest, IntegersKeepEveryDigit) {
  JsonObject o;
  o.Add("max_u64", std::numeric_limits<uint64_t>::max());
  o.Add("min_i64", std::numeric_limits<int64_t>::min());
  EXPECT_EQ(o.str(),
            "{\"max_u64\":18446744073709551615,"
            "\"min_i64\":-9223372036854775808}");
}

TEST_F(JsonTest, DoublesUseNineSignificantDigits) {
  JsonObject o;
  o.Add("a", 0.5).Add("b", 1.0 / 3.0).Add("c", -2.5e-10).Add("d", 0.0);
  EXPECT_EQ(o.str(), "{\"a\":0.5,\"b\":0.333333333,\"c\":-2.5e-10,\"d\":0}");
}

TEST_F(JsonTest, NonFiniteNumbersBecomeNull) {
  JsonObject o;
  o.Add("nan", std::nan(""));
  o.Add("inf", std::numeric_limits<double>::infinity());
  o.Add("neg_inf", -std::numeric_limits<double>::infinity());
  EXPECT_EQ(o.str(), "{\"nan\":null,\"inf\":null,\"neg_inf\":null}");
  EXPECT_EQ(JsonArray(std::vector<double>{1.5, std::nan(""), -2}),
            "[1.5,null,-2]");
}

TEST_F(JsonTest, KeysAreEscapedToo) {
  JsonObject o;
  o.Add("a\"b\n", 1);
  EXPECT_EQ(o.str(), "{\"a\\\"b\\n\":1}");
}

TEST_F(JsonTest, RawValuesNestUnchanged) {
  JsonObject inner;
  inner.Add("x", 1).AddRaw("list", JsonArray(std::vector<uint32_t>{3, 4}));
  JsonObject outer;
  outer.AddRaw("inner", inner.str()).Add("tail", "t");
  EXPECT_EQ(outer.str(), "{\"inner\":{\"x\":1,\"list\":[3,4]},\"tail\":\"t\"}");
}

TEST_F(JsonTest, ArraysOfNoValuesAreEmpty) {
  EXPECT_EQ(JsonArray(std::vector<uint32_t>{}), "[]");
  EXPECT_EQ(JsonArray(std::vector<double>{}), "[]");
  EXPECT_EQ(JsonArray(std::vector<uint32_t>{4294967295u}), "[4294967295]");
}

}  // namespace
}  // namespace lockstep
