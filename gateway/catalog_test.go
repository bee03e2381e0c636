package gateway_test

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"
)

// TestListTools_badAgentArgumentIs422: an agent argument that is not an
// agent name is the caller's mistake (422 naming the argument), not a
// server failure; an unknown but well-formed name is 404.
func TestListTools_badAgentArgumentIs422(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		name, agent string
		want        int
	}{
		{"traversal", "../../etc", 422},
		{"absolute path", "/etc/passwd", 422},
		{"dot dot", "..", 422},
		{"slash", "a/b", 422},
		{"backslash", `a\b`, 422},
		{"space", "my agent", 422},
		{"underscore", "my_agent", 422},
		{"NUL byte", "a\x00b", 422},
		{"unicode", "agënt", 422},
		{"unknown but valid", "nobody-here", 404},
		{"empty is the lead agent", "", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := e.do("GET", "/api/tools?"+url.Values{"agent": {c.agent}}.Encode(), "", nil)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.want, body)
			}
			if c.want != 422 {
				return
			}
			var out struct {
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			if !strings.Contains(out.Detail, "agent") || !strings.Contains(out.Detail, "Must match pattern") {
				t.Errorf("detail %q does not name the agent argument and its rule", out.Detail)
			}
		})
	}
}
