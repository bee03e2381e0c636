package builtin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// The marks of the image context message, as DeerFlow sets them: an id
// prefix and two metadata keys (additional_kwargs in LangChain terms).
const (
	imageContextIDPrefix  = "view-image-context:"
	imageContextMarkerKey = "deerflow_view_image_context"
	HideFromUIKey         = "hide_from_ui"
)

// imageContextHeader opens the injected message.
const imageContextHeader = "Here are the images you've viewed:"

// NewViewImageMiddleware returns the model middleware that shows the
// model the images view_image recorded (DeerFlow's ViewImageMiddleware;
// DeerFlow's view_image_tool.py). Install it only when the run's model supports vision.
//
// Before a model call it adds one user message to the request, and only
// to the request (never to the thread state, so no image bytes are ever
// checkpointed), when all of these hold: the last assistant message of the
// request called view_image, or a tool result after it returned images
// (listed under [ToolImagesKey]: images of MCP and other tools, saved to
// files by the agent's tool-output budget); every tool call of that
// message has a tool result after it; and no image context message
// (marked, or a user message with DeerFlow's header text) follows it
// already. The message is hidden from the UI, marked with DeerFlow's
// deerflow_view_image_context key and lists, sorted by path, every entry
// of viewed_images (the whole thread) when view_image was called, and the
// images of those tool results: a text line "- **{path}** ({mime})" and
// the image, read from disk now. An image that
// is gone, has changed size or type, or exceeds 20 MiB is replaced
// by "(file unavailable or changed on disk: {path})", where path is the
// virtual path, not DeerFlow's host path.
//
// Paths are re-resolved through layout for the call's user and thread
// rather than trusting actual_path from the state, and opened through
// os.Root, so a state written elsewhere cannot make it read other files.
// Nothing is ever removed from the request.
//
// NewViewImageMiddleware panics if layout is nil (a wiring mistake).
func NewViewImageMiddleware(layout *vpath.Layout) tool.ModelMiddleware {
	if layout == nil {
		panic("builtin.NewViewImageMiddleware: layout is nil")
	}
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			viewCalled, toolImages, ok := imageTrigger(call.Request.Messages)
			if !ok {
				return next(ctx, call)
			}
			viewed := maps.Clone(toolImages)
			if viewCalled && call.State != nil {
				if viewed == nil {
					viewed = map[string]thread.ViewedImage{}
				}
				maps.Copy(viewed, call.State.ViewedImages)
			}
			user := call.UserID
			if user == "" {
				user = "default"
			}
			threadID := call.ThreadID
			if threadID == "" {
				if s, ok := call.Context["thread_id"].(string); ok {
					threadID = s
				}
			}
			msg := imageContextMessage(layout, user, threadID, viewed)
			req := call.Request.Clone()
			req.Messages = append(req.Messages, msg)
			c := *call
			c.Request = req
			call.Log().Debug("injecting viewed images into the model request", "images", len(viewed))
			return next(ctx, &c)
		}
	}
}

// isImageContextMessage reports whether m is an image context message
// this middleware (or DeerFlow's) made: a user message whose id has
// imageContextIDPrefix and whose metadata sets imageContextMarkerKey.
func isImageContextMessage(m model.Message) bool {
	if m.Role != model.RoleUser || !strings.HasPrefix(m.ID, imageContextIDPrefix) {
		return false
	}
	marked, _ := m.Meta[imageContextMarkerKey].(bool)
	return marked
}

// imageTrigger applies DeerFlow's three conditions to the request's
// messages, with a tool result that returned images counting as a
// view_image call: ok says whether to inject, viewCalled whether the last
// assistant message called view_image, toolImages the images of the tool
// results after it.
func imageTrigger(msgs []model.Message) (viewCalled bool, toolImages map[string]thread.ViewedImage, ok bool) {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return false, nil, false
	}
	ai := msgs[last]
	viewCalled = slices.ContainsFunc(ai.ToolCalls, func(tc model.ToolCall) bool { return tc.Name == ViewImageName })
	toolImages = trailingToolImages(msgs)
	if !viewCalled && len(toolImages) == 0 {
		return false, nil, false
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == model.RoleTool && m.ToolCallID != "" {
			answered[m.ToolCallID] = true
		}
	}
	for _, tc := range ai.ToolCalls {
		if tc.ID != "" && !answered[tc.ID] {
			return false, nil, false
		}
	}
	for _, m := range msgs[last+1:] {
		if m.Role != model.RoleUser {
			continue
		}
		if isImageContextMessage(m) || hasImageHeader(m) {
			return false, nil, false
		}
	}
	return viewCalled, toolImages, true
}

func hasImageHeader(m model.Message) bool {
	has := func(s string) bool {
		return strings.Contains(s, "Here are the images you've viewed") ||
			strings.Contains(s, "Here are the details of the images you've viewed")
	}
	if has(m.Content) {
		return true
	}
	for _, p := range m.Parts {
		if p.Type == model.PartText && has(p.Text) {
			return true
		}
	}
	return false
}

// imageContextMessage builds the hidden user message with every viewed
// image.
func imageContextMessage(layout *vpath.Layout, user, threadID string, viewed map[string]thread.ViewedImage) model.Message {
	var parts []model.Part
	if len(viewed) == 0 {
		parts = []model.Part{{Type: model.PartText, Text: "No images have been viewed."}}
	} else {
		parts = append(parts, model.Part{Type: model.PartText, Text: imageContextHeader})
		for _, p := range slices.Sorted(maps.Keys(viewed)) {
			info := viewed[p]
			mime := info.MIMEType
			if mime == "" {
				mime = "unknown"
			}
			parts = append(parts, model.Part{Type: model.PartText, Text: fmt.Sprintf("\n- **%s** (%s)", p, mime)})
			if data, ok := rereadImage(layout, user, threadID, p, info); ok {
				parts = append(parts, model.Part{Type: model.PartImage, MIMEType: info.MIMEType, Data: data})
			} else {
				parts = append(parts, model.Part{Type: model.PartText, Text: fmt.Sprintf("  (file unavailable or changed on disk: %s)", p)})
			}
		}
	}
	return model.Message{
		ID:    imageContextIDPrefix + randomID(),
		Role:  model.RoleUser,
		Parts: parts,
		Meta:  map[string]any{HideFromUIKey: true, imageContextMarkerKey: true},
	}
}

// rereadImage reads a viewed image again, and reports false when it is no
// longer the image view_image checked (gone, another size or type, too
// large, or outside the thread).
func rereadImage(layout *vpath.Layout, user, threadID, virtual string, info thread.ViewedImage) ([]byte, bool) {
	if !underImageRoot(virtual) {
		return nil, false
	}
	t, err := layout.ResolveTarget(user, threadID, virtual, vpath.Read)
	if err != nil {
		return nil, false
	}
	img, res := readImage(t, rootFor(layout, user, threadID, t), virtual, func(err error) string { return "" })
	if res != nil || img.size != info.Size || img.mime != info.MIMEType {
		return nil, false
	}
	return img.data, true
}

// randomID is 32 random hex digits, for the ids of injected messages.
func randomID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}
