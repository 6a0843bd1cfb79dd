#include "gpu_checks/cudnn/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpucheck::gpu_checks::cudnn {

namespace {
constexpr int64_t k_x_uid = 1;
constexpr int64_t k_w_uid = 2;
constexpr int64_t k_y_uid = 3;
constexpr int64_t k_alignment = 16;

void check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw CudnnGraphError(what, status);
  }
}
} // namespace

std::array<int64_t, 4> packed_strides(const std::array<int64_t, 4>& dims, bool nhwc) {
  const auto [d0, d1, d2, d3] = dims;
  (void)d0;
  if (nhwc) {
    return {d2 * d3 * d1, 1, d3 * d1, d1};
  }
  return {d1 * d2 * d3, d2 * d3, d3, 1};
}

std::string numerical_note_name(int note) {
  static constexpr const char* k_names[] = {"TENSOR_CORE",
                                            "DOWN_CONVERT_INPUTS",
                                            "REDUCED_PRECISION_REDUCTION",
                                            "FFT",
                                            "NONDETERMINISTIC",
                                            "WINOGRAD",
                                            "WINOGRAD_TILE_4x4",
                                            "WINOGRAD_TILE_6x6",
                                            "WINOGRAD_TILE_13x13",
                                            "STRICT_NAN_PROP"};
  if (note >= 0 && note < static_cast<int>(std::size(k_names))) {
    return k_names[note];
  }
  return fmt::format("note {}", note);
}

std::string describe(const GraphEngineConfig& config) {
  std::string text = fmt::format("engine {}", config.engine);
  if (!config.knobs.empty()) {
    text += ", knobs";
    for (const auto& [type, value] : config.knobs) {
      text += fmt::format(" {}={}", type, value);
    }
  }
  return text;
}

bool fits_strict_fp32(const GraphEngineConfig& config) {
  return std::none_of(config.numerical_notes.begin(), config.numerical_notes.end(),
                      [](const std::string& note) {
                        return note == "TENSOR_CORE" || note == "DOWN_CONVERT_INPUTS";
                      });
}

std::vector<size_t> configs_to_try(const std::vector<GraphEngineConfig>& configs, bool full,
                                   bool strict_fp32) {
  std::vector<size_t> chosen;
  std::set<std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> seen;
  for (size_t i = 0; i < configs.size(); ++i) {
    const GraphEngineConfig& config = configs[i];
    if (!full &&
        (config.fallback || config.runtime_compiled || chosen.size() >= k_standard_graph_configs)) {
      continue;
    }
    if (strict_fp32 && !fits_strict_fp32(config)) {
      continue;
    }
    if (!seen.insert({config.engine, config.knobs}).second) {
      continue;
    }
    chosen.push_back(i);
  }
  return chosen;
}

BackendDescriptor::BackendDescriptor(const CudnnBackendApi& api, cudnnBackendDescriptorType_t type)
    : m_api(&api) {
  check(api.cudnnBackendCreateDescriptor(type, &m_desc), "cudnnBackendCreateDescriptor");
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& other) noexcept
    : m_api(other.m_api), m_desc(other.m_desc) {
  other.m_desc = nullptr;
}

BackendDescriptor::~BackendDescriptor() {
  if (m_desc != nullptr) {
    m_api->cudnnBackendDestroyDescriptor(m_desc);
  }
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                            int64_t count, const void* values, const char* what) {
  check(m_api->cudnnBackendSetAttribute(m_desc, name, type, count, values),
        fmt::format("cudnnBackendSetAttribute({})", what).c_str());
}

void BackendDescriptor::finalize(const char* what) {
  check(m_api->cudnnBackendFinalize(m_desc), fmt::format("cudnnBackendFinalize({})", what).c_str());
}

ConvGraph::ConvGraph(const CudnnBackendApi& api, cudnnHandle_t handle, const GraphConvSpec& spec)
    : m_api(api), m_handle(handle) {
  m_keep.reserve(6);
  const auto tensor = [&](int64_t uid, const std::array<int64_t, 4>& dims) -> BackendDescriptor& {
    BackendDescriptor& t = m_keep.emplace_back(api, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::array<int64_t, 4> strides = packed_strides(dims, spec.nhwc);
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &spec.data_type, "tensor type");
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), "tensor dimensions");
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), "tensor strides");
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor id");
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &k_alignment, "tensor alignment");
    t.finalize("tensor");
    return t;
  };
  const cudnnBackendDescriptor_t x = tensor(k_x_uid, {spec.n, spec.c, spec.h, spec.w}).get();
  const cudnnBackendDescriptor_t w = tensor(k_w_uid, {spec.k, spec.c, spec.r, spec.s}).get();
  const cudnnBackendDescriptor_t y = tensor(k_y_uid, {spec.n, spec.k, spec.p, spec.q}).get();

  BackendDescriptor& conv = m_keep.emplace_back(api, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = 2;
  const std::array<int64_t, 2> pads = {spec.pad, spec.pad};
  const std::array<int64_t, 2> strides = {spec.stride, spec.stride};
  const std::array<int64_t, 2> dilations = {1, 1};
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, "compute type");
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "mode");
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, "spatial dims");
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data(), "pre paddings");
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data(), "post paddings");
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides.data(), "strides");
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilations.data(), "dilations");
  conv.finalize("convolution");
  const cudnnBackendDescriptor_t conv_desc = conv.get();

  BackendDescriptor& op =
      m_keep.emplace_back(api, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  const float alpha = 1.0F;
  const float beta = 0.0F;
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, "X");
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w, "W");
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "Y");
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
         &conv_desc, "convolution");
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, "alpha");
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, "beta");
  op.finalize("convolution forward");
  const cudnnBackendDescriptor_t op_desc = op.get();

  BackendDescriptor& graph = m_keep.emplace_back(api, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_desc, "ops");
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &m_handle, "graph handle");
  graph.finalize("operation graph");
}

void ConvGraph::query_heuristics(bool fallback) {
  query_mode(CUDNN_HEUR_MODE_A, false);
  if (fallback) {
    try {
      query_mode(CUDNN_HEUR_MODE_FALLBACK, true);
    } catch (const CudnnGraphError&) {
      // FALLBACK adds engines beyond mode A's list; without it mode A's list stands.
    }
  }
}

namespace {
/// The engine of a heuristics result: its global index, its numerical notes, and whether it is
/// compiled at run time.
void read_engine(const CudnnBackendApi& api, cudnnBackendDescriptor_t cfg,
                 GraphEngineConfig& config) {
  int64_t got = 0;
  BackendDescriptor engine(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t engine_raw = engine.get();
  if (api.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   1, &got, &engine_raw) == CUDNN_STATUS_SUCCESS) {
    api.cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                 &got, &config.engine);
    std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
    int64_t note_count = 0;
    if (api.cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                     CUDNN_TYPE_NUMERICAL_NOTE, notes.size(), &note_count,
                                     notes.data()) == CUDNN_STATUS_SUCCESS) {
      for (int64_t n = 0; n < std::min<int64_t>(note_count, notes.size()); ++n) {
        config.numerical_notes.push_back(numerical_note_name(notes[static_cast<size_t>(n)]));
      }
    }
    std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behaviour{};
    int64_t behaviour_count = 0;
    if (api.cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                     CUDNN_TYPE_BEHAVIOR_NOTE, behaviour.size(), &behaviour_count,
                                     behaviour.data()) == CUDNN_STATUS_SUCCESS) {
      for (int64_t n = 0; n < std::min<int64_t>(behaviour_count, behaviour.size()); ++n) {
        config.runtime_compiled |=
            behaviour[static_cast<size_t>(n)] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
      }
    }
  }
}

/// The knob choices of a heuristics result.
void read_knobs(const CudnnBackendApi& api, cudnnBackendDescriptor_t cfg,
                GraphEngineConfig& config) {
  int64_t got = 0;
  std::vector<BackendDescriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> knob_raw;
  for (int k = 0; k < CUDNN_KNOB_TYPE_COUNTS; ++k) {
    knob_raw.push_back(knobs.emplace_back(api, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR).get());
  }
  int64_t knob_count = 0;
  if (api.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, knob_raw.size(), &knob_count,
                                   knob_raw.data()) == CUDNN_STATUS_SUCCESS) {
    for (int64_t k = 0; k < std::min<int64_t>(knob_count, knob_raw.size()); ++k) {
      cudnnBackendKnobType_t type{};
      int64_t value = 0;
      const cudnnBackendDescriptor_t choice = knob_raw[static_cast<size_t>(k)];
      if (api.cudnnBackendGetAttribute(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                       CUDNN_TYPE_KNOB_TYPE, 1, &got,
                                       &type) == CUDNN_STATUS_SUCCESS &&
          api.cudnnBackendGetAttribute(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64,
                                       1, &got, &value) == CUDNN_STATUS_SUCCESS) {
        config.knobs.emplace_back(static_cast<int64_t>(type), value);
      }
    }
  }
}
} // namespace

void ConvGraph::query_mode(cudnnBackendHeurMode_t mode, bool fallback) {
  BackendDescriptor heur(m_api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendDescriptor_t graph = m_keep.back().get();
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
           "heuristics graph");
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
  heur.finalize("heuristics");
  int64_t count = 0;
  check(m_api.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
        "cudnnBackendGetAttribute(heuristics result count)");
  if (count <= 0) {
    return;
  }
  std::vector<BackendDescriptor> results;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    raw.push_back(results.emplace_back(m_api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
  }
  int64_t returned = 0;
  check(m_api.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
        "cudnnBackendGetAttribute(heuristics results)");
  for (int64_t i = 0; i < std::min(returned, count); ++i) {
    GraphEngineConfig config;
    config.fallback = fallback;
    config.rank = static_cast<int>(i);
    const cudnnBackendDescriptor_t cfg = raw[static_cast<size_t>(i)];
    read_engine(m_api, cfg, config);
    read_knobs(m_api, cfg, config);
    m_configs.push_back(std::move(config));
    m_engine_configs.push_back(std::move(results[static_cast<size_t>(i)]));
  }
}

int ConvGraph::build_plan(size_t config, int64_t& workspace_bytes, cudnnStatus_t& status) {
  workspace_bytes = 0;
  BackendDescriptor plan(m_api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  const cudnnBackendDescriptor_t cfg = m_engine_configs.at(config).get();
  try {
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &m_handle, "plan handle");
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg,
             "plan engine config");
    plan.finalize("execution plan");
  } catch (const CudnnGraphError& e) {
    status = e.status;
    return -1;
  }
  int64_t got = 0;
  status = m_api.cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                          CUDNN_TYPE_INT64, 1, &got, &workspace_bytes);
  if (status != CUDNN_STATUS_SUCCESS) {
    return -1;
  }
  m_plans.push_back(std::move(plan));
  return static_cast<int>(m_plans.size() - 1);
}

void ConvGraph::bind(void* x, void* w, void* y, void* workspace) {
  m_variant_pack.clear();
  BackendDescriptor& pack =
      m_variant_pack.emplace_back(m_api, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const std::array<int64_t, 3> uids = {k_x_uid, k_w_uid, k_y_uid};
  const std::array<void*, 3> pointers = {x, w, y};
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data(), "ids");
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data(),
           "pointers");
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "workspace");
  pack.finalize("variant pack");
}

cudnnStatus_t ConvGraph::execute(int plan) {
  return m_api.cudnnBackendExecute(m_handle, m_plans.at(static_cast<size_t>(plan)).get(),
                                   m_variant_pack.at(0).get());
}

} // namespace gpucheck::gpu_checks::cudnn
