// The one file of the core that includes spdlog (see cordon/log.hpp).
#include <cordon/sdk/log.hpp>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <string>
#include <utility>

namespace cordon::log {

namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::trace:
      return spdlog::level::trace;
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warn:
      return spdlog::level::warn;
    case Level::error:
      return spdlog::level::err;
  }
  return spdlog::level::err;
}

}  // namespace

bool enabled(const spdlog::logger& logger, Level level) noexcept {
  return logger.should_log(to_spdlog(level));
}

void write(spdlog::logger& logger, Level level, std::string_view line) noexcept {
  try {
    logger.log(to_spdlog(level), spdlog::string_view_t(line.data(), line.size()));
  } catch (...) {
    // spdlog reports sink failures through its own error handler; nothing to add here.
  }
}

std::shared_ptr<spdlog::logger> null_logger(std::string_view name) {
  return std::make_shared<spdlog::logger>(std::string(name),
                                          std::make_shared<spdlog::sinks::null_sink_mt>());
}

std::shared_ptr<spdlog::logger> stderr_logger(std::string_view level) {
  auto logger = spdlog::stderr_color_mt("cordon");
  logger->set_pattern("cordon: %l: %v");
  logger->set_level(spdlog::level::from_str(std::string(level)));
  spdlog::set_default_logger(logger);
  return logger;
}

namespace {

Level from_spdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return Level::trace;
    case spdlog::level::debug:
      return Level::debug;
    case spdlog::level::info:
      return Level::info;
    case spdlog::level::warn:
      return Level::warn;
    default:
      return Level::error;
  }
}

class ForwardSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  ForwardSink(Forward forward, std::shared_ptr<const std::atomic<Level>> threshold)
      : forward_(std::move(forward)), threshold_(std::move(threshold)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    Level level = from_spdlog(msg.level);
    if (level < threshold_->load()) return;
    forward_(level, std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  Forward forward_;
  std::shared_ptr<const std::atomic<Level>> threshold_;
};

}  // namespace

void add_forwarder(spdlog::logger& logger, Forward forward,
                   std::shared_ptr<const std::atomic<Level>> threshold) {
  // The logger lets every line through to its sinks; each old sink keeps the logger's level.
  for (auto& sink : logger.sinks())
    if (sink->level() < logger.level()) sink->set_level(logger.level());
  logger.sinks().push_back(std::make_shared<ForwardSink>(std::move(forward), std::move(threshold)));
  if (logger.level() > spdlog::level::debug) logger.set_level(spdlog::level::debug);
}

std::shared_ptr<spdlog::logger> default_logger() { return spdlog::default_logger(); }

}  // namespace cordon::log
