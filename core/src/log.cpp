// The one file of the core that includes spdlog (see cordon/log.hpp).
#include <cordon/sdk/log.hpp>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

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

std::shared_ptr<spdlog::logger> default_logger() { return spdlog::default_logger(); }

}  // namespace cordon::log
