package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// userTexts are the user messages of a request, in order.
func userTexts(req *model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// antler chat on a terminal: Ctrl-C during a slow answer and during a slow
// tool call cancels the turn and returns to the prompt, the next line is
// answered on the same thread, arrow-up recalls the last line, the
// history file is private, and Ctrl-D ends the chat with exit 0.
func TestE2EChat_ctrlCCancelsTheTurnOnATerminal(t *testing.T) {
	var third *model.Request
	srv := modeltest.NewServer(t,
		modeltest.Turn{Text: strings.Repeat("streaming ", 200), ChunkDelay: 50 * time.Millisecond},
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "slow", `{}`)}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			third = req
			return modeltest.Turn{Text: "answered the third"}
		}},
		modeltest.Turn{Func: echoLast})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: `+srv.URL+`
tools:
  - {name: slow, group: exec, use: "antler:command", command: ["sleep", "60"]}
`)
	state := filepath.Join(dir, "state")
	cmd := antlerCmd(t, "--config", cfg, "--home", filepath.Join(dir, "home"), "chat", "--thread", "t1")
	cmd.Env = append(cmd.Env, "TERM=xterm", "XDG_STATE_HOME="+state)
	tty, out, copied := startOnPTY(t, cmd, &pty.Winsize{Rows: 50, Cols: 200})
	defer tty.Close()

	out.expect(t, "> ", 1)
	io.WriteString(tty, "first\r")
	out.expect(t, "streaming streaming", 1)
	io.WriteString(tty, "\x03")
	out.expect(t, "(turn cancelled: the model was answering)", 1)
	out.expect(t, "> ", 2)

	io.WriteString(tty, "second\r")
	out.expect(t, "→ slow", 1)
	io.WriteString(tty, "\x03")
	out.expect(t, "(turn cancelled: slow was running)", 1)
	out.expect(t, "> ", 3)

	io.WriteString(tty, "third\r")
	out.expect(t, "answered the third", 1)
	out.expect(t, "> ", 4)
	if third == nil {
		t.Fatal("the model was not asked the third time")
	}
	// The cancelled turns' lines are on the thread the third goes on with.
	if got := userTexts(third); len(got) != 3 || got[0] != "first" || got[1] != "second" || !strings.Contains(got[2], "third") {
		t.Errorf("the third turn is not on the same thread as the cancelled ones: user messages %q", got)
	}

	io.WriteString(tty, "\x1b[A") // arrow up: the last line again
	io.WriteString(tty, "\r")
	out.expect(t, "saw: ", 1)
	if last := modeltest.LastMessage(srv.LastRequest()).Content; !strings.Contains(last, "third") {
		t.Errorf("arrow-up sent %q, want the last line (third)", last)
	}
	// The prompt after that answer (the recalled line's redraw holds
	// "> " too, so count from the answer on): Ctrl-D sent during the turn
	// would be dropped.
	out.expect(t, "END USER INPUT ---", 1)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		o := out.String()
		if strings.Contains(o[strings.LastIndex(o, "END USER INPUT ---"):], "> ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt after the recalled line's answer:\n%s", o)
		}
	}

	endChat(t, cmd, tty, out)
	tty.Close()
	<-copied
	if strings.Contains(out.String(), "error:") || strings.Contains(out.String(), "context canceled") {
		t.Errorf("a cancelled turn reported an error:\n%s", out.String())
	}
	// The log's warnings (the repaired dangling call) are lines for a
	// person, not slog's.
	if !strings.Contains(out.String(), "warning: repaired dangling tool calls") || strings.Contains(out.String(), "level=WARN") {
		t.Errorf("the warnings are not human lines:\n%s", out.String())
	}

	hist := filepath.Join(state, "antler", "chat_history")
	fi, err := os.Stat(hist)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", fi.Mode().Perm())
	}
	if data, _ := os.ReadFile(hist); string(data) != "first\nsecond\nthird\n" {
		t.Errorf("history file %q", data)
	}
}

// Ctrl-C at chat's approval prompt leaves the call waiting and returns to
// the ordinary prompt; a second Ctrl-C at the empty prompt ends the chat
// with exit 0.
func TestE2EChat_ctrlCAtTheApprovalPrompt(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("c1", "a.txt")}})
	cfg, home := approvalConfig(t, srv.URL)
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "chat", "--thread", "t1")
	cmd.Env = append(cmd.Env, "TERM=xterm", "XDG_STATE_HOME="+t.TempDir())
	tty, out, copied := startOnPTY(t, cmd, &pty.Winsize{Rows: 50, Cols: 200})
	defer tty.Close()
	out.expect(t, "> ", 1)
	io.WriteString(tty, "save a file\r")
	out.expect(t, "approve> ", 1)
	io.WriteString(tty, "\x03")
	out.expectAfter(t, "the call still waits for approval", "> ")
	io.WriteString(tty, "\x03")
	// Sent as soon as the hint is out, before the line editor may have
	// the terminal again: the chat keeps Ctrl-C a key between prompts, so
	// this is the second Ctrl-C at the prompt and not a SIGINT.
	out.expect(t, "(Ctrl-C again or Ctrl-D to quit)", 1)
	io.WriteString(tty, "\x03")
	if err := cmd.Wait(); err != nil {
		t.Errorf("chat: %v\n%s", err, out.String())
	}
	tty.Close()
	<-copied
	if _, err := os.Stat(outputFile(home, "t1", "a.txt")); err == nil {
		t.Error("the call ran although the approval prompt was left with Ctrl-C")
	}
}
