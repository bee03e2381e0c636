package agent

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// This file is DeerFlow's ToolResultSanitizationMiddleware: the results
// of the tools that return remote content (a fetched page, search
// snippets) get the neutralisation of the user's input
// (NeutralizeUntrustedTags), so that a page cannot forge a
// <system-reminder> or close the user-input boundary. Local tools (bash,
// read_file, ...) are left alone so that code and logs are never
// mangled. Like DeerFlow the gate is by tool name: an MCP tool that
// fetches under another name is not covered.

// remoteContentTools returns the names of the tools whose results are
// remote content (DeerFlow's _REMOTE_CONTENT_TOOL_NAMES).
func remoteContentTools() []string {
	return []string{"web_fetch", "web_search", "image_search", "web_capture"}
}

// SanitizeToolResults returns DeerFlow's ToolResultSanitizationMiddleware.
// It sits inside the tool-output budget, so the budget cuts text that is
// already neutralised.
func SanitizeToolResults() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			res, err := next(ctx, call, args)
			if err != nil || res == nil || call == nil || !slices.Contains(remoteContentTools(), call.Name) {
				return res, err
			}
			return sanitizeResult(res), nil
		}
	}
}

// sanitizeResult returns res, or a copy with its text neutralised: the
// text and json blocks of its content and the tool messages of its state
// update. Images pass through.
func sanitizeResult(res *tool.Result) *tool.Result {
	content, changed := sanitizeBlocks(res.Content)
	msgs, msgsChanged := sanitizeToolMessages(res.Update)
	if !changed && !msgsChanged {
		return res
	}
	out := *res
	out.Content = content
	if msgsChanged {
		u := *res.Update
		u.Messages = msgs
		out.Update = &u
	}
	return &out
}

func sanitizeBlocks(blocks []tool.Block) ([]tool.Block, bool) {
	var out []tool.Block
	for i, b := range blocks {
		nb := b
		switch b.Type {
		case tool.BlockText:
			nb.Text = NeutralizeUntrustedTags(b.Text)
		case tool.BlockJSON:
			// Only < > and the marker texts change: the JSON stays valid.
			if s := NeutralizeUntrustedTags(string(b.JSON)); s != string(b.JSON) {
				nb.JSON = json.RawMessage(s)
			}
		}
		if out == nil && (nb.Text != b.Text || string(nb.JSON) != string(b.JSON)) {
			out = slices.Clone(blocks[:i:i])
		}
		if out != nil {
			out = append(out, nb)
		}
	}
	if out == nil {
		return blocks, false
	}
	return out, true
}

// sanitizeToolMessages neutralises the text of the tool messages a
// result's update carries (DeerFlow's Command(update={"messages": ...})).
func sanitizeToolMessages(u *thread.Update) ([]model.Message, bool) {
	if u == nil {
		return nil, false
	}
	var out []model.Message
	for i, m := range u.Messages {
		if m.Role != model.RoleTool {
			continue
		}
		text := NeutralizeUntrustedTags(m.Content)
		if text == m.Content {
			continue
		}
		if out == nil {
			out = slices.Clone(u.Messages)
		}
		out[i].Content = text
	}
	return out, out != nil
}
