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
and lists its tools, each ACP agent's command exists, skills parse.

Exits 1 when any check fails.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			checks := runDoctor(c.Context(), g, timeout)
			failed := 0
			for _, ch := range checks {
				if ch.Status == "fail" {
					failed++
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
				return &exitError{code: 1, err: fmt.Errorf("%d check(s) failed", failed)}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	c.Flags().DurationVar(&timeout, "timeout", 15*time.Second, "time allowed for each model check")
	return c
}

func runDoctor(ctx context.Context, g *globals, timeout time.Duration) []check {
	var out []check
	add := func(kind, name, status, detail string, start time.Time) {
		out = append(out, check{Check: kind, Name: name, Status: status, Detail: detail, DurationMS: time.Since(start).Milliseconds()})
	}
	start := time.Now()
	a, err := newApp(ctx, g)
	if err != nil {
		add("config", g.config, "fail", oneLine(err), start)
		return out
	}
	defer a.Close()
	add("config", a.cfg.Path, "ok", fmt.Sprintf("%d models, %d tools", len(a.cfg.Models), len(a.cfg.Tools)), start)
	for _, w := range a.cfg.Warnings {
		add("config", a.cfg.Path, "warn", w, start)
	}
	if a.paths.Extensions == "" {
		add("extensions", "-", "ok", "no extensions_config.json (no MCP servers)", start)
	} else {
		ext, _, err := a.extensions.Get()
		switch {
		case err != nil:
			add("extensions", a.paths.Extensions, "fail", oneLine(err), start)
		default:
			add("extensions", a.paths.Extensions, "ok", fmt.Sprintf("%d MCP servers", len(ext.MCPServers)), start)
			for _, w := range ext.Warnings {
				add("extensions", a.paths.Extensions, "warn", w, start)
			}
		}
	}

	start = time.Now()
	ts, err := a.assembler.Assemble(ctx, toolset.Options{})
	if err != nil {
		add("tools", "assembly", "fail", oneLine(err), start)
	} else {
		add("tools", "assembly", "ok", fmt.Sprintf("%d tools bound without MCP", len(ts.Entries)), start)
	}

	if len(a.cfg.Models) == 0 {
		add("model", "-", "fail", "no models configured", time.Now())
	}
	for i, m := range a.cfg.Models {
		start := time.Now()
		cm, err := a.g.opts.Registry.BuildModel(ctx, a.env, m, i)
		if err != nil {
			add("model", m.Name, "fail", oneLine(err), start)
			continue
		}
		p, ok := cm.(pinger)
		if !ok {
			add("model", m.Name, "warn", "provider has no endpoint check", start)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err = p.Ping(pctx)
		cancel()
		if err != nil {
			add("model", m.Name, "fail", oneLine(err), start)
		} else {
			add("model", m.Name, "ok", "endpoint answers", start)
		}
	}

	results, err := a.mcp.Check(ctx)
	if err != nil {
		add("mcp", "-", "fail", oneLine(err), time.Now())
	}
	for _, r := range results {
		status, detail := "ok", fmt.Sprintf("%s, %d tools in %s", r.Transport, r.Tools, r.Duration.Round(time.Millisecond))
		if r.Err != nil {
			status, detail = "fail", fmt.Sprintf("%s: %s", r.Transport, oneLine(r.Err))
		}
		out = append(out, check{Check: "mcp", Name: r.Server, Status: status, Detail: detail, DurationMS: r.Duration.Milliseconds()})
	}

	for _, name := range a.cfg.ACPAgentNames() {
		start := time.Now()
		ag := a.cfg.ACPAgents[name]
		if path, err := exec.LookPath(ag.Command); err != nil {
			add("acp", name, "fail", fmt.Sprintf("command %q not found in PATH", ag.Command), start)
		} else {
			add("acp", name, "ok", path, start)
		}
	}

	start = time.Now()
	sk, err := a.skills.Load(ctx, g.user)
	switch {
	case err != nil:
		add("skills", g.user, "fail", oneLine(err), start)
	default:
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
		add("skills", g.user, "ok", summary(detail, 120), start)
	}
	return out
}
