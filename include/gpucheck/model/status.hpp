#pragma once
/// Closed sets shared by every layer; to_string gives the JSON spelling.

#include <optional>
#include <string_view>

namespace gpucheck {

/// Outcome of one check. skip and error are distinct from pass: a check that did no work never
/// passes.
enum class Status { pass, warn, fail, skip, error };

/// Weight of one finding. info never changes a status; warn and fail lower it.
enum class Severity { info, warn, fail, error };

std::string_view to_string(Status status);
std::string_view to_string(Severity severity);
std::optional<Status> status_from_string(std::string_view text);
std::optional<Severity> severity_from_string(std::string_view text);

/// Order of badness for aggregation: pass < skip < warn < fail < error is NOT used;
/// see worst_of(): error and fail outrank warn; skip never outranks pass.
int rank(Status status);
Status worst_of(Status a, Status b);
/// The status a result takes from its worst finding (info -> pass).
Status status_for(Severity severity);

} // namespace gpucheck
