package openai

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/antlerhq/antler/model"
)

var raw = cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })

func TestParseTextToolCalls(t *testing.T) {
	ignoreID := cmpopts.IgnoreFields(model.ToolCall{}, "ID")
	tests := []struct {
		name, in, wantText string
		want               []model.ToolCall
	}{
		{"no block", "just text", "just text", nil},
		{"one call with typed values",
			"Let me look.\n<tool_call> <function=read_file> <parameter=path>/mnt/user-data/a.txt</parameter> <parameter=start_line>10</parameter> <parameter=flags>{\"x\": true}</parameter> </function> </tool_call>",
			"Let me look.",
			[]model.ToolCall{{Name: "read_file", Arguments: json.RawMessage(`{"flags":{"x":true},"path":"/mnt/user-data/a.txt","start_line":10}`)}}},
		{"escaped value and name",
			"<tool_call><function=bash><parameter=command>echo a &amp;&amp; cat &lt;f</parameter></function></tool_call>",
			"",
			[]model.ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"echo a \u0026\u0026 cat \u003cf"}`)}}},
		{"two calls",
			"<tool_call><function=ls><parameter=path>/a</parameter></function></tool_call>\n<tool_call><function=ls><parameter=path>/b</parameter></function></tool_call>",
			"",
			[]model.ToolCall{{Name: "ls", Arguments: json.RawMessage(`{"path":"/a"}`)}, {Name: "ls", Arguments: json.RawMessage(`{"path":"/b"}`)}}},
		{"nested block's parameters are not the parent's",
			"<tool_call><function=outer><parameter=a>1</parameter><tool_call><function=inner><parameter=b>2</parameter></function></tool_call></function></tool_call>",
			"",
			[]model.ToolCall{{Name: "outer", Arguments: json.RawMessage(`{"a":1}`)}}},
		{"block without a function is dropped", "a <tool_call>nothing</tool_call> b", "a  b", nil},
		{"bad JSON stays a string",
			"<tool_call><function=f><parameter=v>{not json</parameter></function></tool_call>", "",
			[]model.ToolCall{{Name: "f", Arguments: json.RawMessage(`{"v":"{not json"}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, calls := parseTextToolCalls(tt.in)
			if text != tt.wantText {
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if diff := cmp.Diff(tt.want, calls, raw, ignoreID); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			for _, c := range calls {
				if len(c.ID) != len("call_")+10 {
					t.Errorf("call id %q is not call_ and 10 hex digits", c.ID)
				}
			}
		})
	}
}

func TestDecodeEscapedNewlines(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"none", "a\nb", "a\nb"},
		{"outside fences", `line1\nline2`, "line1\nline2"},
		{"fence kept", "a\\n```go\nfmt.Print(\"\\n\")\n```\\nb", "a\n```go\nfmt.Print(\"\\n\")\n```\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decodeEscapedNewlines(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTextConversation(t *testing.T) {
	in := []model.Message{
		model.SystemText("sys"),
		{Role: model.RoleUser, Content: "see", Parts: []model.Part{{Type: model.PartImage, MIMEType: "image/png", Data: []byte("x")}, {Type: model.PartText, Text: "this"}}},
		{Role: model.RoleAssistant, Content: "Looking.", Reasoning: "dropped", ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"/a","content":"x<y","append":false}`)}}},
		{Role: model.RoleTool, ToolCallID: "c1", Name: "write_file", Content: "ok </tool_response> & more"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c2", Name: "ls"}}},
		{Role: model.RoleAssistant, Content: ""},
		{ID: "x", Remove: true},
	}
	want := []model.Message{
		{Role: model.RoleSystem, Content: "sys"},
		{Role: model.RoleUser, Content: "see\nthis"},
		{Role: model.RoleAssistant, Content: "Looking.\n<tool_call> <function=write_file> <parameter=path>/a</parameter> <parameter=content>x&lt;y</parameter> <parameter=append>false</parameter> </function> </tool_call>"},
		{Role: model.RoleUser, Content: "<tool_response>\nok &lt;/tool_response&gt; &amp; more\n</tool_response>"},
		{Role: model.RoleAssistant, Content: "<tool_call> <function=ls>  </function> </tool_call>"},
		{Role: model.RoleAssistant, Content: " "},
	}
	if diff := cmp.Diff(want, textConversation(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSplitThinkTags(t *testing.T) {
	tests := []struct{ name, content, reasoning, wantContent, wantReasoning string }{
		{"none", "hi", "r", "hi", "r"},
		{"one block", "<think>\n plan \n</think>\n\nanswer", "", "answer", "plan"},
		{"merged without repeat", "<think>plan</think>answer<think>more</think>", "plan", "answer", "plan\n\nmore"},
		{"unclosed", "<think>half", "", "<think>half", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := splitThinkTags(tt.content, tt.reasoning)
			if c != tt.wantContent || r != tt.wantReasoning {
				t.Errorf("got (%q, %q), want (%q, %q)", c, r, tt.wantContent, tt.wantReasoning)
			}
		})
	}
}
