package cli

import (
	"context"
	"log/slog"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/telemetry"
)

// telemetryServices are the app's traces and metrics (docs/observability.md):
// the provider serve, run and chat start, and the recorder the agents, the
// subagents, the MCP manager and the gateway hold. Both are nil for the
// other commands and when nothing is exported.
type telemetryServices struct {
	telProvider *telemetry.Provider
	telemetry   *telemetry.Recorder
}

// wireTelemetry starts the telemetry provider for the commands that run
// agents (globals.telemetry: serve, run and chat), from the OTEL_*
// variables (read through Options.Getenv) and the tracing section. Its
// Close is registered first, so that it runs last: the spans of the other
// services' shutdown are flushed too, within the provider's flush bound.
// With telemetry on, the log records carry the trace and span ids of the
// run they belong to.
func (a *app) wireTelemetry(ctx context.Context) error {
	if !a.g.telemetry {
		return nil
	}
	p, err := telemetry.Start(ctx, telemetry.ProviderOptions{Tracing: a.cfg.Tracing, ServiceVersion: Version,
		Getenv: a.g.opts.Getenv, Stdout: a.stdout})
	if err != nil {
		// The message names the variable or the tracing key (exit 2).
		return &config.Error{Msg: err.Error(), Err: err}
	}
	if !p.Enabled() {
		return nil
	}
	a.onClose(func() error { return p.Shutdown(context.Background()) })
	a.logger = slog.New(telemetry.LogHandler(a.logger.Handler()))
	a.telProvider = p
	a.telemetry = p.Recorder(a.describeModel, a.logger)
	a.logger.Debug("telemetry: exporting", "to", strings.Join(p.Exporters, "; "))
	return nil
}

// describeModel is the provider (gen_ai.provider.name) and the model id
// (gen_ai.request.model) of the models[] entry called name: the provider
// from the entry's use string, "" when it names none Antler knows.
func (a *app) describeModel(name string) (provider, model string) {
	for _, m := range a.cfg.Models {
		if m.Name != name {
			continue
		}
		use := strings.ToLower(m.Use)
		for _, p := range []struct{ in, name string }{
			{"anthropic", "anthropic"}, {"google", "gcp.gemini"}, {"gemini", "gcp.gemini"},
			{"deepseek", "deepseek"}, {"openai", "openai"},
		} {
			if strings.Contains(use, p.in) {
				return p.name, m.Model
			}
		}
		return "", m.Model
	}
	return "", name
}

// observeMCP registers the antler.mcp.servers gauge on the MCP manager's
// server states (with metrics on), unregistered at Close before the
// provider's flush.
func (a *app) observeMCP() {
	if a.telemetry.MeterProvider() == nil || a.mcp == nil {
		return
	}
	mgr := a.mcp
	unregister, err := a.telemetry.ObserveMCP(func() []telemetry.MCPServer {
		st := mgr.Status()
		out := make([]telemetry.MCPServer, len(st))
		for i, s := range st {
			out[i] = telemetry.MCPServer{Name: s.Name, State: string(s.State)}
		}
		return out
	})
	if err != nil {
		a.logger.Warn("telemetry: cannot observe the MCP servers' states", "err", err)
		return
	}
	a.onClose(func() error { unregister(); return nil })
}
