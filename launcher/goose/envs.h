// Which of a Goose extension's `envs` are secrets. Goose's `envs` mix configuration
// (LOG_LEVEL: debug, FEATURE_FLAG: "true", MEMORY_FILE_PATH) with credentials; only the
// credentials may become gander secrets (redacted from the extension's output, never logged):
// a plain value redacted turns "debugging" into "[gander:redacted:LOG_LEVEL]ging". Pure.
#pragma once

#include <string>
#include <string_view>

namespace gander::launcher::goose {

// A secret by its name: a word of it (split at `_`, `-`, `.`) is TOKEN, KEY, SECRET, PASSWORD,
// PASSWD, PASS, PWD, PAT, CREDENTIAL(S), AUTH, APIKEY, COOKIE, SESSION, BEARER, JWT, PRIVATE,
// or it contains TOKEN, SECRET, PASSWORD, CREDENTIAL or APIKEY (ACCESSTOKEN). Case-insensitive;
// PATH, KEYBOARD_LAYOUT and AUTHOR are not secrets.
bool IsSecretName(std::string_view name);

// A secret by its value: a known token prefix (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_, sk-,
// sk_live_, xoxb-, xoxp-, xoxa-, xoxs-, AKIA, ASIA, glpat-, AIza, npm_, hf_, eyJ (a JWT)), or a
// long high-entropy string: 20+ characters without spaces or '/', letters and digits mixed,
// at least 3.5 bits of entropy per character.
bool IsSecretValue(std::string_view value);

inline bool IsSecretEnv(std::string_view name, std::string_view value) {
  return IsSecretName(name) || IsSecretValue(value);
}

}  // namespace gander::launcher::goose
