package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
)

// chatTurn is the running turn's hold on the terminal: the Ctrl-C
// watcher (lineReader.turn), which an MCP server's elicitation pauses
// while it asks the human on the terminal.
type chatTurn struct {
	in lineReader

	mu     sync.Mutex
	cancel func() // the running turn's; nil between turns
	end    func() // stops the watcher; nil while paused or between turns
}

// begin starts watching Ctrl-C for the turn that cancel ends.
func (t *chatTurn) begin(cancel func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cancel, t.end = cancel, t.in.turn(cancel)
}

// finish stops the watcher: the turn is over.
func (t *chatTurn) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.end != nil {
		t.end()
	}
	t.cancel, t.end = nil, nil
}

// pause stops the watcher so that a question may read the terminal;
// resume starts it again if the turn still runs. ok is false between
// turns.
func (t *chatTurn) pause() (resume func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel == nil {
		return nil, false
	}
	if t.end != nil {
		t.end()
		t.end = nil
	}
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.cancel != nil && t.end == nil {
			t.end = t.in.turn(t.cancel)
		}
	}, true
}

// elicit asks the human an MCP server's elicitation/create request on the
// terminal, in the middle of the turn: the message, then each field of a
// form (defaults in brackets), then whether to send it (accept, decline,
// cancel). A url-mode request shows its address; nothing is opened.
// Ctrl-C or the end of the input cancels the request, not the turn.
func (c *chatLoop) elicit(_ context.Context, server string, req *mcp.ElicitRequest) *mcp.ElicitResult {
	p := req.Params
	resume, ok := c.turn.pause()
	if !ok {
		c.s.app.elicit.decline(server, p)
		return declined()
	}
	defer resume()
	s := c.s
	s.status.clear()
	w := s.app.stderr
	if p.Mode == "url" {
		fmt.Fprintf(w, "\n🔗 MCP server %q asks you to open this address yourself (Antler opens nothing):\n   %s\n   %s\n",
			server, termText(p.URL), termText(clipRunes(p.Message, maxElicitMessage)))
		return c.elicitAnswer(nil, "opened it? [y] yes (accept), [n] decline, [c] cancel: ")
	}
	fields, err := mcptools.ElicitFields(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(w, "%s MCP server %q asked for a form Antler cannot show (%v): declined\n", s.paint.yellow("warning:"), server, err)
		return declined()
	}
	fmt.Fprintf(w, "\n❔ MCP server %q asks: %s\n", server, termText(clipRunes(p.Message, maxElicitMessage)))
	if len(fields) > 0 {
		fmt.Fprintln(w, s.paint.dim(`   (Enter takes the [default]; "-" leaves an optional field empty; Ctrl-C cancels)`))
	}
	content := make(map[string]any, len(fields))
	for _, f := range fields {
		v, set, ok := c.elicitField(f)
		if !ok {
			fmt.Fprintln(w, s.paint.dim("(request cancelled)"))
			return &mcp.ElicitResult{Action: "cancel"}
		}
		if set {
			content[f.Name] = v
		}
	}
	return c.elicitAnswer(content, "send? [y] accept, [n] decline, [c] cancel: ")
}

// elicitAnswer asks whether to accept (with content), decline or cancel.
func (c *chatLoop) elicitAnswer(content map[string]any, prompt string) *mcp.ElicitResult {
	for {
		line, err := c.in.readLine(prompt)
		if err != nil {
			return &mcp.ElicitResult{Action: "cancel"}
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes", "accept":
			return &mcp.ElicitResult{Action: "accept", Content: content}
		case "n", "no", "decline":
			return &mcp.ElicitResult{Action: "decline"}
		case "c", "cancel":
			return &mcp.ElicitResult{Action: "cancel"}
		}
	}
}

// elicitField reads one field until its text parses: set is false for
// an optional field left empty, ok false for Ctrl-C or the input's end.
func (c *chatLoop) elicitField(f mcptools.ElicitField) (v any, set, ok bool) {
	w := c.s.app.stderr
	if f.Description != "" {
		fmt.Fprintln(w, c.s.paint.dim("   "+termText(clipRunes(f.Description, maxElicitMessage))))
	}
	for i, o := range f.Options {
		fmt.Fprintf(w, "     %d) %s\n", i+1, termText(o.Label))
	}
	prompt := "   " + termText(f.Label()) + elicitHint(f) + ": "
	for {
		line, err := c.in.readLine(prompt)
		if err != nil {
			return nil, false, false
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" && f.Default != nil:
			return f.Default, true, true
		case (line == "" || line == "-") && !f.Required:
			return nil, false, true
		case line == "":
			fmt.Fprintln(w, "   this field is required")
			continue
		}
		v, err := f.Parse(line)
		if err != nil {
			fmt.Fprintf(w, "   %v\n", err)
			continue
		}
		return v, true, true
	}
}

// elicitHint is what the prompt of f says besides its label: the kind
// of answer, its bounds, whether it may be left empty, and the default.
func elicitHint(f mcptools.ElicitField) string {
	var hints []string
	switch f.Kind {
	case mcptools.ElicitBoolean:
		hints = append(hints, "yes/no")
	case mcptools.ElicitEnum:
		hints = append(hints, fmt.Sprintf("1-%d", len(f.Options)))
	case mcptools.ElicitMulti:
		hints = append(hints, "numbers, comma-separated")
	case mcptools.ElicitNumber, mcptools.ElicitInteger:
		hints = append(hints, f.Kind+bounds(f))
	default:
		if f.Format != "" {
			hints = append(hints, f.Format)
		}
	}
	if !f.Required {
		hints = append(hints, "optional")
	}
	s := ""
	if len(hints) > 0 {
		s = " (" + strings.Join(hints, ", ") + ")"
	}
	if f.Default != nil {
		s += " [" + termText(shownValue(f.Default)) + "]"
	}
	return s
}

// bounds is " 1..10", " ≥ 1" or "" for a number field.
func bounds(f mcptools.ElicitField) string {
	num := func(p *float64) string { return strconv.FormatFloat(*p, 'f', -1, 64) }
	switch {
	case f.Min != nil && f.Max != nil:
		return " " + num(f.Min) + ".." + num(f.Max)
	case f.Min != nil:
		return " ≥ " + num(f.Min)
	case f.Max != nil:
		return " ≤ " + num(f.Max)
	}
	return ""
}

// shownValue is a default as the human reads it.
func shownValue(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// termText drops the control characters of a server's text (escape
// sequences could move the cursor or rewrite the screen), keeping line
// breaks and tabs.
func termText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
