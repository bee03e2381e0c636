package guardrails

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"
)

func load(t *testing.T, src string) *config.Config {
	t.Helper()
	c, err := config.Parse("config.yaml", []byte(src), func(k string) (string, bool) {
		if k == "POLICY_TOKEN" {
			return "tok-123", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Path = "config.yaml" // as Load sets it
	return c
}

// DeerFlow's example section builds the allowlist provider and denies
// write_file (test_protocol_isinstance_check: the built-in provider is a
// Provider).
func TestFromConfig_deerFlowExample(t *testing.T) {
	c := load(t, "guardrails:\n  enabled: true\n  provider:\n    use: deerflow.guardrails.builtin:AllowlistProvider\n"+
		"    config:\n      denied_tools: [\"write_file\"]\n")
	g, err := FromConfig(c, DefaultRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.opts.Provider.(*AllowlistProvider); !ok || g.opts.FailOpen {
		t.Fatalf("provider %T, fail open %v", g.opts.Provider, g.opts.FailOpen)
	}
	res, h, _ := run(t, g, "write_file", nil)
	if h.runs != 0 || res.TextContent() != "Guardrail denied: tool 'write_file' was blocked (oap.tool_not_allowed). "+
		"Reason: tool 'write_file' is denied. Choose an alternative approach." {
		t.Errorf("runs %d, result %q", h.runs, res.TextContent())
	}
	if _, h, _ := run(t, g, "read_file", nil); h.runs != 1 {
		t.Error("read_file did not run")
	}
}

func TestFromConfig_allowlistEmptyVersusAbsent(t *testing.T) {
	tests := []struct {
		name, config string
		lsRuns       bool
	}{
		{"absent allowed_tools: no restriction", "{}", true},
		{"null allowed_tools: no restriction", "{allowed_tools: null}", true},
		{"empty allowed_tools: nothing is allowed", "{allowed_tools: []}", false},
		{"empty denied_tools: nothing is denied", "{denied_tools: []}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, "guardrails:\n  enabled: true\n  provider:\n    use: deerflow.guardrails.builtin:AllowlistProvider\n    config: "+tt.config+"\n")
			g, err := FromConfig(c, DefaultRegistry(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, h, _ := run(t, g, "ls", nil); (h.runs == 1) != tt.lsRuns {
				t.Errorf("ls ran %v, want %v", h.runs == 1, tt.lsRuns)
			}
		})
	}
}

func TestFromConfig_disabledHasNoGuard(t *testing.T) {
	c := load(t, "guardrails:\n  enabled: false\n  provider: {use: my_guardrail:MyGuardrailProvider}\n")
	if g, err := FromConfig(c, DefaultRegistry(), nil); g != nil || err != nil {
		t.Errorf("guard %v, err %v", g, err)
	}
}

func TestFromConfig_errorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name, section, want string
	}{
		{"a Python class Antler does not have", "  provider:\n    use: aport_guardrails.providers.generic:OAPGuardrailProvider\n",
			`config.yaml:4: guardrails.provider.use: unknown guardrail provider "aport_guardrails.providers.generic:OAPGuardrailProvider"`},
		{"unknown allowlist key", "  provider:\n    use: deerflow.guardrails.builtin:AllowlistProvider\n    config:\n      blocked: [bash]\n",
			`config.yaml:6: guardrails.provider.config.blocked: unknown key "blocked"`},
		{"allowlist of a string", "  provider:\n    use: deerflow.guardrails.builtin:AllowlistProvider\n    config:\n      denied_tools: bash\n",
			"config.yaml:6: guardrails.provider.config.denied_tools: must be a list of strings"},
		{"command missing", "  provider:\n    use: antler:command\n    config: {timeout: 5}\n",
			"guardrails.provider.config.command: is required"},
		{"command timeout out of range", "  provider:\n    use: antler:command\n    config:\n      command: [x]\n      timeout: 0\n",
			"config.yaml:7: guardrails.provider.config.timeout: must be more than 0"},
		{"http without url", "  provider:\n    use: antler:http\n    config: {}\n",
			"guardrails.provider.config.url: url must be an http or https URL"},
		{"http size bound too large", "  provider:\n    use: antler:http\n    config:\n      url: http://127.0.0.1:1/\n      max_response_bytes: 1000000000\n",
			"config.yaml:7: guardrails.provider.config.max_response_bytes: must be a whole number of bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, "guardrails:\n  enabled: true\n"+tt.section)
			_, err := FromConfig(c, DefaultRegistry(), nil)
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a *config.Error containing %q", err, tt.want)
			}
		})
	}
}

// The HTTP provider's headers take $VAR values as the rest of config.yaml.
func TestFromConfig_httpHeadersFromEnvironment(t *testing.T) {
	srv, hdr := policyServer(t, func(w http.ResponseWriter, _ *Request) { w.Write([]byte(`{"allow":true}`)) })
	c := load(t, "guardrails:\n  enabled: true\n  provider:\n    use: antler:http\n    config:\n      url: "+srv.URL+
		"\n      headers: {Authorization: $POLICY_TOKEN}\n      timeout: 5\n")
	g, err := FromConfig(c, DefaultRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, h, _ := run(t, g, "ls", nil); h.runs != 1 || hdr().Get("Authorization") != "tok-123" {
		t.Errorf("runs %d, Authorization %q", h.runs, hdr().Get("Authorization"))
	}
}

// An embedding program registers its own provider under a use string,
// replacing a DeerFlow class path with Go.
func TestRegistry_embedderProvider(t *testing.T) {
	reg := DefaultRegistry()
	reg.Register(func(env Env, spec *config.GuardrailProvider) (Provider, error) {
		s := NewSettings(env, spec)
		word := s.String("word")
		if err := s.Done(); err != nil {
			return nil, err
		}
		return &fakeProvider{decide: func(r *Request) (Decision, error) {
			return Decision{Allow: !strings.Contains(string(r.ToolInput), word),
				Reasons: []Reason{{Code: "custom.blocked", Message: word + " not allowed"}}, PolicyID: "custom.v1"}, nil
		}}, nil
	}, "my_guardrail:MyGuardrailProvider")
	c := load(t, "guardrails:\n  enabled: true\n  provider:\n    use: my_guardrail:MyGuardrailProvider\n    config: {word: delete}\n")
	g, err := FromConfig(c, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d, err := g.opts.Provider.Evaluate(context.Background(), &Request{ToolName: "bash", ToolInput: []byte(`{"command":"delete x"}`)})
	if err != nil || d.Allow || d.PolicyID != "custom.v1" {
		t.Errorf("decision %+v, err %v", d, err)
	}
	if got := strings.Join(reg.Uses(), " "); !strings.Contains(got, "my_guardrail:MyGuardrailProvider") {
		t.Errorf("uses %s", got)
	}
}

// The commented guardrails section of the example config.yaml, once
// uncommented and enabled, loads and denies write_file as documented.
func TestExampleConfigGuardrailsSection(t *testing.T) {
	data, err := os.ReadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for _, line := range strings.Split(string(data), "\n") {
		if line == "# guardrails:" {
			block = append(block, "guardrails:")
			continue
		}
		if len(block) == 0 {
			continue
		}
		if !strings.HasPrefix(line, "#   ") {
			break
		}
		block = append(block, strings.TrimPrefix(line, "# "))
	}
	src := strings.Replace(strings.Join(block, "\n")+"\n", "enabled: false", "enabled: true", 1)
	g, err := FromConfig(load(t, src), DefaultRegistry(), nil)
	if err != nil || g == nil {
		t.Fatalf("example section %q: guard %v, err %v", src, g, err)
	}
	if _, h, _ := run(t, g, "write_file", nil); h.runs != 0 {
		t.Error("write_file ran")
	}
	if _, h, _ := run(t, g, "read_file", nil); h.runs != 1 {
		t.Error("read_file did not run")
	}
}
