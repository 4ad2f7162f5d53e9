// Logging for the core and for backends, without spdlog's headers: in their header-only mode
// (which keeps libspdlog out of every start) they cost seconds of compile time in each file that
// includes them. The caller formats the line; one below the logger's level is not written.
// A plugin may still include spdlog itself and use Backend::log() directly.
#pragma once

#include <cordon/sdk/export.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>

namespace spdlog {
class logger;
}

namespace cordon::log {

/// spdlog's levels, in order.
enum class Level { trace, debug, info, warn, error };

/// True when `logger` writes lines of `level`: test it before building a costly message.
CORDON_API bool enabled(const spdlog::logger& logger, Level level) noexcept;

/// Writes one line at `level`. Never throws (a failing sink drops the line).
CORDON_API void write(spdlog::logger& logger, Level level, std::string_view line) noexcept;

inline void debug(spdlog::logger& logger, std::string_view line) noexcept {
  write(logger, Level::debug, line);
}
inline void info(spdlog::logger& logger, std::string_view line) noexcept {
  write(logger, Level::info, line);
}
inline void warn(spdlog::logger& logger, std::string_view line) noexcept {
  write(logger, Level::warn, line);
}

/// A logger named `name` that discards every line.
CORDON_API std::shared_ptr<spdlog::logger> null_logger(std::string_view name);

/// The CLI's logger: "cordon: <level>: <line>" on stderr (stdout stays the command's), at
/// `level` ("trace" ... "error", "off"; unknown names mean "off", as spdlog reads them). It also
/// becomes spdlog's default logger.
CORDON_API std::shared_ptr<spdlog::logger> stderr_logger(std::string_view level);

/// Where a forwarded line goes (add_forwarder).
using Forward = std::function<void(Level, std::string_view)>;

/// Also hands each line of `logger` at or above `*threshold` to `forward` (cordon mcp: the
/// client's log), as it is written; the logger's own sinks keep the level it had. `forward`
/// may be called from any thread, one line at a time.
CORDON_API void add_forwarder(spdlog::logger& logger, Forward forward,
                              std::shared_ptr<const std::atomic<Level>> threshold);

/// spdlog's default logger (the CLI's, once stderr_logger made it).
CORDON_API std::shared_ptr<spdlog::logger> default_logger();

}  // namespace cordon::log
