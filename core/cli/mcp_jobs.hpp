// The background half of `cordon mcp`: commands started with run_in_background are cordon's
// background jobs (cordon/jobs.hpp), and get_command_output, stop_command and list_commands
// reach only the jobs this server started. They are stopped when the client goes away, unless
// the operator said --keep-jobs.
#pragma once

#include <cordon/jobs.hpp>
#include <cordon/runner.hpp>

#include <boost/json.hpp>

#include <mutex>
#include <set>
#include <string>

namespace cordon::cli::mcp {

class Background {
 public:
  explicit Background(JobManagerOptions options) : options_(std::move(options)) {}

  /// Starts `inv` as a job; the tool result names its process_id.
  boost::json::object start(const Invocation& inv);
  /// get_command_output: `tail` lines, or the output from byte `since` on.
  boost::json::object output(const boost::json::object& args);
  /// stop_command: SIGTERM to the whole command, SIGKILL after `grace` seconds.
  boost::json::object stop(const boost::json::object& args);
  /// list_commands: every command this server started, newest first.
  boost::json::object list();
  /// Stops every command still running (the client went away).
  void stop_all();

 private:
  /// The id named by `args`, when this server started it; throws Error CRD6001 otherwise.
  std::string own_id(const boost::json::object& args);

  /// A manager for one operation: managers of one state directory may work side by side (the
  /// jobs' state is on disk), so concurrent calls share nothing in memory.
  JobManager jobs() const { return JobManager(options_); }

  JobManagerOptions options_;
  std::mutex mutex_;
  std::set<std::string> started_;
};

}  // namespace cordon::cli::mcp
