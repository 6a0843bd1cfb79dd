#include "platform/dynlib.hpp"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <utility>

namespace gpucheck::platform {

namespace {
std::string real_path_of(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) != nullptr) {
    return buffer;
  }
  return path;
}
} // namespace

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)), m_load(std::move(other.m_load)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  m_handle = std::exchange(other.m_handle, nullptr);
  m_load = std::move(other.m_load);
  return *this;
}

DynamicLibrary DynamicLibrary::open(std::string_view name) {
  DynamicLibrary lib;
  lib.m_load.name = std::string(name);
  ::dlerror();
  lib.m_handle = ::dlopen(lib.m_load.name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.m_handle == nullptr) {
    const char* err = ::dlerror();
    lib.m_load.error = err != nullptr ? err : "dlopen failed";
    return lib;
  }
  lib.m_load.loaded = true;
  link_map* map = nullptr;
  if (::dlinfo(lib.m_handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
      map->l_name != nullptr) {
    lib.m_load.path = map->l_name;
    lib.m_load.real_path = real_path_of(lib.m_load.path);
  }
  return lib;
}

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& names) {
  std::string errors;
  for (const std::string& name : names) {
    DynamicLibrary lib = open(name);
    if (lib.loaded()) {
      return lib;
    }
    if (!errors.empty()) {
      errors += "; ";
    }
    errors += lib.m_load.error;
  }
  DynamicLibrary none;
  none.m_load.name = names.empty() ? std::string() : names.front();
  none.m_load.error = errors;
  return none;
}

void* DynamicLibrary::symbol(const char* name, bool required) {
  if (m_handle == nullptr) {
    return nullptr;
  }
  void* p = ::dlsym(m_handle, name);
  if (p == nullptr && required) {
    m_load.missing_symbols.emplace_back(name);
  }
  return p;
}

namespace {
struct IterateState {
  const std::vector<std::string>* needles;
  std::vector<std::string>* out;
};

int collect_object(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* state = static_cast<IterateState*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {
    return 0;
  }
  const std::string name = info->dlpi_name;
  const std::string base = name.substr(name.find_last_of('/') + 1);
  for (const std::string& needle : *state->needles) {
    if (base.find(needle) != std::string::npos) {
      state->out->push_back(real_path_of(name));
      break;
    }
  }
  return 0;
}
} // namespace

std::vector<std::string> loaded_objects(const std::vector<std::string>& needles) {
  std::vector<std::string> out;
  IterateState state{&needles, &out};
  ::dl_iterate_phdr(collect_object, &state);
  return out;
}

} // namespace gpucheck::platform
