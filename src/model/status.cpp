#include "gpucheck/model/status.hpp"

#include <array>
#include <utility>

namespace gpucheck {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 5> k_status_names{{
    {Status::pass, "pass"},
    {Status::warn, "warn"},
    {Status::fail, "fail"},
    {Status::skip, "skip"},
    {Status::error, "error"},
}};
constexpr std::array<std::pair<Severity, std::string_view>, 4> k_severity_names{{
    {Severity::info, "info"},
    {Severity::warn, "warn"},
    {Severity::fail, "fail"},
    {Severity::error, "error"},
}};
} // namespace

std::string_view to_string(Status status) {
  for (const auto& [value, name] : k_status_names) {
    if (value == status) {
      return name;
    }
  }
  return "error";
}

std::string_view to_string(Severity severity) {
  for (const auto& [value, name] : k_severity_names) {
    if (value == severity) {
      return name;
    }
  }
  return "error";
}

std::optional<Status> status_from_string(std::string_view text) {
  for (const auto& [value, name] : k_status_names) {
    if (name == text) {
      return value;
    }
  }
  return std::nullopt;
}

std::optional<Severity> severity_from_string(std::string_view text) {
  for (const auto& [value, name] : k_severity_names) {
    if (name == text) {
      return value;
    }
  }
  return std::nullopt;
}

int rank(Status status) {
  switch (status) {
  case Status::pass:
    return 0;
  case Status::skip:
    return 1;
  case Status::warn:
    return 2;
  case Status::fail:
    return 3;
  case Status::error:
    return 4;
  }
  return 4;
}

Status worst_of(Status a, Status b) {
  return rank(a) >= rank(b) ? a : b;
}

Status status_for(Severity severity) {
  switch (severity) {
  case Severity::info:
    return Status::pass;
  case Severity::warn:
    return Status::warn;
  case Severity::fail:
    return Status::fail;
  case Severity::error:
    return Status::error;
  }
  return Status::error;
}

} // namespace gpucheck
