// Command testagent is a small ACP agent for acptools' tests. It speaks
// ACP on stdin/stdout through acp-go-sdk's agent side and behaves as its
// first argument says:
//
//	echo        a thought chunk (which the client must drop), then
//	            "echo: <prompt>" and "cwd=<session cwd>"
//	fs          exercises fs/write_text_file and fs/read_text_file inside
//	            and outside the session cwd and reports one line per step
//	permission  asks for permission with the options in its second
//	            argument ("kind:id,kind:id") and reports the outcome
//	empty       ends the turn without any message text
//	hang        starts a grandchild ("sleep"), writes both pids to
//	            pids.txt in its working directory and never answers the
//	            prompt
//	hang-init   never answers initialize
//	crash       writes to stderr and exits with status 3 on initialize
//	sleep       sleeps for ten minutes (the grandchild of hang)
//
// Every mode records the raw lines it receives in wire.jsonl and its
// environment and working directory in report.json, both in its working
// directory.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

type agent struct {
	mode string
	arg  string
	conn *acp.AgentSideConnection
	cwd  string // of the session
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testagent MODE [ARG]")
		os.Exit(2)
	}
	a := &agent{mode: os.Args[1]}
	if len(os.Args) > 2 {
		a.arg = os.Args[2]
	}
	if a.mode == "sleep" {
		time.Sleep(10 * time.Minute)
		return
	}
	wd, _ := os.Getwd()
	report, _ := json.Marshal(map[string]any{"getwd": wd, "env": os.Environ(), "pid": os.Getpid()})
	_ = os.WriteFile(filepath.Join(wd, "report.json"), report, 0o644)
	var in io.Reader = os.Stdin
	if wire, err := os.Create(filepath.Join(wd, "wire.jsonl")); err == nil {
		defer wire.Close()
		in = io.TeeReader(os.Stdin, wire)
	}
	a.conn = acp.NewAgentSideConnection(a, os.Stdout, in)
	<-a.conn.Done()
}

func (a *agent) Initialize(ctx context.Context, _ acp.InitializeRequest) (acp.InitializeResponse, error) {
	switch a.mode {
	case "hang-init":
		select {}
	case "crash":
		fmt.Fprintln(os.Stderr, "testagent: fatal: cannot start")
		os.Exit(3)
	}
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	a.cwd = p.Cwd
	return acp.NewSessionResponse{SessionId: "sess-test"}, nil
}

func (a *agent) say(ctx context.Context, sid acp.SessionId, text string) {
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: acp.UpdateAgentMessageText(text)})
}

func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	sid := p.SessionId
	var prompt string
	for _, b := range p.Prompt {
		if b.Text != nil {
			prompt += b.Text.Text
		}
	}
	switch a.mode {
	case "echo":
		_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: acp.UpdateAgentThoughtText("THOUGHT")})
		a.say(ctx, sid, "echo: "+prompt+"\n")
		a.say(ctx, sid, "cwd="+a.cwd)
	case "fs":
		a.fs(ctx, sid)
	case "permission":
		var opts []acp.PermissionOption
		for _, spec := range strings.Split(a.arg, ",") {
			if kind, id, ok := strings.Cut(spec, ":"); ok {
				opts = append(opts, acp.PermissionOption{Kind: acp.PermissionOptionKind(kind), Name: id, OptionId: acp.PermissionOptionId(id)})
			}
		}
		if opts == nil {
			opts = []acp.PermissionOption{}
		}
		resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
			SessionId: sid,
			ToolCall:  acp.ToolCallUpdate{ToolCallId: "call_1", Title: acp.Ptr("Edit a file")},
			Options:   opts,
		})
		switch {
		case err != nil:
			a.say(ctx, sid, "error: "+err.Error())
		case resp.Outcome.Selected != nil:
			a.say(ctx, sid, "selected:"+string(resp.Outcome.Selected.OptionId))
		default:
			a.say(ctx, sid, "cancelled")
		}
	case "hang":
		child := exec.Command(os.Args[0], "sleep")
		if err := child.Start(); err != nil {
			return acp.PromptResponse{}, err
		}
		wd, _ := os.Getwd()
		_ = os.WriteFile(filepath.Join(wd, "pids.txt"), fmt.Appendf(nil, "%d %d\n", os.Getpid(), child.Process.Pid), 0o644)
		select {}
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// fs runs the file steps and reports "name: ok <content>" or
// "name: error <code>" per step.
func (a *agent) fs(ctx context.Context, sid acp.SessionId) {
	var lines []string
	report := func(name, content string, err error) {
		if err != nil {
			code := 0
			if re, ok := err.(*acp.RequestError); ok {
				code = re.Code
			}
			lines = append(lines, fmt.Sprintf("%s: error %d", name, code))
			return
		}
		lines = append(lines, fmt.Sprintf("%s: ok %q", name, content))
	}
	write := func(name, path, content string) {
		_, err := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: path, Content: content})
		report(name, "", err)
	}
	read := func(name, path string, line, limit *int) {
		r, err := a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: path, Line: line, Limit: limit})
		report(name, r.Content, err)
	}
	write("write-inside", filepath.Join(a.cwd, "out", "result.txt"), "written by the agent\n")
	read("read-back", filepath.Join(a.cwd, "out", "result.txt"), nil, nil)
	read("read-lines", filepath.Join(a.cwd, "input.txt"), acp.Ptr(2), acp.Ptr(2))
	read("read-missing", filepath.Join(a.cwd, "missing.txt"), nil, nil)
	read("read-outside", filepath.Join(filepath.Dir(a.cwd), "secret.txt"), nil, nil)
	read("read-dotdot", a.cwd+"/../secret.txt", nil, nil)
	read("read-symlink", filepath.Join(a.cwd, "link-out"), nil, nil)
	read("read-relative", "input.txt", nil, nil)
	write("write-outside", filepath.Join(filepath.Dir(a.cwd), "escape.txt"), "x")
	write("write-symlink-dir", filepath.Join(a.cwd, "dir-out", "escape.txt"), "x")
	a.say(ctx, sid, strings.Join(lines, "\n"))
}

func (a *agent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}
