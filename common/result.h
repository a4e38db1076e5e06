// Result<T>: a value or an Error. Errors are values in gander: errno is turned into an Error
// once, at the syscall wrapper, context is added on the way up, and the error is logged once,
// where it is handled. No exception crosses a module boundary.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace gander {

struct Error {
  int code = 0;         // errno when the error came from the kernel, else 0
  std::string message;  // what failed, outermost context first

  // Prefixes context: Error{ENOENT, "open /x"}.Context("policy") -> "policy: open /x".
  Error Context(const std::string& what) const& { return Error{code, what + ": " + message}; }
  Error Context(const std::string& what) && {
    message = what + ": " + message;
    return std::move(*this);
  }
  // The message with the errno text appended when there is one.
  std::string Describe() const {
    if (code == 0) return message;
    return message + ": " + std::strerror(code);
  }
};

// An Error carrying the current errno; call right after the failing syscall.
inline Error ErrnoError(std::string what) { return Error{errno, std::move(what)}; }
inline Error MakeError(std::string what) { return Error{0, std::move(what)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace gander
