#include "common/registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

struct Entry {
  const char* name;
  std::vector<std::string> forms;
  int value;
};

Registry<Entry> Shapes() {
  return Registry<Entry>("shape", {{"square", {"square"}, 4},
                                   {"poly", {"poly:N", "poly:N:star"}, 0}});
}

TEST(RegistryTest, FindsAnEntryByItsName) {
  const Registry<Entry> shapes = Shapes();
  ASSERT_NE(shapes.Find("poly"), nullptr);
  EXPECT_EQ(shapes.Find("square")->value, 4);
  EXPECT_EQ(shapes.Find("poly:3"), nullptr);  // names, not specs
  EXPECT_EQ(shapes.Find(""), nullptr);
}

TEST(RegistryTest, ListsEveryFormInTableOrder) {
  EXPECT_EQ(Shapes().Forms(),
            (std::vector<std::string>{"square", "poly:N", "poly:N:star"}));
}

TEST(RegistryTest, AWrongNameIsAnsweredWithTheKnownForms) {
  const Status unknown = Shapes().Unknown("circle:2");
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(),
            "unknown shape 'circle:2' (known: square, poly:N, poly:N:star)");
  EXPECT_EQ(Shapes().Unknown("x", ", or a file").message(),
            "unknown shape 'x' (known: square, poly:N, poly:N:star, or a "
            "file)");
}

}  // namespace
}  // namespace lockstep
