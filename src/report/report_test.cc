// Tests of the SVG plotting library: well-formed output, escaping, exact
// ticks, colour-scale endpoints, and no "nan"/"inf" for degenerate inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "report/axis.h"
#include "report/color_scale.h"
#include "report/gantt_chart.h"
#include "report/line_chart.h"
#include "report/svg_writer.h"

namespace perseus::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Checks that every tag is closed in order and entity references are known.
// Returns "" when well-formed, else a description of the first problem.
std::string CheckWellFormed(const std::string& xml) {
  std::vector<std::string> stack;
  for (std::size_t i = 0; i < xml.size(); ++i) {
    if (xml[i] == '&') {
      std::size_t semi = xml.find(';', i);
      std::string ent = semi == std::string::npos ? "" : xml.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
        return "bad entity at " + std::to_string(i);
      continue;
    }
    if (xml[i] == '>') return "stray '>' at " + std::to_string(i);
    if (xml[i] != '<') continue;
    std::size_t end = i + 1;
    char quote = 0;
    for (; end < xml.size(); ++end) {  // find the '>' that is not inside a quoted attribute
      if (quote) {
        if (xml[end] == quote) quote = 0;
        else if (xml[end] == '<') return "'<' inside attribute at " + std::to_string(end);
      } else if (xml[end] == '"' || xml[end] == '\'') {
        quote = xml[end];
      } else if (xml[end] == '>') {
        break;
      } else if (xml[end] == '<') {
        return "'<' inside tag at " + std::to_string(end);
      }
    }
    if (end >= xml.size()) return "unterminated tag at " + std::to_string(i);
    std::string tag = xml.substr(i + 1, end - i - 1);
    i = end;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag.back() == '/') continue;
    std::size_t name_end = tag.find_first_of(" \t\n/", 1);
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) return "unexpected </" + name + ">";
      stack.pop_back();
    } else {
      stack.push_back(tag.substr(0, name_end));
    }
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

bool HasNonFiniteText(const std::string& svg) {
  for (const char* bad : {"nan", "NaN", "NAN", "inf", "INF"}) {
    if (svg.find(bad) != std::string::npos) return true;
  }
  return false;
}

TEST(WellFormedChecker, CatchesBrokenDocuments) {
  EXPECT_EQ(CheckWellFormed("<a><b x=\"1>2\"/></a>"), "");
  EXPECT_NE(CheckWellFormed("<a><b></a></b>"), "");
  EXPECT_NE(CheckWellFormed("<a>"), "");
  EXPECT_NE(CheckWellFormed("<a>x & y</a>"), "");
  EXPECT_NE(CheckWellFormed("<a>x < y</a>"), "");
}

TEST(SvgWriter, EscapesTextAttributesAndTooltips) {
  EXPECT_EQ(EscapeXml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(EscapeXml(std::string("x\x01y\tz")), "xy\tz");
  SvgWriter svg(100, 50);
  svg.SetTitle("T<1>");
  svg.Text(1, 2, "<b>&\"x\"", {});
  svg.Rect(0, 0, 10, 10, {.fill = "red\"><script>"}, "tip & <trick>");
  std::string out = svg.Finish();
  EXPECT_EQ(CheckWellFormed(out), "") << out;
  EXPECT_NE(out.find("&lt;b&gt;&amp;&quot;x&quot;</text>"), std::string::npos) << out;
  EXPECT_NE(out.find("<title>tip &amp; &lt;trick&gt;</title></rect>"), std::string::npos) << out;
  EXPECT_EQ(out.find("<script>"), std::string::npos);
}

TEST(SvgWriter, FormatsNumbersCompactly) {
  EXPECT_EQ(FormatNumber(12.5), "12.5");
  EXPECT_EQ(FormatNumber(3.0), "3");
  EXPECT_EQ(FormatNumber(0.004), "0");
  EXPECT_EQ(FormatNumber(-0.001), "0");
  EXPECT_EQ(FormatNumber(1.236), "1.24");
  EXPECT_EQ(FormatNumber(kNaN), "0");
  EXPECT_EQ(FormatNumber(-kInf), "0");
}

TEST(SvgWriter, ClosesOpenGroupsAndWritesTooltips) {
  SvgWriter svg(10, 10);
  svg.BeginGroup("a");
  svg.BeginGroup("b", "clip");
  svg.Circle(1, 2, 3, {.fill = "#000"}, "hello");
  svg.Polyline({{0, 0}, {1.5, 2}}, {.stroke = "#f00", .dash = "6 4"});
  std::string out = svg.Finish();
  EXPECT_EQ(CheckWellFormed(out), "") << out;
  EXPECT_NE(out.find("points=\"0,0 1.5,2\""), std::string::npos) << out;
  EXPECT_NE(out.find("clip-path=\"url(#clip)\""), std::string::npos) << out;
  EXPECT_NE(out.find("<title>hello</title></circle>"), std::string::npos) << out;
}

TEST(SvgWriter, EllipsizesLongText) {
  EXPECT_EQ(EllipsizeToWidth("short", 12, 1000), "short");
  std::string cut = EllipsizeToWidth(std::string(200, 'x'), 12, 100);
  EXPECT_LE(EstimateTextWidthPx(cut, 12), 100);
  EXPECT_EQ(cut.substr(cut.size() - 3), "...");
}

std::vector<double> Ticks(double lo, double hi, int target = 5) {
  return MakeLinearAxis(lo, hi, target).ticks;
}

TEST(Axis, NiceTicksOnSeveralRanges) {
  EXPECT_EQ(Ticks(0, 10), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(Ticks(0, 1), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_EQ(Ticks(-3.7, 12.1), (std::vector<double>{-5, 0, 5, 10, 15}));
  EXPECT_EQ(Ticks(1210, 1980), (std::vector<double>{1200, 1400, 1600, 1800, 2000}));
  EXPECT_EQ(Ticks(0.13, 0.47, 4), (std::vector<double>{0.1, 0.2, 0.30000000000000004, 0.4, 0.5}));
  EXPECT_EQ(Ticks(-250, -20, 5), (std::vector<double>{-250, -200, -150, -100, -50, 0}));
  EXPECT_EQ(Ticks(0, 7, 5), (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(Ticks(0, 100, 4), (std::vector<double>{0, 50, 100}));
}

TEST(Axis, StepsAreOneTwoFive) {
  EXPECT_DOUBLE_EQ(NiceStep(10, 5), 2);
  EXPECT_DOUBLE_EQ(NiceStep(1, 10), 0.1);
  EXPECT_DOUBLE_EQ(NiceStep(3, 1), 5);
  EXPECT_DOUBLE_EQ(NiceStep(7, 1), 10);
  EXPECT_DOUBLE_EQ(NiceStep(0.003, 5), 0.001);
  EXPECT_DOUBLE_EQ(NiceStep(0, 5), 1);
}

TEST(Axis, RepairsDegenerateRanges) {
  EXPECT_EQ(Ticks(10, 0), Ticks(0, 10));
  EXPECT_EQ(Ticks(0, 0), Ticks(0, 1));
  EXPECT_EQ(Ticks(kNaN, 3), Ticks(0, 1));
  EXPECT_EQ(Ticks(0, kInf), Ticks(0, 1));
  EXPECT_EQ(Ticks(-1e308, 1e308), Ticks(0, 1));
  LinearAxis a = MakeLinearAxis(1410, 1410, 5);
  EXPECT_LT(a.min, 1410);
  EXPECT_GT(a.max, 1410);
  EXPECT_GE(a.ticks.size(), 2u);
  EXPECT_LE(MakeLinearAxis(0, 1, 1000000).ticks.size(), 101u);
}

TEST(Axis, FormatsTickLabels) {
  EXPECT_EQ(FormatTick(0.6000000000000001, 0.2), "0.6");
  EXPECT_EQ(FormatTick(0.25, 0.05), "0.25");
  EXPECT_EQ(FormatTick(1200, 200), "1200");
  EXPECT_EQ(FormatTick(-0.0, 1), "0");
  EXPECT_EQ(FormatTick(-1e-17, 0.1), "0.0");
  EXPECT_EQ(FormatTick(-0.001, 1), "0");
  EXPECT_EQ(FormatTick(2e9, 5e8), "2.0e+09");
  EXPECT_EQ(FormatTick(1e10, 1e9), "1.0e+10");
  EXPECT_EQ(FormatTick(2.5e9, 5e8), "2.5e+09");
  EXPECT_EQ(FormatTick(3e-7, 1e-7), "3e-07");
  EXPECT_EQ(FormatTick(kNaN, 1), "0");
}

TEST(ColorScale, ViridisEndpointsAndClamping) {
  EXPECT_EQ(Viridis(0).Hex(), "#440154");
  EXPECT_EQ(Viridis(1).Hex(), "#fde725");
  EXPECT_EQ(Viridis(0.5).Hex(), "#21918c");
  EXPECT_EQ(Viridis(-3).Hex(), "#440154");
  EXPECT_EQ(Viridis(7).Hex(), "#fde725");
  EXPECT_EQ(Viridis(kNaN).Hex(), "#440154");
  ColorScale scale(1000, 2000);
  EXPECT_EQ(scale.ColorFor(1000).Hex(), "#440154");
  EXPECT_EQ(scale.ColorFor(2000).Hex(), "#fde725");
  EXPECT_DOUBLE_EQ(scale.Normalize(1250), 0.25);
  EXPECT_DOUBLE_EQ(ColorScale(5, 5).Normalize(5), 0.5);
  EXPECT_DOUBLE_EQ(ColorScale(0, kInf).Normalize(1), 0.5);
}

TEST(ColorScale, ViridisLuminanceRisesMonotonically) {
  double prev = -1;
  for (int i = 0; i <= 100; ++i) {
    double lum = Viridis(i / 100.0).Luminance();
    EXPECT_GT(lum, prev) << i;
    prev = lum;
  }
  EXPECT_EQ(TextColorOn(Viridis(0)), "#ffffff");
  EXPECT_EQ(TextColorOn(Viridis(1)), "#000000");
}

TEST(ColorScale, CategoricalPaletteWraps) {
  EXPECT_EQ(CategoricalColor(0), "#1f77b4");
  EXPECT_EQ(CategoricalColor(10), CategoricalColor(0));
  EXPECT_NE(CategoricalColor(1), CategoricalColor(0));
}

LineChart SampleLineChart() {
  LineChart c;
  c.title = "Time & energy <frontier>";
  c.x_label = "iteration time (s)";
  c.y_label = "energy (J)";
  c.series.push_back({"frontier \"a\"", {{1, 10}, {2, 6}, {3, 5}}, "", true, true, false});
  c.series.push_back({"baseline", {{1, 12}, {3, 12}}, "#333333", false, true, true});
  c.annotations.push_back({2, 6, "chosen <plan>"});
  return c;
}

TEST(LineChart, IsWellFormedAndEscaped) {
  std::string svg = RenderLineChart(SampleLineChart());
  EXPECT_EQ(CheckWellFormed(svg), "") << svg;
  EXPECT_FALSE(HasNonFiniteText(svg)) << svg;
  EXPECT_NE(svg.find("Time &amp; energy &lt;frontier&gt;"), std::string::npos);
  EXPECT_NE(svg.find("chosen &lt;plan&gt;"), std::string::npos);
  EXPECT_NE(svg.find("frontier &quot;a&quot;"), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#1f77b4\""), std::string::npos) << "default palette";
  EXPECT_NE(svg.find("stroke-dasharray=\"6 4\""), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
}

TEST(LineChart, DegenerateInputsRenderWithoutNonFiniteNumbers) {
  std::vector<LineChart> charts(6);
  charts[1].series.push_back({"empty", {}, "", false, true, false});
  charts[2].series.push_back({"one", {{3, 7}}, "", false, true, false});
  charts[3].series.push_back({"flat", {{0, 5}, {1, 5}, {2, 5}}, "", true, true, false});
  charts[4].series.push_back({"bad", {{kNaN, 1}, {2, kInf}, {1, 1}}, "", true, true, false});
  charts[4].annotations.push_back({kNaN, kNaN, "nowhere"});
  charts[5] = SampleLineChart();
  charts[5].y_min = 8;
  charts[5].y_max = 8;  // an empty fixed range is ignored
  charts[5].width_px = kNaN;
  for (const LineChart& c : charts) {
    std::string svg = RenderLineChart(c);
    EXPECT_EQ(CheckWellFormed(svg), "") << svg;
    EXPECT_FALSE(HasNonFiniteText(svg)) << svg;
  }
  std::string one = RenderLineChart(charts[2]);
  EXPECT_NE(one.find("<circle"), std::string::npos) << "a single point gets a marker";
}

TEST(LineChart, LegendThatDoesNotFitEndsWithACount) {
  LineChart c;
  c.height_px = 200;
  for (int i = 0; i < 30; ++i) c.series.push_back({"s" + std::to_string(i), {{0, i}, {1, i}}, "", false, true, false});
  std::string svg = RenderLineChart(c);
  EXPECT_EQ(CheckWellFormed(svg), "");
  EXPECT_NE(svg.find(">s0</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">s29</text>"), std::string::npos);
  EXPECT_NE(svg.find(" more</text>"), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#1f77b4\""), std::string::npos);
}

TEST(LineChart, FixedYRangeLimitsTicks) {
  LineChart c = SampleLineChart();
  c.y_min = 0;
  c.y_max = 20;
  std::string svg = RenderLineChart(c);
  EXPECT_EQ(CheckWellFormed(svg), "");
  EXPECT_NE(svg.find(">20</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find(">25</text>"), std::string::npos) << svg;
}

GanttChart SampleGanttChart() {
  GanttChart g;
  g.title = "1F1B <4 stages>";
  g.x_label = "time (s)";
  g.row_names = {"stage 0", "stage 1"};
  g.value_label = "SM frequency (MHz)";
  g.value_min = 1000;
  g.value_max = 2000;
  g.boxes.push_back({0, 0, 1, "F1", 1000, ""});
  g.boxes.push_back({1, 1, 2, "F1", 2000, "custom & tip"});
  g.boxes.push_back({0, 2, 4, "B1", 1500, ""});
  return g;
}

TEST(GanttChart, IsWellFormedWithLabelsColorsAndTooltips) {
  std::string svg = RenderGanttChart(SampleGanttChart());
  EXPECT_EQ(CheckWellFormed(svg), "") << svg;
  EXPECT_FALSE(HasNonFiniteText(svg)) << svg;
  EXPECT_NE(svg.find("1F1B &lt;4 stages&gt;"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#440154\""), std::string::npos) << "value_min box";
  EXPECT_NE(svg.find("fill=\"#fde725\""), std::string::npos) << "value_max box";
  EXPECT_NE(svg.find(">F1</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>custom &amp; tip</title>"), std::string::npos);
  EXPECT_NE(svg.find("SM frequency (MHz): 1500"), std::string::npos) << "default tooltip";
  EXPECT_NE(svg.find("<linearGradient"), std::string::npos) << "colour bar";
}

TEST(GanttChart, OmitsLabelsThatDoNotFitAndSaysHowMany) {
  GanttChart g = SampleGanttChart();
  g.boxes.push_back({1, 3, 3.001, "WIDE-LABEL", 1500, ""});
  std::string svg = RenderGanttChart(g);
  EXPECT_EQ(svg.find(">WIDE-LABEL</text>"), std::string::npos);
  EXPECT_NE(svg.find("time (s); 1 of 4 box labels hidden (too narrow; hover a box)"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>WIDE-LABEL\n"), std::string::npos) << "the tooltip still names it";
  EXPECT_EQ(RenderGanttChart(SampleGanttChart()).find("labels hidden"), std::string::npos);
}

TEST(GanttChart, NarrowBoxesFallBackToSmallerTextThenDigits) {
  GanttChart g = SampleGanttChart();
  g.width_px = 300;  // a 209 px plot for 4 s: ~52 px per second
  g.boxes = {{0, 0, 0.6, "F12", 1000, ""}, {0, 1, 1.38, "F13", 1000, ""}, {1, 2, 2.3, "B34", 1000, ""},
             {1, 3, 4, "B5", 1000, ""}};
  std::string svg = RenderGanttChart(g);
  EXPECT_NE(svg.find("font-size=\"11\" fill=\"#ffffff\" text-anchor=\"middle\">F12</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("font-size=\"8\" fill=\"#ffffff\" text-anchor=\"middle\">F13</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("font-size=\"8\" fill=\"#ffffff\" text-anchor=\"middle\">34</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">B5</text>"), std::string::npos);
  EXPECT_EQ(svg.find("labels hid"), std::string::npos) << svg;
}

TEST(GanttChart, DegenerateInputsRenderWithoutNonFiniteNumbers) {
  std::vector<GanttChart> charts(5);
  charts[1].boxes.push_back({0, 1, 1, "F0", 1410, ""});  // zero width, one value
  charts[2].boxes.push_back({3, kNaN, 1, "F0", kNaN, ""});
  charts[2].boxes.push_back({-1, 0, 1, "F0", 1, ""});
  charts[2].boxes.push_back({2147483647, 0, 1, "F0", 1, ""});
  charts[3] = SampleGanttChart();
  charts[3].value_min = kNaN;
  charts[3].width_px = -5;
  charts[4] = SampleGanttChart();
  charts[4].boxes.push_back({5, 2, 1, "B9", kInf, ""});  // reversed span, row past the names
  for (const GanttChart& g : charts) {
    std::string svg = RenderGanttChart(g);
    EXPECT_EQ(CheckWellFormed(svg), "") << svg;
    EXPECT_FALSE(HasNonFiniteText(svg)) << svg;
  }
  EXPECT_NE(RenderGanttChart(charts[4]).find(">row 5</text>"), std::string::npos);
}

}  // namespace
}  // namespace perseus::report
