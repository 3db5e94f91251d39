// Status and StatusOr: the error channel across every module boundary.
// Thread-safety: value types; distinct objects may be used concurrently.
#ifndef LOCKSTEP_COMMON_STATUS_H_
#define LOCKSTEP_COMMON_STATUS_H_

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace lockstep {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kCorruption,
  kIOError,
  kUnavailable,
  kDeadlineExceeded,
  kFailedPrecondition,
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;
  // Returns a copy whose message is "context: message".
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status Corruption(std::string message);
Status IOError(std::string message);
Status Unavailable(std::string message);
Status DeadlineExceeded(std::string message);
Status FailedPrecondition(std::string message);
Status Internal(std::string message);

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : data_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(data_).ok());
  }
  StatusOr(T value) : data_(std::move(value)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const {
    return ok() ? Status::Ok() : std::get<Status>(data_);
  }
  // REQUIRES: ok().
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> data_;
};

}  // namespace lockstep

#define LS_CONCAT_INNER(a, b) a##b
#define LS_CONCAT(a, b) LS_CONCAT_INNER(a, b)

#define LS_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::lockstep::Status ls_status_ = (expr);  \
    if (!ls_status_.ok()) return ls_status_; \
  } while (0)

// `tmp` is a name being declared and `lhs` may be a declaration
// ("auto x"), so neither can be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define LS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#define LS_ASSIGN_OR_RETURN(lhs, expr) \
  LS_ASSIGN_OR_RETURN_IMPL(LS_CONCAT(ls_statusor_, __LINE__), lhs, expr)

#endif  // LOCKSTEP_COMMON_STATUS_H_
