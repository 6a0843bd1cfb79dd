// The fuzz targets' main where libFuzzer is not linked (GCC builds, the `ci` and `asan` presets):
// every input of the given files and folders runs once, then, with --mutations N, N mutants of
// each (bit flips, byte changes, inserted and removed runs, truncation, splices with another
// input; deterministic from --seed), so CI keeps the targets building and the corpus passing and
// tries a little more besides (docs/fuzzing.md). A crash leaves the input that caused it in
// ./fuzz-crash-input.
//
//   fuzz_TARGET [--mutations N] [--seed S] PATH...

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_set_death_callback(void (*callback)());
#endif

namespace {

// The input being run, for the crash handlers (written with write(2) only).
const std::string* g_current = nullptr;

void save_current_input() {
  if (g_current == nullptr) {
    return;
  }
  const int fd = ::open("fuzz-crash-input", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_current->size()) {
      const ssize_t n = ::write(fd, g_current->data() + done, g_current->size() - done);
      if (n <= 0) {
        break;
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    static const char message[] = "fuzz replay: the crashing input is in ./fuzz-crash-input\n";
    [[maybe_unused]] const ssize_t ignored = ::write(2, message, sizeof message - 1);
  }
}

void on_fatal_signal(int signal) {
  save_current_input();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

/// xorshift64*: the same mutants on every machine.
struct Random {
  uint64_t state;
  uint64_t next() {
    state ^= state >> 12U;
    state ^= state << 25U;
    state ^= state >> 27U;
    return state * 2685821657736338717ULL;
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

void mutate(std::string& input, const std::vector<std::string>& all, Random& random) {
  static const char* const k_interesting[] = {
      "\0",         "\xff", "\x7f", "\x80", "-1", "0", "1e400", "[",
      "{",          "\"",   "\\",   "%%%%", "\n", ":", "/",     "18446744073709551615",
      "2147483648", "NaN"};
  const size_t steps = 1 + random.below(4);
  for (size_t step = 0; step < steps; ++step) {
    const size_t at = random.below(input.size() + 1);
    switch (random.below(7)) {
    case 0: // flip a bit
      if (!input.empty()) {
        input[random.below(input.size())] ^= static_cast<char>(1U << random.below(8));
      }
      break;
    case 1: // any byte
      if (!input.empty()) {
        input[random.below(input.size())] = static_cast<char>(random.below(256));
      }
      break;
    case 2: { // insert an interesting token
      const char* token = k_interesting[random.below(std::size(k_interesting))];
      input.insert(at, token, std::max<size_t>(1, std::strlen(token)));
      break;
    }
    case 3: // remove a run
      input.erase(at, random.below(64));
      break;
    case 4: // repeat a run
      if (at < input.size()) {
        const std::string run = input.substr(at, 1 + random.below(32));
        for (size_t i = 1 + random.below(8); i > 0; --i) {
          input.insert(at, run);
        }
      }
      break;
    case 5: // truncate
      input.resize(at);
      break;
    default: { // splice with another input
      const std::string& other = all[random.below(all.size())];
      const size_t from = random.below(other.size() + 1);
      input.insert(at, other, from, random.below(256));
      break;
    }
    }
  }
}

int run_one(const std::string& input) {
  g_current = &input;
  // A copy of exactly the input's size, so a read past its end is caught by ASan.
  std::vector<uint8_t> bytes(input.begin(), input.end());
  const int rc = LLVMFuzzerTestOneInput(bytes.empty() ? nullptr : bytes.data(), bytes.size());
  g_current = nullptr;
  return rc;
}

} // namespace

int main(int argc, char** argv) {
  size_t mutations = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
      const unsigned long long value = std::strtoull(argv[++i], nullptr, 10);
      (arg == "--mutations" ? mutations : seed) = value;
    } else {
      paths.emplace_back(arg);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations N] [--seed S] FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  std::vector<std::string> files;
  for (const std::filesystem::path& path : paths) {
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) {
          files.push_back(entry.path().string());
        }
      }
    } else {
      files.push_back(path.string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> inputs;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz replay: no input files\n");
    return 2;
  }
  for (const int signal : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    ::signal(signal, on_fatal_signal);
  }
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(save_current_input);
#endif
  const auto start = std::chrono::steady_clock::now();
  size_t executions = 0;
  Random random{seed * 0x9E3779B97F4A7C15ULL + 1};
  for (const std::string& input : inputs) {
    run_one(input);
    ++executions;
    for (size_t i = 0; i < mutations; ++i) {
      std::string mutant = input;
      mutate(mutant, inputs, random);
      run_one(mutant);
      ++executions;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz replay: %zu inputs, %zu executions in %.2f s, no crash\n", inputs.size(),
              executions, seconds);
  return 0;
}
