package builtin

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// ToolImagesKey is the tool-message metadata key that lists the images a
// tool result returned, each saved to a file by the agent's tool-output
// budget: [{"path": virtual path, "mime_type": ..., "size": bytes}]. The
// thread state keeps only this reference; the bytes are read from the
// file when a model request is made (see [NewViewImageMiddleware] and
// [NewToolImageNoteMiddleware]).
const ToolImagesKey = "antler_tool_images"

// ToolImage is one entry of [ToolImagesKey].
type ToolImage struct {
	Path     string
	MIMEType string
	Size     int64
}

// ToolImagesMeta returns imgs as the value stored under [ToolImagesKey]
// (plain maps, so that it reads back the same from JSON).
func ToolImagesMeta(imgs []ToolImage) []any {
	out := make([]any, 0, len(imgs))
	for _, im := range imgs {
		out = append(out, map[string]any{"path": im.Path, "mime_type": im.MIMEType, "size": im.Size})
	}
	return out
}

// toolImagesOf reads the [ToolImagesKey] entries of a tool message, as
// stored (Go values) or as read back from JSON (float64 sizes). Malformed
// entries are skipped.
func toolImagesOf(m model.Message) []ToolImage {
	list, _ := m.Meta[ToolImagesKey].([]any)
	var out []ToolImage
	for _, e := range list {
		em, ok := e.(map[string]any)
		if !ok {
			continue
		}
		p, _ := em["path"].(string)
		mime, _ := em["mime_type"].(string)
		var size int64
		switch v := em["size"].(type) {
		case int64:
			size = v
		case int:
			size = int64(v)
		case float64:
			size = int64(v)
		}
		if p != "" && mime != "" && size > 0 {
			out = append(out, ToolImage{Path: p, MIMEType: mime, Size: size})
		}
	}
	return out
}

// trailingToolImages returns the images of the tool messages that follow
// the last assistant message of msgs, by virtual path.
func trailingToolImages(msgs []model.Message) map[string]thread.ViewedImage {
	var out map[string]thread.ViewedImage
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != model.RoleAssistant; i-- {
		if msgs[i].Role != model.RoleTool {
			continue
		}
		for _, im := range toolImagesOf(msgs[i]) {
			if out == nil {
				out = map[string]thread.ViewedImage{}
			}
			out[im.Path] = thread.ViewedImage{MIMEType: im.MIMEType, Size: im.Size}
		}
	}
	return out
}

// toolImageNoteIDPrefix starts the id of the note
// [NewToolImageNoteMiddleware] adds.
const toolImageNoteIDPrefix = "tool-image-note:"

// NewToolImageNoteMiddleware returns the model middleware for models
// without vision (those that do not bind view_image): when the tool
// results after the last assistant message returned images, it adds one
// hidden user message to the request (never to the thread state) saying
// that the images were saved to files and are not shown, and naming
// them. Install it only for requests that do not bind view_image; those
// that do get the images themselves from [NewViewImageMiddleware].
func NewToolImageNoteMiddleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			imgs := trailingToolImages(call.Request.Messages)
			if len(imgs) == 0 {
				return next(ctx, call)
			}
			req := call.Request.Clone()
			req.Messages = append(req.Messages, toolImageNote(imgs))
			c := *call
			c.Request = req
			return next(ctx, &c)
		}
	}
}

// toolImageNote is the hidden user message of NewToolImageNoteMiddleware.
func toolImageNote(imgs map[string]thread.ViewedImage) model.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "The tool results above returned %d image(s). This model cannot view images, so they are not shown; they are saved to:", len(imgs))
	for _, p := range slices.Sorted(maps.Keys(imgs)) {
		fmt.Fprintf(&b, "\n- %s (%s, %d bytes)", p, imgs[p].MIMEType, imgs[p].Size)
	}
	return model.Message{
		ID:      toolImageNoteIDPrefix + randomID(),
		Role:    model.RoleUser,
		Content: b.String(),
		Meta:    map[string]any{HideFromUIKey: true},
	}
}
