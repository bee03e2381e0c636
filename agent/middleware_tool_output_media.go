package agent

import (
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/tool"
)

// The bounds on the images and other binary blocks of one tool result
// (MCP image, audio and embedded-blob content, images of command tools).
// The budget saves each block within them to a file under the thread's
// tool-results folder and replaces it by a line naming the file; a block
// beyond them is refused: it is dropped, and its line says why.
const (
	// maxToolResultImages is the most images one result may carry.
	maxToolResultImages = 5
	// MaxToolResultImageBytes is the largest image a result may carry
	// (the per-image limit of Anthropic's API; OpenAI's is larger).
	MaxToolResultImageBytes = 5 << 20
	// MaxToolResultBinaries is the most other binary blocks (audio,
	// blobs) one result may carry.
	MaxToolResultBinaries = 8
	// MaxToolResultBinaryBytes is the largest such block.
	MaxToolResultBinaryBytes = 16 << 20
)

// visionMIMEs are the image types a model is shown (view_image's): an
// image of another type (SVG, BMP, TIFF) is saved as a binary block.
var visionMIMEs = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}

// externalizeMedia saves the image and binary blocks of res to files and
// returns res with each replaced by a text line (res itself when it has
// none). The images saved are listed in the result's metadata under
// builtin.ToolImagesKey, which is all the thread state keeps of them: the
// view_image middleware reads them from their files for the next model
// request of a vision model, and models without vision get a note. No
// image or binary bytes are ever returned, so none reach the thread
// state, a stream frame or the store.
func (b *ToolOutputBudget) externalizeMedia(call *tool.Call, name string, res *tool.Result) *tool.Result {
	if !hasMedia(res.Content) {
		return res
	}
	user, thread := callUser(call), callThread(call)
	totalImages := countBlocks(res.Content, tool.BlockImage)
	var images []builtin.ToolImage
	nImage, nBinary := 0, 0
	content := make([]tool.Block, 0, len(res.Content))
	for _, c := range res.Content {
		var line string
		switch c.Type {
		case tool.BlockImage:
			nImage++
			var img *builtin.ToolImage
			line, img = b.saveImage(user, thread, name, c, nImage, totalImages)
			if img != nil {
				images = append(images, *img)
			}
		case tool.BlockBinary:
			nBinary++
			line = b.saveBinary(user, thread, name, c, nBinary)
		default:
			content = append(content, c)
			continue
		}
		content = append(content, tool.Block{Type: tool.BlockText, Text: line})
	}
	out := *res
	out.Content = content
	if len(images) > 0 {
		out.Meta = maps.Clone(res.Meta)
		if out.Meta == nil {
			out.Meta = map[string]any{}
		}
		out.Meta[builtin.ToolImagesKey] = builtin.ToolImagesMeta(images)
	}
	return &out
}

// saveImage saves image n of total (1-based) and returns its line, and
// the entry for the image list when it was saved as an image.
func (b *ToolOutputBudget) saveImage(user, thread, name string, c tool.Block, n, total int) (string, *builtin.ToolImage) {
	declared := strings.TrimSpace(c.MIMEType)
	head := fmt.Sprintf("[image %d of %d (%s, %d bytes)", n, total, declared, len(c.Data))
	switch {
	case n > maxToolResultImages:
		return head + fmt.Sprintf(" refused: one tool result may carry at most %d images]", maxToolResultImages), nil
	case len(c.Data) > MaxToolResultImageBytes:
		return head + fmt.Sprintf(" refused: an image may be at most %d bytes]", MaxToolResultImageBytes), nil
	}
	sniffed := http.DetectContentType(c.Data)
	ext, ok := visionMIMEs[sniffed]
	if !ok {
		// Not an image a model can be shown: kept as a file all the same.
		vp, err := b.store.saveBytes(user, thread, name, "bin", c.Data)
		if err != nil {
			b.logger.Warn("could not save a tool image; dropping it", "tool", name, "bytes", len(c.Data), "err", err)
			return head + " omitted: it could not be saved]", nil
		}
		return head + fmt.Sprintf(" saved to %s; its content is not a PNG, JPEG, GIF or WebP image, so it is not shown]", vp), nil
	}
	vp, err := b.store.saveBytes(user, thread, name, ext, c.Data)
	if err != nil {
		b.logger.Warn("could not save a tool image; dropping it", "tool", name, "bytes", len(c.Data), "err", err)
		return head + " omitted: it could not be saved]", nil
	}
	b.logger.Info("saved a tool image", "tool", name, "bytes", len(c.Data), "path", vp)
	return head + fmt.Sprintf(" saved to %s]", vp), &builtin.ToolImage{Path: vp, MIMEType: sniffed, Size: int64(len(c.Data))}
}

// saveBinary saves binary block n (1-based) and returns its line.
func (b *ToolOutputBudget) saveBinary(user, thread, name string, c tool.Block, n int) string {
	var head strings.Builder
	fmt.Fprintf(&head, "[%s, %d bytes", strings.TrimSpace(c.MIMEType), len(c.Data))
	if c.URI != "" {
		fmt.Fprintf(&head, ", resource %s", c.URI)
	}
	switch {
	case n > MaxToolResultBinaries:
		return head.String() + fmt.Sprintf(" refused: one tool result may carry at most %d binary blocks]", MaxToolResultBinaries)
	case len(c.Data) > MaxToolResultBinaryBytes:
		return head.String() + fmt.Sprintf(" refused: a binary block may be at most %d bytes]", MaxToolResultBinaryBytes)
	}
	vp, err := b.store.saveBytes(user, thread, name, binaryExt(c.MIMEType), c.Data)
	if err != nil {
		b.logger.Warn("could not save a binary tool output; dropping it", "tool", name, "bytes", len(c.Data), "err", err)
		return head.String() + " omitted: it could not be saved]"
	}
	b.logger.Info("saved a binary tool output", "tool", name, "bytes", len(c.Data), "path", vp)
	return head.String() + fmt.Sprintf(" saved to %s]", vp)
}

// binaryExt is the file extension of a binary block's MIME type ("bin"
// when it is not a known one).
func binaryExt(mime string) string {
	m := strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	switch m {
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav"
	case "audio/mpeg", "audio/mp3":
		return "mp3"
	case "audio/ogg":
		return "ogg"
	case "audio/webm", "video/webm":
		return "webm"
	case "audio/flac":
		return "flac"
	case "audio/mp4", "video/mp4":
		return "mp4"
	case "application/pdf":
		return "pdf"
	case "application/zip":
		return "zip"
	}
	if ext := imageExt(m); ext != "bin" {
		return ext
	}
	return "bin"
}

func hasMedia(blocks []tool.Block) bool {
	for _, c := range blocks {
		if c.Type == tool.BlockImage || c.Type == tool.BlockBinary {
			return true
		}
	}
	return false
}

func countBlocks(blocks []tool.Block, t tool.BlockType) int {
	n := 0
	for _, c := range blocks {
		if c.Type == t {
			n++
		}
	}
	return n
}
