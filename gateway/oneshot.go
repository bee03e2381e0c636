package gateway

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/toolset"
)

// Limits of the gateway's one-shot model calls (input polish,
// suggestions): how long one may take and how many tokens it may answer
// with. DeerFlow sets neither.
const (
	oneShotTimeout   = 60 * time.Second
	oneShotMaxTokens = 2048
)

// oneShot asks the models[] entry name ("" for the default model) one
// question, a system instruction and a user message, without tools or
// thinking, and returns the answer's text uncleaned (DeerFlow's
// run_oneshot_llm). The model is built for the call.
func (s *Server) oneShot(ctx context.Context, name, system, user string) (string, error) {
	idx := 0
	if name != "" {
		idx = slices.IndexFunc(s.cfg.Models, func(m config.Model) bool { return m.Name == name })
	}
	if idx < 0 || idx >= len(s.cfg.Models) {
		return "", fmt.Errorf("no model named %q is configured", name)
	}
	asm := s.opts.Factory.Assembler
	env := asm.Env
	if env == nil {
		env = &toolset.Env{Config: s.cfg, Logger: s.logger}
	}
	m, err := asm.Registry.BuildModel(ctx, env, s.cfg.Models[idx], idx)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, oneShotTimeout)
	defer cancel()
	resp, err := model.Collect(ctx, m, &model.Request{
		Messages:  []model.Message{model.SystemText(system), {Role: model.RoleUser, Content: user}},
		MaxTokens: oneShotMaxTokens,
	}, nil)
	if err != nil {
		return "", err
	}
	return resp.Message.Text(), nil
}

var (
	thinkBlockRE = regexp.MustCompile(`(?is)<think\b[^>]*>.*?</think\s*>`)
	thinkOpenRE  = regexp.MustCompile(`(?i)<think\b[^>]*>`)
)

// stripThinkBlocks removes a reasoning model's <think> blocks; with
// truncateUnclosed, a <think> never closed (an answer cut mid-thought)
// ends the text there. The result is trimmed.
func stripThinkBlocks(text string, truncateUnclosed bool) string {
	text = thinkBlockRE.ReplaceAllString(text, "")
	if truncateUnclosed {
		if loc := thinkOpenRE.FindStringIndex(text); loc != nil {
			text = text[:loc[0]]
		}
	}
	return strings.TrimSpace(text)
}

// stripCodeFence removes one markdown code fence wrapping the whole text.
func stripCodeFence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") {
		return t
	}
	lines := strings.Split(strings.ReplaceAll(t, "\r\n", "\n"), "\n")
	if len(lines) >= 3 && strings.HasPrefix(lines[len(lines)-1], "```") {
		return strings.TrimSpace(strings.Join(lines[1:len(lines)-1], "\n"))
	}
	return t
}
