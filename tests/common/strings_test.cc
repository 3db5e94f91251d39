#include "common/strings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class StringsTest : public ::testing::Test {};

TEST_F(StringsTest, TrimRemovesSpacesTabsAndLineEndsAtBothEnds) {
  EXPECT_EQ(TrimWhitespace("  a b  "), "a b");
  EXPECT_EQ(TrimWhitespace("\t\r\nx\n\r\t"), "x");
  EXPECT_EQ(TrimWhitespace("plain"), "plain");
}

TEST_F(StringsTest, TrimKeepsInnerWhitespaceAndOtherCharacters) {
  EXPECT_EQ(TrimWhitespace(" a \t b "), "a \t b");
  EXPECT_EQ(TrimWhitespace("\va\f"), "\va\f");
}

TEST_F(StringsTest, TrimOfBlankTextIsEmpty) {
  EXPECT_EQ(TrimWhitespace(""), "");
  EXPECT_EQ(TrimWhitespace(" \t\r\n "), "");
}

TEST_F(StringsTest, TrimReadsOnlyTheViewNotTheBufferAroundIt) {
  const std::string buffer = "xx a yy";
  EXPECT_EQ(TrimWhitespace(std::string_view(buffer).substr(2, 3)), "a");
}

TEST_F(StringsTest, SplitCutsAtEverySeparator) {
  EXPECT_THAT(SplitString("a,b,c", ','), ElementsAre("a", "b", "c"));
  EXPECT_THAT(SplitString("1/2/3", '/'), ElementsAre("1", "2", "3"));
}

TEST_F(StringsTest, SplitKeepsEmptyParts) {
  EXPECT_THAT(SplitString("a,,b", ','), ElementsAre("a", "", "b"));
  EXPECT_THAT(SplitString(",a,", ','), ElementsAre("", "a", ""));
  EXPECT_THAT(SplitString(",", ','), ElementsAre("", ""));
}

TEST_F(StringsTest, SplitAlwaysReturnsAtLeastOnePart) {
  EXPECT_THAT(SplitString("", ','), ElementsAre(""));
  EXPECT_THAT(SplitString("abc", ','), ElementsAre("abc"));
}

TEST_F(StringsTest, SplitDoesNotTrimParts) {
  EXPECT_THAT(SplitString(" a , b ", ','), ElementsAre(" a ", " b "));
}

TEST_F(StringsTest, SplitPartsJoinBackToTheText) {
  for (const std::string text : {"", ",", "a", "a,b", ",,x,,", "1@2,3"}) {
    EXPECT_EQ(JoinStrings(SplitString(text, ','), ","), text);
  }
}

TEST_F(StringsTest, JoinPutsTheSeparatorOnlyBetweenParts) {
  EXPECT_EQ(JoinStrings({}, ", "), "");
  EXPECT_EQ(JoinStrings({"a"}, ", "), "a");
  EXPECT_EQ(JoinStrings({"a", "b", "c"}, ", "), "a, b, c");
}

TEST_F(StringsTest, JoinKeepsEmptyParts) {
  EXPECT_EQ(JoinStrings({"", "x", ""}, "+"), "+x+");
  EXPECT_EQ(JoinStrings({""}, "+"), "");
}

TEST_F(StringsTest, ParseSizeListReadsSizesUpToTheCap) {
  auto sizes = ParseSizeList("1,16777216,7", "bad size");
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  EXPECT_THAT(*sizes, ElementsAre(1u, kMaxListedSize, 7u));
}

TEST_F(StringsTest, ParseSizeListNamesTheBadItem) {
  for (const char* text :
       {"abc", "16,,32", ",16", "0", "16,0", "-4", "16x", "16 ", "3.5",
        "16777217", "99999999999999999999999"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    auto sizes = ParseSizeList(text, "bad size");
    ASSERT_FALSE(sizes.ok());
    EXPECT_EQ(sizes.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sizes.status().message().rfind("bad size '", 0), 0u);
  }
  EXPECT_EQ(ParseSizeList("8,x9,4", "bad width").status().message(),
            "bad width 'x9'");
}

// Callers reject these themselves where they must.
TEST_F(StringsTest, ParseSizeListCutsItemsAsGetlineDoes) {
  auto none = ParseSizeList("", "bad size");
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
  auto trailing = ParseSizeList("16,32,", "bad size");
  ASSERT_TRUE(trailing.ok());
  EXPECT_THAT(*trailing, ElementsAre(16u, 32u));
}

}  // namespace
}  // namespace lockstep
