#pragma once
/// "Did you mean": the known word nearest a mistyped one (a flag, a check id, a finding code, a
/// config key, a format), for usage errors.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

/// Edits between two words, case ignored: insertions, deletions, substitutions and swaps of two
/// neighbouring characters (optimal string alignment distance).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest `word`, when it is near enough to be the one meant: at most one edit
/// for a word of up to four characters, two up to eight, else a quarter of its length; a
/// candidate that starts with the word, or that the word starts with, counts as near too. Ties go
/// to the first candidate. nullopt when none is near, or `word` is itself a candidate.
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates);

/// " (did you mean 'WORD'?)", or "" when nothing is near.
std::string did_you_mean_words(std::string_view word, const std::vector<std::string>& candidates);

} // namespace gpucheck
