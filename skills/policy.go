package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// reservedSlashNames are slash commands that are never skills.
var reservedSlashNames = []string{"bootstrap", "goal", "help", "memory", "models", "new", "status"}

// alwaysAllowedTools stay available whatever the active skills declare.
var alwaysAllowedTools = []string{"describe_skill", "read_file", "review_skill_package", "tool_search"}

// hiddenMetaKey marks a message the policy injected into a model request
// (an activated skill's SKILL.md); such messages are never persisted and
// never count as the user's message.
const hiddenMetaKey = "antler_hidden"

var slashPattern = regexp.MustCompile(`^/([a-z0-9]+(?:-[a-z0-9]+)*)(?:\s+|$)`)

// slashName returns the skill name a user message activates: the text
// must start (no leading whitespace) with "/name" followed by whitespace
// or the end, and name must not be reserved.
func slashName(text string) (string, bool) {
	m := slashPattern.FindStringSubmatch(text)
	if m == nil || slices.Contains(reservedSlashNames, m[1]) {
		return "", false
	}
	return m[1], true
}

// latestUserText returns the content of the newest user message that
// the policy did not inject.
func latestUserText(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != model.RoleUser || m.Remove {
			continue
		}
		if hidden, _ := m.Meta[hiddenMetaKey].(bool); hidden {
			continue
		}
		return m.Content
	}
	return ""
}

// PolicyOptions configures a Policy.
type PolicyOptions struct {
	// Store lists the user's skills; required.
	Store *Store
	// Allowlist is the agent's or subagent's skills list; nil = every
	// enabled skill, empty = none. When nil, a run's own allowlist is taken
	// from its runtime context key "available_skills" (a []string set by
	// the lead-agent factory for a custom agent), so one Policy serves
	// every agent.
	Allowlist []string
	// Logger receives load failures; nil discards.
	Logger *slog.Logger
}

// Policy is the allowed-tools policy of active skills (DeerFlow's
// SkillActivation and SkillToolPolicy middlewares). A skill is active
// when the latest user message slash-activates it (which dominates: no
// later read widens it), or, without a slash, when the thread's
// skill_context records that its SKILL.md was read. Merely enabled skills
// restrict nothing. The allowed tools are the union of the allowed-tools
// of the active skills that declare it; when none declares it nothing is
// restricted. describe_skill, read_file, review_skill_package and tool_search are
// always allowed. A failure to list the
// skills while a skill is active fails closed to those four.
//
// Use ModelMiddleware and ToolMiddleware together so that the model sees
// only the tools it may call and a call to any other tool is refused.
type Policy struct {
	// immutable after NewPolicy
	opts   PolicyOptions
	logger *slog.Logger
}

// NewPolicy returns a policy; it panics if opts.Store is nil (a wiring
// mistake).
func NewPolicy(opts PolicyOptions) *Policy {
	if opts.Store == nil {
		panic("skills.NewPolicy: Store is nil")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Policy{opts: opts, logger: logger}
}

// Active is the outcome of resolving the active skills for one call.
type Active struct {
	// Skills are the active skills (empty when none).
	Skills []Skill
	// Slash is the slash-activated skill, if any.
	Slash *Skill
	// Restricted is false when every tool is allowed.
	Restricted bool
	// Allowed is the allowed tool set when Restricted (always-allowed
	// tools included).
	Allowed []string
}

// Allows reports whether a tool may be used.
func (a Active) Allows(name string) bool { return !a.Restricted || slices.Contains(a.Allowed, name) }

// Resolve works out the active skills for a user from the conversation
// and the thread's skill context.
func (p *Policy) Resolve(ctx context.Context, user string, msgs []model.Message, skillCtx []thread.SkillContext) Active {
	return p.resolve(ctx, user, msgs, skillCtx, p.opts.Allowlist)
}

// allowlist is the skills allowlist of one call: the Policy's own, else
// the run's "available_skills".
func (p *Policy) allowlist(runtime map[string]any) []string {
	if p.opts.Allowlist != nil {
		return p.opts.Allowlist
	}
	if l, ok := runtime["available_skills"].([]string); ok {
		return l
	}
	return nil
}

func (p *Policy) resolve(ctx context.Context, user string, msgs []model.Message, skillCtx []thread.SkillContext, allow []string) Active {
	slash, hasSlash := slashName(latestUserText(msgs))
	if !hasSlash && len(skillCtx) == 0 {
		return Active{}
	}
	all, err := p.opts.Store.Enabled(ctx, user)
	if err != nil && ctx.Err() == nil {
		p.logger.Warn("skills: cannot list skills for the tool policy; allowing only the always-allowed tools", "err", err)
		return Active{Restricted: true, Allowed: slices.Clone(alwaysAllowedTools)}
	}
	usable := slices.DeleteFunc(all, func(s Skill) bool {
		return allow != nil && !slices.Contains(allow, s.Name)
	})
	var act Active
	if hasSlash {
		if i := slices.IndexFunc(usable, func(s Skill) bool { return s.Name == slash }); i >= 0 {
			s := usable[i]
			act.Slash = &s
			act.Skills = []Skill{s}
		}
	}
	if act.Slash == nil {
		base := p.opts.Store.ContainerPath()
		for _, s := range usable {
			if slices.ContainsFunc(skillCtx, func(c thread.SkillContext) bool {
				return c.Path == s.ContainerFile(base) || c.Path == s.File || (c.Path == "" && c.Name == s.Name)
			}) {
				act.Skills = append(act.Skills, s)
			}
		}
	}
	for _, s := range act.Skills {
		if s.AllowedTools == nil {
			continue
		}
		act.Restricted = true
		for _, t := range s.AllowedTools {
			if !slices.Contains(act.Allowed, t) {
				act.Allowed = append(act.Allowed, t)
			}
		}
	}
	if act.Restricted {
		for _, t := range alwaysAllowedTools {
			if !slices.Contains(act.Allowed, t) {
				act.Allowed = append(act.Allowed, t)
			}
		}
	}
	return act
}

// blockedText is the result text of a call the policy refuses.
func blockedText(name string) string {
	return fmt.Sprintf("Error: Tool '%s' is not allowed by the active skill policy.", name)
}

// ToolMiddleware refuses calls to tools the active skills do not allow.
func (p *Policy) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			var msgs []model.Message
			var sc []thread.SkillContext
			if call.State != nil {
				msgs, sc = call.State.Messages, call.State.SkillContext
			}
			if act := p.resolve(ctx, call.UserID, msgs, sc, p.allowlist(call.Context)); !act.Allows(call.Name) {
				return tool.Errorf("%s", blockedText(call.Name)), nil
			}
			return next(ctx, call, args)
		}
	}
}

// ModelMiddleware removes the schemas of tools the active skills do not
// allow from the request and, for a slash activation, adds the activated
// skill's SKILL.md as hidden context right after the user's message.
func (p *Policy) ModelMiddleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			var sc []thread.SkillContext
			if call.State != nil {
				sc = call.State.SkillContext
			}
			act := p.resolve(ctx, call.UserID, call.Request.Messages, sc, p.allowlist(call.Context))
			if !act.Restricted && act.Slash == nil {
				return next(ctx, call)
			}
			req := call.Request.Clone()
			if act.Restricted {
				req.Tools = slices.DeleteFunc(req.Tools, func(t model.ToolDefinition) bool { return !act.Allows(t.Name) })
			}
			if act.Slash != nil {
				req.Messages = injectActivation(req.Messages, *act.Slash, p.opts.Store.ContainerPath())
			}
			c := *call
			c.Request = req
			return next(ctx, &c)
		}
	}
}

// injectActivation inserts the activated skill's body after the latest
// user message.
func injectActivation(msgs []model.Message, s Skill, base string) []model.Message {
	at := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			at = i + 1
			break
		}
	}
	body := fmt.Sprintf("<skill_activation name=\"%s\" location=\"%s\">\nThe user activated the skill %s with a slash command. Follow its instructions for this request.\n\n%s\n</skill_activation>",
		escape(s.Name), escape(s.ContainerFile(base)), escape(s.Name), escape(strings.TrimSpace(s.Body)))
	hidden := model.Message{Role: model.RoleUser, Content: body, Meta: map[string]any{hiddenMetaKey: true}}
	return slices.Insert(msgs, at, hidden)
}
