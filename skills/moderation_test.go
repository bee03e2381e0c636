package skills

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
)

// fakeModel answers every request with reply (or fails with err) and
// records the last request.
type fakeModel struct {
	reply string
	err   error
	last  *model.Request
}

func (m *fakeModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	m.last = req
	return func(yield func(model.Event, error) bool) {
		if m.err != nil {
			yield(model.Event{}, m.err)
			return
		}
		yield(model.Event{Response: &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: m.reply}}}, nil)
	}
}

func TestModeratorDecisions(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name       string
		model      model.ChatModel
		failOpen   bool
		executable bool
		want       Decision
	}{
		{"allow", &fakeModel{reply: `{"decision":"allow","reason":"fine"}`}, false, false, Decision{Decision: "allow", Reason: "fine"}},
		{"fenced", &fakeModel{reply: "```json\n{\"decision\": \"WARN\", \"reason\": \"external api\"}\n```"}, false, false, Decision{Decision: "warn", Reason: "external api"}},
		{"embedded", &fakeModel{reply: `Sure. {"decision":"block","reason":"has {braces} and \"quotes\""} done`}, false, false, Decision{Decision: "block", Reason: `has {braces} and "quotes"`}},
		{"no reason", &fakeModel{reply: `{"decision":"allow"}`}, false, false, Decision{Decision: "allow", Reason: "No reason provided."}},
		{"unparsable", &fakeModel{reply: "looks good to me"}, true, false, Decision{Decision: "block", Reason: "Security scan produced unparseable output; manual review required."}},
		{"bad decision", &fakeModel{reply: `{"decision":"maybe"}`}, true, false, Decision{Decision: "block", Reason: "Security scan produced unparseable output; manual review required."}},
		{"down executable", &fakeModel{err: down}, true, true, Decision{Decision: "block", Reason: "Security scan unavailable for executable content; manual review required."}},
		{"down fail closed", &fakeModel{err: down}, false, false, Decision{Decision: "block", Reason: "Security scan unavailable for skill content; manual review required."}},
		{"down fail open", &fakeModel{err: down}, true, false, Decision{Decision: "warn", Reason: "Security scan unavailable for non-executable skill content; manual review recommended."}},
		{"no model", nil, false, false, Decision{Decision: "block", Reason: "Security scan unavailable for skill content; manual review required."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewModerator(tc.model, ModeratorOptions{FailOpen: tc.failOpen}).Scan(t.Context(), "content", tc.executable, "demo/SKILL.md", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Decision != tc.want.Decision || got.Reason != tc.want.Reason {
				t.Errorf("Scan = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestModeratorPrompt(t *testing.T) {
	m := &fakeModel{reply: `{"decision":"allow","reason":"ok"}`}
	f := newFinding("network-cleartext-http", "SKILL.md", 5, "http://x.io")
	if _, err := NewModerator(m, ModeratorOptions{}).Scan(t.Context(), "BODY", true, "demo/scripts/a.py", []Finding{f}); err != nil {
		t.Fatal(err)
	}
	if m.last.Thinking || len(m.last.Messages) != 2 || m.last.Messages[0].Role != model.RoleSystem {
		t.Fatalf("request = %+v", m.last)
	}
	user := m.last.Messages[1].Content
	for _, want := range []string{"Location: demo/scripts/a.py\nExecutable: true\n", "- network-cleartext-http (MEDIUM): Skill content references a non-local cleartext HTTP endpoint. at SKILL.md:5. Evidence: http://x.io.", "-----\nBODY\n-----"} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
}

func TestModeratorCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := NewModerator(&fakeModel{err: context.Canceled}, ModeratorOptions{}).Scan(ctx, "x", false, "l", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
