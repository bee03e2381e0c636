package cli

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// defaultWidth is the width of a table written to something that is not a
// terminal, when neither --width nor $COLUMNS says otherwise.
const defaultWidth = 80

// minFlexWidth is the narrowest the cut column of a table becomes; a
// table whose other columns leave less is wider than asked.
const minFlexWidth = 12

// table is rows of cells written in columns two spaces apart, fitted to
// a width by cutting the cells of one column (a description) with "…".
// Other cells are never cut: they hold names a user types back.
type table struct {
	header []string
	rows   [][]string
	// flex is the column cut to fit; -1 cuts none.
	flex int
	// notes are lines written, uncut, under a row (by row index),
	// indented to the second column.
	notes map[int]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// note adds a line under the last row added.
func (t *table) note(s string) {
	if t.notes == nil {
		t.notes = map[int]string{}
	}
	t.notes[len(t.rows)-1] = s
}

// write writes the table, at most width columns wide where possible.
// Widths count runes (every character one column).
func (t *table) write(w io.Writer, width int) error {
	all := append([][]string{t.header}, t.rows...)
	widths := make([]int, len(t.header))
	for _, r := range all {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if t.flex >= 0 && t.flex < len(widths) {
		others := 2 * (len(widths) - 1)
		for i, cw := range widths {
			if i != t.flex {
				others += cw
			}
		}
		widths[t.flex] = min(widths[t.flex], max(width-others, minFlexWidth))
	}
	var b strings.Builder
	for n, r := range all {
		line := ""
		for i, c := range r {
			if i == t.flex {
				c = cut(c, widths[i])
			}
			if i < len(r)-1 {
				c += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			}
			line += c
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
		if note, ok := t.notes[n-1]; ok && n > 0 {
			b.WriteString(strings.Repeat(" ", widths[0]+2) + note + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cut returns s in at most n runes, its end replaced by "…" when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// widthFlag is the --width flag of the commands that print tables.
type widthFlag struct{ n int }

func (f *widthFlag) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.n, "width", 0, "table width in columns (default: the terminal's, else $COLUMNS, else 80)")
}

// width is the table width for output w: --width, else the terminal's
// width when w is one, else $COLUMNS, else 80.
func (f *widthFlag) width(w io.Writer, getenv func(string) string) int {
	if f.n > 0 {
		return f.n
	}
	if file, ok := fileOf(w); ok && term.IsTerminal(int(file.Fd())) {
		if cols, _, err := term.GetSize(int(file.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}
