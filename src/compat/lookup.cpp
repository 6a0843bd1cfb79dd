#include "compat/lookup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <optional>

#include "compat/name_pattern.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::compat {

const CudaRelease* ga_release(const Matrix& matrix, const Version& cuda) {
  const Version key = cuda.truncated(2);
  const CudaRelease* best = nullptr;
  for (const CudaRelease& r : matrix.cuda_releases) {
    if (!r.prerelease && r.version == key && (best == nullptr || r.update < best->update)) {
      best = &r;
    }
  }
  return best;
}

const CudaRelease* newest_release_for_driver(const Matrix& matrix, const Version& driver) {
  const CudaRelease* best = nullptr;
  for (const CudaRelease& r : matrix.cuda_releases) {
    if (r.prerelease || driver < r.linux_min_driver.value) {
      continue;
    }
    if (best == nullptr || best->version < r.version ||
        (best->version == r.version && best->update < r.update)) {
      best = &r;
    }
  }
  return best;
}

Version newest_known_cuda(const Matrix& matrix) {
  Version newest;
  for (const CudaRelease& r : matrix.cuda_releases) {
    if (!r.prerelease && newest < r.version) {
      newest = r.version;
    }
  }
  return newest;
}

int newest_known_branch(const Matrix& matrix) {
  int newest = 0;
  for (const CudaRelease& r : matrix.cuda_releases) {
    if (!r.prerelease) {
      newest = std::max(newest, r.linux_min_driver.value.major_number());
    }
  }
  for (const DriverBranch& b : matrix.driver_branches) {
    newest = std::max(newest, b.branch);
  }
  return newest;
}

const MinorVersionCompat* mvc_for(const Matrix& matrix, int cuda_major) {
  for (const MinorVersionCompat& m : matrix.minor_version_compatibility) {
    if (m.major == cuda_major) {
      return &m;
    }
  }
  return nullptr;
}

const ComputeCapability* cc_info(const Matrix& matrix, const Version& cc) {
  for (const ComputeCapability& c : matrix.compute_capabilities) {
    if (c.cc == cc) {
      return &c;
    }
  }
  return nullptr;
}

const CudaTargets* targets_for(const Matrix& matrix, const Version& cuda) {
  const Version key = cuda.truncated(2);
  for (const CudaTargets& t : matrix.cuda_targets) {
    if (key >= t.cuda_from && key <= t.cuda_to) {
      return &t;
    }
  }
  return nullptr;
}

namespace {
/// Compiled name patterns, per matrix (a matrix lives for the whole run). The pattern texts are
/// kept with them, so a matrix that reuses a freed one's address is never served stale regexes.
struct CompiledPatterns {
  std::vector<std::string> texts;
  std::vector<std::optional<NamePattern>> patterns; ///< nullopt: a pattern that cannot compile
};

const std::vector<std::optional<NamePattern>>& compiled_patterns(const Matrix& matrix) {
  static std::mutex k_mutex;
  static std::map<const Matrix*, CompiledPatterns> k_cache;
  const std::lock_guard<std::mutex> lock(k_mutex);
  CompiledPatterns& cached = k_cache[&matrix];
  const bool same =
      cached.texts.size() == matrix.gpus.size() &&
      std::equal(cached.texts.begin(), cached.texts.end(), matrix.gpus.begin(),
                 [](const std::string& t, const GpuProduct& g) { return t == g.pattern; });
  if (!same) {
    cached = {};
    for (const GpuProduct& gpu : matrix.gpus) {
      cached.texts.push_back(gpu.pattern);
      // Linear-time matching (name_pattern.hpp); a pattern that does not compile never matches
      // (matrix validation refuses it in a --matrix file).
      Expected<NamePattern> compiled = NamePattern::compile(gpu.pattern, true);
      cached.patterns.push_back(compiled ? std::optional<NamePattern>(std::move(compiled).value())
                                         : std::nullopt);
    }
  }
  return cached.patterns;
}

} // namespace

const GpuProduct* gpu_by_name(const Matrix& matrix, std::string_view name) {
  if (name.empty()) {
    return nullptr;
  }
  const std::vector<std::optional<NamePattern>>& patterns = compiled_patterns(matrix);
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i] && patterns[i]->search(name)) {
      return &matrix.gpus[i];
    }
  }
  return nullptr;
}

const GpuProduct* gpu_by_pci_id(const Matrix& matrix, std::string_view device_id) {
  // NVML's pciDeviceId is "0x233510DE" (device then vendor); sysfs gives "0x2335".
  const std::string id = lower(device_id.substr(0, 6));
  for (const GpuProduct& gpu : matrix.gpus) {
    for (const std::string& known : gpu.pci_device_ids) {
      if (lower(known) == id) {
        return &gpu;
      }
    }
  }
  return nullptr;
}

const PciDeviceName* pci_device_name(const Matrix& matrix, std::string_view device_id) {
  if (!matrix.pci_devices) {
    return nullptr;
  }
  std::string id = lower(device_id.substr(0, 6));
  if (id.starts_with("0x")) {
    id.erase(0, 2);
  }
  for (const PciDeviceName& device : matrix.pci_devices->devices) {
    if (device.id == id) {
      return &device;
    }
  }
  return nullptr;
}

DriverVerdict judge_driver(const Matrix& matrix, const std::optional<Version>& driver,
                           const std::optional<Version>& driver_cuda, const Version& cuda) {
  DriverVerdict v;
  const Version want = cuda.truncated(2);
  if (const CudaRelease* ga = ga_release(matrix, want)) {
    v.native_min_driver = ga->linux_min_driver.text;
    v.unconfirmed = ga->provenance.unverified();
  }
  const MinorVersionCompat* mvc = mvc_for(matrix, want.major_number());
  if (mvc != nullptr) {
    v.mvc_min_driver = mvc->linux_min_driver.text;
  }
  v.driver_cuda = driver_cuda;
  if (!v.driver_cuda && driver) {
    if (driver->major_number() > newest_known_branch(matrix)) {
      // A driver newer than the data: backward compatibility covers every release it knows.
      if (want <= newest_known_cuda(matrix)) {
        v.fit = DriverFit::native;
      }
      return v;
    }
    if (const CudaRelease* r = newest_release_for_driver(matrix, *driver)) {
      v.driver_cuda = r->version;
    }
  }
  if (v.driver_cuda && *v.driver_cuda >= want) {
    v.fit = DriverFit::native;
    return v;
  }
  if (mvc != nullptr) {
    const bool meets_floor =
        driver ? *driver >= mvc->linux_min_driver.value
               : (v.driver_cuda && v.driver_cuda->major_number() == want.major_number());
    if (meets_floor) {
      v.fit = DriverFit::minor_version;
      v.unconfirmed = v.unconfirmed || mvc->provenance.unverified();
      return v;
    }
  }
  v.fit = (driver || v.driver_cuda) ? DriverFit::too_old : DriverFit::unknown;
  return v;
}

std::string needed_driver_text(const DriverVerdict& verdict, const Version& cuda) {
  if (!verdict.mvc_min_driver.empty()) {
    return verdict.mvc_min_driver;
  }
  if (!verdict.native_min_driver.empty()) {
    return verdict.native_min_driver;
  }
  return fmt::format("a driver that supports CUDA {}", cuda.truncated(2).str());
}

std::string unconfirmed_note(bool unconfirmed) {
  return unconfirmed ? " (unconfirmed: this relies on a matrix entry marked [unverified])" : "";
}

bool covered_by_sass(const std::vector<Version>& targets, const Version& cc) {
  return std::any_of(targets.begin(), targets.end(), [&](const Version& t) {
    return t.major_number() == cc.major_number() && t.minor_number() <= cc.minor_number();
  });
}

} // namespace gpucheck::compat
