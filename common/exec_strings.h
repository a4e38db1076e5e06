// The argv or envp of an exec: the strings and the NULL-terminated array of pointers into
// them that execve, execv and posix_spawn take, built together. Build it before fork where the
// caller forks: the child then only reads it (no allocation after fork).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gander {

class ExecStrings {
 public:
  explicit ExecStrings(std::vector<std::string> strings);
  // "NAME=value" for each entry, in the map's order.
  static ExecStrings Environment(const std::map<std::string, std::string>& env);

  // Moving keeps the pointers valid (the strings stay where they are); a copy would not.
  ExecStrings(ExecStrings&&) = default;
  ExecStrings& operator=(ExecStrings&&) = default;
  ExecStrings(const ExecStrings&) = delete;
  ExecStrings& operator=(const ExecStrings&) = delete;

  // The NULL-terminated array, valid while this object lives.
  char* const* get() const { return ptrs_.data(); }
  // The first string (argv[0]: the program), nullptr when there is none.
  const char* front() const { return ptrs_.front(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> ptrs_;
};

}  // namespace gander
