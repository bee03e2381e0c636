package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/toolset"
)

// check is one line of `antler doctor`.
type check struct {
	Check      string `json:"check"`
	Name       string `json:"name"`
	Status     string `json:"status"` // ok, warn or fail
	Detail     string `json:"detail"`
	DurationMS int64  `json:"duration_ms"`
}

// pinger is implemented by model providers that can check their endpoint
// without spending tokens.
type pinger interface {
	Ping(ctx context.Context) error
}

func newDoctorCmd(g *globals) *cobra.Command {
	var (
		asJSON  bool
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, models, MCP servers, ACP agents and skills",
		Long: `Check everything a run depends on, one line per check with ok, warn or
fail and the reason: the config files load, the tool list assembles, each
model's endpoint answers a cheap request, each enabled MCP server connects
and lists its tools, each ACP agent's command exists, skills parse. Each
DeerFlow section config.yaml sets that Antler does not implement gets a
"section" line: fail when it restricts what runs or who may run it (serve,
run and chat refuse to start until allow_unenforced names it), warn
otherwise.

Exits 2 when a check of the configuration fails (config, extensions, env,
section, tools: the files as written), else 1 when any other check fails
(a model, an MCP server, an ACP agent, skills).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			checks := runDoctor(c.Context(), g, timeout)
			failed, code := 0, 1
			for _, ch := range checks {
				if ch.Status == "fail" {
					failed++
					if configCheck(ch.Check) {
						code = 2
					}
				}
			}
			if asJSON {
				enc := json.NewEncoder(g.opts.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(checks); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(g.opts.Stdout, 0, 4, 2, ' ', 0)
				for _, ch := range checks {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ch.Status, ch.Check, ch.Name, ch.Detail)
				}
				tw.Flush()
			}
			if failed > 0 {
				return &exitError{code: code, err: fmt.Errorf("%d check(s) failed", failed)}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	c.Flags().DurationVar(&timeout, "timeout", 15*time.Second, "time allowed for each model check")
	return c
}

// configCheck reports whether a failing check of kind is a problem of the
// configuration files as written (exit 2) rather than of what they name
// (exit 1).
func configCheck(kind string) bool {
	switch kind {
	case "config", "extensions", "env", "section", "tools":
		return true
	}
	return false
}

// runDoctor runs the checks of `antler doctor` in order (config and
// extensions, tool assembly, models, MCP servers, ACP agents, skills) and
// returns their lines. A config that does not load ends the run.
func runDoctor(ctx context.Context, g *globals, timeout time.Duration) []check {
	var r doctorReport
	start := time.Now()
	g.listWarnings = true
	a, err := newApp(ctx, g)
	if err != nil {
		r.add("config", g.config, "fail", oneLine(err), start)
		return r.checks
	}
	defer a.Close()
	r.checkConfig(a, start)
	r.checkAuthorization(a)
	r.checkTools(ctx, a)
	r.checkBrowser(a)
	r.checkModels(ctx, a, timeout)
	r.checkMCP(ctx, a)
	r.checkToolPolicy(ctx, a)
	r.checkACP(a)
	r.checkSkills(ctx, a, g.user)
	return r.checks
}

// doctorReport collects the lines of one `antler doctor` run.
type doctorReport struct {
	checks []check
}

// add appends a line whose check began at start.
func (r *doctorReport) add(kind, name, status, detail string, start time.Time) {
	r.checks = append(r.checks, check{Check: kind, Name: name, Status: status, Detail: detail, DurationMS: time.Since(start).Milliseconds()})
}

// checkConfig reports the loaded config with its warnings, and the
// extensions file (if any) with its warnings; both checks began at start.
func (r *doctorReport) checkConfig(a *app, start time.Time) {
	r.add("config", a.cfg.Path, "ok", fmt.Sprintf("%d models, %d tools", len(a.cfg.Models), len(a.cfg.Tools)), start)
	for _, w := range a.cfg.Warnings {
		r.add("config", a.cfg.Path, "warn", w, start)
	}
	r.checkDotEnv(a, start)
	for _, n := range a.ignoredNotices() {
		r.add("section", n.name, n.status, n.where+": "+n.detail, start)
	}
	if a.paths.Extensions == "" {
		r.add("extensions", "-", "ok", "no extensions_config.json (no MCP servers)", start)
		return
	}
	ext, _, err := a.extensions.Get()
	if err != nil {
		r.add("extensions", a.paths.Extensions, "fail", oneLine(err), start)
		return
	}
	r.add("extensions", a.paths.Extensions, "ok", fmt.Sprintf("%d MCP servers", len(ext.MCPServers)), start)
	for _, w := range ext.Warnings {
		r.add("extensions", a.paths.Extensions, "warn", w, start)
	}
}

// checkTools reports whether the tool list assembles without MCP.
func (r *doctorReport) checkTools(ctx context.Context, a *app) {
	start := time.Now()
	ts, err := a.assembler.Assemble(ctx, toolset.Options{})
	if err != nil {
		r.add("tools", "assembly", "fail", oneLine(err), start)
	} else {
		r.add("tools", "assembly", "ok", fmt.Sprintf("%d tools bound without MCP", len(ts.Entries)), start)
	}
}

// checkModels builds each configured model and pings its endpoint, each
// ping allowed timeout; no model configured is a failure.
func (r *doctorReport) checkModels(ctx context.Context, a *app, timeout time.Duration) {
	if len(a.cfg.Models) == 0 {
		r.add("model", "-", "fail", "no models configured", time.Now())
	}
	for i, m := range a.cfg.Models {
		start := time.Now()
		cm, err := a.g.opts.Registry.BuildModel(ctx, a.env, m, i)
		if err != nil {
			r.add("model", m.Name, "fail", oneLine(err), start)
			continue
		}
		p, ok := cm.(pinger)
		if !ok {
			r.add("model", m.Name, "warn", "provider has no endpoint check", start)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err = p.Ping(pctx)
		cancel()
		if err != nil {
			r.add("model", m.Name, "fail", oneLine(err), start)
		} else {
			r.add("model", m.Name, "ok", "endpoint answers", start)
		}
	}
}

// checkMCP connects to each enabled MCP server and reports its tool count
// or its failure, with the server's own duration.
func (r *doctorReport) checkMCP(ctx context.Context, a *app) {
	results, err := a.mcp.Check(ctx)
	if err != nil {
		r.add("mcp", "-", "fail", oneLine(err), time.Now())
	}
	for _, res := range results {
		status, detail := "ok", fmt.Sprintf("%s, %d tools in %s", res.Transport, res.Tools, res.Duration.Round(time.Millisecond))
		if res.Err != nil {
			status, detail = "fail", fmt.Sprintf("%s: %s", res.Transport, oneLine(res.Err))
		}
		r.checks = append(r.checks, check{Check: "mcp", Name: res.Server, Status: status, Detail: detail, DurationMS: res.Duration.Milliseconds()})
	}
}

// checkACP reports whether each ACP agent's command is on PATH.
func (r *doctorReport) checkACP(a *app) {
	for _, name := range a.cfg.ACPAgentNames() {
		start := time.Now()
		ag := a.cfg.ACPAgents[name]
		if path, err := exec.LookPath(ag.Command); err != nil {
			r.add("acp", name, "fail", fmt.Sprintf("command %q not found in PATH", ag.Command), start)
		} else {
			r.add("acp", name, "ok", path, start)
		}
	}
}

// checkSkills loads the user's skills and lists them, or reports why they
// do not load.
func (r *doctorReport) checkSkills(ctx context.Context, a *app, user string) {
	start := time.Now()
	sk, err := a.skills.Load(ctx, user)
	if err != nil {
		r.add("skills", user, "fail", oneLine(err), start)
		return
	}
	enabled := 0
	var names []string
	for _, s := range sk {
		if s.Enabled {
			enabled++
		}
		names = append(names, s.Name)
	}
	detail := fmt.Sprintf("%d skills, %d enabled", len(sk), enabled)
	if len(names) > 0 {
		detail += ": " + strings.Join(names, ", ")
	}
	r.add("skills", user, "ok", summary(detail, 120), start)
}

// checkDotEnv reports the .env file beside config.yaml: which variable
// names it supplied and which it left to the environment, never a value.
func (r *doctorReport) checkDotEnv(a *app, start time.Time) {
	d := a.dotenv
	if d.Path == "" {
		r.add("env", "-", "ok", "no .env beside the config", start)
		return
	}
	detail := "supplied " + namesOrNone(d.Set)
	if len(d.Kept) > 0 {
		detail += "; already set in the environment, kept: " + strings.Join(d.Kept, ", ")
	}
	r.add("env", d.Path, "ok", detail, start)
}

func namesOrNone(names []string) string {
	if len(names) == 0 {
		return "no variables"
	}
	return strings.Join(names, ", ")
}
