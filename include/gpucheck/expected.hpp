#pragma once
/// Expected<T>: a value or an Error, for fallible utilities (C++20 has no std::expected).

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace gpucheck {

/// Why an operation failed, in words fit for a report.
struct Error {
  std::string message;
};

template <typename T> class Expected {
public:
  Expected(T value) : m_data(std::move(value)) {}     // NOLINT(google-explicit-constructor)
  Expected(Error error) : m_data(std::move(error)) {} // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return m_data.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(m_data);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(m_data);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(m_data));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  [[nodiscard]] const Error& error() const {
    assert(!has_value());
    return std::get<1>(m_data);
  }

  template <typename U> T value_or(U&& fallback) const {
    return has_value() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

private:
  std::variant<T, Error> m_data;
};

/// Shorthand for returning a failure: `return unexpected("bad {}", x);` is not offered on purpose;
/// build the message with fmt::format and return Error{...}.
inline Error make_error(std::string message) {
  return Error{std::move(message)};
}

} // namespace gpucheck
