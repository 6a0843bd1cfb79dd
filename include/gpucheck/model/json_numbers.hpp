#pragma once
/// The numbers of JSON from outside (a snapshot, a child's payload) against the model's fields:
/// nlohmann converts a floating-point number into an integer field without a check, which is
/// undefined behaviour out of the field's range, and an integer out of range wraps.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "gpucheck/expected.hpp"

namespace gpucheck {

/// The JSON path ("$.gpus[0].power_w") of the first floating-point number the model cannot hold
/// (not finite, negative, 2^31 or more); nullopt when there is none.
std::optional<std::string> float_out_of_model_range(const nlohmann::json& j);

/// The JSON path of the first number of `in` that the model holds as another value (`out` is the
/// model written back), or nullopt.
std::optional<std::string> number_read_as_another(const nlohmann::json& in,
                                                  const nlohmann::json& out);

/// `j` read into T the way a snapshot is read: no float out of range before, no number changed
/// after; else an error naming the place. nlohmann's own errors throw as before.
template <typename T> Expected<T> read_model_numbers_checked(const nlohmann::json& j) {
  if (const std::optional<std::string> where = float_out_of_model_range(j)) {
    return Error{"at " + *where + ": a number out of range"};
  }
  T value = j.template get<T>();
  if (const std::optional<std::string> where = number_read_as_another(j, nlohmann::json(value))) {
    return Error{"at " + *where + ": a number out of range for its field"};
  }
  return value;
}

} // namespace gpucheck
