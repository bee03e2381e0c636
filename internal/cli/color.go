package cli

import (
	"io"

	"golang.org/x/term"
)

// painter colours text for a terminal: on anything else, with NO_COLOR
// set (https://no-color.org) or TERM=dumb, its methods return the text
// unchanged. A nil *painter paints nothing.
type painter struct {
	on bool
}

// newPainter paints for w when w is a terminal and the environment allows
// colours.
func newPainter(w io.Writer, getenv func(string) string) *painter {
	f, ok := fileOf(w)
	return &painter{on: ok && term.IsTerminal(int(f.Fd())) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
}

func (p *painter) paint(code, s string) string {
	if p == nil || !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *painter) red(s string) string    { return p.paint("31", s) }
func (p *painter) green(s string) string  { return p.paint("32", s) }
func (p *painter) yellow(s string) string { return p.paint("33", s) }
func (p *painter) dim(s string) string    { return p.paint("2", s) }
