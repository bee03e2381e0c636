package agent

import (
	"cmp"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/thread"
)

// Automatic thread titles (DeerFlow's TitleMiddleware,
// agents/middlewares/title_middleware.py).
const (
	// TitleNode names the state event that sets a thread's title, as
	// LangGraph names DeerFlow's node (the gateway's updates frame key).
	TitleNode = "TitleMiddleware.after_model"
	// defaultTitleTimeout bounds the title model call.
	defaultTitleTimeout = 30 * time.Second
	// NewConversationTitle is the fallback title when the user's first
	// message has no text.
	NewConversationTitle = "New Conversation"
	// titlePromptChars caps the user and assistant texts in the prompt.
	titlePromptChars = 500
	// titleFallbackChars caps the fallback title's text before "...".
	titleFallbackChars = 50
)

// TitleOptions configure automatic thread titles. After a model answer,
// when the thread has no title and holds exactly one user message and at
// least one assistant message (the first exchange), the title is set to
// Model's answer to the title prompt, cleaned up, or, without a Model or
// when the call fails or answers nothing, to the user's first message
// shortened to 50 characters plus "..." (DeerFlow's fallback). A title
// already in the state (a rename) is never replaced.
//
// The model call runs beside the loop: the run goes on with its tools
// and takes the title at the next step, or waits for it (at most Timeout)
// before it ends. A cancelled run cancels the call and keeps the
// fallback title, as DeerFlow titles an interrupted first turn. The call
// streams nothing, skips the model middlewares, and its tokens are not
// part of the loop's usage: the run's usage record counts them as
// middleware (store.CallerMiddleware) once the run takes the title.
type TitleOptions struct {
	// Model writes titles; nil makes no model call (config title.model_name
	// null).
	Model model.ChatModel
	// MaxWords is the word limit the prompt asks for; 0 means 6.
	MaxWords int
	// MaxChars caps a title in characters; 0 means 60.
	MaxChars int
	// PromptTemplate is the prompt in config.TitlePrompt syntax; "" means
	// config.DefaultTitlePrompt.
	PromptTemplate string
	// Timeout bounds the model call; 0 means 30 seconds.
	Timeout time.Duration
}

// withDefaults returns o with its zero fields set.
func (o TitleOptions) withDefaults() *TitleOptions {
	o.MaxWords = cmp.Or(o.MaxWords, 6)
	o.MaxChars = cmp.Or(o.MaxChars, 60)
	o.PromptTemplate = cmp.Or(o.PromptTemplate, config.DefaultTitlePrompt)
	o.Timeout = cmp.Or(o.Timeout, defaultTitleTimeout)
	return &o
}

// titleJob is a title model call in flight.
type titleJob struct {
	done  chan struct{}
	title string      // written before done is closed
	usage model.Usage // of the title call; written before done is closed
	taken bool        // the run goroutine has applied it
}

// afterModel starts the title after a model answer when the thread needs
// one: at once without a title model, else as a call beside the loop.
func (r *runState) afterModel(ctx context.Context) {
	o := r.a.opts.Title
	if o == nil || r.titleJob != nil || !needsTitle(r.state, false) {
		return
	}
	user := titleUserText(r.state)
	if o.Model == nil {
		r.setTitle(fallbackTitle(user, o.MaxChars))
		return
	}
	prompt, err := config.TitlePrompt(o.PromptTemplate, o.MaxWords, truncateRunes(user, titlePromptChars),
		truncateRunes(stripThink(titleAssistantText(r.state)), titlePromptChars))
	if err != nil {
		r.logger.Warn("title prompt template is invalid; using the fallback title", "err", err)
		r.setTitle(fallbackTitle(user, o.MaxChars))
		return
	}
	job := &titleJob{done: make(chan struct{})}
	r.titleJob = job
	logger, tel := r.logger, r.a.opts.Telemetry
	go func() {
		defer close(job.done)
		job.title, job.usage = generateTitle(ctx, o, prompt, logger, tel)
		if job.title == "" {
			job.title = fallbackTitle(user, o.MaxChars)
		}
	}()
}

// generateTitle asks the title model; "" means no usable title. The usage
// is the call's, whether its answer is usable or not.
func generateTitle(ctx context.Context, o *TitleOptions, prompt string, logger *slog.Logger, tel *telemetry.Recorder) (string, model.Usage) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req := &model.Request{Messages: []model.Message{model.UserText(prompt)}}
	resp, err := collectTraced(ctx, tel, "antler.title", o.Model, req)
	if err != nil {
		logger.Warn("title model call failed; using the fallback title", "err", err)
		return "", model.Usage{}
	}
	if resp == nil {
		return "", model.Usage{}
	}
	logger.Debug("title generated", "input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	return parseTitle(resp.Message.Content, o.MaxChars), resp.Usage
}

// takeTitle applies the title call's result once it has finished; with
// wait it waits for it (the call is bounded by its timeout and the run's
// context). It reports whether the state changed.
func (r *runState) takeTitle(wait bool) bool {
	job := r.titleJob
	if job == nil || job.taken {
		return false
	}
	if wait {
		<-job.done
	} else {
		select {
		case <-job.done:
		default:
			return false
		}
	}
	job.taken = true
	r.usage.record.Add(store.CallerMiddleware, ModelName(r.a.opts.Title.Model), job.usage)
	if r.state.Title != "" {
		return false
	}
	r.setTitle(job.title)
	return true
}

// endTitle settles the title when the loop has ended: it waits for a
// call in flight and, for a cancelled first turn that has no title yet,
// sets the fallback title (DeerFlow's interrupted-run title). A title
// that arrives after the last checkpoint of a successful run is saved
// with one more checkpoint; after a failure finish saves it.
func (r *runState) endTitle(ctx context.Context, reason StopReason, runErr error) {
	o := r.a.opts.Title
	if o == nil || r.state == nil {
		return
	}
	changed := r.takeTitle(true)
	if reason == StopCancelled && needsTitle(r.state, true) {
		r.setTitle(fallbackTitle(titleUserText(r.state), o.MaxChars))
		changed = true
	}
	if changed && runErr == nil {
		// The answer is complete: a cancellation while the title call
		// ran does not lose the title.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := r.checkpoint(ctx, "loop"); err != nil {
			r.logger.Error("cannot save the thread title", "err", err)
		}
	}
}

// setTitle sets the state's title and reports it as a state event.
func (r *runState) setTitle(title string) {
	r.state.Title = title
	t := title
	r.emit(Event{Type: EventState, Name: TitleNode, Update: &thread.Update{Title: &t}}, nil)
}

// needsTitle is DeerFlow's condition: no title yet, exactly one user
// message (dynamic-context reminders aside) and at least one assistant
// message; partial (an interrupted run) drops the assistant message.
func needsTitle(s *thread.State, partial bool) bool {
	if s == nil || s.Title != "" {
		return false
	}
	users, assistants := 0, 0
	for _, m := range s.Messages {
		switch {
		case isTitleUserMessage(m):
			users++
		case m.Role == model.RoleAssistant:
			assistants++
		}
	}
	return users == 1 && (assistants >= 1 || partial)
}

// isTitleUserMessage reports whether m is a user message the title counts:
// DeerFlow's dynamic-context reminders (a hidden human message it injects)
// are not.
func isTitleUserMessage(m model.Message) bool {
	if m.Role != model.RoleUser {
		return false
	}
	reminder, _ := m.Meta["dynamic_context_reminder"].(bool)
	return !reminder
}

// uploadsBlockRE matches the uploaded-files block the gateway puts before
// the user's text (DeerFlow's uploads middleware).
var uploadsBlockRE = regexp.MustCompile(`(?s)^\s*<uploaded_files>.*?</uploaded_files>\s*`)

// titleUserText is the text of the first user message the title counts,
// without an uploaded-files block (DeerFlow titles with the block).
func titleUserText(s *thread.State) string {
	for _, m := range s.Messages {
		if isTitleUserMessage(m) {
			return uploadsBlockRE.ReplaceAllString(m.Text(), "")
		}
	}
	return ""
}

// titleAssistantText is the text of the first assistant message.
func titleAssistantText(s *thread.State) string {
	for _, m := range s.Messages {
		if m.Role == model.RoleAssistant {
			return m.Text()
		}
	}
	return ""
}

var thinkRE = regexp.MustCompile(`(?is)<think>.*?</think>`)

// stripThink removes <think>...</think> blocks that reasoning models put
// in their text, and the surrounding space.
func stripThink(s string) string { return strings.TrimSpace(thinkRE.ReplaceAllString(s, "")) }

// parseTitle cleans a model's title as DeerFlow does: think blocks and
// surrounding space removed, then double and then single quotes at both
// ends, cut to maxChars characters.
func parseTitle(content string, maxChars int) string {
	t := strings.TrimSpace(stripThink(content))
	t = strings.Trim(t, `"`)
	t = strings.Trim(t, `'`)
	return truncateRunes(t, maxChars)
}

// fallbackTitle is DeerFlow's title without a model: the user's message
// when it fits in min(maxChars, 50) characters, else its start (right-
// trimmed) plus "...", at most maxChars in all; "New Conversation" for an
// empty message.
func fallbackTitle(user string, maxChars int) string {
	limit := min(maxChars, titleFallbackChars)
	if len([]rune(user)) > limit {
		return strings.TrimRightFunc(truncateRunes(user, min(limit, maxChars-3)), unicode.IsSpace) + "..."
	}
	if user == "" {
		return NewConversationTitle
	}
	return user
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int) string {
	if n < 0 {
		n = 0
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
