// The tool-poisoning detector: does a text the server hands to the model (a tool's
// description, a parameter's, a prompt's, the server's `instructions`) try to instruct the
// model beyond describing the tool? Hidden instructions ("ignore previous instructions"),
// concealment ("do not tell the user"), <IMPORTANT>-style tags, references to secret files
// (~/.ssh, ~/.aws/credentials, Goose's secrets.yaml), references to other tools' data or the
// conversation, and invisible Unicode (zero-width, bidi controls, tag characters). A pure
// function: same text, same hits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vet/finding.h"

namespace gander::vet {

struct DescriptionHit {
  Severity severity = Severity::kInfo;
  std::string rule;     // what kind of instruction: "hidden instruction", "secret file", ...
  std::string excerpt;  // the text around the match, invisible characters shown as \u{...}
};

// One hit per rule that matches (its first match), strongest first. `other_tools`: the names
// of the server's other tools; naming one is reported at `info` (legitimate descriptions say
// "call list_directory first"; together with other hits it shows what the text reaches for).
std::vector<DescriptionHit> CheckDescription(std::string_view text,
                                             const std::vector<std::string>& other_tools = {});

// The text with invisible and control characters written as \u{XXXX} (for excerpts).
std::string ShowInvisible(std::string_view text);

}  // namespace gander::vet
