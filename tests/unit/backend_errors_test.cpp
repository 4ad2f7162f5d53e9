// The base class's error convention: a hook that throws cordon::Error keeps its code and hint
// in the result; anything else it throws is the plugin's bug, under the generic code. And
// Backend::run refuses bad settings itself, before the hook sees them.
#include <catch2/catch.hpp>
#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/capabilities.hpp>

#include <stdexcept>

#include "runtime_test_support.hpp"

using namespace cordon;
using cordon::test::Collect;

namespace {

// What each hook does; `error` throws a cordon::Error, `other` a std::runtime_error.
enum class Act { answer, error, other };

class ScriptedBackend final : public Backend {
 public:
  Act probe_act = Act::answer, run_act = Act::answer, settings_act = Act::answer,
      gc_act = Act::answer, preview_act = Act::answer;
  int runs = 0;

  ScriptedBackend() : Backend(BackendContext{"scripted", nullptr, {}}) {}

 protected:
  ProbeResult do_probe() override {
    if (probe_act == Act::error)
      throw Error(code::kServiceUnreachable, "nothing answers", "start the service");
    if (probe_act == Act::other) throw std::runtime_error("probe bug");
    ProbeResult r;
    r.available = true;
    return r;
  }
  RunResult do_run(const Plan&, OutputSink&) override {
    ++runs;
    if (run_act == Act::error)
      throw Error(code::kIsolationFailed, "cannot isolate", "check the host");
    if (run_act == Act::other) throw std::runtime_error("run bug");
    RunResult r;
    r.exit_code = 0;
    return r;
  }
  std::vector<Error> do_validate_settings(const boost::json::object& settings) override {
    if (settings_act == Act::error)
      throw ErrorList({Error(code::kBadSettings, "'backends.scripted.a' is wrong", "fix a"),
                       Error(code::kBadSettings, "'backends.scripted.b' is wrong")});
    if (settings_act == Act::other) throw std::runtime_error("settings bug");
    std::vector<Error> errors;
    if (settings.contains("bad"))
      errors.emplace_back(code::kBadSettings, "'backends.scripted.bad' is not a setting");
    return errors;
  }
  GarbageReport do_collect_garbage(const boost::json::object&) override {
    if (gc_act == Act::error) throw Error(code::kServiceUnreachable, "daemon gone");
    if (gc_act == Act::other) throw std::runtime_error("gc bug");
    return {{"thing 1"}, std::nullopt};
  }
  RunPreview do_preview(const Plan&) override {
    if (preview_act == Act::error) throw Error(code::kBadArgument, "no such user");
    if (preview_act == Act::other) throw std::runtime_error("preview bug");
    return {{"runs as nobody"}, {}};
  }
};

Plan plan_with(boost::json::object settings = {}) {
  Plan plan;
  plan.argv = {"/bin/true"};
  plan.settings = std::move(settings);
  return plan;
}

}  // namespace

TEST_CASE("a run hook's thrown cordon::Error keeps its code and hint", "[backend]") {
  ScriptedBackend b;
  Collect sink;
  b.run_act = Act::answer;
  CHECK_FALSE(b.run(plan_with(), sink).error);
  b.run_act = Act::error;
  auto r = b.run(plan_with(), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == code::kIsolationFailed);
  CHECK(r.error->hint() == "check the host");
  b.run_act = Act::other;
  r = b.run(plan_with(), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == code::kBackendFault);
  CHECK(r.error->message().find("run bug") != std::string::npos);
}

TEST_CASE("a probe's thrown cordon::Error is the refusal in its own words", "[backend]") {
  ScriptedBackend b;
  b.probe_act = Act::error;
  const ProbeResult& pr = b.probe();
  CHECK_FALSE(pr.available);
  CHECK_FALSE(pr.fault);
  REQUIRE(pr.unusable);
  CHECK(pr.unusable->code() == code::kServiceUnreachable);
  Collect sink;
  auto r = b.run(plan_with(), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == code::kServiceUnreachable);
  CHECK(b.runs == 0);

  ScriptedBackend buggy;
  buggy.probe_act = Act::other;
  CHECK_FALSE(buggy.probe().available);
  REQUIRE(buggy.probe().fault);
  CHECK(buggy.probe().fault->code() == code::kPluginProbe);
}

TEST_CASE("run refuses settings that do not validate, naming every mistake", "[backend]") {
  ScriptedBackend b;
  Collect sink;
  boost::json::object good;
  good["fine"] = 1;
  CHECK_FALSE(b.run(plan_with(good), sink).error);
  CHECK(b.runs == 1);
  boost::json::object bad;
  bad["bad"] = 1;
  auto r = b.run(plan_with(bad), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == code::kBadSettings);
  CHECK(b.runs == 1);  // the hook never saw them

  b.settings_act = Act::error;  // an ErrorList: both kept, the first one's hint
  CHECK(b.validate_settings(good).size() == 2);
  auto combined = b.settings_error(good);
  REQUIRE(combined);
  CHECK(combined->message().find("'backends.scripted.a'") != std::string::npos);
  CHECK(combined->message().find("'backends.scripted.b'") != std::string::npos);
  CHECK(combined->hint() == "fix a");
  b.settings_act = Act::other;
  REQUIRE(b.validate_settings(good).size() == 1);
  CHECK(b.validate_settings(good).front().code() == code::kBadSettings);
}

TEST_CASE("collect_garbage and preview keep a thrown cordon::Error's words", "[backend]") {
  ScriptedBackend b;
  CHECK(b.collect_garbage({}).removed.size() == 1);
  CHECK_FALSE(b.collect_garbage({}).error);
  b.gc_act = Act::error;
  auto g = b.collect_garbage({});
  REQUIRE(g.error);
  CHECK(g.error->code() == code::kServiceUnreachable);
  b.gc_act = Act::other;
  REQUIRE(b.collect_garbage({}).error);
  CHECK(b.collect_garbage({}).error->code() == code::kBackendFault);

  CHECK(b.preview(plan_with()).facts.size() == 1);
  b.preview_act = Act::error;
  auto p = b.preview(plan_with());
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings.front().find("no such user") != std::string::npos);
}
