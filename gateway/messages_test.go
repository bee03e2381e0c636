package gateway_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/model"
)

// TestMessageDictRoundTrip: every role survives model → LangChain dict →
// model.
func TestMessageDictRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		m    model.Message
	}{
		{"human with files", model.Message{ID: "h1", Role: model.RoleUser, Content: "hi",
			Meta: map[string]any{"files": []any{map[string]any{"filename": "a.txt"}}}}},
		{"ai with tool calls and reasoning", model.Message{ID: "a1", Role: model.RoleAssistant, Content: "let me look",
			Reasoning: "thinking", ToolCalls: []model.ToolCall{{ID: "c1", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt"}`)}}}},
		{"tool error with artifact", model.Message{ID: "t1", Role: model.RoleTool, Content: "Error: no", ToolCallID: "c1",
			Name: "ls", Status: "error", Artifact: map[string]any{"human_input": map[string]any{"kind": "x"}}}},
		{"system", model.Message{ID: "s1", Role: model.RoleSystem, Content: "be brief"}},
		{"image", model.Message{ID: "i1", Role: model.RoleUser, Content: "see",
			Parts: []model.Part{{Type: model.PartImage, MIMEType: "image/png", Data: []byte{1, 2, 3}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := json.Marshal(gateway.MessageDict(c.m))
			if err != nil {
				t.Fatal(err)
			}
			got, err := gateway.ParseMessage(data)
			if err != nil {
				t.Fatalf("parse %s: %v", data, err)
			}
			if diff := cmp.Diff(c.m, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s\n%s", diff, data)
			}
		})
	}
}

// TestMessageDictHidesImagesOfHiddenMessages: DeerFlow never ships the
// image payload of a hide_from_ui message.
func TestMessageDictHidesImagesOfHiddenMessages(t *testing.T) {
	m := model.Message{ID: "i", Role: model.RoleUser, Content: "injected", Meta: map[string]any{"hide_from_ui": true},
		Parts: []model.Part{{Type: model.PartImage, MIMEType: "image/png", Data: []byte("big")}}}
	if got := gateway.MessageDict(m)["content"]; got != "injected" {
		t.Errorf("content = %v", got)
	}
}

func TestParseMessageErrors(t *testing.T) {
	for _, in := range []string{`{"type":"robot","content":"x"}`, `{"type":"human","content":5}`, `[1]`} {
		if _, err := gateway.ParseMessage([]byte(in)); err == nil {
			t.Errorf("ParseMessage(%s) accepted", in)
		}
	}
	m, err := gateway.ParseMessage([]byte(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`))
	if err != nil || m.Role != model.RoleUser || m.Content != "a\nb" {
		t.Errorf("OpenAI-style message = %+v, %v", m, err)
	}
}

// FuzzParseMessage: any input is either refused or converts to a message
// whose dict converts back to the same message.
func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(`{"type":"human","content":[{"type":"text","text":"hi"}],"additional_kwargs":{"files":[]}}`))
	f.Add([]byte(`{"type":"ai","content":"x","tool_calls":[{"id":"1","name":"ls","args":{"a":1}}]}`))
	f.Add([]byte(`{"type":"tool","content":"r","tool_call_id":"1","status":"error","artifact":[1]}`))
	f.Add([]byte(`{"type":"AIMessageChunk","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAEC"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := gateway.ParseMessage(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(gateway.MessageDict(m))
		if err != nil {
			t.Fatalf("dict of %+v does not marshal: %v", m, err)
		}
		m2, err := gateway.ParseMessage(out)
		if err != nil {
			t.Fatalf("dict %s does not parse back: %v", out, err)
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(m2)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the message:\n%s\n%s", a, b)
		}
	})
}
