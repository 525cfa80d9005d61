// A real redis-server for the tests, started on a free loopback port
// (tests skip, visibly, where none is installed), and the socket helpers it
// needs. Shared by the cache tests and the tuning tests.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace kiln::testing {

/// A free loopback port (bound, then released).
inline uint16_t free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

inline bool can_connect(uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

inline std::string redis_server_path() {
  for (const char *p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
    if (::access(p, X_OK) == 0)
      return p;
  return "";
}

/// A real redis-server on a free loopback port, for the test's lifetime.
struct RedisServer {
  pid_t pid = -1;
  uint16_t port = 0;
  bool running() const { return pid > 0; }
  /// On `on_port`, or a free port when 0.
  explicit RedisServer(uint16_t on_port = 0) {
    const std::string exe = redis_server_path();
    if (exe.empty())
      return;
    port = on_port ? on_port : free_port();
    const std::string p = std::to_string(port);
    std::vector<std::string> args = {
        exe,  "--port",      p,    "--bind",     "127.0.0.1", "--save", "", "--appendonly",
        "no", "--daemonize", "no", "--loglevel", "warning"};
    std::vector<char *> argv;
    for (auto &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    // Its start-up banner and warnings would bury the test's own output.
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    const int err = ::posix_spawn(&pid, exe.c_str(), &quiet, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&quiet);
    if (err != 0) {
      pid = -1;
      return;
    }
    for (int i = 0; i < 500 && !can_connect(port); ++i) // a deadlock guard, not a timing check
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  void stop() {
    if (pid <= 0)
      return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~RedisServer() { stop(); }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port); }
  /// What redis-cli prints for `command` against this server ("" without redis-cli).
  std::string cli(const std::string &command) const {
    if (::access("/usr/bin/redis-cli", X_OK) != 0)
      return "";
    FILE *p =
        ::popen(("/usr/bin/redis-cli -p " + std::to_string(port) + " " + command).c_str(), "r");
    if (!p)
      return "";
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, p))
      out.append(buf, n);
    ::pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
      out.pop_back();
    return out;
  }
};

} // namespace kiln::testing
