#include "launcher/goose/envs.h"

#include <array>
#include <cctype>
#include <cmath>
#include <string>

namespace gander::launcher::goose {
namespace {

std::string Upper(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

double BitsPerChar(std::string_view s) {
  std::array<int, 256> count{};
  for (char c : s) ++count[static_cast<unsigned char>(c)];
  double bits = 0;
  for (int n : count) {
    if (n == 0) continue;
    double p = static_cast<double>(n) / static_cast<double>(s.size());
    bits -= p * std::log2(p);
  }
  return bits;
}

}  // namespace

bool IsSecretName(std::string_view name) {
  static constexpr std::string_view kWords[] = {
      "TOKEN",  "KEY", "SECRET",  "PASSWORD",   "PASSWD",      "PASS",
      "PWD",    "PAT", "AUTH",    "APIKEY",     "COOKIE",      "SESSION",
      "BEARER", "JWT", "PRIVATE", "CREDENTIAL", "CREDENTIALS", "CREDS"};
  static constexpr std::string_view kInside[] = {"TOKEN", "SECRET", "PASSWORD", "CREDENTIAL",
                                                 "APIKEY"};
  const std::string upper = Upper(name);
  for (std::string_view part : kInside) {
    if (upper.find(part) != std::string::npos) return true;
  }
  size_t i = 0;
  while (i <= upper.size()) {
    size_t j = upper.find_first_of("_-.", i);
    if (j == std::string::npos) j = upper.size();
    std::string_view word = std::string_view(upper).substr(i, j - i);
    for (std::string_view w : kWords) {
      if (word == w) return true;
    }
    i = j + 1;
  }
  return false;
}

bool IsSecretValue(std::string_view value) {
  static constexpr std::string_view kPrefixes[] = {
      "ghp_",     "gho_",  "ghs_",  "ghu_",  "ghr_",  "github_pat_", "sk-",
      "sk_live_", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "AKIA",        "ASIA",
      "glpat-",   "AIza",  "npm_",  "hf_",   "eyJ"};
  for (std::string_view prefix : kPrefixes) {
    if (value.size() >= prefix.size() + 8 && value.starts_with(prefix)) return true;
  }
  if (value.size() < 20) return false;
  bool letter = false, digit = false;
  for (char c : value) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '/') return false;
    letter |= std::isalpha(static_cast<unsigned char>(c)) != 0;
    digit |= std::isdigit(static_cast<unsigned char>(c)) != 0;
  }
  return letter && digit && BitsPerChar(value) >= 3.5;
}

}  // namespace gander::launcher::goose
