#include "launcher/cli_words.h"

#include <algorithm>

namespace gander::launcher {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours (stauts -> status) count one each.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names = {"--help"};
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

const CLI::App* Subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

std::string HelpPointer(const std::string& path) { return "; see `" + path + " --help`"; }

std::string Unknown(const char* what, const std::string& word, const std::string& path,
                    const std::vector<std::string>& known) {
  std::string message = "gander: unknown " + std::string(what) + " '" + word + "'";
  if (path != "gander") message += " for `" + path + "`";
  if (auto close = ClosestWord(word, known)) message += " (did you mean '" + *close + "'?)";
  return message + HelpPointer(path);
}

}  // namespace

std::optional<std::string> ClosestWord(const std::string& word,
                                       const std::vector<std::string>& known) {
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (const std::string& k : known) {
    size_t d = EditDistance(word, k);
    if (d < best_distance && d * 2 < std::max<size_t>(word.size(), 2)) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

std::optional<std::string> CheckWords(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cur = &app;
  std::string path = "gander";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--" || cur->get_prefix_command()) return std::nullopt;
    if (w.size() > 1 && w[0] == '-') {
      std::string name = w.substr(0, w.find('='));
      if (name == "-h" || name == "--help") continue;
      const CLI::Option* opt = cur->get_option_no_throw(name);
      if (opt == nullptr) return Unknown("option", name, path, OptionNames(*cur));
      if (opt->get_type_size_max() > 0 && name.size() == w.size()) ++i;  // its value
      continue;
    }
    if (const CLI::App* sub = Subcommand(*cur, w)) {
      cur = sub;
      path += " " + w;
      continue;
    }
    if (cur->get_require_subcommand_min() > 0) {
      return Unknown("command", w, path, SubcommandNames(*cur));
    }
    if (cur->get_positionals_at_end()) return std::nullopt;  // the extension's command
  }
  return std::nullopt;
}

const CLI::App* FindCommand(const CLI::App& app, const std::vector<std::string>& path,
                            std::string& error) {
  const CLI::App* cur = &app;
  std::string where = "gander";
  for (const std::string& w : path) {
    const CLI::App* sub = Subcommand(*cur, w);
    if (sub == nullptr) {
      error = Unknown("command", w, where, SubcommandNames(*cur));
      return nullptr;
    }
    cur = sub;
    where += " " + w;
  }
  return cur;
}

}  // namespace gander::launcher
