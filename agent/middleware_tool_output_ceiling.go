package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/tool"
)

// MaxToolResultBytes is Antler's hard ceiling on one tool result, beyond
// DeerFlow's budget: no tool message larger than this ever enters the
// thread state, and so never a model request, a stream frame or the
// store. A result's size is the bytes of its text, of its images and of
// its artifact as JSON. It applies after the budget, and also when the
// budget is disabled, to exempt tools and to error results. A result
// over it is reduced in this order:
//
//   - an artifact (MCP structuredContent) larger than
//     maxInlineArtifactBytes (64 KiB) is saved to the thread's tool-results
//     folder as JSON and replaced by {"antler_omitted": {"bytes": n,
//     "path": virtual path}} (path "" when it could not be saved);
//   - if still over, its images are saved there and each replaced by a
//     text line naming its file;
//   - if still over, its text is saved there whole and cut to a head and
//     a tail around a marker that gives the omitted byte count, the
//     ceiling, and the file to read with read_file (or says that it
//     could not be saved).
//
// Tool messages already in a thread that exceed it are cut the same way
// (without saving) in every model request.
const MaxToolResultBytes = 256 << 10

// maxInlineArtifactBytes is the largest artifact (as JSON) a result over
// [MaxToolResultBytes] keeps inline.
const maxInlineArtifactBytes = MaxToolResultBytes / 4

// OmittedArtifactKey is the key of the artifact that replaces one saved
// to a file by the ceiling.
const OmittedArtifactKey = "antler_omitted"

// ceilingNote says where the full text of a cut result is.
type ceilingNote struct {
	total  int    // bytes of the full text (0: not said)
	path   string // virtual path of the saved text ("" when not saved)
	failed bool   // saving was tried and failed
}

func (n ceilingNote) marker(omitted, limit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n[... %d bytes omitted: one tool result may hold at most %d bytes.", omitted, limit)
	switch {
	case n.path != "":
		fmt.Fprintf(&b, " The full output (%d bytes) is saved to %s; use read_file on it with start_line and end_line to read the rest.", n.total, n.path)
	case n.failed:
		fmt.Fprintf(&b, " The full output (%d bytes) could not be saved.", n.total)
	}
	b.WriteString("]\n\n")
	return b.String()
}

// ceil enforces MaxToolResultBytes on res.
func (b *ToolOutputBudget) ceil(call *tool.Call, name string, res *tool.Result) *tool.Result {
	var art []byte
	if res.Artifact != nil {
		art, _ = json.Marshal(res.Artifact)
	}
	textBytes, imageBytes := blockSizes(res.Content)
	if textBytes+imageBytes+len(art) <= MaxToolResultBytes {
		return res
	}
	user, thread := callUser(call), callThread(call)
	artifact, content := res.Artifact, res.Content
	var notes []string
	if len(art) > maxInlineArtifactBytes {
		var note string
		artifact, note = b.saveArtifact(user, thread, name, art)
		notes = append(notes, note)
		art, _ = json.Marshal(artifact)
	}
	notesBytes := len(strings.Join(notes, "\n")) + len(notes)
	if imageBytes > 0 && textBytes+notesBytes+imageBytes+len(art) > MaxToolResultBytes {
		content, imageBytes = b.saveImages(user, thread, name, content), 0
	}
	var out *tool.Result
	if imageBytes > 0 { // the images fit: the content keeps its blocks
		c := *res
		for i := len(notes) - 1; i >= 0; i-- {
			content = append([]tool.Block{{Type: tool.BlockText, Text: notes[i]}}, content...)
		}
		c.Content = content
		out = &c
	} else {
		text := (&tool.Result{Content: content}).TextContent()
		if len(notes) > 0 {
			text = strings.Join(append(notes, text), "\n")
		}
		if limit := MaxToolResultBytes - len(art); len(text) > limit {
			text = cutToCeiling(text, limit, b.saveCut(user, thread, name, text))
		}
		out = withText(res, text)
	}
	out.Artifact = artifact
	return out
}

// saveArtifact saves an oversized artifact (its JSON, art) and returns
// the artifact that replaces it and the line the model reads about it.
func (b *ToolOutputBudget) saveArtifact(user, thread, name string, art []byte) (any, string) {
	vp, err := b.store.saveText(user, thread, name, "json", string(art))
	repl := map[string]any{OmittedArtifactKey: map[string]any{"bytes": len(art), "path": vp}}
	if err != nil {
		b.logger.Warn("could not save an oversized tool artifact; dropping it", "tool", name, "bytes", len(art), "err", err)
		return repl, fmt.Sprintf("[The structured content of this result (%d bytes) exceeded the size limit and could not be saved.]", len(art))
	}
	b.logger.Info("saved an oversized tool artifact", "tool", name, "bytes", len(art), "path", vp)
	return repl, fmt.Sprintf("[The structured content of this result (%d bytes) is saved to %s.]", len(art), vp)
}

// saveCut saves the full text of a result the ceiling cuts and returns
// what its marker says about it.
func (b *ToolOutputBudget) saveCut(user, thread, name, text string) ceilingNote {
	vp, err := b.store.saveText(user, thread, name, toolResultExt(name), text)
	if err != nil {
		b.logger.Warn("could not save an oversized tool output", "tool", name, "bytes", len(text), "err", err)
		return ceilingNote{total: len(text), failed: true}
	}
	b.logger.Info("saved an oversized tool output", "tool", name, "bytes", len(text), "path", vp)
	return ceilingNote{total: len(text), path: vp}
}

// blockSizes returns the bytes of a result's text (as TextContent joins
// it) and of its images.
func blockSizes(blocks []tool.Block) (text, images int) {
	for i, c := range blocks {
		if i > 0 {
			text++
		}
		switch c.Type {
		case tool.BlockText:
			text += len(c.Text)
		case tool.BlockJSON:
			text += len(c.JSON)
		case tool.BlockImage:
			images += len(c.Data)
			text += len(c.MIMEType) + 24 // the "[image ..., n bytes]" placeholder
		}
	}
	return text, images
}

// saveImages returns blocks with each image saved to a file and replaced
// by a text line naming it.
func (b *ToolOutputBudget) saveImages(user, thread, name string, blocks []tool.Block) []tool.Block {
	out := make([]tool.Block, 0, len(blocks))
	for _, c := range blocks {
		if c.Type != tool.BlockImage {
			out = append(out, c)
			continue
		}
		vp, err := b.store.saveBytes(user, thread, name, imageExt(c.MIMEType), c.Data)
		if err != nil {
			b.logger.Warn("could not save an oversized tool image; dropping it", "tool", name, "bytes", len(c.Data), "err", err)
			out = append(out, tool.Block{Type: tool.BlockText,
				Text: fmt.Sprintf("[image %s, %d bytes, omitted: it exceeded the size limit and could not be saved]", c.MIMEType, len(c.Data))})
			continue
		}
		out = append(out, tool.Block{Type: tool.BlockText,
			Text: fmt.Sprintf("[image %s, %d bytes, saved to %s; use view_image on it to see it]", c.MIMEType, len(c.Data), vp)})
	}
	return out
}

// imageExt is the file extension of an image MIME type ("bin" when it is
// not a known image type).
func imageExt(mime string) string {
	switch strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0])) {
	case "image/png":
		return "png"
	case "image/jpeg", "image/jpg":
		return "jpg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	case "image/svg+xml":
		return "svg"
	}
	return "bin"
}

// cutToCeiling cuts text to at most limit bytes: three quarters head,
// one quarter tail, around note's marker, each part ending or starting
// on a line boundary where one is near, never inside a UTF-8 sequence.
func cutToCeiling(text string, limit int, note ceilingNote) string {
	if len(text) <= limit {
		return text
	}
	room := limit - len(note.marker(len(text), limit))
	if room <= 0 {
		return validPrefix(text, limit)
	}
	headEnd := snapEndBytes(text, validLen(text, room*3/4))
	tailStart := snapStartBytes(text, tailOffset(text, max(headEnd, len(text)-(room-headEnd))))
	return text[:headEnd] + note.marker(len(text)-headEnd-(len(text)-tailStart), limit) + text[tailStart:]
}

// validLen returns n, moved back to the start of a UTF-8 sequence.
func validLen(s string, n int) int {
	n = min(n, len(s))
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// tailOffset returns i, moved forward to the start of a UTF-8 sequence.
func tailOffset(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

func validPrefix(s string, n int) string { return s[:validLen(s, n)] }

// snapEndBytes is snapEnd in bytes.
func snapEndBytes(s string, pos int) int {
	if pos <= 0 || pos >= len(s) {
		return pos
	}
	if i := strings.LastIndexByte(s[pos/2:pos], '\n'); i >= 0 {
		return pos/2 + i + 1
	}
	return pos
}

// snapStartBytes is snapStart in bytes.
func snapStartBytes(s string, pos int) int {
	if pos <= 0 || pos >= len(s) {
		return pos
	}
	if i := strings.IndexByte(s[pos:pos+(len(s)-pos)/2], '\n'); i >= 0 {
		return pos + i + 1
	}
	return pos
}
