package config

import (
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

// The kinds of a ContextSize.
const (
	ContextFraction = "fraction"
	ContextTokens   = "tokens"
	ContextMessages = "messages"
)

// Defaults of the summarization section (DeerFlow's SummarizationConfig).
const (
	DefaultSummaryKeepMessages = 20
	DefaultSummaryTrimTokens   = 4000
)

// DefaultSummaryPrompt is the summary prompt of LangChain's
// SummarizationMiddleware, which DeerFlow uses unless summary_prompt is
// set. Its one placeholder is {messages}.
const DefaultSummaryPrompt = `<role>
Context Extraction Assistant
</role>

<primary_objective>
Your sole objective in this task is to extract the highest quality/most relevant context from the conversation history below.
</primary_objective>

<objective_information>
You're nearing the total number of input tokens you can accept, so you must extract the highest quality/most relevant pieces of information from your conversation history.
This context will then overwrite the conversation history presented below. Because of this, ensure the context you extract is only the most important information to continue working toward your overall goal.
</objective_information>

<instructions>
The conversation history below will be replaced with the context you extract in this step.
You want to ensure that you don't repeat any actions you've already completed, so the context you extract from the conversation history should be focused on the most important information to your overall goal.

You should structure your summary using the following sections. Each section acts as a checklist - you must populate it with relevant information or explicitly state "None" if there is nothing to report for that section:

## SESSION INTENT

What is the user's primary goal or request? What overall task are you trying to accomplish? This should be concise but complete enough to understand the purpose of the entire session.

## SUMMARY

Extract and record all of the most important context from the conversation history. Include important choices, conclusions, or strategies determined during this conversation. Include the reasoning behind key decisions. Document any rejected options and why they were not pursued.

## ARTIFACTS

What artifacts, files, or resources were created, modified, or accessed during this conversation? For file modifications, list specific file paths and briefly describe the changes made to each. This section prevents silent loss of artifact information.

## NEXT STEPS

What specific tasks remain to be completed to achieve the session intent? What should you do next?

</instructions>

The user will message you with the full message history from which you'll extract context to create a replacement. Carefully read through it all and think deeply about what information is most important to your overall goal and should be saved:

With all of this in mind, please carefully read over the entire conversation history, and extract the most important and relevant context to replace it so that you can free up space in the conversation history.
Respond ONLY with the extracted context. Do not include any additional information, or text before or after the extracted context.

<messages>
Messages to summarize:
{messages}
</messages>`

// ContextSize is a threshold of the summarization section: a number of
// tokens or messages, or a fraction of the model's context window
// (models[].context_window).
type ContextSize struct {
	// Type is fraction, tokens or messages.
	Type string `yaml:"type"`
	// Value is the number of tokens or messages (> 0), or the fraction
	// (0 < value <= 1).
	Value float64 `yaml:"value"`
}

// ContextSizes is a list of thresholds; config.yaml may also give a
// single one as a mapping.
type ContextSizes []ContextSize

// UnmarshalYAML implements yaml.Unmarshaler: a mapping is a list of one.
func (c *ContextSizes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		var one ContextSize
		if err := n.Decode(&one); err != nil {
			return err
		}
		*c = ContextSizes{one}
		return nil
	}
	var list []ContextSize
	if err := n.Decode(&list); err != nil {
		return err
	}
	*c = list
	return nil
}

// Summarization is the summarization section: before a model call, when a
// trigger is reached, the older messages of a thread are summarised into
// summary_text and removed, keeping the recent ones (DeerFlow's
// DeerFlowSummarizationMiddleware over LangChain's SummarizationMiddleware).
type Summarization struct {
	// Enabled turns automatic summarization on (default false).
	Enabled bool `yaml:"enabled"`
	// ModelName names the models[] entry that writes summaries; null (the
	// default) summarises with the run's own model, which is also the
	// fallback when the named model fails.
	ModelName string `yaml:"model_name"`
	// Trigger is one threshold or a list; summarization runs when any is
	// reached. None (the default) never summarises automatically.
	Trigger ContextSizes `yaml:"trigger"`
	// Keep is how much recent history survives (default 20 messages).
	Keep ContextSize `yaml:"keep"`
	// TrimTokensToSummarize bounds, in tokens, the history text sent to the
	// summary model (default 4000); null sends all of it.
	TrimTokensToSummarize *int `yaml:"trim_tokens_to_summarize"`
	// SummaryPrompt is the summary prompt in Python str.format syntax with
	// the placeholder {messages}; null uses LangChain's default prompt.
	SummaryPrompt string `yaml:"summary_prompt"`
	// SkillFileReadToolNames is accepted for DeerFlow compatibility (its
	// durable skill_context capture); Antler does not use it.
	SkillFileReadToolNames []string `yaml:"skill_file_read_tool_names"`
}

func defaultSummarization() Summarization {
	trim := DefaultSummaryTrimTokens
	return Summarization{
		Keep:                   ContextSize{Type: ContextMessages, Value: DefaultSummaryKeepMessages},
		TrimTokensToSummarize:  &trim,
		SkillFileReadToolNames: []string{"read_file", "read", "view", "cat"},
	}
}

// SummaryPrompt renders a summary prompt template as Python's str.format
// does for its one placeholder, {messages}. Any other placeholder or an
// unmatched brace is an error.
func SummaryPrompt(template, messages string) (string, error) {
	return pyFormat(template, []string{"messages"}, map[string]string{"messages": messages})
}

// ContextWindow returns the entry's context_window option (its context
// size in tokens), 0 when it is unset or not a positive number.
func (m *Model) ContextWindow() int {
	switch v := m.Options["context_window"].(type) {
	case int:
		return max(v, 0)
	case int64:
		return int(max(v, 0))
	case uint64:
		return int(min(v, math.MaxInt32))
	case float64:
		if v > 0 && v < math.MaxInt32 {
			return int(v)
		}
	}
	return 0
}

func (p *parser) validateSummarization() {
	s := &p.cfg.Summarization
	// A single trigger mapping has no index in its key paths.
	single := len(s.Trigger) == 1 && p.keyLine[indexKey("summarization.trigger", 0)] == 0
	for i, cs := range s.Trigger {
		at := indexKey("summarization.trigger", i)
		if single {
			at = "summarization.trigger"
		}
		p.validateContextSize(at, "trigger", cs)
	}
	if _, set := p.keyLine["summarization.keep"]; set {
		// keep starts from its default; a mapping that sets it must say
		// both what and how much, as DeerFlow's model requires.
		for _, k := range []string{"type", "value"} {
			if _, ok := p.keyLine[joinKey("summarization.keep", k)]; !ok {
				p.errorf(p.line("summarization.keep"), joinKey("summarization.keep", k), "is required")
			}
		}
	}
	p.validateContextSize("summarization.keep", "keep", s.Keep)
	if t := s.TrimTokensToSummarize; t != nil && *t < 1 {
		p.invalid("summarization.trim_tokens_to_summarize", "must be at least 1 or null (no trimming), got %d", *t)
	}
	if s.SummaryPrompt != "" {
		if _, err := SummaryPrompt(s.SummaryPrompt, ""); err != nil {
			p.invalid("summarization.summary_prompt", "%v", err)
		}
	}
	p.checkModelName("summarization.model_name", s.ModelName)
	if s.Enabled && len(s.Trigger) == 0 {
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: summarization is enabled without a trigger; threads are never summarised automatically", p.file))
	}
	// DeerFlow's subagent token budget defaults to 1M tokens instead of 2M
	// when summarization keeps contexts small; a token_budget the file sets
	// wins.
	if _, set := p.keyLine["subagents.token_budget"]; s.Enabled && !set {
		p.cfg.Subagents.TokenBudget.MaxTokens = 1_000_000
	}
}

// validateContextSize checks a threshold as LangChain does, with its
// messages.
func (p *parser) validateContextSize(at, param string, cs ContextSize) {
	switch cs.Type {
	case ContextFraction:
		if !(cs.Value > 0 && cs.Value <= 1) {
			p.invalid(joinKey(at, "value"), "fractional %s values must be between 0 and 1, got %v", param, cs.Value)
		}
	case ContextTokens, ContextMessages:
		if !(cs.Value > 0) {
			p.invalid(joinKey(at, "value"), "%s thresholds must be greater than 0, got %v", param, cs.Value)
		}
	default:
		p.invalid(joinKey(at, "type"), "must be one of fraction, tokens, messages, got %q", cs.Type)
	}
}
