// The --json result object and the -v enforcement report of `cordon run`.
#include "run_output.hpp"

#include <unistd.h>
#include <cordon/request.hpp>
#include <cordon/sdk/frames.hpp>

#include <boost/json/serialize.hpp>

#include <cerrno>
#include <ostream>

namespace cordon::cli {

void CollectSink::write(Stream stream, std::string_view chunk) {
  (stream == Stream::out ? out : err).append(chunk);
}

namespace {

void write_all(int fd, std::string_view chunk) {
  while (!chunk.empty()) {
    ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own stdout is gone: the command still runs to its end
    chunk.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

PassThroughSink::PassThroughSink(bool raw) {
  if (raw) return;
  if (is_terminal(1)) out_.emplace();
  if (is_terminal(2)) err_.emplace();
}

void PassThroughSink::write(Stream stream, std::string_view chunk) {
  int fd = stream == Stream::out ? 1 : 2;
  auto& filter = stream == Stream::out ? out_ : err_;
  if (filter)
    write_all(fd, filter->filter(chunk));
  else
    write_all(fd, chunk);
}

void PassThroughSink::finish() {
  if (out_) write_all(1, out_->finish());
  if (err_) write_all(2, err_->finish());
}

void FramedSink::write(Stream stream, std::string_view chunk) {
  write_all(1, sdk::encode_frames(stream == Stream::out ? sdk::FrameTag::out : sdk::FrameTag::err,
                                  chunk));
}

void FramedSink::accepted() { write_all(1, sdk::encode_frame(sdk::FrameTag::accepted, "")); }

void FramedSink::finish(const boost::json::object& result) {
  write_all(1, sdk::encode_frames(sdk::FrameTag::result, boost::json::serialize(result)));
}

namespace {

void put_text(boost::json::object& o, const char* key, const std::string& bytes) {
  bool utf8 = is_utf8(bytes);
  o[key] = utf8 ? bytes : encode_base64(bytes);
  if (!utf8) o[std::string(key) + "_base64"] = true;
}

// Only what the backend measured: a figure it could not take is left out, never shown as 0.
boost::json::object resources_json(const RunResult& r) {
  boost::json::object o;
  if (r.peak_memory_bytes) o["peak_memory_bytes"] = *r.peak_memory_bytes;
  if (r.cpu_user_seconds) o["cpu_user_seconds"] = *r.cpu_user_seconds;
  if (r.cpu_system_seconds) o["cpu_system_seconds"] = *r.cpu_system_seconds;
  if (r.processes_started) o["processes_started"] = *r.processes_started;
  return o;
}

}  // namespace

Error as_one_error(const ErrorList& list) {
  const auto& first = list.errors().front();
  std::string text;
  for (const auto& e : list.errors()) text += (text.empty() ? "" : "\n") + std::string(e.what());
  return Error(first.code(), text, first.hint());
}

boost::json::value error_json(const std::optional<Error>& e) {
  if (!e) return nullptr;
  return boost::json::object{{"code", e->code()}, {"message", e->what()}, {"hint", e->hint()}};
}

boost::json::object run_json(const RunOutcome& outcome, const CollectSink& output) {
  const RunResult& r = outcome.result;
  boost::json::object o;
  o["exit_code"] = r.exit_code >= 0 ? boost::json::value(r.exit_code) : nullptr;
  o["signal"] = r.signal > 0 ? boost::json::value(r.signal) : nullptr;
  o["timed_out"] = r.timed_out;
  put_text(o, "stdout", output.out);
  put_text(o, "stderr", output.err);
  o["stdout_truncated"] = r.stdout_truncated;
  o["stderr_truncated"] = r.stderr_truncated;
  o["stdout_bytes"] = r.stdout_bytes;
  o["stderr_bytes"] = r.stderr_bytes;
  o["duration_ms"] = r.duration.count();
  o["resources"] = resources_json(r);
  o["backend"] =
      outcome.backend.empty() ? boost::json::value(nullptr) : boost::json::value(outcome.backend);
  boost::json::array report;
  for (const auto& e : r.report)
    report.push_back(boost::json::object{{"capability", e.capability}, {"mechanism", e.mechanism}});
  o["report"] = std::move(report);
  boost::json::array notes;
  for (const auto& n : r.notes) notes.push_back(boost::json::string(n));
  o["notes"] = std::move(notes);
  o["workspace"] = outcome.workspace.empty() ? boost::json::value(nullptr)
                                             : boost::json::value(outcome.workspace.string());
  o["error"] = error_json(r.error);
  return o;
}

void print_report(const RunOutcome& outcome, std::ostream& err) {
  const RunResult& r = outcome.result;
  if (outcome.backend.empty()) return;
  err << "cordon: ran on '" << outcome.backend << "' in " << r.duration.count() << " ms; ";
  if (r.timed_out)
    err << "timed out";
  else if (r.signal > 0)
    err << "killed by signal " << r.signal;
  else if (r.exit_code >= 0)
    err << "exit " << r.exit_code;
  else
    err << "did not run";
  err << "\ncordon: enforcement:\n";
  for (const auto& e : r.report) err << "  " << e.capability << ": " << e.mechanism << "\n";
  for (const auto& s : {std::pair{"stdout", r.stdout_truncated}, {"stderr", r.stderr_truncated}})
    if (s.second) err << "cordon: " << s.first << " over the cap: head and tail kept\n";
  for (const auto& n : r.notes) err << "cordon: note: " << n << "\n";
}

}  // namespace cordon::cli
