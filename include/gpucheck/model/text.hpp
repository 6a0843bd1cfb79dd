#pragma once
/// The two text helpers every folder needs, once.

#include <map>
#include <string>
#include <string_view>

namespace gpucheck {

/// ASCII lower case ("H200 NVL" -> "h200 nvl"); every other byte unchanged (no locale).
std::string lower(std::string_view text);

/// `text` without the ASCII whitespace (space, \t, \n, \v, \f, \r) at either end; a view into
/// `text`, so keep what it views alive.
std::string_view trim(std::string_view text);

/// `text` with every control character but newline and tab written as an escape ("\x1b" for
/// C0 and DEL, "\u009b" for C1), and every byte that is not UTF-8 as "\xNN": text from outside
/// (a GPU's name, a METADATA version, another node's hostname) shown on a terminal never moves
/// its cursor, retitles it, opens a link or writes its clipboard.
std::string visible_text(std::string_view text);

/// Whether an environment variable's name says it holds a secret: it contains TOKEN, SECRET,
/// PASSWORD, PASSWD, KEY or CREDENTIAL (any case), as CUDA_MPS_TOKEN or HF_TOKEN.
bool is_secret_variable_name(std::string_view name);

/// What a secret variable's value becomes in a snapshot, and so in every output.
inline constexpr std::string_view k_hidden_secret = "(hidden: a secret's name)";

/// Replaces the value of every variable whose name is a secret's with k_hidden_secret.
void hide_secret_variables(std::map<std::string, std::string>& variables);

} // namespace gpucheck
