#include <fmt/format.h>

#include <charconv>
#include <utility>

#include "gpucheck/model/check_result.hpp"

namespace gpucheck {

namespace {

constexpr uint64_t k_mib = 1ULL << 20;

/// A whole non-empty run of digits as a number.
std::optional<uint64_t> number(std::string_view text) {
  uint64_t value = 0;
  if (text.empty() || text.size() > 9) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

/// The next "_"-separated word of `rest`, taken off it; nullopt at its end.
std::optional<std::string_view> next_word(std::string_view& rest) {
  const size_t cut = rest.find('_');
  if (cut == std::string_view::npos || cut == 0 || cut + 1 == rest.size()) {
    return std::nullopt;
  }
  const std::string_view word = rest.substr(0, cut);
  rest.remove_prefix(cut + 1);
  return word;
}

/// "Nmib" as bytes.
std::optional<uint64_t> mib_word(std::string_view word) {
  if (!word.ends_with("mib")) {
    return std::nullopt;
  }
  const std::optional<uint64_t> n = number(word.substr(0, word.size() - 3));
  return n ? std::optional<uint64_t>(*n * k_mib) : std::nullopt;
}

bool lower_alnum(std::string_view word) {
  return !word.empty() &&
         word.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string_view::npos;
}

} // namespace

MetricLabels metric_labels_of(std::string_view name) {
  MetricLabels labels;
  std::string_view rest = name;
  const std::optional<std::string_view> first = next_word(rest);
  if (!first) {
    return labels;
  }
  // gpuN_REST: one GPU's figure.
  if (first->starts_with("gpu")) {
    if (const std::optional<uint64_t> gpu = number(first->substr(3))) {
      labels.gpu = static_cast<int>(*gpu);
      labels.family = fmt::format("gpu_{}", rest);
      return labels;
    }
  }
  // PREFIX_A_B_REST: a pair of GPUs, and PREFIX_A_B_Nmib_TAIL one size of it.
  std::string_view after_pair = rest;
  const std::optional<std::string_view> a = next_word(after_pair);
  const std::optional<std::string_view> b = a ? next_word(after_pair) : std::nullopt;
  if (lower_alnum(*first) && a && b && number(*a) && number(*b)) {
    labels.gpu_a = static_cast<int>(*number(*a));
    labels.gpu_b = static_cast<int>(*number(*b));
    std::string_view tail = after_pair;
    const std::optional<std::string_view> size = next_word(tail);
    if (size && mib_word(*size)) {
      labels.size_bytes = mib_word(*size);
      labels.family = fmt::format("{}_size_{}", *first, tail);
    } else {
      labels.family = fmt::format("{}_{}", *first, after_pair);
    }
    return labels;
  }
  // HEAD_Nmib_TAIL: one size (the last such word, the head keeping the words before it).
  rest = name;
  size_t at = 0;
  std::optional<size_t> size_at;
  while (true) {
    const size_t start = at;
    const size_t cut = rest.find('_', start);
    if (cut == std::string_view::npos || cut + 1 == rest.size()) {
      break; // the size needs a tail after it
    }
    if (start > 0 && mib_word(rest.substr(start, cut - start))) {
      size_at = start;
    }
    at = cut + 1;
  }
  if (size_at) {
    const size_t end = rest.find('_', *size_at);
    labels.size_bytes = mib_word(rest.substr(*size_at, end - *size_at));
    labels.family = fmt::format("{}{}", rest.substr(0, *size_at), rest.substr(end + 1));
  }
  return labels;
}

Metric labelled(Metric metric) {
  metric.labels = metric_labels_of(metric.name);
  return metric;
}

Metric pair_metric(std::string_view prefix, int a, int b, std::string_view rest, double value,
                   std::string unit, std::string note) {
  Metric m{fmt::format("{}_{}_{}_{}", prefix, a, b, rest), value, std::move(unit), std::move(note)};
  m.labels.family = fmt::format("{}_{}", prefix, rest);
  m.labels.gpu_a = a;
  m.labels.gpu_b = b;
  return m;
}

Metric sized_metric(std::string_view head, uint64_t bytes, std::string_view tail, double value,
                    std::string unit, std::string note) {
  Metric m{fmt::format("{}_{}mib_{}", head, bytes / k_mib, tail), value, std::move(unit),
           std::move(note)};
  m.labels.family = fmt::format("{}_{}", head, tail);
  m.labels.size_bytes = bytes / k_mib * k_mib;
  return m;
}

Metric sized_pair_metric(std::string_view prefix, int a, int b, uint64_t bytes,
                         std::string_view tail, double value, std::string unit, std::string note) {
  Metric m{fmt::format("{}_{}_{}_{}mib_{}", prefix, a, b, bytes / k_mib, tail), value,
           std::move(unit), std::move(note)};
  m.labels.family = fmt::format("{}_size_{}", prefix, tail);
  m.labels.gpu_a = a;
  m.labels.gpu_b = b;
  m.labels.size_bytes = bytes / k_mib * k_mib;
  return m;
}

Metric gpu_metric(int gpu, std::string_view rest, double value, std::string unit,
                  std::string note) {
  Metric m{fmt::format("gpu{}_{}", gpu, rest), value, std::move(unit), std::move(note)};
  m.labels.family = fmt::format("gpu_{}", rest);
  m.labels.gpu = gpu;
  return m;
}

} // namespace gpucheck
