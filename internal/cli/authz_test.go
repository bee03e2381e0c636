package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/model/modeltest"
)

// authzConfig has two models on a modeltest server, bash and echo as
// command tools, and RBAC roles: guest may not use bash nor the model
// "other"; bob's token gives him the guest role.
func authzConfig(url string) string {
	model := func(name string) string {
		return "  - {name: " + name + ", use: langchain_openai:ChatOpenAI, model: scripted, api_key: modeltest, base_url: " + url + "}\n"
	}
	return "models:\n" + model("test") + model("other") + `sandbox: {allow_host_bash: true}
tools:
  - {name: bash, group: bash, use: antler:command, command: ["cat"]}
  - {name: echo, group: text, use: antler:command, command: ["cat"]}
gateway:
  tokens:
    - {token: tok-bob, user_id: bob, role: guest}
authorization:
  enabled: true
  provider:
    use: deerflow.authz.rbac:RbacAuthorizationProvider
    config:
      roles:
        user:  {tools: {allow: "*"}}
        guest: {tools: {allow: "*", deny: [bash]}, models: {allow: [test]}}
`
}

func listedTools(t *testing.T, cfg, home, user string) []string {
	t.Helper()
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", user, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("tools list --user %s: exit %d: %s", user, code, errOut)
	}
	var list []toolJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	return names
}

// TestAuthz_toolsListAndModelRequestWithoutBash: a user whose role
// denies bash sees no bash in `tools list --user` nor in the request the
// model gets; a user without a token entry has default_role and sees it.
func TestAuthz_toolsListAndModelRequestWithoutBash(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "hi"})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", authzConfig(srv.URL))
	home := filepath.Join(dir, "home")
	if got := listedTools(t, cfg, home, "bob"); slices.Contains(got, "bash") || !slices.Contains(got, "echo") {
		t.Errorf("tools list --user bob = %v", got)
	}
	if got := listedTools(t, cfg, home, "carol"); !slices.Contains(got, "bash") {
		t.Errorf("tools list --user carol = %v", got)
	}
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "bob", "run", "--thread", "t1", "hello")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if sent := modeltest.ToolNames(srv.LastRequest()); slices.Contains(sent, "bash") || !slices.Contains(sent, "echo") {
		t.Errorf("model request tools = %v", sent)
	}
}

// TestAuthz_deniedModelExits2: --model naming a model the user's role may
// not use is a usage error naming it.
func TestAuthz_deniedModelExits2(t *testing.T) {
	srv := modeltest.NewServer(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", authzConfig(srv.URL))
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", filepath.Join(dir, "home"), "--user", "bob",
		"run", "--model", "other", "hello")
	if code != 2 || !strings.Contains(errOut, "--model: Model 'other' is not available for your role") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if srv.Calls() != 0 {
		t.Errorf("the model was called %d times", srv.Calls())
	}
}

// TestAuthz_configErrorsExit2: a Python provider class Antler cannot
// load, and a token role the RBAC roles do not define, stop every
// command with exit 2.
func TestAuthz_configErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ src, want string }{
		"python class": {"authorization:\n  enabled: true\n  provider: {use: corp.authz:LdapProvider}\n",
			"Failed to resolve authorization provider class 'corp.authz:LdapProvider'"},
		"unknown token role": {`gateway: {tokens: [{token: t, user_id: bob, role: editor}]}
authorization:
  enabled: true
  provider: {use: deerflow.authz.rbac:RbacAuthorizationProvider, config: {roles: {user: {}}}}
`, "gateway.tokens[0].role 'editor' is not defined; known roles: ['user']"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := writeFile(t, dir, name+".yaml", tc.src)
			code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d: %s", code, errOut)
			}
		})
	}
}

// TestAuthz_toolsListWithoutModels: with no model configured, tools list
// --user still shows only what the user's role may bind.
func TestAuthz_toolsListWithoutModels(t *testing.T) {
	dir := t.TempDir()
	src := authzConfig("http://127.0.0.1:1")
	src = "models: []\n" + src[strings.Index(src, "sandbox:"):]
	cfg := writeFile(t, dir, "config.yaml", src)
	if got := listedTools(t, cfg, dir, "bob"); slices.Contains(got, "bash") || !slices.Contains(got, "echo") {
		t.Errorf("tools list --user bob = %v", got)
	}
}

// TestAuthz_doctorReportsSection: doctor names the provider and the
// --user's role.
func TestAuthz_doctorReportsSection(t *testing.T) {
	srv := modeltest.NewServer(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", authzConfig(srv.URL))
	_, out, _ := runCLI(t, nil, "--config", cfg, "--home", dir, "--user", "bob", "doctor", "--json", "--timeout", "5s")
	want := "on (provider deerflow.authz.rbac:RbacAuthorizationProvider, default_role user, fail_closed true); --user bob has role guest"
	if !strings.Contains(out, want) {
		t.Errorf("doctor output lacks %q:\n%s", want, out)
	}
}

// listButRefuseBash is an authorization provider that lets every tool be
// listed (bound) but refuses a call of bash.
type listButRefuseBash struct{}

func (listButRefuseBash) Name() string { return "list-but-refuse-bash" }
func (listButRefuseBash) Authorize(_ context.Context, r authz.Request) (authz.Decision, error) {
	if r.Resource == authz.ResourceTool && r.Action == authz.ActionCall && r.Target == "bash" {
		return authz.Decision{Reasons: []authz.Reason{{Code: "authz.denied", Message: "no bash calls"}}}, nil
	}
	return authz.Decision{Allow: true}, nil
}
func (listButRefuseBash) FilterResources(_ context.Context, _ authz.Principal, _ string, c []string) ([]string, error) {
	return c, nil
}

// TestAuthz_toolsCallGoesThroughTheCallGate: `antler tools call` asks the
// provider about the call itself, as a run's middleware does: a tool the
// provider lists but refuses to let call does not run, and the deny is
// printed.
func TestAuthz_toolsCallGoesThroughTheCallGate(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `sandbox: {allow_host_bash: true}
tools:
  - {name: bash, group: bash, use: antler:command, command: ["sh", "-c", "echo ran"]}
authorization:
  enabled: true
  provider: {use: corp:ListButRefuseBash}
`)
	var out, errOut bytes.Buffer
	opts := Options{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" },
		AuthorizationProviders: map[string]authz.Factory{"corp:ListButRefuseBash": func(map[string]any) (authz.Provider, error) {
			return listButRefuseBash{}, nil
		}}}
	code := Main(t.Context(), []string{"--config", cfg, "--home", filepath.Join(dir, "home"), "tools", "call", "bash", "--args", `{}`}, opts)
	if code == 0 || strings.Contains(out.String(), "ran") || !strings.Contains(out.String()+errOut.String(), "Guardrail denied: tool 'bash' was blocked (authz.denied)") {
		t.Errorf("tools call bash: exit %d, out %q, err %q; want the deny and no run", code, out.String(), errOut.String())
	}
}
