#!/usr/bin/env python3
"""Writes gander's Grafana dashboards (gander-overview.json, gander-extension.json).

The JSON files are committed and importable as they are; this script is their source, so
that every panel shares one datasource, one selector and one layout. Edit here, run
`python3 dashboards/grafana/generate.py`, commit both. `--check` exits 1 when a committed
file differs from what the script would write (run by ctest).

Stdlib only. Dashboards target Grafana 10+ (schemaVersion 39).
"""
import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
DS = {"type": "prometheus", "uid": "${datasource}"}

# Every gander query filters on the scrape job and host; the job name is a variable
# (default "gander", the scrape job dashboards/README.md assumes).
HOST = 'job="$job", instance=~"$instance"'


def datasource_var():
    return {
        "name": "datasource", "label": "Data source", "type": "datasource",
        "query": "prometheus", "current": {}, "hide": 0, "refresh": 1, "regex": "",
        "options": [],
    }


def job_var():
    return {
        "name": "job", "label": "Scrape job", "type": "textbox", "query": "gander",
        "current": {"text": "gander", "value": "gander"}, "hide": 0,
        "options": [{"selected": True, "text": "gander", "value": "gander"}],
        "description": "The Prometheus job that scrapes `gander collect`.",
    }


def query_var(name, label, query, multi):
    return {
        "name": name, "label": label, "type": "query", "datasource": DS,
        "definition": query, "query": {"query": query, "refId": name},
        "refresh": 2, "sort": 1, "hide": 0, "regex": "",
        "multi": multi, "includeAll": multi, **({"allValue": ".*"} if multi else {}),
        "current": {}, "options": [],
    }


def target(expr, legend="", ref="A", instant=False, fmt="time_series"):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref,
         "range": not instant, "instant": instant, "format": fmt}
    return t


def summed(by, expr, legend, ref="A"):
    """A target: expr summed by the labels in by."""
    return target(f"sum by ({by}) ({expr})", legend, ref)


class Layout:
    """Places panels left to right in a 24-column grid, rows below one another."""

    def __init__(self):
        self.panels = []
        self.x = 0
        self.y = 0
        self.row_h = 0
        self.next_id = 1

    def row(self, title):
        self._newline()
        self.panels.append({"type": "row", "title": title, "collapsed": False, "panels": [],
                            "id": self._id(), "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}})
        self.y += 1

    def add(self, panel, w, h):
        if self.x + w > 24:
            self._newline()
        panel["id"] = self._id()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.panels.append(panel)
        self.x += w
        self.row_h = max(self.row_h, h)

    def _newline(self):
        self.y += self.row_h
        self.x = 0
        self.row_h = 0

    def _id(self):
        self.next_id += 1
        return self.next_id - 1


def timeseries(title, targets, unit="short", description="", stack=False):
    return {
        "type": "timeseries", "title": title, "description": description, "datasource": DS,
        "targets": targets,
        "fieldConfig": {"defaults": {
            "unit": unit, "min": 0,
            "custom": {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
                       "showPoints": "never",
                       "stacking": {"mode": "normal" if stack else "none", "group": "A"}},
        }, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right",
                               "calcs": ["max", "lastNotNull"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
    }


def stat(title, expr, unit="short", description="", legend="", text_mode="value",
         thresholds=None, mappings=None, color_mode="value"):
    steps = thresholds or [{"color": "green", "value": None}]
    return {
        "type": "stat", "title": title, "description": description, "datasource": DS,
        "targets": [target(expr, legend, instant=True)],
        "fieldConfig": {"defaults": {"unit": unit, "mappings": mappings or [],
                                     "thresholds": {"mode": "absolute", "steps": steps}},
                        "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "textMode": text_mode, "colorMode": color_mode, "graphMode": "none",
                    "justifyMode": "auto", "orientation": "auto"},
    }


def summed_series(title, by, expr, legend, **kw):
    """A time series panel of one query, expr summed by the labels in by."""
    return timeseries(title, [summed(by, expr, legend)], **kw)


def red_above(n):
    return [{"color": "green", "value": None}, {"color": "red", "value": n}]


def table(title, expr, columns, value_name, description="", unit="short", sort_desc=True):
    """An instant table of one query; `columns` are the labels shown, in order."""
    order = {c: i for i, c in enumerate(columns + ["Value"])}
    excluded = {"Time": True, "__name__": True, "job": True}
    return {
        "type": "table", "title": title, "description": description, "datasource": DS,
        "targets": [target(expr, instant=True, fmt="table")],
        "fieldConfig": {"defaults": {"unit": unit, "custom": {"align": "auto"}},
                        "overrides": []},
        "options": {"showHeader": True,
                    "sortBy": [{"displayName": value_name, "desc": sort_desc}]},
        "transformations": [{"id": "organize", "options": {
            "excludeByName": excluded, "indexByName": order,
            "renameByName": {"Value": value_name}}}],
    }


def templating(extension_multi):
    return {"list": [
        datasource_var(),
        job_var(),
        query_var("instance", "Host", 'label_values(up{job="$job"}, instance)', True),
        query_var("extension", "Extension",
                  'label_values(gander_extension_info{job="$job", instance=~"$instance"}, extension)',
                  extension_multi),
    ]}


def link_to(title, uid):
    """A link to the dashboard uid (whose slug is its uid), keeping the data source, job, host
    and time range."""
    return {"title": title, "type": "link",
            "url": f"/d/{uid}/{uid}?${{datasource:queryparam}}&${{job:queryparam}}"
                   "&${instance:queryparam}",
            "targetBlank": False, "icon": "dashboard", "tooltip": "", "asDropdown": False,
            "includeVars": False, "keepTime": True, "tags": []}


def dashboard(uid, title, description, layout, extension_multi, links):
    return {
        "uid": uid, "title": title, "description": description,
        "tags": ["gander", "mcp", "sandbox"], "editable": True, "graphTooltip": 1,
        "schemaVersion": 39, "version": 1, "refresh": "1m", "timezone": "",
        "time": {"from": "now-6h", "to": "now"}, "timepicker": {},
        "templating": templating(extension_multi),
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]},
        "links": links,
        "panels": layout.panels,
    }


def overview():
    sel = HOST + ', extension=~"$extension"'

    def per_extension(title, rule, by, legend, **kw):
        """The recording rule `rule` (a rate per extension) by host, extension and the labels in
        by; legend follows the extension's name."""
        return summed_series(title, f"instance, extension, {by}", f"{rule}{{{sel}}}",
                             "{{extension}} " + legend, **kw)

    L = Layout()
    L.row("Fleet")
    L.add(stat("Extensions running", f"sum(gander_extension_running{{{sel}}})"), 4, 4)
    L.add(stat("Collectors down", f'count(up{{{HOST}}} == 0) or vector(0)',
               thresholds=red_above(1),
               description="Targets of the scrape job that Prometheus cannot scrape: no "
                           "gander metric or alert for those hosts."), 4, 4)
    L.add(stat("Denials", f"sum(increase(gander_denials_total{{{sel}}}[$__range]))",
               description="Over the dashboard's time range, every domain and mode.",
               thresholds=red_above(1)), 4, 4)
    L.add(stat("Accesses outside workspaces",
               f"sum(increase(gander_file_access_outside_workspace_total{{{sel}}}[$__range]))",
               description="Over the dashboard's time range."), 4, 4)
    L.add(stat("Events dropped", f"sum(increase(gander_events_dropped_total{{{sel}}}[$__range]))",
               thresholds=red_above(1),
               description="Monitor events lost over the time range: the audit log and the "
                           "counters have gaps."), 4, 4)
    L.add(stat("Gander alerts firing",
               'count(ALERTS{alertname=~"Gander.*", alertstate="firing"}) or vector(0)',
               thresholds=red_above(1),
               description="Needs dashboards/prometheus/gander-alerts.rules.yml loaded."), 4, 4)
    L.add(table("Extensions", f"gander_extension_info{{{sel}}} * on (job, instance, extension) "
                              f"group_left() gander_extension_running{{{sel}}}",
                ["instance", "extension", "mode", "isolation", "backend", "syscall_accounting",
                 "policy_sha256"], "running",
                description="From gander_extension_info; `running` is gander_extension_running "
                            "(1 running, 0 stopped). Mode other than enforce means denials are "
                            "only counted; isolation below `full` means fewer layers applied."),
          24, 8)

    L.row("Security")
    for title, rule, by, legend in (
            ("Denials by extension and domain", "extension:gander_denials:rate5m",
             "domain, mode", "{{domain}} ({{mode}})"),
            ("File accesses outside workspaces",
             "extension:gander_file_access_outside_workspace:rate5m", "path_class, result",
             "{{path_class}} {{result}}")):
        L.add(per_extension(title, rule, by, legend, unit="ops",
                            description=f"Recording rule {rule}."), 12, 8)
    L.add(table("Paths outside workspaces",
                f"topk(25, sum by (instance, extension, path, path_class, access, result) "
                f"(increase(gander_file_access_outside_workspace_total{{{sel}}}[$__range])) > 0)",
                ["instance", "extension", "path", "path_class", "access", "result"], "accesses",
                description="Top 25 over the time range. Paths are normalised prefixes; the "
                            "audit log has the full path."), 12, 9)
    L.add(table("Egress denied",
                f"sum by (instance, extension, destination, result) "
                f"(increase(gander_egress_connections_total{{{sel}, "
                f'result!="allowed"}}[$__range])) > 0',
                ["instance", "extension", "destination", "result"], "attempts",
                description="Connection attempts the policies do not allow, over the time "
                            "range (`would_deny`: monitor mode, not refused)."), 12, 9)
    L.add(per_extension("Egress bytes by destination", "extension:gander_egress_bytes:rate5m",
                        "destination", "-> {{destination}}", unit="Bps",
                        description="Bytes sent through the egress broker."), 12, 8)
    L.add(per_extension("Egress connections by destination",
                        "extension:gander_egress_connections:rate5m", "destination, result",
                        "-> {{destination}} {{result}}", unit="ops"), 12, 8)

    L.row("Health")
    L.add(timeseries("Restarts and abnormal exits",
                     [summed("instance, extension",
                             f"increase(gander_extension_starts_total{{{sel}}}[15m])",
                             "{{extension}} starts", "A"),
                      summed("instance, extension, reason",
                             f'increase(gander_extension_exits_total{{{sel}, reason!="clean"}}[15m])',
                             "{{extension}} exit {{reason}}", "B")],
                     description="Per 15 minutes. GanderExtensionCrashLoop fires at 3 abnormal "
                                 "exits or 10 starts."), 12, 8)
    L.add(per_extension("Events dropped", "extension:gander_events_dropped:rate5m", "stage",
                        "{{stage}}", unit="ops", description="Any drop is a gap in the audit log."),
          12, 8)
    L.add(summed_series("Label overflow", "instance, metric, label",
                        f"increase(gander_label_overflow_total{{{HOST}}}[$__rate_interval])",
                        "{{metric}} {{label}}",
                        description="Label values folded into `other` by the per-extension caps "
                                    "(all extensions of the host)."), 12, 8)
    L.add(timeseries("Collector up", [target(f"up{{{HOST}}}", "{{instance}}")],
                     description="1 when Prometheus scraped the collector."), 12, 8)
    return dashboard(
        "gander-overview", "gander / overview",
        "Every gander-wrapped MCP extension: what runs, how it is sandboxed, what it was refused.",
        L, True, [link_to("Extension detail", "gander-extension")])


def extension():
    sel = HOST + ', extension="$extension"'
    rate = "$__rate_interval"

    def rate_by(by, metric, legend, ref="A"):
        """The per-second rate of metric for this extension, summed by the labels in by."""
        return summed(by, f"rate({metric}{{{sel}}}[{rate}])", legend, ref)

    def rate_series(title, by, metric, legend, **kw):
        """A time series panel of rate_by."""
        return timeseries(title, [rate_by(by, metric, legend)], **kw)

    def in_range(title, columns, metric, value_name, **kw):
        """A table of the label sets of metric that grew over the time range."""
        return table(title, f"sum by ({', '.join(columns)}) "
                            f"(increase({metric}{{{sel}}}[$__range])) > 0",
                     columns, value_name, **kw)

    L = Layout()
    L.row("Sandbox")
    L.add(stat("Running", f"max(gander_extension_running{{{sel}}})",
               mappings=[{"type": "value", "options": {
                   "0": {"text": "stopped", "color": "orange"},
                   "1": {"text": "running", "color": "green"}}}]), 4, 4)
    L.add(stat("Mode", f"max by (mode) (gander_extension_info{{{sel}}})", legend="{{mode}}",
               text_mode="name", color_mode="none",
               description="enforce applies the policy; monitor and learn only count."), 4, 4)
    L.add(stat("Isolation", f"max by (isolation) (gander_extension_info{{{sel}}})",
               legend="{{isolation}}", text_mode="name", color_mode="none",
               description="Effective level: basic < seccomp < landlock < full."), 4, 4)
    L.add(stat("Starts", f"sum(increase(gander_extension_starts_total{{{sel}}}[$__range]))",
               description="Over the time range."), 4, 4)
    L.add(stat("Abnormal exits",
               f'sum(increase(gander_extension_exits_total{{{sel}, reason!="clean"}}[$__range]))',
               thresholds=red_above(1), description="Over the time range."), 4, 4)
    L.add(stat("Secrets redacted",
               f"sum(increase(gander_secret_redactions_total{{{sel}}}[$__range]))",
               thresholds=red_above(1),
               description="Injected secret values the relay replaced in the extension's "
                           "output over the time range."), 4, 4)
    L.add(table("Sandbox", f"gander_extension_info{{{sel}}}",
                ["instance", "backend", "isolation", "mode", "syscall_accounting",
                 "policy_sha256"], "info",
                description="gander_extension_info. policy_sha256 changes when the policy "
                            "does."), 24, 5)

    L.row("Denials")
    L.add(rate_series("Denials by domain and mechanism", "domain, mechanism, mode",
                      "gander_denials_total", "{{domain}} / {{mechanism}} ({{mode}})", unit="ops"),
          16, 8)
    L.add(in_range("Denials in range", ["domain", "mechanism", "mode"], "gander_denials_total",
                   "denials"), 8, 8)

    L.row("Files outside the workspace")
    L.add(rate_series("By class and result", "path_class, result",
                      "gander_file_access_outside_workspace_total", "{{path_class}} {{result}}",
                      unit="ops"), 10, 9)
    L.add(in_range("By path", ["path", "path_class", "access", "result"],
                   "gander_file_access_outside_workspace_total", "accesses",
                   description="Normalised path prefixes over the time range; `other` when the "
                               "cap was reached. Full paths are in the audit log."), 14, 9)

    L.row("Network")
    L.add(rate_series("Connections by destination", "destination, result",
                      "gander_egress_connections_total", "{{destination}} {{result}}", unit="ops"),
          12, 8)
    L.add(timeseries("Bytes by destination",
                     [rate_by("destination", "gander_egress_bytes_total",
                              "sent to {{destination}}", "A"),
                      rate_by("destination", "gander_ingress_bytes_total",
                              "received from {{destination}}", "B")], unit="Bps"), 12, 8)
    L.add(in_range("Destinations in range", ["destination", "result"],
                   "gander_egress_connections_total", "connections"), 12, 7)
    L.add(rate_series("DNS queries by result", "result", "gander_dns_queries_total", "{{result}}",
                      unit="ops",
                      description="Names outside the policy are refused by the stub resolver."),
          12, 7)

    L.row("Syscalls")
    L.add(timeseries("Syscall mix (top 15)",
                     [target(f"topk(15, sum by (syscall) "
                             f"(rate(gander_syscalls_total{{{sel}}}[{rate}])))", "{{syscall}}")],
                     unit="ops", stack=True,
                     description="What is counted depends on the accounting in force (Monitoring "
                                 "health): the watched and denied syscalls, or all of them in "
                                 "learn mode / with eBPF."), 16, 8)
    L.add(in_range("Syscalls in range", ["syscall"], "gander_syscalls_total", "calls"), 8, 8)

    L.row("Tool calls")
    L.add(rate_series("Calls by tool and outcome", "tool, outcome", "gander_tool_calls_total",
                      "{{tool}} {{outcome}}", unit="reqps"), 8, 8)
    L.add(timeseries("Latency by tool (p50, p95)",
                     [target(f"histogram_quantile(0.5, sum by (tool, le) "
                             f"(rate(gander_tool_call_duration_seconds_bucket{{{sel}}}[{rate}])))",
                             "{{tool}} p50", "A"),
                      target(f"histogram_quantile(0.95, sum by (tool, le) "
                             f"(rate(gander_tool_call_duration_seconds_bucket{{{sel}}}[{rate}])))",
                             "{{tool}} p95", "B")], unit="s"), 8, 8)
    L.add(timeseries("Error ratio by tool",
                     [target(f'sum by (tool) (rate(gander_tool_calls_total{{{sel}, outcome!="ok"}}[{rate}])) '
                             f"/ sum by (tool) (rate(gander_tool_calls_total{{{sel}}}[{rate}]))",
                             "{{tool}}")], unit="percentunit"), 8, 8)
    L.add(summed_series("Secret redactions", "secret, channel",
                        f"increase(gander_secret_redactions_total{{{sel}}}[{rate}])",
                        "{{secret}} on {{channel}}",
                        description="A secret value in the extension's output was replaced by a "
                                    "marker."), 24, 6)

    L.row("Monitoring health")
    L.add(stat("Syscall accounting", f"max by (syscall_accounting) (gander_extension_info{{{sel}}})",
               legend="{{syscall_accounting}}", text_mode="name", color_mode="none",
               description="Which syscalls are counted: the watched set, or all (learn mode, "
                           "eBPF)."), 6, 4)
    L.add(stat("Events dropped", f"sum(increase(gander_events_dropped_total{{{sel}}}[$__range]))",
               thresholds=red_above(1), description="Over the time range."), 6, 4)
    L.add(stat("Collector up", f"min(up{{{HOST}}})",
               mappings=[{"type": "value", "options": {
                   "0": {"text": "down", "color": "red"},
                   "1": {"text": "up", "color": "green"}}}]), 6, 4)
    L.add(stat("Label overflow (host)",
               f"sum(increase(gander_label_overflow_total{{{HOST}}}[$__range]))",
               thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 1}],
               description="Values folded into `other` on this host over the time range (the "
                           "metric has no extension label)."), 6, 4)
    L.add(summed_series("Events dropped by stage", "stage",
                        f"increase(gander_events_dropped_total{{{sel}}}[{rate}])", "{{stage}}"),
          12, 7)
    L.add(summed_series("Label overflow by metric and label (host)", "metric, label",
                        f"increase(gander_label_overflow_total{{{HOST}}}[{rate}])",
                        "{{metric}} {{label}}"), 12, 7)
    return dashboard(
        "gander-extension", "gander / extension",
        "One gander-wrapped MCP extension in depth.", L, False,
        [link_to("Overview", "gander-overview")])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed files instead of writing them")
    args = ap.parse_args()
    stale = []
    for name, build in (("gander-overview.json", overview), ("gander-extension.json", extension)):
        text = json.dumps(build(), indent=2, ensure_ascii=False) + "\n"
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print("generate.py: out of date: " + ", ".join(stale) +
              " (run python3 dashboards/grafana/generate.py and commit)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
