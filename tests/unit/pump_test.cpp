// The backend toolkit's pump (cordon/sdk/pump.hpp): streams, stdin, watches, the deadline, the
// stop token, sources without a descriptor, and a callback's error — each both ways.
#include <catch2/catch.hpp>
#include <cordon/sdk/pump.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "runtime_test_support.hpp"

using namespace cordon;
using namespace std::chrono_literals;
using cordon::test::Collect;

namespace {

struct PipePair {
  int r = -1, w = -1;
  PipePair() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    r = fds[0];
    w = fds[1];
  }
  ~PipePair() {
    close_read();
    close_write();
  }
  void close_read() {
    if (r >= 0) ::close(r);
    r = -1;
  }
  void close_write() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

void put(int fd, std::string_view text) {
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

}  // namespace

TEST_CASE("the pump streams both outputs to their end", "[pump]") {
  PipePair out, err;
  put(out.w, "to stdout");
  put(err.w, "to stderr");
  out.close_write();
  err.close_write();
  Collect sink;
  sdk::Pump pump(sink);
  pump.output(Stream::out, out.r);
  pump.output(Stream::err, err.r);
  bool killed = false;
  sdk::PumpControl control;
  control.kill = [&] { killed = true; };
  auto end = pump.run(control);
  CHECK(sink.out == "to stdout");
  CHECK(sink.err == "to stderr");
  CHECK_FALSE(end.killed);
  CHECK_FALSE(killed);
}

TEST_CASE("the pump feeds stdin, then EOF, and survives a reader that left", "[pump]") {
  PipePair in;
  Collect sink;
  {
    // The command is `cat`: its output is what it read, and it ends at its stdin's EOF.
    sdk::Source cat{in.r, [&](std::string& into) {
                      char buf[64];
                      ssize_t got = ::read(in.r, buf, sizeof buf);
                      if (got <= 0) return sdk::IoStatus::end;
                      into.append(buf, static_cast<std::size_t>(got));
                      return sdk::IoStatus::more;
                    }};
    sdk::Pump pump(sink);
    pump.output(Stream::out, cat);
    pump.input(std::exchange(in.w, -1), "line one\nline two\n");
    pump.run({});
  }
  CHECK(sink.out == "line one\nline two\n");  // all of it, then EOF: the pump closed it

  PipePair gone;
  gone.close_read();
  sdk::Pump pump(sink);
  pump.input(std::exchange(gone.w, -1), std::string(1 << 20, 'x'));
  auto end = pump.run({});  // EPIPE, not SIGPIPE: the test process lives on
  CHECK_FALSE(end.killed);
}

TEST_CASE("the deadline kills the run, and only once it has passed", "[pump]") {
  PipePair out;
  Collect sink;
  int kills = 0;
  sdk::PumpControl control;
  control.kill = [&] {
    ++kills;
    out.close_write();  // what killing the command does to its pipe
  };
  sdk::Pump pump(sink);
  pump.output(Stream::out, out.r);
  auto start = std::chrono::steady_clock::now();  // before the deadline: never after it
  control.deadline = start + 100ms;
  auto end = pump.run(control);
  CHECK(end.timed_out);
  CHECK(end.killed);
  CHECK(kills == 1);
  CHECK(std::chrono::steady_clock::now() - start >= 100ms);

  PipePair quick;
  put(quick.w, "done");
  quick.close_write();
  sdk::Pump in_time(sink);
  in_time.output(Stream::out, quick.r);
  control.kill = [&] { ++kills; };
  control.deadline = std::chrono::steady_clock::now() + 10s;
  auto ok = in_time.run(control);
  CHECK_FALSE(ok.timed_out);
  CHECK(kills == 1);
}

TEST_CASE("stop requests terminate, then kill, and one made before the loop is not lost",
          "[pump]") {
  PipePair out;
  Collect sink;
  auto stop = std::make_shared<StopToken>();
  bool terminated = false, killed = false;
  sdk::PumpControl control;
  control.stop = stop;
  control.terminate = [&] { terminated = true; };
  control.kill = [&] {
    killed = true;
    out.close_write();
  };
  stop->request(StopToken::Level::terminate);  // before run()
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    stop->request(StopToken::Level::kill);
  });
  sdk::Pump pump(sink);
  pump.output(Stream::out, out.r);
  auto end = pump.run(control);
  later.join();
  CHECK(terminated);
  CHECK(killed);
  CHECK(end.stopped);
  CHECK(end.terminated);
  CHECK_FALSE(end.timed_out);
}

TEST_CASE("a source without a descriptor is read on the tick, and a drain gets EOF", "[pump]") {
  Collect sink;
  int calls = 0;
  std::string sent;
  bool eof = false;
  sdk::Source source;
  source.read = [&](std::string& into) {
    ++calls;
    if (!eof) return sdk::IoStatus::more;  // the remote command answers once its stdin ends
    into += "remote bytes";
    return sdk::IoStatus::end;
  };
  sdk::Drain drain;
  drain.write = [&](std::string_view data, std::size_t& taken) {
    if (data.empty()) eof = true;
    taken = std::min<std::size_t>(data.size(), 4);  // a slow channel
    sent.append(data.substr(0, taken));
    return sdk::IoStatus::more;
  };
  sdk::Pump pump(sink);
  pump.output(Stream::out, source);
  pump.input(drain, "stdin over the wire");
  sdk::PumpControl control;
  control.tick = 1ms;
  pump.run(control);
  CHECK(sink.out == "remote bytes");
  CHECK(calls >= 5);  // 19 bytes, 4 at a time, then EOF
  CHECK(sent == "stdin over the wire");
  CHECK(eof);
}

TEST_CASE("watches keep the loop running until they finish, and finish() kills", "[pump]") {
  PipePair event, out;
  Collect sink;
  int kills = 0;
  sdk::PumpControl control;
  control.kill = [&] {
    ++kills;
    out.close_write();
  };
  sdk::Pump pump(sink);
  pump.output(Stream::out, out.r);
  pump.watch(event.r, [&] {
    pump.finish();  // e.g. the command's process exited: end what it left behind
    return false;
  });
  std::thread later([&] {
    std::this_thread::sleep_for(50ms);
    put(event.w, "x");
  });
  auto end = pump.run(control);
  later.join();
  CHECK(kills == 1);
  CHECK(end.killed);
  CHECK_FALSE(end.timed_out);
}

TEST_CASE("linger bounds the wait for a stream held open after the last watch", "[pump]") {
  PipePair held, event;
  put(event.w, "x");
  Collect sink;
  sdk::Pump pump(sink);
  pump.output(Stream::out, held.r);  // never closed: a grandchild keeps it
  pump.watch(event.r, [] { return false; });
  sdk::PumpControl control;
  control.linger = 50ms;
  auto start = std::chrono::steady_clock::now();
  pump.run(control);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("a callback's cordon::Error ends the run: kill, then rethrown", "[pump]") {
  Collect sink;
  bool killed = false;
  sdk::Source broken;
  broken.read = [](std::string&) -> sdk::IoStatus {
    throw Error(code::kBackendFault, "channel lost");
  };
  sdk::Pump pump(sink);
  pump.output(Stream::out, broken);
  sdk::PumpControl control;
  control.kill = [&] { killed = true; };
  control.tick = 1ms;
  CHECK_THROWS_AS(pump.run(control), Error);
  CHECK(killed);
}
