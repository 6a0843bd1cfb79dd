#pragma once
/// The only way gpucheck reaches an NVIDIA library: dlopen by name, dlsym by name.
/// A missing library or symbol is data (LibraryLoad), never a crash.

#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::platform {

class DynamicLibrary {
public:
  DynamicLibrary() = default;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  /// Does not dlclose: NVIDIA libraries do not unload cleanly (STB_GNU_UNIQUE symbols), and
  /// every caller lives in a short-lived child process.
  ~DynamicLibrary() = default;

  /// dlopen(name, RTLD_NOW | RTLD_LOCAL). `load()` records the outcome either way.
  static DynamicLibrary open(std::string_view name);
  /// Try each name in order (e.g. libcudnn.so.9 then libcudnn.so.8); the first that loads wins.
  /// When none loads, load().error joins every dlerror.
  static DynamicLibrary open_first(const std::vector<std::string>& names);

  [[nodiscard]] bool loaded() const { return m_handle != nullptr; }
  [[nodiscard]] const LibraryLoad& load() const { return m_load; }
  LibraryLoad& load() { return m_load; }

  /// dlsym; nullptr when absent (and the name is recorded in load().missing_symbols when
  /// `required` is true).
  void* symbol(const char* name, bool required = true);

  /// Typed lookup: `auto fn = lib.function<int (*)(int*)>("cuDriverGetVersion");`
  template <typename Fn> Fn function(const char* name, bool required = true) {
    return reinterpret_cast<Fn>(
        symbol(name, required)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  }

  /// The first symbol of `names` that exists (versioned first: "cuMemAlloc_v2", "cuMemAlloc").
  template <typename Fn> Fn first_function(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (void* p = symbol(name, false)) {
        return reinterpret_cast<Fn>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
      }
    }
    // A library that did not load has no symbols to miss: its load error says it all.
    if (loaded() && names.size() > 0) {
      m_load.missing_symbols.emplace_back(*names.begin());
    }
    return nullptr;
  }

private:
  void* m_handle = nullptr;
  LibraryLoad m_load;
};

/// Every shared object mapped in this process whose file name contains one of `needles`
/// (dl_iterate_phdr), as real paths. Used to show which sub-libraries a shim pulled in.
std::vector<std::string> loaded_objects(const std::vector<std::string>& needles);

} // namespace gpucheck::platform
