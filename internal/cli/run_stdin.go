package cli

import (
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// maxStdinPrompt bounds the prompt `antler run` reads from stdin.
const maxStdinPrompt = 1 << 20

// stdinPrompt returns the prompt piped to `antler run` when it got none
// as arguments: all of stdin, trimmed, when stdin is not a terminal; ""
// when it is one (run then says how to give a prompt) or when it is
// empty. More than maxStdinPrompt bytes is a usage error.
func stdinPrompt(r io.Reader) (string, error) {
	if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return "", nil
	}
	data, err := io.ReadAll(io.LimitReader(r, maxStdinPrompt+1))
	if err != nil {
		return "", &exitError{code: 1, err: err}
	}
	if len(data) > maxStdinPrompt {
		return "", usageErrorf("the prompt on stdin is longer than %d bytes", maxStdinPrompt)
	}
	return strings.TrimSpace(string(data)), nil
}
