#include "common/status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

// Helpers that exercise the macros the way module code does.
StatusOr<int> ParsePositive(int v) {
  if (v <= 0) return InvalidArgument("not positive: " + std::to_string(v));
  return v;
}

StatusOr<std::unique_ptr<std::string>> MakeName(bool ok) {
  if (!ok) return NotFound("no name");
  return std::make_unique<std::string>("shard-3");
}

int g_steps = 0;

Status Step(bool ok) {
  ++g_steps;
  return ok ? Status::Ok() : IOError("disk full");
}

Status TwoSteps(bool first_ok, bool second_ok) {
  LS_RETURN_IF_ERROR(Step(first_ok));
  LS_RETURN_IF_ERROR(Step(second_ok));
  return Status::Ok();
}

StatusOr<int> SumOfPositives(int a, int b) {
  LS_ASSIGN_OR_RETURN(int x, ParsePositive(a));
  LS_ASSIGN_OR_RETURN(const int y, ParsePositive(b));
  return x + y;
}

StatusOr<size_t> NameLength(bool ok) {
  std::unique_ptr<std::string> name;
  LS_ASSIGN_OR_RETURN(name, MakeName(ok));
  return name->size();
}

class StatusTest : public ::testing::Test {
 protected:
  void SetUp() override { g_steps = 0; }
};

TEST_F(StatusTest, DefaultIsOk) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST_F(StatusTest, FactoriesSetCodeAndMessage) {
  const struct {
    Status status;
    StatusCode code;
    const char* name;
  } cases[] = {
      {InvalidArgument("m"), StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
      {NotFound("m"), StatusCode::kNotFound, "NOT_FOUND"},
      {Corruption("m"), StatusCode::kCorruption, "CORRUPTION"},
      {IOError("m"), StatusCode::kIOError, "IO_ERROR"},
      {Unavailable("m"), StatusCode::kUnavailable, "UNAVAILABLE"},
      {DeadlineExceeded("m"), StatusCode::kDeadlineExceeded,
       "DEADLINE_EXCEEDED"},
      {FailedPrecondition("m"), StatusCode::kFailedPrecondition,
       "FAILED_PRECONDITION"},
      {Internal("m"), StatusCode::kInternal, "INTERNAL"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(c.status.ok());
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.message(), "m");
    EXPECT_EQ(c.status.ToString(), std::string(c.name) + ": m");
  }
}

TEST_F(StatusTest, WithContextPrefixesTheMessageAndKeepsTheCode) {
  const Status s = NotFound("key 17").WithContext("shard 2");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "shard 2: key 17");
  EXPECT_EQ(s.WithContext("pull").message(), "pull: shard 2: key 17");
}

TEST_F(StatusTest, WithContextLeavesOkAlone) {
  const Status s = Status::Ok().WithContext("ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST_F(StatusTest, StatusOrHoldsAValue) {
  StatusOr<std::vector<int>> v(std::vector<int>{1, 2, 3});
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v->size(), 3u);
  (*v)[1] = 20;
  EXPECT_EQ(v.value()[1], 20);
  std::vector<int> moved = std::move(v).value();
  EXPECT_EQ(moved, (std::vector<int>{1, 20, 3}));
}

TEST_F(StatusTest, StatusOrHoldsAnError) {
  StatusOr<int> v(Unavailable("server 1 gone"));
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(v.status().message(), "server 1 gone");
}

TEST_F(StatusTest, ReturnIfErrorStopsAtTheFirstFailure) {
  EXPECT_TRUE(TwoSteps(true, true).ok());
  EXPECT_EQ(g_steps, 2);

  g_steps = 0;
  const Status first = TwoSteps(false, true);
  EXPECT_EQ(first.code(), StatusCode::kIOError);
  EXPECT_EQ(g_steps, 1) << "the second step must not run";

  g_steps = 0;
  const Status second = TwoSteps(true, false);
  EXPECT_EQ(second.message(), "disk full");
  EXPECT_EQ(g_steps, 2);
}

TEST_F(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  auto sum = SumOfPositives(2, 40);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 42);

  auto bad_a = SumOfPositives(-1, -2);
  ASSERT_FALSE(bad_a.ok());
  EXPECT_EQ(bad_a.status().message(), "not positive: -1");

  auto bad_b = SumOfPositives(1, -2);
  ASSERT_FALSE(bad_b.ok());
  EXPECT_THAT(bad_b.status().message(), HasSubstr("-2"));
}

TEST_F(StatusTest, AssignOrReturnMovesMoveOnlyValues) {
  auto length = NameLength(true);
  ASSERT_TRUE(length.ok());
  EXPECT_EQ(*length, 7u);
  auto missing = NameLength(false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep
