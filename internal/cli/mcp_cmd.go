package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/mcptools/mcpauth"
	"github.com/antlerhq/antler/tool"
)

// defaultMCPTimeout bounds `antler mcp list` and `get` as a whole; each
// server is also bounded by its own session_init_timeout.
const defaultMCPTimeout = 30 * time.Second

func newMCPCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "List, check, add and remove the MCP servers of extensions_config.json",
		Long: `Manage the MCP servers of extensions_config.json (mcpServers): list them
with their connection state, show one, add, remove, enable or disable one.
Edits rewrite the file atomically and keep every other key and its
formatting.`,
		Args: groupArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newMCPListCmd(g), newMCPGetCmd(g), newMCPAddCmd(g), newMCPRemoveCmd(g),
		newMCPEnableCmd(g, true), newMCPEnableCmd(g, false), newMCPLoginCmd(g), newMCPLogoutCmd(g))
	return c
}

// loadMCPExtensions loads the .env beside config.yaml (for $VAR values)
// and the extensions file, which must exist. config.yaml itself is not
// needed.
func loadMCPExtensions(g *globals) (*config.Extensions, error) {
	p, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	if _, err := config.ApplyDotEnv(filepath.Dir(p.Config), os.LookupEnv, os.Setenv); err != nil {
		return nil, err
	}
	path, err := mcpExtensionsPath(g, false)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, &config.Error{File: path, Msg: "file not found (add a server with antler mcp add)"}
	}
	return config.LoadExtensions(path)
}

// newMCPManager is a manager of ext's servers for one command.
func newMCPManager(g *globals, ext *config.Extensions) (*mcptools.Manager, error) {
	// A server that fails is part of the output; its warning would say
	// it twice (--log-level info or debug still shows the log).
	level := g.logLevel
	if level == "warn" {
		level = "error"
	}
	logger, err := newLogger(g.opts.Stderr, level, g.logFormat, false, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	st, err := mcpAuthStore(g)
	if err != nil {
		return nil, err
	}
	// Servers that ask for authorization get --user's stored login.
	return mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext), Logger: logger,
		Authorizer: &mcpauth.Stored{Store: st, LoginHint: mcpLoginHint}, AuthUser: g.user}), nil
}

func newMCPListCmd(g *globals) *cobra.Command {
	var (
		timeout time.Duration
		wf      widthFlag
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "Connect to every MCP server and show its state, tool count and time",
		Long: `Connect to every enabled MCP server at once, list its tools and disconnect,
then print one line per server: ✔ connected with the number of tools and
how long it took, ✗ with the reason it failed, or "disabled". Each server
is bounded by its session_init_timeout, the whole listing by --timeout.
The exit code is 0 whatever the servers' states (antler doctor fails on a
failed server).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ext, err := loadMCPView(c, g) // --user: that user's view (mcp_user.go)
			if err != nil {
				return err
			}
			m, err := newMCPManager(g, ext)
			if err != nil {
				return err
			}
			defer m.Close()
			ctx, cancel := context.WithTimeout(c.Context(), timeout)
			defer cancel()
			results, err := m.Check(ctx)
			if err != nil {
				return err
			}
			auth, err := mcpAuthLine(ctx, g)
			if err != nil {
				return err
			}
			return writeMCPList(c.OutOrStdout(), wf.width(c.OutOrStdout(), g.opts.Getenv), ext, results, ctx.Err() != nil, timeout, auth)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", defaultMCPTimeout, "bound on the whole listing")
	wf.register(c.Flags())
	return c
}

// writeMCPList writes the table of `mcp list`; expired says the listing
// ran out of its --timeout; auth gives a server's login line (mcpAuthLine).
func writeMCPList(w io.Writer, width int, ext *config.Extensions, results []mcptools.CheckResult, expired bool, timeout time.Duration,
	auth func(s config.MCPServer, err error) string) error {
	if len(ext.MCPServers) == 0 {
		_, err := fmt.Fprintf(w, "No MCP servers in %s (add one with antler mcp add)\n", ext.Path)
		return err
	}
	byName := map[string]mcptools.CheckResult{}
	for _, r := range results {
		byName[r.Server] = r
	}
	t := &table{header: []string{"NAME", "TRANSPORT", "TARGET", "STATUS"}, flex: 2}
	for _, name := range slices.Sorted(maps.Keys(ext.MCPServers)) {
		s := ext.MCPServers[name]
		r, checked := byName[name]
		status, reason := checkStatus(s, r, checked, expired, timeout)
		t.add(name, s.Type, target(s), status)
		if reason != "" && !errors.As(r.Err, new(*mcpauth.LoginRequiredError)) {
			t.note("✗ " + reason)
		}
		if a := auth(s, r.Err); a != "" {
			t.note(a)
		}
	}
	return t.write(w, width)
}

// checkStatus is a server's STATUS cell and, for a failed server, the
// reason (its first line, secrets of the server's config masked).
func checkStatus(s config.MCPServer, r mcptools.CheckResult, checked, expired bool, timeout time.Duration) (status, reason string) {
	switch {
	case !s.Enabled:
		return "- disabled", ""
	case !checked:
		return "✗ not checked", ""
	case r.Err != nil && expired && r.Duration >= timeout:
		return "✗ failed", fmt.Sprintf("no answer within %s (--timeout)", timeout)
	case errors.As(r.Err, new(*mcpauth.LoginRequiredError)):
		return "✗ login required", ""
	case r.Err != nil:
		return "✗ failed", redact(firstLine(r.Err.Error()), s)
	}
	return fmt.Sprintf("✔ connected · %s · %s", plural(r.Tools, "tool"), roundDuration(r.Duration)), ""
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// target is what a server runs or reaches: the command line of a stdio
// server (secret-looking arguments masked), the URL of another (its
// password and secret-looking query values masked).
func target(s config.MCPServer) string {
	if s.Type != "stdio" {
		return maskURL(s.URL)
	}
	return strings.Join(append([]string{s.Command}, maskArgs(s.Args)...), " ")
}

func newMCPGetCmd(g *globals) *cobra.Command {
	var (
		timeout time.Duration
		wf      widthFlag
	)
	c := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one MCP server: its config (secrets masked), state and tools",
		Long: `Show one MCP server of extensions_config.json: its configuration as written,
with the values of env, headers and OAuth secrets masked ("$NAME"
references are shown: they hold no secret), then connect to it and list its
tools as the model would see them (prefixed and filtered). A disabled
server is not contacted.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServerNames(g),
		RunE: func(c *cobra.Command, args []string) error {
			ext, err := loadMCPView(c, g) // --user: that user's view (mcp_user.go)
			if err != nil {
				return err
			}
			s, ok := ext.MCPServers[args[0]]
			if !ok {
				return noServerError(ext.Path, args[0], ext.ServerNames())
			}
			ext = ownServerFile(c, g, ext, s.Name) // a --user's own server is shown from the user's file
			m, err := newMCPManager(g, ext)
			if err != nil {
				return err
			}
			defer m.Close()
			ctx, cancel := context.WithTimeout(c.Context(), timeout)
			defer cancel()
			auth, err := mcpAuthLine(ctx, g)
			if err != nil {
				return err
			}
			return writeMCPGet(ctx, c.OutOrStdout(), wf.width(c.OutOrStdout(), g.opts.Getenv), ext, s, m, auth)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", defaultMCPTimeout, "bound on connecting and listing the tools")
	wf.register(c.Flags())
	return c
}

func writeMCPGet(ctx context.Context, w io.Writer, width int, ext *config.Extensions, s config.MCPServer, m *mcptools.Manager,
	auth func(s config.MCPServer, err error) string) error {
	raw, err := rawServerOf(ext.Path, s.Name)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s (%s)\n", s.Name, ext.Path)
	writeMCPConfig(w, s, &raw)
	kv := func(k, v string) { writeMCPField(w, k, v) }
	if !s.Enabled {
		kv("state", "- disabled (antler mcp enable "+s.Name+")")
		return nil
	}
	if s.Err != nil {
		kv("state", "✗ "+redact(firstLine(s.Err.Error()), s))
		return nil
	}
	tools, err := m.ToolsOf(ctx, []string{s.Name})
	if err != nil {
		return err
	}
	var st mcptools.ServerStatus
	for _, x := range m.Status() {
		if x.Name == s.Name {
			st = x
		}
	}
	kv("auth", auth(s, st.Err))
	switch {
	case st.State == mcptools.StateReady:
		kv("state", fmt.Sprintf("✔ connected · %s · %s", plural(len(tools), "tool"), roundDuration(st.Duration)))
	case st.Err != nil:
		kv("state", "✗ "+redact(firstLine(st.Err.Error()), s))
		return nil
	case ctx.Err() != nil:
		kv("state", "✗ no answer within --timeout")
		return nil
	default:
		kv("state", string(st.State))
	}
	return writeMCPTools(w, width, tools)
}

// writeMCPField writes one "key: value" line of `mcp get`; an empty value
// writes nothing.
func writeMCPField(w io.Writer, k, v string) {
	if v != "" {
		fmt.Fprintf(w, "  %-12s %s\n", k+":", v)
	}
}

// writeMCPConfig writes a server's configuration as `mcp get` shows it,
// secrets masked (raw is the entry as written, before $VAR resolution).
func writeMCPConfig(w io.Writer, s config.MCPServer, raw *rawMCPServer) {
	kv := func(k, v string) { writeMCPField(w, k, v) }
	kv("enabled", fmt.Sprint(s.Enabled))
	kv("transport", s.Type)
	if s.Type == "stdio" {
		kv("command", target(s))
		kv("cwd", s.Cwd)
	} else {
		kv("url", maskURL(s.URL))
	}
	for _, k := range slices.Sorted(maps.Keys(raw.Env)) {
		kv("env", k+"="+maskValue(raw.Env[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(raw.Headers)) {
		kv("header", k+": "+maskValue(raw.Headers[k]))
	}
	switch o := s.OAuth; {
	case o != nil && o.Enabled && o.GrantType == config.GrantAuthorizationCode:
		// Endpoints are discovered; a client_id is a pre-registered client.
		kv("oauth", fmt.Sprintf("authorization_code (a login per user), client_id %s, client_secret %s, scope %s",
			cmp.Or(o.ClientID, "registered at login"), cmp.Or(maskValue(raw.OAuth.ClientSecret), "none"), cmp.Or(o.Scope, "as the server says")))
	case o != nil && o.Enabled:
		kv("oauth", fmt.Sprintf("%s at %s, client_id %s, client_secret %s", o.GrantType, o.TokenURL,
			o.ClientID, maskValue(raw.OAuth.ClientSecret)))
	}
	kv("description", s.Description)
	if len(s.DisabledTools) > 0 {
		kv("disabled", strings.Join(s.DisabledTools, ", "))
	}
}

// writeMCPTools writes the table of a server's tools (none: nothing).
// HINTS are the annotations the server states (mcptools.Annotations.Hints);
// a title other than the description's first line precedes it.
func writeMCPTools(w io.Writer, width int, tools []*tool.Tool) error {
	if len(tools) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := &table{header: []string{"TOOL", "HINTS", "DESCRIPTION"}, flex: 2}
	for _, tl := range tools {
		a := mcptools.AnnotationsOf(tl.Meta)
		desc := firstLine(tl.Description)
		if a != nil && a.Title != "" && a.Title != desc {
			desc = a.Title + " — " + desc
		}
		t.add(tl.Name, cmp.Or(a.Hints(), "-"), desc)
	}
	return t.write(w, width)
}

// rawServer is the part of a server entry `mcp get` shows as written
// (before $VAR resolution).
type rawMCPServer struct {
	Env     map[string]string `json:"env"`
	Headers map[string]string `json:"headers"`
	OAuth   struct {
		ClientSecret string `json:"client_secret"`
	} `json:"oauth"`
}

func rawServerOf(path, name string) (rawMCPServer, error) {
	var out rawMCPServer
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return out, err
	}
	// The loader has accepted the entry; a field of another shape
	// (reported in the server's Err) is just not shown.
	_ = json.Unmarshal(top.MCPServers[name], &out)
	return out, nil
}

// secretMask replaces a secret value.
const secretMask = "****"

// maskValue masks a literal secret; a value that is only a $VAR or
// ${VAR} reference names a variable and is shown.
func maskValue(v string) string {
	if v == "" {
		return ""
	}
	if isEnvRef(v) {
		return v
	}
	return secretMask
}

func isEnvRef(v string) bool {
	name := strings.TrimPrefix(v, "$")
	if name == v {
		return false
	}
	if strings.HasPrefix(name, "{") && strings.HasSuffix(name, "}") {
		name = name[1 : len(name)-1]
	}
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// secretWords mark a flag or query parameter whose value is a secret.
var secretWords = []string{"token", "secret", "password", "passwd", "key", "auth", "credential"}

func secretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// maskArgs masks the value of a secret-looking flag: "--api-key=v", and
// the argument after "--token".
func maskArgs(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if name, v, ok := strings.Cut(a, "="); ok {
			if secretName(name) && v != "" {
				out[i] = name + "=" + maskValue(v)
			}
			continue
		}
		if secretName(a) && i+1 < len(out) && !strings.HasPrefix(out[i+1], "-") {
			out[i+1] = maskValue(out[i+1])
		}
	}
	return out
}

// minSecretLen is the shortest value redact replaces in a message:
// shorter ones would mask ordinary words.
const minSecretLen = 4

// redact masks in msg the secret values of server s's config (env and
// header values as resolved, OAuth secrets, secret-looking URL query
// values and arguments, a URL password), which transport errors may
// quote.
func redact(msg string, s config.MCPServer) string {
	var secrets []string
	add := func(v string) {
		if len(v) >= minSecretLen && !isEnvRef(v) {
			secrets = append(secrets, v)
			if _, token, ok := strings.Cut(v, " "); ok && len(token) >= minSecretLen {
				secrets = append(secrets, token) // "Bearer <token>"
			}
		}
	}
	for _, v := range s.Env {
		add(v)
	}
	for _, v := range s.Headers {
		add(v)
	}
	if s.OAuth != nil {
		add(s.OAuth.ClientSecret)
		add(s.OAuth.RefreshToken)
	}
	if u, err := url.Parse(s.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for k, vs := range u.Query() {
			if secretName(k) {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	masked := maskArgs(s.Args)
	for i, a := range s.Args {
		if masked[i] != a {
			_, v, _ := strings.Cut(a, "=")
			add(cmp.Or(v, a))
		}
	}
	// Longest first, so that a secret containing another is masked whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, v := range secrets {
		msg = strings.ReplaceAll(msg, v, secretMask)
	}
	return msg
}

// maskURL masks a URL's password and its secret-looking query values.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), secretMask)
	}
	q := u.Query()
	changed := false
	for k, vs := range q {
		if secretName(k) {
			for i := range vs {
				vs[i] = maskValue(vs[i])
			}
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	s := u.String()
	if us, err := url.PathUnescape(s); err == nil {
		s = us // show "****" and "$VAR" as such
	}
	return s
}
