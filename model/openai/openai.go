package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/antlerhq/antler/model"
)

// DefaultBaseURL is OpenAI's API endpoint, used when neither
// Options.BaseURL nor the BaseURLEnv variable is set.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configures a Model. The zero value of every field is usable
// except Model, which names the provider's model and is required.
type Options struct {
	// Name is the models[] entry name, used in error messages.
	Name string
	// ConfigKey is where the entry lives in config.yaml ("models[0]"),
	// used in the missing-key hint; "" names it by Name instead.
	ConfigKey string
	// Provider is a short label used in error messages; "" = "openai".
	Provider string
	// Model is the provider's model id ("gpt-4o", "deepseek-chat").
	Model string

	// APIKey is the bearer token. "" = the APIKeyEnv variable.
	APIKey string
	// APIKeyEnv names the variable read when APIKey is empty;
	// "" = OPENAI_API_KEY.
	APIKeyEnv string
	// KeyOptional lets the model run without a key (Ollama, vLLM); a
	// placeholder is sent instead.
	KeyOptional bool
	// BaseURL is the API root including /v1. "" = the BaseURLEnv
	// variable, then DefaultBaseURL.
	BaseURL string
	// BaseURLEnv names the variable read when BaseURL is empty;
	// "" = OPENAI_BASE_URL.
	BaseURLEnv string
	// DefaultBaseURL is used when neither BaseURL nor BaseURLEnv is set;
	// "" = [DefaultBaseURL].
	DefaultBaseURL string

	// MaxTokens, when positive, caps the completion length. A request's
	// own MaxTokens takes precedence.
	MaxTokens int
	// UseMaxCompletionTokens sends the limit as max_completion_tokens
	// (OpenAI's current name) instead of max_tokens (what compatible
	// servers understand).
	UseMaxCompletionTokens bool
	// Temperature, when non-nil, is sent with every request unless the
	// request sets its own.
	Temperature *float64
	// Timeout bounds each HTTP attempt; 0 = no limit beyond ctx.
	Timeout time.Duration
	// MaxRetries is how often a request is retried after a connection
	// error or a 408/409/429/5xx answer (client.go has the schedule);
	// 0 = 2, as the openai-go SDK did, negative = never.
	MaxRetries int
	// ExtraBody is merged into every request body (DeerFlow's
	// extra_body); keys override the fields Antler sets.
	ExtraBody map[string]any
	// ThinkingBody is merged into the body when a request asks for
	// thinking and SupportsThinking is set (when_thinking_enabled).
	ThinkingBody map[string]any
	// NoThinkingBody is merged into the body when a request does not ask
	// for thinking and SupportsThinking is set (when_thinking_disabled).
	NoThinkingBody map[string]any
	// SupportsThinking says the model honours ThinkingBody.
	SupportsThinking bool
	// EchoReasoning sends an assistant message's Reasoning back as
	// reasoning_content, as DeepSeek's thinking mode with tools requires.
	EchoReasoning bool
	// Headers are added to every request.
	Headers map[string]string

	// ReasoningDetails reads a delta's reasoning from its
	// reasoning_details array (MiniMax with reasoning_split), falling
	// back to reasoning_content and reasoning.
	ReasoningDetails bool
	// ThinkTags moves <think>...</think> blocks of the final answer's
	// content into its Reasoning (MiniMax models that think inline). The
	// text deltas already streamed are left as sent.
	ThinkTags bool
	// TextToolCalls is MindIE's mode: the conversation is sent as plain
	// text (tool calls as <tool_call> XML, tool results as user messages
	// in <tool_response>), a request with tools is made without
	// streaming and the answer's <tool_call> blocks become tool calls,
	// and literal \n outside code fences in the answer become newlines.
	// See mindie.go.
	TextToolCalls bool
	// ConnectTimeout bounds dialling the server; 0 = Go's default. It is
	// ignored when HTTPClient is set.
	ConnectTimeout time.Duration

	// HTTPClient replaces http.DefaultClient (tests).
	HTTPClient *http.Client
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Getenv looks up environment variables; nil = os.Getenv.
	Getenv func(string) string
}

// Model is an OpenAI-compatible chat model. It is safe for concurrent
// use; all fields are immutable after New.
type Model struct {
	opts    Options
	client  *client
	baseURL string
	// keyErr is returned by every Generate when no key was found.
	keyErr error
	logger *slog.Logger
}

var _ model.ChatModel = (*Model)(nil)

// New returns a Model for opts. It fails only for an unusable base URL
// or a missing Model; a missing API key is reported by Generate.
func New(opts Options) (*Model, error) {
	if opts.Model == "" {
		return nil, errors.New("model: the model id is empty (set model)")
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	opts.Provider = cmp.Or(opts.Provider, "openai")
	keyEnv := cmp.Or(opts.APIKeyEnv, "OPENAI_API_KEY")
	baseEnv := cmp.Or(opts.BaseURLEnv, "OPENAI_BASE_URL")

	base := cmp.Or(opts.BaseURL, getenv(baseEnv), opts.DefaultBaseURL, DefaultBaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http(s) URL", base)
	}
	base = strings.TrimRight(base, "/")

	m := &Model{opts: opts, baseURL: base, logger: opts.Logger}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	key := cmp.Or(opts.APIKey, getenv(keyEnv))
	if key == "" {
		if opts.KeyOptional {
			key = "EMPTY"
		} else {
			where := opts.ConfigKey
			if where == "" {
				where = fmt.Sprintf("models[] entry %q", opts.Name)
			}
			m.keyErr = &model.ProviderError{Model: opts.Name, Provider: opts.Provider,
				Message: "no API key", Hint: fmt.Sprintf("set %s or api_key in %s", keyEnv, where)}
		}
	}

	m.client = newClient(opts, base, key)
	return m, nil
}

// BaseURL returns the API root the model talks to.
func (m *Model) BaseURL() string { return m.baseURL }

// Generate streams the model's answer to req. See [model.ChatModel].
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if m.keyErr != nil {
			yield(model.Event{}, m.keyErr)
			return
		}
		params, err := m.params(req)
		if err != nil {
			yield(model.Event{}, m.wrap(ctx, err))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		start := time.Now()
		var resp *model.Response
		if m.opts.TextToolCalls && len(req.Tools) > 0 {
			resp = m.generateWhole(ctx, params, yield)
		} else {
			body, err := params.encode()
			if err != nil {
				yield(model.Event{}, m.wrap(ctx, fmt.Errorf("encoding the request: %w", err)))
				return
			}
			stream := m.client.stream(ctx, body)
			defer stream.Close()
			asm := m.newAssembler()
			resp, _ = model.Drain(ctx, stream, asm.add, asm.response, func(err error) error { return m.wrap(ctx, err) }, yield)
		}
		if resp != nil {
			m.logger.Debug("model call done", "model", m.opts.Name, "finish", resp.FinishReason,
				"tool_calls", len(resp.Message.ToolCalls), "elapsed", time.Since(start))
		}
	}
}

// newClient returns the HTTP client of a model talking to base with key.
func newClient(opts Options, base, key string) *client {
	c := &client{http: http.DefaultClient, baseURL: base, key: key, headers: opts.Headers,
		timeout: opts.Timeout, retries: defaultRetries}
	switch {
	case opts.MaxRetries < 0:
		c.retries = 0
	case opts.MaxRetries > 0:
		c.retries = opts.MaxRetries
	}
	switch {
	case opts.HTTPClient != nil:
		c.http = opts.HTTPClient
	case opts.ConnectTimeout > 0:
		c.http = dialTimeoutClient(opts.ConnectTimeout)
	}
	return c
}

func (m *Model) newAssembler() *assembler {
	return &assembler{details: m.opts.ReasoningDetails, thinkTags: m.opts.ThinkTags, unescape: m.opts.TextToolCalls}
}

// dialTimeoutClient is an HTTP client like the default one whose dials
// give up after d.
func dialTimeoutClient(d time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: t}
}

// wrap turns a client or transport error into a *model.ProviderError;
// cancellation is returned as the context's own error.
func (m *Model) wrap(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	pe := &model.ProviderError{Model: m.opts.Name, Provider: m.opts.Provider, Err: err}
	var apiErr *apiError
	var netErr net.Error
	var streamErr *streamError
	switch {
	case errors.As(err, &streamErr):
		pe.Message = streamErr.Error()
	case errors.As(err, &apiErr):
		pe.StatusCode = apiErr.StatusCode
		pe.Message = apiErr.Message
		pe.Code, pe.RetryAfter = apiErr.Code, apiErr.RetryAfter
		if apiErr.StatusCode == http.StatusUnauthorized {
			pe.Hint = "check api_key or " + cmp.Or(m.opts.APIKeyEnv, "OPENAI_API_KEY")
		}
		if apiErr.StatusCode == http.StatusNotFound {
			pe.Hint = fmt.Sprintf("check model %q and base_url %s", m.opts.Model, m.baseURL)
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		pe.Message = "the stream ended unexpectedly: " + err.Error()
	case errors.As(err, &netErr), isConnRefused(err):
		pe.Message = fmt.Sprintf("cannot reach %s: %v", m.baseURL, err)
		pe.Hint = "check base_url or " + cmp.Or(m.opts.BaseURLEnv, "OPENAI_BASE_URL")
	default:
		pe.Message = err.Error()
	}
	return pe
}

func isConnRefused(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
