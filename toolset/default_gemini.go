package toolset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/gemini"
)

// geminiModel builds DeerFlow's langchain_google_genai:ChatGoogleGenerativeAI
// with the Gemini provider. when_thinking_enabled / when_thinking_disabled
// carry the class's own keyword arguments (thinking_budget,
// include_thoughts, thinking_level).
func geminiModel(_ context.Context, env *Env, entry config.Model) (model.ChatModel, error) {
	env = envLogger(env)
	o, err := decodeModelOptions(entry)
	if err != nil {
		return nil, err
	}
	on, err := geminiThinking("when_thinking_enabled", o.WhenThinkingEnabled)
	if err != nil {
		return nil, err
	}
	off, err := geminiThinking("when_thinking_disabled", o.WhenThinkingDisabled)
	if err != nil {
		return nil, err
	}
	return gemini.New(gemini.Options{
		Name:        entry.Name,
		ConfigKey:   configKey(env, entry),
		Model:       entry.Model,
		APIKey:      cmp.Or(o.GeminiAPIKey, o.GoogleAPIKey, o.APIKey),
		BaseURL:     o.BaseURL,
		MaxTokens:   cmp.Or(o.MaxTokens, o.MaxOutputTokens),
		Temperature: o.Temperature,
		TopP:        o.TopP,
		TopK:        o.TopK,
		Thinking: gemini.Thinking{Budget: o.ThinkingBudget, IncludeThoughts: o.IncludeThoughts,
			Level: o.ThinkingLevel},
		ThinkingOn:       on,
		ThinkingOff:      off,
		SupportsThinking: entry.SupportsThinking,
		Timeout:          o.timeout(),
		MaxRetries:       o.maxRetries(),
		Headers:          o.DefaultHeaders,
		Logger:           env.Logger,
	})
}

// geminiThinking reads the thinking keys of a when_thinking_* map; any
// other key there is an error naming it, since Gemini has no request
// field to pass it through to.
func geminiThinking(key string, kw map[string]any) (gemini.Thinking, error) {
	var t struct {
		Budget          *int   `json:"thinking_budget"`
		IncludeThoughts *bool  `json:"include_thoughts"`
		Level           string `json:"thinking_level"`
	}
	for k := range kw {
		switch k {
		case "thinking_budget", "include_thoughts", "thinking_level":
		default:
			return gemini.Thinking{}, fmt.Errorf("%s.%s: not a Gemini setting (thinking_budget, include_thoughts, thinking_level)", key, k)
		}
	}
	b, _ := json.Marshal(kw)
	if err := json.Unmarshal(b, &t); err != nil {
		return gemini.Thinking{}, fmt.Errorf("%s: %w", key, err)
	}
	return gemini.Thinking{Budget: t.Budget, IncludeThoughts: t.IncludeThoughts, Level: t.Level}, nil
}
