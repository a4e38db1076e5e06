#!/usr/bin/env python3
"""Checks that the dashboards and rules only use metrics and labels the collector exposes.

Reads a /metrics dump (Prometheus text format; default dashboards/golden/metrics.txt), then
every PromQL expression of the Grafana dashboards (panel targets, template variable queries)
and of the Prometheus rule files, and reports, with the file and the place:

  - a gander_* metric name that is not in the dump;
  - a label matcher whose label the metric does not have;
  - a literal label value (=, !=, or a regex that is a plain alternation such as
    "denied|would_deny") that no series of that metric in the dump carries;
  - a by / without / on / ignoring label that no metric of the expression has;
  - a recording rule name used but not defined.

Recording rules count as metrics, with the labels their outermost aggregation keeps. Labels
added by the scrape (job, instance) and Prometheus's own series (up, ALERTS) are allowed.
With --promtool, every dashboard expression is also parsed by `promtool check rules`
(Grafana's $__range and $__rate_interval replaced by durations).

Needs PyYAML (Debian python3-yaml) for the rule files; exits 77 (ctest's skip code) with the
reason when it is missing. Exit 1 on any finding, 0 when clean.
"""
import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SKIP = 77

# Labels the scrape adds to every series; not in a /metrics dump.
TARGET_LABELS = {"job", "instance"}
# Series Prometheus makes itself, and their labels.
BUILTIN_SERIES = {
    "up": set(),
    "ALERTS": {"alertname", "alertstate", "severity"},
    "ALERTS_FOR_STATE": {"alertname", "severity"},
}
# Label values the collector produces that a dump need not show: a live dump from a host where
# nothing ever ran in monitor or learn mode has no mode="monitor" series, and that is not drift.
# A value used here but absent from the dump is a note; any other absent value a finding.
PRODUCED_VALUES = {
    "mode": {"enforce", "monitor", "learn"},
}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
            "or", "unless", "offset", "atan2", "inf", "nan", "start", "end"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<number>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:ms|s|m|h|d|w|y)?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=,(){}@])
  | (?P<var>\$\{?[A-Za-z0-9_:]+\}?)
""", re.X)


class Finding(Exception):
    pass


def tokenize(expr):
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise Finding(f"cannot parse PromQL at {expr[pos:pos + 20]!r}")
        pos = m.end()
        if m.lastgroup not in ("ws", "comment"):
            out.append((m.lastgroup, m.group()))
    return out


def unquote(s):
    if s[0] == "`":
        return s[1:-1]
    return json.loads('"' + s[1:-1].replace("\\'", "'") + '"') if s[0] == "'" else json.loads(s)


class Expr:
    """What one PromQL expression uses: selectors, grouping labels, the outer aggregation."""

    def __init__(self, text):
        self.selectors = []  # (name or None, [(label, op, value)])
        self.grouping = []   # label names in by/without/on/ignoring/group_x lists
        self.outer = None    # (function name, 'by'|'without'|None, [labels]) when it starts so
        toks = tokenize(text)
        i = 0
        while i < len(toks):
            kind, val = toks[i]
            nxt = toks[i + 1] if i + 1 < len(toks) else (None, None)
            if kind == "ident" and val in GROUPING:
                if nxt[1] == "(":
                    j = i + 2
                    labels = []
                    while toks[j][1] != ")":
                        if toks[j][0] == "ident":
                            labels.append(toks[j][1])
                        j += 1
                    self.grouping += [(val, l) for l in labels]
                    if i <= 1 and toks and toks[0][1] in AGGREGATIONS and self.outer is None:
                        self.outer = (toks[0][1], val, labels)
                    i = j + 1
                    continue
                i += 1
                continue
            if kind == "ident" and val not in KEYWORDS and (
                    nxt[1] == "(" or (val in AGGREGATIONS and nxt[1] in ("by", "without"))):
                i += 1  # a function or aggregation call
                continue
            if kind == "ident" and val not in KEYWORDS:
                matchers, i = self._matchers(toks, i + 1) if nxt[1] == "{" else ([], i + 1)
                self.selectors.append((val, matchers))
                continue
            if kind == "op" and val == "{":
                matchers, i = self._matchers(toks, i)
                name = next((v for l, o, v in matchers if l == "__name__" and o == "="), None)
                self.selectors.append((name, [m for m in matchers if m[0] != "__name__"]))
                continue
            i += 1
        if self.outer is None and toks and toks[0][1] in AGGREGATIONS:
            # `sum(...) by (x)` form: the grouping follows the closing parenthesis.
            depth, j = 0, 1
            while j < len(toks):
                depth += toks[j][1] == "("
                depth -= toks[j][1] == ")"
                j += 1
                if depth == 0:
                    break
            if j < len(toks) and toks[j][1] in ("by", "without"):
                k, labels = j + 2, []
                while k < len(toks) and toks[k][1] != ")":
                    if toks[k][0] == "ident":
                        labels.append(toks[k][1])
                    k += 1
                self.outer = (toks[0][1], toks[j][1], labels)
            else:
                self.outer = (toks[0][1], None, [])
        elif self.outer is None and toks:
            self.outer = (toks[0][1], None, [])

    @staticmethod
    def _matchers(toks, i):
        assert toks[i][1] == "{"
        i += 1
        out = []
        while toks[i][1] != "}":
            if toks[i][1] == ",":
                i += 1
                continue
            label, op, value = toks[i][1], toks[i + 1][1], toks[i + 2]
            if value[0] != "string":
                raise Finding(f"label {label}: expected a quoted value, got {value[1]!r}")
            out.append((label, op, unquote(value[1])))
            i += 3
        return out, i + 1


def load_dump(path):
    """metric name -> {label -> set of values} from the samples of a text-format dump."""
    metrics = {}
    sample = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+\S+(?:\s+\S+)?$')
    label = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*')
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = sample.match(line)
        if not m:
            raise SystemExit(f"{path}:{n}: not a sample line: {line!r}")
        labels = metrics.setdefault(m.group(1), {})
        for k, v in label.findall(m.group(2) or ""):
            labels.setdefault(k, set()).add(json.loads('"' + v + '"'))
    return metrics


def literal_alternatives(regex):
    return regex.split("|") if re.fullmatch(r"[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*", regex) else None


class Checker:
    def __init__(self, metrics):
        self.metrics = metrics  # name -> {label -> values}; recording rules added as met
        self.findings = []
        self.notes = set()
        self.used = set()

    def labels_of(self, name):
        if name in BUILTIN_SERIES:
            return {l: None for l in BUILTIN_SERIES[name]}
        return self.metrics.get(name)

    def check(self, where, text, defines=None):
        try:
            e = Expr(text)
        except Finding as f:
            self.findings.append(f"{where}: {f}")
            return
        known = set(TARGET_LABELS)
        for name, matchers in e.selectors:
            if name is None:
                self.findings.append(f"{where}: selector without a metric name")
                continue
            self.used.add(name)
            labels = self.labels_of(name)
            if labels is None:
                if name.startswith("gander_") or ":" in name:
                    self.findings.append(f"{where}: metric {name} is not in the dump"
                                         " nor a recording rule")
                else:
                    self.findings.append(f"{where}: metric {name} is not a gander metric,"
                                         " a recording rule or a Prometheus series")
                continue
            known |= set(labels)
            for label, op, value in matchers:
                if label in TARGET_LABELS:
                    continue
                if label not in labels:
                    self.findings.append(f"{where}: {name} has no label {label!r}")
                    continue
                values = labels[label]
                if values is None or "$" in value or value == "":
                    continue
                wanted = [value] if op in ("=", "!=") else literal_alternatives(value) or []
                for v in wanted:
                    if v not in values and v in PRODUCED_VALUES.get(label, ()):
                        self.notes.add(f"{name}{{{label}=\"{v}\"}} is used but not in this dump"
                                       " (a value the collector produces)")
                    elif v not in values:
                        self.findings.append(
                            f"{where}: {name}{{{label}{op}\"{value}\"}}: no series has "
                            f"{label}=\"{v}\" (dump has: {', '.join(sorted(values))})")
        for kind, label in e.grouping:
            if label not in known and label != "le":
                self.findings.append(f"{where}: {kind} ({label}): no metric of the expression"
                                     f" has label {label!r}")
        if defines:
            # A recording rule: its labels are what the outer aggregation keeps.
            source = {}
            for name, _ in e.selectors:
                for l, vals in (self.labels_of(name) or {}).items():
                    source.setdefault(l, set()).update(vals or ())
            for l in TARGET_LABELS:
                source.setdefault(l, set())
            func, mode, labels = e.outer or (None, None, [])
            if mode == "by":
                out = {l: source.get(l, set()) for l in labels}
            elif mode == "without":
                out = {l: v for l, v in source.items() if l not in labels}
            else:
                out = dict(source)
            if func == "histogram_quantile":
                out.pop("le", None)
            self.metrics[defines] = out


def rule_files(dirs):
    for d in dirs:
        yield from sorted(p for p in d.glob("*.rules.yml"))


def check_rules(checker, paths, yaml):
    exprs = []
    docs = [(p, yaml.safe_load(p.read_text())) for p in paths]
    # Recording rules first (in file order), so alerts and dashboards can use them.
    for p, doc in docs:
        for g in doc.get("groups", []):
            for r in g.get("rules", []):
                if "record" in r:
                    checker.check(f"{p.name}: record {r['record']}", r["expr"], r["record"])
    for p, doc in docs:
        for g in doc.get("groups", []):
            for r in g.get("rules", []):
                if "alert" in r:
                    checker.check(f"{p.name}: alert {r['alert']}", r["expr"])
    return exprs


def dashboard_exprs(path):
    """(where, expr) for every panel target and query variable of a dashboard."""
    d = json.loads(path.read_text())
    out = []

    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(d.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                out.append((f"{path.name}: panel {p.get('title')!r} {t.get('refId')}", t["expr"]))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)\s*", q or "")
            if m:
                # label_values(selector, label): the label must be one the selector's metric has.
                out.append((f"{path.name}: variable {v['name']}",
                            f"group by ({m.group(2)}) ({m.group(1)})"))
            elif q:
                out.append((f"{path.name}: variable {v['name']}", q))
    return out


def grafana_to_promql(expr):
    return expr.replace("$__rate_interval", "5m").replace("$__range", "1h") \
        .replace("$__interval", "1m")


def promtool_parse(promtool, exprs, findings):
    """Parses dashboard expressions with promtool by wrapping them as recording rules."""
    rules = [{"record": f"gander_dashboard_expr_{i}", "expr": grafana_to_promql(e)}
             for i, (_, e) in enumerate(exprs)]
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        json.dump({"groups": [{"name": "dashboards", "rules": rules}]}, f)  # JSON is YAML
        f.flush()
        r = subprocess.run([promtool, "check", "rules", f.name], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        found = False
        for line in r.stdout.splitlines():
            m = re.search(r"group \"dashboards\", rule (\d+)", line)
            if m:
                found = True
                findings.append(f"{exprs[int(m.group(1)) - 1][0]}: promtool: {line.strip()}")
        if not found:
            findings.append("dashboards: promtool check rules failed: " + r.stdout.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", type=pathlib.Path, default=HERE / "golden" / "metrics.txt",
                    help="a /metrics dump in Prometheus text format")
    ap.add_argument("--rules", type=pathlib.Path, nargs="*",
                    default=sorted((HERE / "prometheus").glob("*.rules.yml")))
    ap.add_argument("--dashboards", type=pathlib.Path, nargs="*",
                    default=sorted((HERE / "grafana").glob("*.json")))
    ap.add_argument("--promtool", nargs="?", const="promtool", default=None,
                    help="also parse every dashboard expression with promtool")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="list every expression checked, and dump metrics nothing uses")
    args = ap.parse_args()
    try:
        import yaml
    except ImportError:
        print("check-drift: SKIP: PyYAML is missing (Debian: apt-get install python3-yaml)")
        return SKIP

    checker = Checker(load_dump(args.dump))
    dumped = set(checker.metrics)
    check_rules(checker, args.rules, yaml)
    exprs = [x for p in args.dashboards for x in dashboard_exprs(p)]
    for where, e in exprs:
        if args.verbose:
            print(f"{where}: {e}")
        checker.check(where, grafana_to_promql(e))
    if args.promtool:
        tool = shutil.which(args.promtool)
        if not tool:
            print(f"check-drift: SKIP: {args.promtool} not found")
            return SKIP
        promtool_parse(tool, exprs, checker.findings)

    unused = sorted(m for m in dumped - checker.used
                    if not re.search(r"_(sum|count)$", m))
    for m in unused:
        print(f"check-drift: note: {m} is in the dump but no dashboard or rule uses it")
    for n in sorted(checker.notes):
        print(f"check-drift: note: {n}")
    for f in checker.findings:
        print(f"check-drift: {f}")
    print(f"check-drift: {len(exprs)} dashboard expressions, {len(args.rules)} rule files "
          f"against {args.dump}: {len(checker.findings)} finding(s)")
    return 1 if checker.findings else 0


if __name__ == "__main__":
    sys.exit(main())
