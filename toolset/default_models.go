package toolset

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/anthropic"
	"github.com/antlerhq/antler/model/openai"
)

// registerModels maps DeerFlow's model provider classes and Antler's
// short names to the two providers.
func registerModels(r *Registry) {
	r.RegisterModel(openAICompatible(kindOpenAI),
		"langchain_openai:ChatOpenAI", "deerflow.models.patched_openai:PatchedChatOpenAI", "antler:openai")
	r.RegisterModel(openAICompatible(kindDeepSeek),
		"langchain_deepseek:ChatDeepSeek", "deerflow.models.patched_deepseek:PatchedChatDeepSeek", "antler:deepseek")
	r.RegisterModel(openAICompatible(kindOllama), "langchain_ollama:ChatOllama", "antler:ollama")
	r.RegisterModel(openAICompatible(kindVLLM), "deerflow.models.vllm_provider:VllmChatModel", "antler:vllm")
	r.RegisterModel(openAICompatible(kindMiMo), "deerflow.models.patched_mimo:PatchedChatMiMo", "antler:mimo")
	r.RegisterModel(openAICompatible(kindStepFun), "deerflow.models.patched_stepfun:PatchedChatStepFun", "antler:stepfun")
	r.RegisterModel(openAICompatible(kindMiniMax), "deerflow.models.patched_minimax:PatchedChatMiniMax", "antler:minimax")
	r.RegisterModel(openAICompatible(kindMindIE), "deerflow.models.mindie_provider:MindIEChatModel", "antler:mindie")
	r.RegisterModel(anthropicModel, "langchain_anthropic:ChatAnthropic", "antler:anthropic")
	r.RegisterModel(geminiModel, "langchain_google_genai:ChatGoogleGenerativeAI", "antler:gemini")
}

// compatKind holds the defaults of one OpenAI-compatible flavour.
type compatKind struct {
	provider    string
	keyEnv      string
	keyOptional bool
	baseEnv     string
	defaultBase string
	// echoReasoning sends reasoning_content back on assistant messages.
	echoReasoning bool
	// body is merged under the entry's extra_body (MiniMax's
	// reasoning_split).
	body map[string]any
	// reasoningDetails, thinkTags and textToolCalls set the openai
	// options of the same names.
	reasoningDetails, thinkTags, textToolCalls bool
	// needsBase refuses an entry without base_url (a self-hosted server
	// has no default address).
	needsBase bool
}

var (
	kindOpenAI   = compatKind{provider: "openai", keyEnv: "OPENAI_API_KEY", baseEnv: "OPENAI_BASE_URL", defaultBase: openai.DefaultBaseURL}
	kindDeepSeek = compatKind{provider: "deepseek", keyEnv: "DEEPSEEK_API_KEY", baseEnv: "DEEPSEEK_API_BASE",
		defaultBase: "https://api.deepseek.com/v1", echoReasoning: true}
	kindOllama = compatKind{provider: "ollama", keyEnv: "OLLAMA_API_KEY", keyOptional: true, baseEnv: "OLLAMA_HOST",
		defaultBase: "http://localhost:11434/v1"}
	kindVLLM = compatKind{provider: "vllm", keyEnv: "OPENAI_API_KEY", keyOptional: true, baseEnv: "OPENAI_BASE_URL",
		defaultBase: "http://localhost:8000/v1", echoReasoning: true}
	// MiMo's and StepFun's thinking modes need reasoning_content replayed
	// on earlier assistant turns once tool calls are in the history.
	kindMiMo = compatKind{provider: "mimo", keyEnv: "MIMO_API_KEY", baseEnv: "MIMO_BASE_URL",
		defaultBase: "https://api.xiaomimimo.com/v1", echoReasoning: true}
	kindStepFun = compatKind{provider: "stepfun", keyEnv: "STEPFUN_API_KEY", baseEnv: "STEPFUN_BASE_URL",
		defaultBase: "https://api.stepfun.com/v1", echoReasoning: true}
	// MiniMax splits reasoning out of the content only when asked, and
	// then sends it as reasoning_details.
	kindMiniMax = compatKind{provider: "minimax", keyEnv: "MINIMAX_API_KEY", baseEnv: "MINIMAX_BASE_URL",
		defaultBase: "https://api.minimax.io/v1", body: map[string]any{"reasoning_split": true},
		reasoningDetails: true, thinkTags: true}
	kindMindIE = compatKind{provider: "mindie", keyEnv: "OPENAI_API_KEY", keyOptional: true, baseEnv: "OPENAI_BASE_URL",
		textToolCalls: true, needsBase: true}
)

// mindIEReadTimeout and mindIEConnectTimeout are DeerFlow's MindIE
// defaults: a whole answer is awaited before anything arrives when tools
// are bound.
const (
	mindIEReadTimeout    = 900 * time.Second
	mindIEConnectTimeout = 30 * time.Second
)

// modelOptions are the extra keys of a models[] entry that the providers
// read, under the names DeerFlow's LangChain classes accept. Other keys
// (context_window, pricing, use_responses_api, ...) are ignored.
type modelOptions struct {
	APIKey          string `json:"api_key"`
	OpenAIAPIKey    string `json:"openai_api_key"`
	AnthropicAPIKey string `json:"anthropic_api_key"`

	BaseURL         string `json:"base_url"`
	APIBase         string `json:"api_base"`
	OpenAIAPIBase   string `json:"openai_api_base"`
	AnthropicAPIURL string `json:"anthropic_api_url"`

	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
	NumPredict          int `json:"num_predict"` // ChatOllama

	Temperature *float64 `json:"temperature"`

	Timeout               float64 `json:"timeout"` // seconds
	RequestTimeout        float64 `json:"request_timeout"`
	DefaultRequestTimeout float64 `json:"default_request_timeout"` // ChatAnthropic
	MaxRetries            *int    `json:"max_retries"`

	ExtraBody       map[string]any    `json:"extra_body"`
	ModelKwargs     map[string]any    `json:"model_kwargs"`
	ReasoningEffort string            `json:"reasoning_effort"`
	DefaultHeaders  map[string]string `json:"default_headers"`

	// MindIEChatModel's network settings (seconds). write_timeout and
	// pool_timeout have no counterpart in Go's client and are accepted
	// but not used.
	ReadTimeout    float64 `json:"read_timeout"`
	ConnectTimeout float64 `json:"connect_timeout"`
	WriteTimeout   float64 `json:"write_timeout"`
	PoolTimeout    float64 `json:"pool_timeout"`

	// ChatGoogleGenerativeAI's names.
	GeminiAPIKey         string         `json:"gemini_api_key"`
	GoogleAPIKey         string         `json:"google_api_key"`
	MaxOutputTokens      int            `json:"max_output_tokens"`
	ThinkingBudget       *int           `json:"thinking_budget"`
	IncludeThoughts      *bool          `json:"include_thoughts"`
	ThinkingLevel        string         `json:"thinking_level"`
	TopP                 *float64       `json:"top_p"`
	TopK                 *float64       `json:"top_k"`
	Thinking             any            `json:"thinking"`
	WhenThinkingEnabled  map[string]any `json:"when_thinking_enabled"`
	WhenThinkingDisabled map[string]any `json:"when_thinking_disabled"`

	// passThrough are the entry's keys that no field here names
	// (config.UnknownModelOptions): sent in the request body, under
	// model_kwargs and extra_body, as LangChain moves a keyword argument
	// it does not know into model_kwargs.
	passThrough map[string]any
}

// decodeModelOptions reads entry.Options into typed fields. A value of
// the wrong type names its key.
func decodeModelOptions(entry config.Model) (modelOptions, error) {
	var o modelOptions
	if len(entry.Options) == 0 {
		return o, nil
	}
	b, err := json.Marshal(entry.Options)
	if err != nil {
		return o, err
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&o); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			return o, fmt.Errorf("%s: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return o, err
	}
	o.passThrough = config.UnknownModelOptions(entry, ModelOptionKeys())
	return o, nil
}

// mindIETimeouts maps MindIEChatModel's network settings: an explicit
// timeout wins, else read_timeout (DeerFlow's default 900 s) bounds each
// attempt, since with tools bound the whole answer is awaited before its
// first byte; connect_timeout (default 30 s) bounds the dial.
func mindIETimeouts(o modelOptions) (attempt, connect time.Duration) {
	attempt = cmp.Or(o.timeout(), seconds(o.ReadTimeout), mindIEReadTimeout)
	return attempt, cmp.Or(seconds(o.ConnectTimeout), mindIEConnectTimeout)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (o modelOptions) timeout() time.Duration {
	s := cmp.Or(o.Timeout, o.RequestTimeout, o.DefaultRequestTimeout)
	return time.Duration(s * float64(time.Second))
}

// maxRetries maps DeerFlow's max_retries (absent = SDK default, 0 =
// never) to the providers' convention (0 = default, negative = never).
func (o modelOptions) maxRetries() int {
	switch {
	case o.MaxRetries == nil:
		return 0
	case *o.MaxRetries <= 0:
		return -1
	default:
		return *o.MaxRetries
	}
}

// extraBody is the unknown keys, model_kwargs, extra_body,
// reasoning_effort and top_p merged, later ones winning.
func (o modelOptions) extraBody() map[string]any {
	body := maps.Clone(o.passThrough)
	if body == nil {
		body = map[string]any{}
	}
	maps.Copy(body, o.ModelKwargs)
	maps.Copy(body, o.ExtraBody)
	if o.ReasoningEffort != "" {
		body["reasoning_effort"] = o.ReasoningEffort
	}
	if o.TopP != nil {
		body["top_p"] = *o.TopP
	}
	return nilIfEmpty(body)
}

// thinkingBodies turns when_thinking_enabled / when_thinking_disabled
// (LangChain constructor kwargs) into request-body fields: the contents
// of their extra_body go to the top level, every other key is sent as
// is. The thinking shortcut adds {"thinking": value} to the enabled set.
func (o modelOptions) thinkingBodies() (on, off map[string]any) {
	flatten := func(kw map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range kw {
			if k == "extra_body" {
				if m, ok := v.(map[string]any); ok {
					maps.Copy(out, m)
					continue
				}
			}
			out[k] = v
		}
		return out
	}
	on = flatten(o.WhenThinkingEnabled)
	if o.Thinking != nil {
		on["thinking"] = o.Thinking
	}
	return nilIfEmpty(on), nilIfEmpty(flatten(o.WhenThinkingDisabled))
}

// merged returns a new map with the entries of a, then b.
func merged(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, b)
	return out
}

func nilIfEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// configKey returns "models[i]" for entry, or "" when it is not found.
func configKey(env *Env, entry config.Model) string {
	if env == nil || env.Config == nil {
		return ""
	}
	for i, m := range env.Config.Models {
		if m.Name == entry.Name && m.Line == entry.Line {
			return fmt.Sprintf("models[%d]", i)
		}
	}
	return ""
}

func envLogger(env *Env) *Env {
	if env == nil {
		return &Env{}
	}
	return env
}

func openAICompatible(kind compatKind) ModelFactory {
	return func(_ context.Context, env *Env, entry config.Model) (model.ChatModel, error) {
		env = envLogger(env)
		o, err := decodeModelOptions(entry)
		if err != nil {
			return nil, err
		}
		on, off := o.thinkingBodies()
		opts := openai.Options{
			Name:             entry.Name,
			ConfigKey:        configKey(env, entry),
			Provider:         kind.provider,
			Model:            entry.Model,
			APIKey:           cmp.Or(o.APIKey, o.OpenAIAPIKey),
			APIKeyEnv:        kind.keyEnv,
			KeyOptional:      kind.keyOptional,
			BaseURL:          cmp.Or(o.BaseURL, o.APIBase, o.OpenAIAPIBase),
			BaseURLEnv:       kind.baseEnv,
			DefaultBaseURL:   kind.defaultBase,
			MaxTokens:        cmp.Or(o.MaxTokens, o.MaxCompletionTokens, o.NumPredict),
			Temperature:      o.Temperature,
			Timeout:          o.timeout(),
			MaxRetries:       o.maxRetries(),
			ExtraBody:        o.extraBody(),
			ThinkingBody:     on,
			NoThinkingBody:   off,
			SupportsThinking: entry.SupportsThinking,
			EchoReasoning:    kind.echoReasoning,
			Headers:          o.DefaultHeaders,
			Logger:           env.Logger,
		}
		if kind.provider == kindOllama.provider {
			opts.BaseURL = ollamaBaseURL(cmp.Or(opts.BaseURL, os.Getenv(kind.baseEnv)))
		}
		if kind.needsBase && opts.BaseURL == "" && os.Getenv(kind.baseEnv) == "" {
			return nil, fmt.Errorf("base_url: required for %s (the server's address, such as http://localhost:8989/v1)", entry.Use)
		}
		if len(kind.body) > 0 {
			// The flavour's own fields win, as DeerFlow's adapters force them.
			opts.ExtraBody = merged(opts.ExtraBody, kind.body)
		}
		opts.ReasoningDetails, opts.ThinkTags, opts.TextToolCalls = kind.reasoningDetails, kind.thinkTags, kind.textToolCalls
		if kind.textToolCalls {
			opts.Timeout, opts.ConnectTimeout = mindIETimeouts(o)
		}
		// OpenAI itself wants max_completion_tokens; compatible servers
		// understand max_tokens.
		if kind.provider == kindOpenAI.provider && o.MaxCompletionTokens > 0 {
			opts.UseMaxCompletionTokens = true
		}
		return openai.New(opts)
	}
}

// ollamaBaseURL accepts Ollama's native host forms ("localhost:11434",
// "http://host:11434") and returns its OpenAI-compatible root (/v1).
func ollamaBaseURL(s string) string {
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return s // openai.New reports it
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1"
	}
	return u.String()
}

func anthropicModel(_ context.Context, env *Env, entry config.Model) (model.ChatModel, error) {
	env = envLogger(env)
	o, err := decodeModelOptions(entry)
	if err != nil {
		return nil, err
	}
	on, off := o.thinkingBodies()
	return anthropic.New(anthropic.Options{
		Name:             entry.Name,
		ConfigKey:        configKey(env, entry),
		Model:            entry.Model,
		APIKey:           cmp.Or(o.APIKey, o.AnthropicAPIKey),
		BaseURL:          cmp.Or(o.BaseURL, o.AnthropicAPIURL, o.APIBase),
		MaxTokens:        o.MaxTokens,
		Temperature:      o.Temperature,
		Timeout:          o.timeout(),
		MaxRetries:       o.maxRetries(),
		ExtraBody:        o.anthropicBody(),
		ThinkingBody:     on,
		NoThinkingBody:   off,
		SupportsThinking: entry.SupportsThinking,
		Headers:          o.DefaultHeaders,
		Logger:           env.Logger,
	})
}

// anthropicBody is extraBody with ChatAnthropic's top_k.
func (o modelOptions) anthropicBody() map[string]any {
	body := o.extraBody()
	if o.TopK != nil {
		body = merged(body, map[string]any{"top_k": *o.TopK})
	}
	return body
}
