package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func intPtr(n int) *int { return &n }

func TestSummarizationSection(t *testing.T) {
	def := defaultSummarization()
	tests := []struct {
		name      string
		src       string
		want      Summarization
		maxTokens int // subagents.token_budget.max_tokens
	}{
		{
			name:      "absent keeps the defaults",
			src:       "",
			want:      def,
			maxTokens: 2_000_000,
		},
		{
			name: "DeerFlow's example: a trigger list, null model and prompt",
			src: "summarization:\n  enabled: true\n  model_name: null\n  trigger:\n    - type: tokens\n      value: 32000\n" +
				"  keep:\n    type: messages\n    value: 10\n  trim_tokens_to_summarize: 15564\n  summary_prompt: null\n",
			want: Summarization{Enabled: true, Trigger: ContextSizes{{Type: "tokens", Value: 32000}},
				Keep: ContextSize{Type: "messages", Value: 10}, TrimTokensToSummarize: intPtr(15564),
				SkillFileReadToolNames: def.SkillFileReadToolNames},
			maxTokens: 1_000_000,
		},
		{
			name: "a single trigger mapping, null trimming, every key",
			src: "models:\n  - {name: small, use: u, model: m}\nsummarization:\n  enabled: false\n  model_name: small\n" +
				"  trigger: {type: fraction, value: 0.8}\n  keep: {type: tokens, value: 3000}\n  trim_tokens_to_summarize: null\n" +
				"  summary_prompt: \"Sum up {{briefly}}: {messages}\"\n  skill_file_read_tool_names: []\n",
			want: Summarization{ModelName: "small", Trigger: ContextSizes{{Type: "fraction", Value: 0.8}},
				Keep: ContextSize{Type: "tokens", Value: 3000}, SummaryPrompt: "Sum up {{briefly}}: {messages}",
				SkillFileReadToolNames: []string{}},
			maxTokens: 2_000_000,
		},
		{
			name: "a token_budget in the file wins over the summarization default",
			src: "summarization:\n  enabled: true\n  trigger: {type: messages, value: 50}\n" +
				"subagents:\n  token_budget:\n    enabled: true\n",
			want: Summarization{Enabled: true, Trigger: ContextSizes{{Type: "messages", Value: 50}},
				Keep: def.Keep, TrimTokensToSummarize: def.TrimTokensToSummarize, SkillFileReadToolNames: def.SkillFileReadToolNames},
			maxTokens: 2_000_000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src, nil)
			if diff := cmp.Diff(tt.want, c.Summarization); diff != "" {
				t.Errorf("Summarization (-want +got):\n%s", diff)
			}
			if got := c.Subagents.TokenBudget.MaxTokens; got != tt.maxTokens {
				t.Errorf("subagents.token_budget.max_tokens = %d, want %d", got, tt.maxTokens)
			}
			if len(c.Ignored) != 0 {
				t.Errorf("Ignored = %v, want none", c.Ignored)
			}
		})
	}
}

func TestSummarizationWarnsWithoutTrigger(t *testing.T) {
	c := mustParse(t, "summarization:\n  enabled: true\n", nil)
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "summarization is enabled without a trigger") {
		t.Errorf("Warnings = %q", c.Warnings)
	}
}

func TestSummarizationSectionErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{
			name: "unknown key",
			src:  "summarization:\n  enabled: true\n  keep_last: 3\n",
			want: `config.yaml:3: summarization.keep_last: unknown key "keep_last"`,
		},
		{
			name: "unknown key in a single trigger mapping",
			src:  "summarization:\n  trigger:\n    type: tokens\n    amount: 3\n",
			want: `config.yaml:4: summarization.trigger.amount: unknown key "amount"`,
		},
		{
			name: "unknown key in a trigger list",
			src:  "summarization:\n  trigger:\n    - {type: tokens, value: 3}\n    - {type: messages, count: 3}\n",
			want: `config.yaml:4: summarization.trigger[1].count: unknown key "count"`,
		},
		{
			name: "unknown trigger type",
			src:  "summarization:\n  trigger:\n    - type: tokens\n      value: 3\n    - type: turns\n      value: 3\n",
			want: `config.yaml:5: summarization.trigger[1].type: must be one of fraction, tokens, messages, got "turns"`,
		},
		{
			name: "fraction out of range",
			src:  "summarization:\n  trigger:\n    type: fraction\n    value: 1.5\n",
			want: "config.yaml:4: summarization.trigger.value: fractional trigger values must be between 0 and 1, got 1.5",
		},
		{
			name: "keep of zero messages",
			src:  "summarization:\n  keep:\n    type: messages\n    value: 0\n",
			want: "config.yaml:4: summarization.keep.value: keep thresholds must be greater than 0, got 0",
		},
		{
			name: "keep without a type",
			src:  "summarization:\n  keep:\n    value: 3\n",
			want: "config.yaml:2: summarization.keep.type: is required",
		},
		{
			name: "trimming below one token",
			src:  "summarization:\n  trim_tokens_to_summarize: 0\n",
			want: "config.yaml:2: summarization.trim_tokens_to_summarize: must be at least 1 or null (no trimming), got 0",
		},
		{
			name: "unknown prompt placeholder",
			src:  "summarization:\n  summary_prompt: \"Summarise {history}\"\n",
			want: "config.yaml:2: summarization.summary_prompt: unknown placeholder {history} (known: {messages})",
		},
		{
			name: "unknown model",
			src:  "models:\n  - {name: big, use: u, model: m}\nsummarization:\n  model_name: small\n",
			want: `config.yaml:4: summarization.model_name: no model named "small" in models (configured: big)`,
		},
		{
			name: "wrong type",
			src:  "summarization:\n  trigger: 4000\n",
			want: "config.yaml:2: summarization.trigger",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tt.src), nil)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestSummaryPrompt(t *testing.T) {
	got, err := SummaryPrompt("A {{b}} {messages}}}", "Human: {x}")
	if err != nil || got != "A {b} Human: {x}}" {
		t.Errorf("SummaryPrompt = %q, %v", got, err)
	}
	got, err = SummaryPrompt(DefaultSummaryPrompt, "Human: hi")
	if err != nil || !strings.HasSuffix(got, "Messages to summarize:\nHuman: hi\n</messages>") {
		t.Errorf("default prompt = %q, %v", got, err)
	}
}

func TestModelContextWindow(t *testing.T) {
	c := mustParse(t, "models:\n  - {name: a, use: u, model: m, context_window: 128000}\n  - {name: b, use: u, model: m}\n"+
		"  - {name: c, use: u, model: m, context_window: big}\n", nil)
	for i, want := range []int{128000, 0, 0} {
		if got := c.Models[i].ContextWindow(); got != want {
			t.Errorf("models[%d].ContextWindow() = %d, want %d", i, got, want)
		}
	}
}
