// `cordon job start|output|status|wait|stop|list|remove|gc`: background jobs.
#include <cordon/jobs.hpp>
#include <cordon/terminal_text.hpp>

#include <boost/json.hpp>

#include <charconv>
#include <iostream>

#include "job_view.hpp"
#include "run_input.hpp"
#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

// Exit status for an unknown id or a failed job verb.
constexpr int kJobError = 2;

struct JobArgs {
  std::optional<std::string> policy, backend, workspace, command, request, state_dir;
  std::optional<std::string> timeout;
  std::string grace = "5s";
  std::string id;
  std::size_t tail = 200;
  std::optional<std::string> since;
  bool raw = false;
  bool json = false;
  bool all = false;
  RuntimeOptions runtime;
  std::vector<std::string> argv;
};

JobManager manager_of(const JobArgs& a) {
  JobManagerOptions o;
  if (a.state_dir) o.state_dir = *a.state_dir;
  for (const auto& d : a.runtime.plugin_dirs) o.plugin_dirs.emplace_back(d);
  if (a.runtime.config) o.config = *a.runtime.config;
  return JobManager(o);
}

Duration duration_arg(const std::string& text, const char* option) {
  auto d = parse_duration(text);
  if (!d)
    throw Error(code::kBadArgument, std::string("bad ") + option + " '" + text + "'",
                "write a duration such as '250ms', '90s', '5m', '1h' or whole seconds");
  return *d;
}

// A byte offset: digits only (CLI11 would wrap "-1" to the largest offset).
std::uint64_t offset_arg(const std::string& text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || text[0] < '0' || text[0] > '9' || ec != std::errc() ||
      end != text.data() + text.size())
    throw Error(code::kBadArgument, "bad --since '" + text + "'",
                "write a byte offset: 0, or the next offset an earlier call gave");
  return value;
}

JobSpec spec_of(const JobArgs& a) {
  RunInput in;
  in.policy = a.policy;
  in.backend = a.backend;
  in.workspace = a.workspace;
  in.command = a.command;
  in.request = a.request;
  in.timeout = a.timeout;
  in.argv = a.argv;
  in.job = true;
  return job_spec(build_invocation(in));
}

void add_common(CLI::App* v, JobArgs& a) {
  v->add_option("--state-dir", a.state_dir,
                "job state directory (default: $XDG_STATE_HOME/cordon/jobs, else "
                "~/.local/state/cordon/jobs; /var/lib/cordon/jobs for root without HOME)");
}

CLI::App* add_id_verb(CLI::App* job, const char* name, const char* help, JobArgs& a) {
  auto* v = job->add_subcommand(name, help);
  v->add_option("ID", a.id, "the job id")->required();
  add_common(v, a);
  return v;
}

void register_start(CLI::App* job, const std::shared_ptr<JobArgs>& a) {
  auto* s = job->add_subcommand("start", "start a command in the background; print its id");
  s->add_option("--policy", a->policy, "policy file or preset name (default: standard)");
  s->add_option("--backend", a->backend, "run on this backend, or refuse");
  s->add_option("--workspace", a->workspace, "the command's working directory");
  s->add_option("--command", a->command, "one command string instead of PROGRAM ARGS");
  s->add_option("--request", a->request, "a JSON request FILE ('-': stdin)");
  s->add_option("--timeout", a->timeout,
                "stop the job after this long, e.g. 90s, 1h (at most limits.job_lifetime)");
  s->add_flag("--json", a->json, "print the job as JSON");
  add_common(s, *a);
  add_runtime_options(s, a->runtime);
  s->add_option("PROGRAM", a->argv, "the program and its arguments, after --");
  s->callback([a] {
    run_verb(kJobError, [&] {
      auto m = manager_of(*a);
      print_job(m.start(spec_of(*a)), a->json, true);
      return 0;
    });
  });
}

void print_output(const JobArgs& a) {
  std::optional<std::uint64_t> since;
  if (a.since) since = offset_arg(*a.since);
  auto m = manager_of(a);
  // The state before the output: once it says the job has ended, the output read after it is
  // all the job wrote.
  std::optional<JobInfo> info;
  if (a.json) info = m.status(a.id);
  JobOutput out = since ? m.output_since(a.id, *since) : m.output_tail(a.id, a.tail);
  if (info) {
    std::cout << boost::json::serialize(output_json(*info, out)) << "\n";
    return;
  }
  if (!a.raw && is_terminal(1)) {
    TerminalText shown;
    std::cout << shown.filter(out.text) << shown.finish();
  } else {
    std::cout << out.text;
  }
  if (a.since) std::cerr << "cordon: next offset " << out.next_offset << "\n";
}

void register_inspect(CLI::App* job, const std::shared_ptr<JobArgs>& a) {
  auto* out = add_id_verb(job, "output", "print the newest output of a job", *a);
  auto* tail = out->add_option("--tail", a->tail, "how many lines (default 200)");
  out->add_option("--since", a->since,
                  "everything from this byte offset of the job's output on (0: from the start; "
                  "else the next offset an earlier call gave), at most 1 MiB per call")
      ->excludes(tail);
  out->add_flag("--json", a->json,
                "print the job's state and exit status, the output and its next offset as JSON");
  out->add_flag("--raw", a->raw,
                "on a terminal too, print the output's escape sequences unchanged");
  out->callback([a] { run_verb(kJobError, [&] { return print_output(*a), 0; }); });
  auto* st = add_id_verb(job, "status", "print a job's state", *a);
  st->add_flag("--json", a->json, "print JSON");
  st->callback([a] {
    run_verb(kJobError, [&] { return print_job(manager_of(*a).status(a->id), a->json), 0; });
  });
  auto* w = add_id_verb(job, "wait", "wait for a job to end; exit with its status", *a);
  w->add_option("--timeout", a->timeout, "give up after this long (exit 124)");
  w->add_flag("--json", a->json, "print JSON");
  w->callback([a] {
    run_verb(kJobError, [&] {
      std::optional<Duration> t;
      if (a->timeout) t = duration_arg(*a->timeout, "--timeout");
      auto info = manager_of(*a).wait(a->id, t);
      print_job(info, a->json);
      return job_exit_status(info);
    });
  });
}

void register_control(CLI::App* job, const std::shared_ptr<JobArgs>& a) {
  auto* stop = add_id_verb(job, "stop", "SIGTERM the whole job, SIGKILL after the grace", *a);
  stop->add_option("--grace", a->grace, "time between SIGTERM and SIGKILL (default 5s)");
  stop->add_flag("--json", a->json, "print JSON");
  // A lost job's backend collects what it left: its plugin is found where this command says,
  // never where the job's records say.
  add_runtime_options(stop, a->runtime);
  stop->callback([a] {
    run_verb(kJobError, [&] {
      auto m = manager_of(*a);
      print_job(m.stop(a->id, duration_arg(a->grace, "--grace")), a->json);
      return 0;
    });
  });
  auto* list = job->add_subcommand("list", "list running (and lost) jobs; --all for every job");
  list->add_flag("--all", a->all, "include ended jobs");
  list->add_flag("--json", a->json, "print JSON");
  add_common(list, *a);
  list->callback([a] {
    run_verb(kJobError, [&] {
      std::vector<std::string> unreadable;
      print_jobs(manager_of(*a).list(a->all, &unreadable), a->json);
      for (const auto& line : unreadable) std::cerr << "warning: not listed: " << line << "\n";
      return 0;
    });
  });
  auto* rm = add_id_verb(job, "remove", "delete the record of an ended job", *a);
  add_runtime_options(rm, a->runtime);
  rm->callback([a] { run_verb(kJobError, [&] { return manager_of(*a).remove(a->id), 0; }); });
  auto* gc = job->add_subcommand("gc", "delete the records of every ended job");
  add_common(gc, *a);
  add_runtime_options(gc, a->runtime);
  gc->callback([a] {
    run_verb(kJobError, [&] {
      std::vector<std::string> kept;
      std::cout << "removed " << manager_of(*a).gc(&kept) << " ended job(s)\n";
      for (const auto& line : kept) std::cerr << "warning: kept " << line << "\n";
      return 0;
    });
  });
  auto* sup = job->add_subcommand("supervise", "");  // internal: the job's own supervisor
  sup->group("");
  sup->add_option("DIR", a->id, "the job's directory")->required();
  sup->callback([a] { set_exit_status(supervise_job(a->id)); });
}

}  // namespace

void register_job(CLI::App& app) {
  auto* job = app.add_subcommand("job", "background jobs: start, output, status, wait, stop, list");
  job->require_subcommand(1);
  auto a = std::make_shared<JobArgs>();
  register_start(job, a);
  register_inspect(job, a);
  register_control(job, a);
}

}  // namespace cordon::cli
