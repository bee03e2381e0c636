package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/gateway"
)

// stdioAllowlistEnv extends the stdio MCP commands the gateway's MCP
// admin route may write (DeerFlow's variable).
const stdioAllowlistEnv = "DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST"

// newServeCmd returns `antler serve`.
func newServeCmd(g *globals) *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:2026]",
		Short: "Serve the HTTP API of DeerFlow's web frontend and LangGraph SDK clients",
		Long: `Serve the gateway: LangGraph-shaped threads and runs (streamed as
server-sent events) under /api/threads and /api/langgraph/threads, uploads,
artifacts, models, custom agents, skills, the MCP configuration, GET
/api/tools and /healthz. docs/api.md lists every route.

Bearer tokens from config.yaml's gateway.tokens ([{token, user_id, admin}],
$VAR allowed) map to users. Without tokens every request is the --user
(default "default") and the server only listens on a loopback address.

Without an extensions_config.json, an empty one is created beside
config.yaml so that the MCP and skills admin routes have a file to write.
SIGINT or SIGTERM shuts down gracefully: runs in flight are cancelled and
their streams end.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			g.server = true // the log is for machines: slog lines (--log-format)
			g.telemetry = true
			return serve(ctx, g, addr)
		},
	}
	c.Flags().StringVar(&addr, "addr", gateway.DefaultAddr, "address to listen on (host:port)")
	return c
}

// serve builds the app and its gateway and serves the gateway on addr
// until ctx ends.
func serve(ctx context.Context, g *globals, addr string) error {
	if err := ensureExtensions(g); err != nil {
		return err
	}
	a, err := newApp(ctx, g)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.refuseUnenforced(); err != nil {
		return err
	}
	gw, serveGateway, err := a.buildGateway()
	if err != nil {
		return err
	}
	if err := a.startScheduler(ctx, gw); err != nil {
		return err
	}
	a.startMCPTaskPoller(gw)
	// MCP servers' questions reach the human of the run that asked, as a
	// clarification card (gateway/elicit.go).
	a.elicit.route(gw.Elicit)
	ln, err := listen(gw, addr)
	if err != nil {
		return err
	}
	who := fmt.Sprintf("%d token(s) from gateway.tokens", len(a.cfg.Gateway.Tokens))
	if gw.RequiresLoopback() {
		who = fmt.Sprintf("no tokens: every request is user %q, loopback only", gw.DefaultUserID())
	}
	fmt.Fprintf(a.stderr, "antler serve: listening on http://%s (%s)\n", ln.Addr(), who)
	if err := serveGateway(ctx, ln); err != nil && !errors.Is(err, ctx.Err()) {
		return &exitError{code: 1, err: err}
	}
	fmt.Fprintln(a.stderr, "antler serve: stopped")
	return nil
}

// buildGateway opens the app's store and builds the gateway on it, with
// the app's wiring, and returns the gateway and the function serving it.
func (a *app) buildGateway() (*gateway.Server, func(context.Context, net.Listener) error, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, nil, err
	}
	allow := stdioAllowlist(a.g.opts.Getenv)
	gw, serveGateway, err := a.newGateway(gateway.Options{
		Config: a.cfg,
		Store:  st,
		// The same wiring as run and chat; the gateway sets the store.
		Factory:        a.factoryOptions(nil),
		Layout:         a.layout,
		Agents:         a.gatewayAgents(),
		Skills:         a.skills,
		ExtensionsPath: a.paths.Extensions,
		MCP:            a.mcp,
		MCPTasks:       a.mcpTasks,
		UserMCP:        a.userMCP,
		StdioAllowlist: allow,
		Tokens:         a.cfg.Gateway.Tokens,
		CORSOrigins:    append(slices.Clone(a.cfg.Gateway.CORSOrigins), gateway.SplitOrigins(a.g.opts.Getenv("GATEWAY_CORS_ORIGINS"))...),
		DefaultUserID:  a.g.user,
		Logger:         a.logger,
		Authorizer:     a.authz,
		Memory:         a.memory,
		Telemetry:      a.telemetry,
		// An MCP server's question waits this long for the human.
		ElicitationTimeout: time.Duration(a.cfg.Gateway.ElicitationTimeoutSeconds) * time.Second,
		// The login routes store into what the runs' storedAuthorizer reads.
		MCPLogin: gateway.MCPLoginOptions{Store: storedAuthorizer(a.homeDir(), a.logger).Store,
			RedirectURL: a.g.opts.Getenv(mcpRedirectEnv)},
	})
	if err != nil {
		return nil, nil, &config.Error{File: a.cfg.Path, Key: "gateway", Msg: err.Error(), Err: err}
	}
	return gw, serveGateway, nil
}

// gatewayAgents is the store behind the gateway's custom-agent routes: nil
// (the routes answer 403 and /api/features says agents_api is off) when
// the agents_api section closes them.
func (a *app) gatewayAgents() *customagent.Store {
	if a.cfg.AgentsAPI.Closed() {
		a.logger.Info("agents_api.enabled is false: the custom-agent management routes answer 403")
		return nil
	}
	return a.agents
}

// stdioAllowlist returns the extra stdio MCP commands listed, comma
// separated, in the environment variable stdioAllowlistEnv.
func stdioAllowlist(getenv func(string) string) []string {
	var allow []string
	for _, s := range strings.Split(getenv(stdioAllowlistEnv), ",") {
		if s = strings.TrimSpace(s); s != "" {
			allow = append(allow, s)
		}
	}
	return allow
}

// listen listens on addr, which must be a loopback address when gw takes
// no tokens: both the address as given and the one it resolves to are
// checked.
func listen(gw *gateway.Server, addr string) (net.Listener, error) {
	if gw.RequiresLoopback() && !loopbackAddr(addr) {
		return nil, usageErrorf("--addr %s: without gateway.tokens in config.yaml, antler serve listens on loopback only (127.0.0.1, [::1] or localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &exitError{code: 1, err: fmt.Errorf("listen on %s: %w", addr, err)}
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && gw.RequiresLoopback() && !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, usageErrorf("--addr %s resolves to %s, which is not a loopback address", addr, tcp.IP)
	}
	return ln, nil
}

// loopbackAddr reports whether addr's host is a loopback name or address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ensureExtensions creates an empty extensions_config.json beside
// config.yaml when none is found, so that changes made through the admin
// routes are read back by the next run's assembly without a restart.
func ensureExtensions(g *globals) error {
	paths, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil || paths.Extensions != "" || paths.Config == "" {
		return nil // newApp reports path problems
	}
	if _, err := os.Stat(paths.Config); err != nil {
		return nil
	}
	p := filepath.Join(filepath.Dir(paths.Config), "extensions_config.json")
	if err := config.WriteFileAtomic(p, []byte("{\n  \"mcpServers\": {},\n  \"skills\": {}\n}\n"), 0o644); err != nil {
		return &config.Error{File: p, Msg: "cannot create an empty extensions config: " + err.Error(), Err: err}
	}
	fmt.Fprintf(g.opts.Stderr, "antler serve: created %s (empty; the MCP and skills admin routes write it)\n", p)
	return nil
}
