// Gate expressions: every operator, every component, and each kind of malformed expression with
// the message that names its problem.
#include "gates/gate_spec.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpucheck::gates {
namespace {

Version v(std::string_view text) {
  return Version::parse(text).value();
}

TEST(GateSpec, ParsesEveryOperatorAndComponent) {
  const struct {
    std::string_view text;
    CompareOp op;
  } cases[] = {{">=", CompareOp::greater_equal}, {">", CompareOp::greater},
               {"<=", CompareOp::less_equal},    {"<", CompareOp::less},
               {"==", CompareOp::equal},         {"!=", CompareOp::not_equal}};
  for (std::string_view subject : k_requirement_subjects) {
    for (const auto& c : cases) {
      const std::string text = fmt::format("{}{}12.4", subject, c.text);
      Expected<Requirement> req = parse_requirement(text);
      ASSERT_TRUE(req) << text << ": " << req.error().message;
      EXPECT_EQ(req->subject, subject);
      EXPECT_EQ(req->op, c.op) << text;
      EXPECT_EQ(req->version, v("12.4"));
      EXPECT_EQ(req->text, text);
    }
  }
}

TEST(GateSpec, AllowsSpacesAndSmNames) {
  Expected<Requirement> req = parse_requirement("  cudnn >= 9.1 ");
  ASSERT_TRUE(req);
  EXPECT_EQ(req->text, "cudnn>=9.1");
  Expected<Requirement> cc = parse_requirement("cc>=sm_80");
  ASSERT_TRUE(cc);
  EXPECT_EQ(cc->version, v("8.0"));
}

TEST(GateSpec, MalformedRequirementsSayWhatIsWrong) {
  const struct {
    std::string_view text;
    std::string_view says;
  } cases[] = {
      {"driver", "write COMPONENT OP VERSION"},
      {"drvier>=550", "unknown component 'drvier'"},
      {">=550", "unknown component ''"},
      {"driver=>550", "unknown operator"},
      {"driver>==550", "unknown operator"},
      {"driver=550", "unknown operator"},
      {"driver>=", "'' is not a version"},
      {"driver>=abc", "'abc' is not a version"},
      {"cudnn>=9.1.x", "'9.1.x' is not a version"},
      {"cc>=eight", "'eight' is not a version (e.g. 8.0 or sm_80)"},
  };
  for (const auto& c : cases) {
    Expected<Requirement> req = parse_requirement(c.text);
    ASSERT_FALSE(req) << c.text;
    EXPECT_NE(req.error().message.find(c.says), std::string::npos)
        << c.text << " -> " << req.error().message;
    EXPECT_NE(req.error().message.find(c.text), std::string::npos) << req.error().message;
  }
}

TEST(GateSpec, SatisfiesComparesAtTheRequirementsPrecision) {
  EXPECT_TRUE(satisfies(v("580.65.06"), CompareOp::greater_equal, v("550")));
  EXPECT_FALSE(satisfies(v("535.104.05"), CompareOp::greater_equal, v("550")));
  EXPECT_TRUE(satisfies(v("580.65.06"), CompareOp::less_equal, v("580")));
  EXPECT_FALSE(satisfies(v("580.65.06"), CompareOp::greater, v("580")));
  EXPECT_TRUE(satisfies(v("581.1"), CompareOp::greater, v("580")));
  EXPECT_TRUE(satisfies(v("9.1.0"), CompareOp::equal, v("9.1")));
  EXPECT_FALSE(satisfies(v("9.10.2"), CompareOp::equal, v("9.1")));
  EXPECT_TRUE(satisfies(v("9.10.2"), CompareOp::greater, v("9.1")));
  EXPECT_TRUE(satisfies(v("12.3"), CompareOp::less, v("12.4")));
  EXPECT_FALSE(satisfies(v("12.4.1"), CompareOp::less, v("12.4")));
  EXPECT_TRUE(satisfies(v("12.6"), CompareOp::not_equal, v("12.4")));
  EXPECT_FALSE(satisfies(v("12.4.99"), CompareOp::not_equal, v("12.4")));
}

TEST(GateSpec, NegationIsTheOpposite) {
  for (CompareOp op : {CompareOp::greater_equal, CompareOp::greater, CompareOp::less_equal,
                       CompareOp::less, CompareOp::equal, CompareOp::not_equal}) {
    EXPECT_EQ(negation(negation(op)), op);
    for (const char* have : {"11.8", "12.4", "12.4.1", "13.0"}) {
      EXPECT_NE(satisfies(v(have), op, v("12.4")), satisfies(v(have), negation(op), v("12.4")))
          << have << " " << to_string(op);
    }
  }
  EXPECT_EQ(to_string(negation(CompareOp::greater_equal)), "<");
}

TEST(GateSpec, ParsesMinimums) {
  Expected<MetricMinimum> m = parse_minimum("h2d_gbps=20");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->metric, "h2d_gbps");
  EXPECT_DOUBLE_EQ(m->minimum, 20.0);
  Expected<MetricMinimum> f = parse_minimum(" fma_fp32_tflops = 12.5 ");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->metric, "fma_fp32_tflops");
  EXPECT_DOUBLE_EQ(f->minimum, 12.5);
}

TEST(GateSpec, MalformedMinimumsSayWhatIsWrong) {
  const struct {
    std::string_view text;
    std::string_view says;
  } cases[] = {
      {"h2d_gbps", "write METRIC=NUMBER"},         {"H2D=20", "'H2D' is not a metric name"},
      {"=20", "'' is not a metric name"},          {"h2d_gbps=", "'' is not a number"},
      {"h2d_gbps=fast", "'fast' is not a number"}, {"h2d_gbps=-1", "'-1' is not a number >= 0"},
      {"h2d_gbps=20GB", "'20GB' is not a number"}, {"h2d_gbps=nan", "'nan' is not a number"},
  };
  for (const auto& c : cases) {
    Expected<MetricMinimum> m = parse_minimum(c.text);
    ASSERT_FALSE(m) << c.text;
    EXPECT_NE(m.error().message.find(c.says), std::string::npos)
        << c.text << " -> " << m.error().message;
  }
}

TEST(GateSpec, FailOnLevelsAndIgnoredCodes) {
  EXPECT_TRUE(parse_fail_on("warn").value());
  EXPECT_FALSE(parse_fail_on("fail").value());
  ASSERT_FALSE(parse_fail_on("warning"));
  EXPECT_NE(parse_fail_on("warning").error().message.find("warn or fail"), std::string::npos);
  EXPECT_EQ(parse_ignored_code("gpu.row_remap_pending").value(), "gpu.row_remap_pending");
  ASSERT_FALSE(parse_ignored_code("gpu.no_such_code"));
  EXPECT_NE(parse_ignored_code("gpu.no_such_code").error().message.find("explain all"),
            std::string::npos);
}

TEST(GateSpec, EmptySpecMeansNoGate) {
  GateSpec spec;
  EXPECT_TRUE(spec.empty());
  spec.fail_on_warn = true;
  EXPECT_FALSE(spec.empty());
}

} // namespace
} // namespace gpucheck::gates
