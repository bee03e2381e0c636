package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/peterh/liner"
	"golang.org/x/term"
)

// errCtrlC is what a lineReader returns when Ctrl-C was pressed at the
// prompt.
var errCtrlC = errors.New("interrupted")

// lineReader reads the chat's lines.
type lineReader interface {
	// readLine shows prompt and returns the line typed, errCtrlC for
	// Ctrl-C, io.EOF when the input ends (Ctrl-D on a terminal).
	readLine(prompt string) (string, error)
	// remember adds a line that was sent to the history.
	remember(line string)
	// turn is called around each turn: on a terminal it makes Ctrl-C
	// call cancel (watchCtrlC); the returned function ends that.
	turn(cancel func()) (end func())
	close() error
}

// newLineReader returns the terminal line editor when stdin and stdout are
// both terminals that the editor supports, with the history file at
// historyPath ("" for none); else a reader of plain lines from in, which
// shows prompts on promptw (nil: none) and reads Ctrl-C from sigs.
func newLineReader(ctx context.Context, in io.Reader, out io.Writer, promptw io.Writer, historyPath string,
	sigs <-chan os.Signal, warn func(string)) lineReader {
	if f, ok := in.(*os.File); ok && f.Fd() == uintptr(os.Stdin.Fd()) && term.IsTerminal(int(f.Fd())) {
		if o, ok := fileOf(out); ok && o.Fd() == uintptr(os.Stdout.Fd()) && term.IsTerminal(int(o.Fd())) && liner.TerminalSupported() {
			return newTermReader(int(f.Fd()), historyPath, warn)
		}
	}
	return newScanReader(ctx, in, promptw, sigs)
}

// termReader is the line editor on the process's terminal: line editing,
// history (arrow up and down, Ctrl-R), Ctrl-C and Ctrl-D.
type termReader struct {
	fd      int
	state   *liner.State
	history *chatHistory
	warn    func(string)
	restore func() // the terminal's mode before the chat; nil if unchanged
}

func newTermReader(fd int, historyPath string, warn func(string)) *termReader {
	restore, err := keepCtrlCAKey(fd)
	if err != nil {
		warn(fmt.Sprintf("Ctrl-C between turns may end the chat: %v", err))
	}
	r := &termReader{fd: fd, state: liner.NewLiner(), warn: warn, restore: restore}
	r.state.SetCtrlCAborts(true)
	h, err := loadChatHistory(historyPath)
	if err != nil {
		warn(err.Error())
	}
	r.history = h
	for _, l := range h.lines {
		r.state.AppendHistory(l)
	}
	return r
}

func (r *termReader) readLine(prompt string) (string, error) {
	line, err := r.state.Prompt(prompt)
	switch {
	case errors.Is(err, liner.ErrPromptAborted):
		return "", errCtrlC
	case err != nil:
		return "", err
	}
	return line, nil
}

func (r *termReader) remember(line string) {
	if r.history == nil || !r.history.add(line) {
		return
	}
	r.state.AppendHistory(line)
	if err := r.history.save(); err != nil {
		r.warn(err.Error())
		r.history.path = "" // one warning is enough
	}
}

func (r *termReader) turn(cancel func()) func() {
	stop, err := watchCtrlC(r.fd, cancel)
	if err != nil {
		r.warn(fmt.Sprintf("Ctrl-C cannot cancel this turn: %v", err))
		return func() {}
	}
	return stop
}

func (r *termReader) close() error {
	err := r.state.Close()
	if r.restore != nil {
		r.restore()
	}
	return err
}

// scanReader reads plain lines (stdin not a terminal, or a terminal the
// editor does not support); Ctrl-C arrives as SIGINT.
type scanReader struct {
	ctx     context.Context // the chat's, for the reading goroutine only
	lines   chan string
	promptw io.Writer
	sigs    <-chan os.Signal
}

func newScanReader(ctx context.Context, in io.Reader, promptw io.Writer, sigs <-chan os.Signal) *scanReader {
	r := &scanReader{ctx: ctx, lines: make(chan string), promptw: promptw, sigs: sigs}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	go func() {
		defer close(r.lines)
		for sc.Scan() {
			select {
			case r.lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return r
}

func (r *scanReader) readLine(prompt string) (string, error) {
	if r.promptw != nil {
		fmt.Fprint(r.promptw, prompt)
	}
	select {
	case <-r.ctx.Done():
		return "", io.EOF
	case <-r.sigs:
		return "", errCtrlC
	case l, ok := <-r.lines:
		if !ok {
			return "", io.EOF
		}
		return l, nil
	}
}

func (r *scanReader) remember(string) {}

func (r *scanReader) turn(cancel func()) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-r.sigs:
			cancel()
		case <-done:
		}
	}()
	return func() { close(done) }
}

func (r *scanReader) close() error { return nil }
