package tool

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/thread"
)

// BlockType tells which fields of a Block are set.
type BlockType string

// The content block types.
const (
	BlockText  BlockType = "text"
	BlockImage BlockType = "image"
	BlockJSON  BlockType = "json"
	// BlockBinary is any other binary content (MCP audio, an embedded
	// resource's non-image blob). The agent's tool-output budget saves it
	// to a file and leaves a reference; it never reaches a model as bytes.
	BlockBinary BlockType = "binary"
)

// Block is one piece of a tool result's content.
type Block struct {
	Type BlockType `json:"type"`
	// Text is set for text blocks.
	Text string `json:"text,omitempty"`
	// MIMEType and Data are set for image and binary blocks.
	MIMEType string `json:"mime_type,omitempty"`
	Data     []byte `json:"data,omitempty"`
	// URI names where a binary block came from (an MCP resource's URI);
	// it may be empty.
	URI string `json:"uri,omitempty"`
	// JSON is set for json blocks.
	JSON json.RawMessage `json:"json,omitempty"`
}

// Result is the outcome of a tool call.
type Result struct {
	// Content is what the model reads.
	Content []Block
	// IsError marks a result that reports a failure; its text starts with
	// "Error: ".
	IsError bool
	// Artifact is attached to the tool message but never shown to the
	// model (MCP structuredContent, clarification payloads).
	Artifact any
	// Update is merged into the thread state with the reducers.
	Update *thread.Update
	// End stops the run after this step, as LangGraph's Command(goto=END).
	End bool
	// MessageID, when set, is the id of the tool message the result
	// becomes, so that a retried call replaces instead of appending.
	MessageID string
	// Meta is stamped into the tool message's metadata.
	Meta map[string]any
	// Failure is set by Invoke on the result it makes of a handler's Go
	// error or panic; nil otherwise.
	Failure *Failure
}

// Text returns a result with one text block.
func Text(s string) *Result {
	return &Result{Content: []Block{{Type: BlockText, Text: s}}}
}

// Errorf returns an error result whose text is "Error: " followed by the
// formatted message (the prefix is not added twice).
func Errorf(format string, args ...any) *Result {
	msg := fmt.Sprintf(format, args...)
	if !strings.HasPrefix(msg, "Error:") {
		msg = "Error: " + msg
	}
	return &Result{Content: []Block{{Type: BlockText, Text: msg}}, IsError: true}
}

// JSON returns a result with one json block holding v (and its text form
// for models that only read text).
func JSON(v any) (*Result, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &Result{Content: []Block{{Type: BlockJSON, JSON: data}}}, nil
}

// TextContent returns the result's content as the text a model reads:
// text blocks as they are, json blocks as JSON, images and binary blocks
// as a placeholder.
func (r *Result) TextContent() string {
	if r == nil {
		return ""
	}
	if len(r.Content) == 1 && r.Content[0].Type == BlockText {
		return r.Content[0].Text
	}
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch c.Type {
		case BlockText:
			b.WriteString(c.Text)
		case BlockJSON:
			b.Write(c.JSON)
		case BlockImage:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case BlockBinary:
			fmt.Fprintf(&b, "[binary %s, %d bytes]", c.MIMEType, len(c.Data))
		}
	}
	return b.String()
}
