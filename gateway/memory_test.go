package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// memoryDoc is the memory document as DeerFlow's frontend reads it
// (src/core/memory/types.ts), decoded loosely so that the test sees
// every key the gateway sends.
type memoryDoc = map[string]any

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not an object", v)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// factsOf returns the facts of a document.
func factsOf(t *testing.T, d memoryDoc) []map[string]any {
	t.Helper()
	raw, ok := d["facts"].([]any)
	if !ok {
		t.Fatalf("facts is %T, want a list: %v", d["facts"], d)
	}
	out := make([]map[string]any, len(raw))
	for i, f := range raw {
		out[i] = f.(map[string]any)
	}
	return out
}

// checkDocShape fails unless d has exactly the keys of DeerFlow's
// MemoryResponse and every fact those of its Fact (the optional ones
// left out when unset, as response_model_exclude_none does).
func checkDocShape(t *testing.T, d memoryDoc) {
	t.Helper()
	if diff := cmp.Diff([]string{"facts", "history", "lastUpdated", "user", "version"}, keysOf(t, d)); diff != "" {
		t.Errorf("document keys (-want +got):\n%s", diff)
	}
	section := []string{"summary", "updatedAt"}
	for part, names := range map[string][]string{
		"user":    {"personalContext", "topOfMind", "workContext"},
		"history": {"earlierContext", "longTermBackground", "recentMonths"},
	} {
		if diff := cmp.Diff(names, keysOf(t, d[part])); diff != "" {
			t.Errorf("%s keys (-want +got):\n%s", part, diff)
		}
		for _, n := range names {
			if diff := cmp.Diff(section, keysOf(t, d[part].(map[string]any)[n])); diff != "" {
				t.Errorf("%s.%s keys (-want +got):\n%s", part, n, diff)
			}
		}
	}
	required := []string{"category", "confidence", "content", "createdAt", "id", "source"}
	for i, f := range factsOf(t, d) {
		ks := keysOf(t, f)
		for _, k := range required {
			if !slices.Contains(ks, k) {
				t.Errorf("facts[%d] lacks %q: %v", i, k, f)
			}
		}
		for _, k := range ks {
			if !slices.Contains(required, k) && !slices.Contains([]string{"sourceError", "updatedAt"}, k) {
				t.Errorf("facts[%d] has a key DeerFlow's Fact does not: %q", i, k)
			}
		}
	}
}

// detail sends a request and returns the status and the error detail.
func (e *env) detail(method, path, token string, body any) (int, string) {
	e.t.Helper()
	resp := e.do(method, path, token, body)
	defer resp.Body.Close()
	var b struct {
		Detail string `json:"detail"`
	}
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(data, &b); err != nil {
			e.t.Fatalf("%s %s: %d answer %s is not {\"detail\": ...}: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode, b.Detail
}

// TestMemoryRoutes_shapes walks every /api/memory route the frontend
// calls (src/core/memory/api.ts) and checks DeerFlow's document shape,
// statuses and error texts (gateway/routers/memory.py).
func TestMemoryRoutes_shapes(t *testing.T) {
	e := newEnv(t, envOptions{})

	var empty memoryDoc
	e.json("GET", "/api/memory", "", nil, 200, &empty)
	checkDocShape(t, empty)
	if empty["version"] != "1.0" || len(factsOf(t, empty)) != 0 {
		t.Errorf("a new user's memory = %v", empty)
	}

	var created memoryDoc
	e.json("POST", "/api/memory/facts", "", map[string]any{"content": "Prefers Go", "category": "preference", "confidence": 0.9}, 200, &created)
	checkDocShape(t, created)
	facts := factsOf(t, created)
	if len(facts) != 1 {
		t.Fatalf("after POST: %v", created)
	}
	f := facts[0]
	id, _ := f["id"].(string)
	if !strings.HasPrefix(id, "fact_") || f["content"] != "Prefers Go" || f["category"] != "preference" ||
		f["confidence"] != 0.9 || f["source"] != "manual" || f["createdAt"] == "" || created["lastUpdated"] == "" {
		t.Errorf("created fact = %v (document %v)", f, created)
	}
	// The defaults of FactCreateRequest: category context, confidence 0.5.
	var defaults memoryDoc
	e.json("POST", "/api/memory/facts", "", map[string]any{"content": "Lives in Lisbon"}, 200, &defaults)
	if g := factsOf(t, defaults)[1]; g["category"] != "context" || g["confidence"] != 0.5 {
		t.Errorf("fact with defaults = %v", g)
	}

	var patched memoryDoc
	e.json("PATCH", "/api/memory/facts/"+id, "", map[string]any{"content": "Prefers Go 1.26"}, 200, &patched)
	checkDocShape(t, patched)
	if g := factsOf(t, patched)[0]; g["content"] != "Prefers Go 1.26" || g["category"] != "preference" || g["confidence"] != 0.9 {
		t.Errorf("PATCH of the content only changed more: %v", g)
	}
	e.json("PATCH", "/api/memory/facts/"+id, "", map[string]any{"confidence": 0.3, "category": "knowledge"}, 200, &patched)
	if g := factsOf(t, patched)[0]; g["content"] != "Prefers Go 1.26" || g["category"] != "knowledge" || g["confidence"] != 0.3 {
		t.Errorf("PATCH of category and confidence = %v", g)
	}

	var exported, got memoryDoc
	e.json("GET", "/api/memory/export", "", nil, 200, &exported)
	e.json("GET", "/api/memory", "", nil, 200, &got)
	checkDocShape(t, exported)
	if diff := cmp.Diff(got, exported); diff != "" {
		t.Errorf("export differs from GET (-get +export):\n%s", diff)
	}

	var deleted memoryDoc
	e.json("DELETE", "/api/memory/facts/"+id, "", nil, 200, &deleted)
	checkDocShape(t, deleted)
	if fs := factsOf(t, deleted); len(fs) != 1 || fs[0]["content"] != "Lives in Lisbon" {
		t.Errorf("after DELETE: %v", fs)
	}

	var cleared memoryDoc
	e.json("DELETE", "/api/memory", "", nil, 200, &cleared)
	checkDocShape(t, cleared)
	if len(factsOf(t, cleared)) != 0 {
		t.Errorf("after clear: %v", cleared)
	}

	// Import replaces the document with the exported one, ids and
	// summaries kept, and answers it.
	exported["user"].(map[string]any)["workContext"] = map[string]any{"summary": "Builds Antler", "updatedAt": "2026-01-01T00:00:00Z"}
	var imported memoryDoc
	e.json("POST", "/api/memory/import", "", exported, 200, &imported)
	checkDocShape(t, imported)
	e.json("GET", "/api/memory", "", nil, 200, &got)
	opt := cmpopts.IgnoreMapEntries(func(k string, _ any) bool { return k == "lastUpdated" })
	if diff := cmp.Diff(exported, got, opt); diff != "" {
		t.Errorf("GET after import differs from the imported document (-imported +got):\n%s", diff)
	}
	if diff := cmp.Diff(imported, got); diff != "" {
		t.Errorf("import's answer differs from GET (-import +get):\n%s", diff)
	}
}

// TestMemoryRoutes_errors: DeerFlow's statuses and texts of refused
// requests.
func TestMemoryRoutes_errors(t *testing.T) {
	e := newEnv(t, envOptions{})
	var d memoryDoc
	e.json("POST", "/api/memory/facts", "", map[string]any{"content": "Prefers Go"}, 200, &d)
	id := factsOf(t, d)[0]["id"].(string)

	for _, c := range []struct {
		name, method, path string
		body               any
		code               int
		detail             string
	}{
		{"duplicate", "POST", "/api/memory/facts", map[string]any{"content": " prefers go "}, 409, "A fact with the same content already exists."},
		{"no content", "POST", "/api/memory/facts", map[string]any{"category": "x"}, 422, "Field 'content' is required."},
		{"empty content", "POST", "/api/memory/facts", map[string]any{"content": ""}, 422, "Field 'content' should have at least 1 character."},
		{"blank content", "POST", "/api/memory/facts", map[string]any{"content": "   "}, 400, "Memory fact content cannot be empty."},
		{"confidence above 1", "POST", "/api/memory/facts", map[string]any{"content": "x", "confidence": 1.5}, 422, "Field 'confidence' should be between 0 and 1."},
		{"not JSON", "POST", "/api/memory/facts", "nope", 422, ""},
		{"patch unknown", "PATCH", "/api/memory/facts/fact_00000000", map[string]any{"content": "y"}, 404, "Memory fact 'fact_00000000' not found."},
		{"patch empty content", "PATCH", "/api/memory/facts/" + id, map[string]any{"content": ""}, 422, "Field 'content' should have at least 1 character."},
		{"patch blank content", "PATCH", "/api/memory/facts/" + id, map[string]any{"content": " "}, 400, "Memory fact content cannot be empty."},
		{"patch confidence", "PATCH", "/api/memory/facts/" + id, map[string]any{"confidence": -0.1}, 422, "Field 'confidence' should be between 0 and 1."},
		{"delete unknown", "DELETE", "/api/memory/facts/fact_00000000", nil, 404, "Memory fact 'fact_00000000' not found."},
		{"import bad fact", "POST", "/api/memory/import", map[string]any{"facts": []any{map[string]any{"id": "a", "content": "ok"}, map[string]any{"id": "b", "content": ""}}}, 400, "invalid memory input: facts[1].content is empty"},
		{"import not a document", "POST", "/api/memory/import", map[string]any{"facts": "x"}, 422, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, detail := e.detail(c.method, c.path, "", c.body)
			if code != c.code || (c.detail != "" && detail != c.detail) {
				t.Errorf("%s %s = %d %q, want %d %q", c.method, c.path, code, detail, c.code, c.detail)
			}
		})
	}
	var after memoryDoc
	e.json("GET", "/api/memory", "", nil, 200, &after)
	if fs := factsOf(t, after); len(fs) != 1 || fs[0]["content"] != "Prefers Go" {
		t.Errorf("a refused request changed the memory: %v", fs)
	}
}

// TestMemoryRoutes_noopBackend: manager_class noop keeps nothing and
// every route says so with 501, DeerFlow's answer for an unsupported
// operation.
func TestMemoryRoutes_noopBackend(t *testing.T) {
	e := newEnv(t, envOptions{config: "memory:\n  enabled: true\n  manager_class: noop\n"})
	for _, c := range []struct{ method, path, op string }{
		{"GET", "/api/memory", "get memory"},
		{"GET", "/api/memory/export", "export memory"},
		{"DELETE", "/api/memory", "clear memory"},
		{"POST", "/api/memory/facts", "create memory fact"},
		{"DELETE", "/api/memory/facts/fact_1", "delete memory fact"},
	} {
		body := any(nil)
		if c.method == "POST" {
			body = map[string]any{"content": "x"}
		}
		code, detail := e.detail(c.method, c.path, "", body)
		if code != http.StatusNotImplemented || !strings.Contains(detail, "'"+c.op+"' not supported") {
			t.Errorf("%s %s = %d %q", c.method, c.path, code, detail)
		}
	}
}

// TestMemoryRoutes_isolation: two users never see or change each other's
// memory through the routes; a fact id of one user is unknown to the
// other.
func TestMemoryRoutes_isolation(t *testing.T) {
	e := newEnv(t, envOptions{tokens: tokens()})
	var a, b memoryDoc
	e.json("POST", "/api/memory/facts", aliceToken, map[string]any{"content": "Alice's secret"}, 200, &a)
	e.json("POST", "/api/memory/facts", bobToken, map[string]any{"content": "Bob's secret"}, 200, &b)
	aliceID := factsOf(t, a)[0]["id"].(string)

	contents := func(token string) []string {
		var out []string
		for _, path := range []string{"/api/memory", "/api/memory/export"} {
			var d memoryDoc
			e.json("GET", path, token, nil, 200, &d)
			for _, f := range factsOf(t, d) {
				out = append(out, path+": "+f["content"].(string))
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{"/api/memory: Bob's secret", "/api/memory/export: Bob's secret"}, contents(bobToken)); diff != "" {
		t.Errorf("bob sees (-want +got):\n%s", diff)
	}
	// Bob can neither change nor delete Alice's fact, nor clear or
	// replace her memory.
	if code, _ := e.detail("PATCH", "/api/memory/facts/"+aliceID, bobToken, map[string]any{"content": "owned"}); code != 404 {
		t.Errorf("bob's PATCH of alice's fact = %d, want 404", code)
	}
	if code, _ := e.detail("DELETE", "/api/memory/facts/"+aliceID, bobToken, nil); code != 404 {
		t.Errorf("bob's DELETE of alice's fact = %d, want 404", code)
	}
	e.json("DELETE", "/api/memory", bobToken, nil, 200, nil)
	e.json("POST", "/api/memory/import", bobToken, map[string]any{"facts": []any{map[string]any{"content": "imported by bob"}}}, 200, nil)
	if diff := cmp.Diff([]string{"/api/memory: Alice's secret", "/api/memory/export: Alice's secret"}, contents(aliceToken)); diff != "" {
		t.Errorf("alice sees (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/api/memory: imported by bob", "/api/memory/export: imported by bob"}, contents(bobToken)); diff != "" {
		t.Errorf("bob sees after his import (-want +got):\n%s", diff)
	}
	// Without a token the routes are closed.
	if code := e.status("GET", "/api/memory", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /api/memory without a token = %d, want 401", code)
	}
}
