// A program to exec in a child forked from a threaded gander (the DNS resolver's and the
// secret refresh's threads may hold malloc's or any library's lock at fork time; the child
// has only the forking thread, so a lock held elsewhere is never released in it). Everything
// that allocates is done here, before fork(): the argv and envp vectors and the search of
// argv[0] through PATH. After fork, Exec() calls only execve (async-signal-safe).
#pragma once

#include <string>
#include <vector>

namespace gander::sandbox {

class ExecSpec {
 public:
  // `argv` with the process's environment as it is now.
  explicit ExecSpec(std::vector<std::string> argv);
  ExecSpec(std::vector<std::string> argv, std::vector<std::string> env);
  ExecSpec(const ExecSpec&) = delete;
  ExecSpec& operator=(const ExecSpec&) = delete;

  // In the child: execve of the program. Returns only when that failed, with its errno
  // (ENOENT: no such program on PATH). Allocates nothing.
  int Exec() const noexcept;
  // The file Exec runs: argv[0] when it has a '/', else the first executable one on PATH
  // (argv[0] itself when there is none, so that execve fails with ENOENT).
  const std::string& path() const { return path_; }

 private:
  void Prepare();
  std::vector<std::string> argv_, env_;
  std::vector<char*> argv_ptrs_, env_ptrs_;
  std::string path_;
};

}  // namespace gander::sandbox
