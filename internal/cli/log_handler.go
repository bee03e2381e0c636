package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"golang.org/x/term"
)

// The values of --log-format.
const (
	// logFormatAuto: human lines on a terminal, slog's text lines
	// elsewhere and always in serve.
	logFormatAuto = "auto"
	logFormatText = "text"
	logFormatJSON = "json"
	// logFormatHuman is what auto picks on a terminal (not a flag value).
	logFormatHuman = "human"
)

// newLogger is the commands' logger on w at level: human lines
// (humanHandler) when format is auto and w is a terminal and the command is
// not a server; slog text or JSON lines otherwise.
func newLogger(w io.Writer, level, format string, server bool, getenv func(string) string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErrorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch pickLogFormat(w, format, server) {
	case logFormatJSON:
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case logFormatText:
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case logFormatHuman:
		return slog.New(newHumanHandler(w, l, newPainter(w, getenv))), nil
	}
	return nil, usageErrorf("--log-format: %q is not one of auto, text, json", format)
}

// pickLogFormat resolves auto; other values are returned as given.
func pickLogFormat(w io.Writer, format string, server bool) string {
	if format != logFormatAuto && format != "" {
		return format
	}
	if f, ok := fileOf(w); ok && !server && term.IsTerminal(int(f.Fd())) {
		return logFormatHuman
	}
	return logFormatText
}

// humanHandler writes a record as one line for a person at a terminal:
// "warning: MCP server 'ghost' skipped: ..." and then its attributes as
// key=value; no time, no level column.
type humanHandler struct {
	w     io.Writer
	level slog.Leveler
	paint *painter
	mu    *sync.Mutex
	// attrs are the logger's own (With), already prefixed with groups.
	attrs  []slog.Attr
	groups []string
}

func newHumanHandler(w io.Writer, level slog.Leveler, p *painter) *humanHandler {
	return &humanHandler{w: w, level: level, paint: p, mu: new(sync.Mutex)}
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString(h.paint.red("error:"))
	case r.Level >= slog.LevelWarn:
		b.WriteString(h.paint.yellow("warning:"))
	case r.Level >= slog.LevelInfo:
		b.WriteString(h.paint.dim("info:"))
	default:
		b.WriteString(h.paint.dim("debug:"))
	}
	b.WriteByte(' ')
	b.WriteString(r.Message)
	attrs := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, h.prefixed(a))
		return true
	})
	for _, a := range attrs {
		writeHumanAttr(&b, "", a)
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// prefixed puts a under the handler's groups.
func (h *humanHandler) prefixed(a slog.Attr) slog.Attr {
	if len(h.groups) > 0 {
		a.Key = strings.Join(h.groups, ".") + "." + a.Key
	}
	return a
}

func writeHumanAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	if prefix != "" {
		key = prefix + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			writeHumanAttr(b, key, g)
		}
		return
	}
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s=%s", key, v)
}

func (h *humanHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		c.attrs = append(c.attrs, h.prefixed(a))
	}
	return &c
}

func (h *humanHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(slices.Clone(h.groups), name)
	return &c
}
