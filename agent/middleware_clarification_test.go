package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

func args(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := decodeArgs([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestClarificationOptionsNormalised(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []string
	}{
		{"list", `["a", "b"]`, []string{"a", "b"}},
		{"JSON string", `"[\"x\", \"y\"]"`, []string{"x", "y"}},
		{"plain string", `"just one"`, []string{"just one"}},
		{"dict flattened", `{"option": [{"label": "A"}, {"label": "B"}]}`, []string{"A", "B"}},
		{"nested dict leaves", `{"a": {"b": 1, "c": true}}`, []string{"1", "True"}},
		{"null", `null`, nil},
		{"scalar", `7`, []string{"7"}},
		{"blanks dropped, deduped, tags stripped", `["  a ", "", "   ", "a", "<b>bold</b>", "<option>c</option>"]`, []string{"a", "bold", "c"}},
		{"non-string items", `[1, 2.5, false, null]`, []string{"1", "2.5", "False", "None"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := args(t, `{"options": `+tc.raw+`}`)
			got := normalizeOptions(m["options"])
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClarificationFieldsNormalised(t *testing.T) {
	long := strings.Repeat("x", 201)
	many := func(n int, f func(i int) string) string {
		var parts []string
		for i := range n {
			parts = append(parts, f(i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	for _, tc := range []struct {
		name   string
		fields string
		want   string // JSON of the normalised fields, "null" when dropped
	}{
		{"unknown type becomes text", `[{"name":"a","type":"colour"}]`,
			`[{"label":"a","name":"a","required":false,"type":"text"}]`},
		{"select without options becomes text", `[{"name":"a","type":"select"}]`,
			`[{"label":"a","name":"a","required":false,"type":"text"}]`},
		{"select options", `[{"name":"env","label":"Env","type":"select","options":["dev","prod"],"required":1,"placeholder":" pick "}]`,
			`[{"label":"Env","name":"env","options":[{"id":"env-option-1","label":"dev","value":"dev"},{"id":"env-option-2","label":"prod","value":"prod"}],"placeholder":"pick","required":true,"type":"select"}]`},
		{"required string true", `[{"name":"a","required":" TRUE "}]`, `[{"label":"a","name":"a","required":true,"type":"text"}]`},
		{"JSON string fields", `"[{\"name\":\"a\"}]"`, `[{"label":"a","name":"a","required":false,"type":"text"}]`},
		{"duplicate names", `[{"name":"a"},{"name":"a"}]`, `null`},
		{"reserved name", `[{"name":"constructor"}]`, `null`},
		{"blank name", `[{"name":"  "}]`, `null`},
		{"non-object entry", `[{"name":"a"}, "b"]`, `null`},
		{"more than 16 fields", many(17, func(i int) string { return fmt.Sprintf(`{"name":"f%d"}`, i) }), `null`},
		{"more than 24 options", `[{"name":"a","type":"select","options":` + many(25, func(i int) string { return fmt.Sprintf(`"o%d"`, i) }) + `}]`, `null`},
		{"label over 200", `[{"name":"a","label":"` + long + `"}]`, `null`},
		{"name over 200", `[{"name":"` + long + `"}]`, `null`},
		{"placeholder over 200", `[{"name":"a","placeholder":"` + long + `"}]`, `null`},
		{"option over 200", `[{"name":"a","type":"multi_select","options":["` + long + `"]}]`, `null`},
		{"over 16 KiB serialised", many(16, func(i int) string {
			return fmt.Sprintf(`{"name":"f%d","label":"%s","placeholder":"%s","type":"select","options":%s}`, i,
				strings.Repeat("l", 200), strings.Repeat("p", 200), many(24, func(j int) string { return fmt.Sprintf(`"%d%s"`, j, strings.Repeat("o", 100)) }))
		}), `null`},
		{"not a list", `{"name":"a"}`, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := args(t, `{"fields": `+tc.fields+`}`)
			got, err := json.Marshal(normalizeFields(m["fields"]))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}

	t.Run("fields beat options and the text lists fields", func(t *testing.T) {
		r := ClarificationResult("c1", args(t, `{"question":"Deploy settings?","clarification_type":"missing_info",
			"options":["ignored"],
			"fields":[{"name":"env","label":"Environment","type":"select","options":["dev","prod"],"required":true},
			          {"name":"tags","type":"multi_select","options":["a","b"]},
			          {"name":"note","placeholder":"optional"}]}`))
		want := "❓ Deploy settings?\n\n" +
			"  1. Environment (required) — options: dev / prod\n" +
			"  2. tags — options: a / b (multiple allowed)\n" +
			"  3. note\n\n" +
			"Please reply with a value for each field."
		if got := r.TextContent(); got != want {
			t.Errorf("text:\n%s\nwant:\n%s", got, want)
		}
		p := r.Artifact.(map[string]any)["human_input"].(map[string]any)
		if p["version"] != 2 || p["input_mode"] != "form" || p["options"] != nil || len(p["fields"].([]any)) != 3 {
			t.Errorf("payload = %v", p)
		}
	})
	t.Run("a dropped form falls back to options", func(t *testing.T) {
		r := ClarificationResult("c1", args(t, `{"question":"Q","clarification_type":"approach_choice",
			"options":["x","y"],"fields":[{"name":"__proto__"}]}`))
		p := r.Artifact.(map[string]any)["human_input"].(map[string]any)
		if p["version"] != 1 || p["input_mode"] != "choice_with_other" || p["fields"] != nil {
			t.Errorf("payload = %v", p)
		}
		if got := r.TextContent(); got != "🔀 Q\n\n  1. x\n  2. y" {
			t.Errorf("text = %q", got)
		}
	})
}

func TestClarificationStableIDAndPayload(t *testing.T) {
	a := args(t, `{"question":"Which file?","clarification_type":"missing_info","context":"Two reports exist."}`)
	r := ClarificationResult("call_9", a)
	if r.MessageID != "clarification:call_9" || !r.End {
		t.Errorf("id %q end %v", r.MessageID, r.End)
	}
	if got := r.TextContent(); got != "❓ Two reports exist.\n\nWhich file?" {
		t.Errorf("text = %q", got)
	}
	noID := ClarificationResult("", a)
	if !strings.HasPrefix(noID.MessageID, "clarification:") || len(noID.MessageID) != len("clarification:")+16 {
		t.Errorf("digest id = %q", noID.MessageID)
	}
	if again := ClarificationResult("", a); again.MessageID != noID.MessageID {
		t.Errorf("digest id not stable: %q vs %q", again.MessageID, noID.MessageID)
	}
	p := noID.Artifact.(map[string]any)["human_input"].(map[string]any)
	if _, ok := p["tool_call_id"]; ok {
		t.Error("tool_call_id present without an id")
	}

	// The artifact survives serialisation (as a checkpoint stores it).
	b, err := json.Marshal(r.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"human_input": map[string]any{
		"version": float64(1), "kind": "human_input_request", "source": "ask_clarification",
		"request_id": "clarification:call_9", "clarification_type": "missing_info", "question": "Which file?",
		"input_mode": "free_text", "tool_call_id": "call_9", "context": "Two reports exist.",
	}}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("payload after round trip (-want +got):\n%s", diff)
	}

	nullCtx := ClarificationResult("c", args(t, `{"question":"Q","clarification_type":"risk_confirmation","context":null}`))
	p = nullCtx.Artifact.(map[string]any)["human_input"].(map[string]any)
	if v, ok := p["context"]; !ok || v != nil {
		t.Errorf("explicit null context: %v %v", v, ok)
	}
	if got := nullCtx.TextContent(); got != "⚠️ Q" {
		t.Errorf("text = %q", got)
	}
}

func TestClarificationMiddleware(t *testing.T) {
	var reached []string
	next := func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		reached = append(reached, call.Name)
		return tool.Text("ran " + call.Name), nil
	}
	h := Clarification()(next)
	raw := json.RawMessage(`{"question":"Sure?","clarification_type":"risk_confirmation"}`)

	res, err := h(t.Context(), &tool.Call{ID: "c1", Name: "ask_clarification"}, raw)
	if err != nil || !res.End || res.MessageID != "clarification:c1" {
		t.Fatalf("interactive: %+v %v", res, err)
	}

	res, err = h(t.Context(), &tool.Call{ID: "c2", Name: "ask_clarification",
		Context: map[string]any{"disable_clarification": true}}, raw)
	if err != nil || res.End || res.IsError || res.TextContent() != ClarificationDisabledText || res.MessageID != "clarification:c2" {
		t.Fatalf("disabled: %+v %v", res, err)
	}
	if res.Artifact != nil {
		t.Errorf("disabled result has an artifact")
	}

	res, err = h(t.Context(), &tool.Call{ID: "c3", Name: "bash"}, json.RawMessage(`{}`))
	if err != nil || res.TextContent() != "ran bash" {
		t.Fatalf("pass-through: %+v %v", res, err)
	}
	if diff := cmp.Diff([]string{"bash"}, reached); diff != "" {
		t.Errorf("tools reached (-want +got):\n%s", diff)
	}
}
