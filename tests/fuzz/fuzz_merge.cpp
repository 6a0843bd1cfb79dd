// Other nodes' reports (`gpucheck merge`, src/fleet/node_report.cpp): read leniently in the
// parent, from any gpucheck version or none. Any bytes, in up to three reports: each is a node or
// a rejection with a reason, and the fleet table renders as text, Markdown and valid JSON.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>

#include "fleet/fleet_render.hpp"
#include "fleet/fleet_table.hpp"
#include "fleet/node_report.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpucheck::fleet;
  std::vector<NodeReport> nodes;
  std::vector<RejectedInput> rejected;
  int index = 0;
  for (const std::string_view part :
       gpucheck::fuzz::sections(gpucheck::fuzz::as_text(data, size), 3)) {
    const std::string source = "node-" + std::to_string(++index) + ".json";
    gpucheck::Expected<NodeReport> node = read_node_report(std::string(part), source);
    if (node) {
      nodes.push_back(std::move(node).value());
    } else {
      rejected.push_back({source, node.error().message});
    }
  }
  // A fixed clock: the ages of fuzzed times (the far past, the future) must not crash.
  const FleetTable table = merge_nodes(std::move(nodes), std::move(rejected),
                                       std::chrono::sys_seconds(std::chrono::seconds(1795000000)));
  (void)render_fleet_text(table);
  (void)render_fleet_markdown(table);
  if (!nlohmann::json::accept(render_fleet_json(table))) {
    std::abort();
  }
  return 0;
}
