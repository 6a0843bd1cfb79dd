#pragma once
/// The support bundle (gpucheck --bundle FILE.tar.gz): the report in every format but the one-line
/// reason (which needs the gates), the snapshot
/// and the raw sources, redacted together so placeholders agree across the files.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpucheck/model/report.hpp"
#include "render/archive.hpp"
#include "render/redact.hpp"

namespace gpucheck::render {

struct BundleOptions {
  bool redact = true;   ///< --no-redact turns it off
  RedactionHints hints; ///< names known to the live run (render/redact.hpp)
  int64_t mtime_s = 0;  ///< member and gzip time (the report clock)
};

/// The members, under "gpucheck-bundle/": README.txt (what each file is), report.txt,
/// report.json, report.md, report.junit.xml, report.prom, report.github.txt, snapshot.json, and
/// sources/<name> for each raw source (name -> text, from probes/raw_sources.hpp). With redact set,
/// one Redactor redacts the report, learns the serials the sources label as such (nvidia-smi -q,
/// lspci -vvv), and then scrubs every source, so "GPU-1" names the same GPU in all of them.
std::vector<ArchiveMember> bundle_members(const Report& report,
                                          const std::map<std::string, std::string>& sources,
                                          const BundleOptions& options);

/// bundle_members as a .tar.gz (render/archive.hpp).
std::string make_bundle(const Report& report, const std::map<std::string, std::string>& sources,
                        const BundleOptions& options);

} // namespace gpucheck::render
