package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// SkillGate tells whether a virtual path lies inside a disabled skill.
// Package skills implements it; nil means every skill is enabled.
type SkillGate interface {
	// DisabledSkill returns the skill's name and true when virtualPath is
	// inside a skill that user has disabled.
	DisabledSkill(user, virtualPath string) (name string, disabled bool)
}

// ToolsOptions configure [NewTools]. The zero value is ready: DeerFlow's
// default limits, host bash off, read-before-write on.
type ToolsOptions struct {
	// Config supplies the sandbox section (output limits, bash timeout,
	// allow_host_bash, write_file_max_bytes) and read_before_write; nil
	// means config.Default().
	Config *config.Config
	// Getenv reads DEERFLOW_WRITE_FILE_MAX_BYTES at every write_file call;
	// nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment bash commands inherit (secret-looking
	// names are removed); nil means os.Environ.
	Environ func() []string
	// InjectEnv returns request-scoped variables (skill secrets, tokens)
	// for a bash call. They are set in the command's environment and their
	// values of 8 characters or more are redacted from its output.
	InjectEnv func(call *tool.Call) map[string]string
	// SkillGate refuses paths inside disabled skills; nil allows all.
	SkillGate SkillGate
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// BashProgressEvery is how often a running bash command reports its
	// progress (its elapsed time and lines of output so far) through the
	// call's event sink (tool.Call.ReportProgress); zero means
	// 10s, a negative value turns reports off.
	BashProgressEvery time.Duration
}

// defaultBashProgressEvery is the default ToolsOptions.BashProgressEvery.
const defaultBashProgressEvery = 10 * time.Second

// Tools builds the sandbox tools over a provider. It is immutable after
// NewTools (but for a log-once flag); the tools it returns are safe for
// concurrent use.
type Tools struct {
	provider  Provider
	cfg       *config.Config
	getenv    func(string) string
	environ   func() []string
	injectEnv func(call *tool.Call) map[string]string
	skills    SkillGate
	logger    *slog.Logger
	// progressEvery is ToolsOptions.BashProgressEvery, resolved (<= 0: off).
	progressEvery time.Duration

	noProcScan sync.Once // the warning that detached processes cannot be found, logged once
}

// NewTools returns the tool builder for p.
func NewTools(p Provider, opts ToolsOptions) *Tools {
	t := &Tools{provider: p, cfg: opts.Config, getenv: opts.Getenv, environ: opts.Environ,
		injectEnv: opts.InjectEnv, skills: opts.SkillGate, logger: opts.Logger}
	if t.cfg == nil {
		t.cfg = config.Default()
	}
	if t.getenv == nil {
		t.getenv = os.Getenv
	}
	if t.environ == nil {
		t.environ = os.Environ
	}
	if t.logger == nil {
		t.logger = slog.New(slog.DiscardHandler)
	}
	switch t.progressEvery = opts.BashProgressEvery; {
	case t.progressEvery == 0:
		t.progressEvery = defaultBashProgressEvery
	case t.progressEvery < 0:
		t.progressEvery = 0
	}
	return t
}

// All returns the seven tools in DeerFlow's order, with the default
// max_results for glob and grep.
func (t *Tools) All() []*tool.Tool {
	return []*tool.Tool{t.Bash(), t.Ls(), t.ReadFile(), t.Glob(0), t.Grep(0), t.WriteFile(), t.StrReplace()}
}

// The tool names.
const (
	NameLs         = "ls"
	NameReadFile   = "read_file"
	NameWriteFile  = "write_file"
	NameStrReplace = "str_replace"
	NameGlob       = "glob"
	NameGrep       = "grep"
	NameBash       = "bash"
)

// newTool builds a tool from its typed handler; the schemas are written
// by hand, so a failure is a programming error.
func newTool[In any](name, description, schema string, h tool.TypedHandler[In, *tool.Result]) *tool.Tool {
	t, err := tool.NewWithSchema(name, strings.TrimSpace(description), json.RawMessage(schema), h)
	if err != nil {
		panic(fmt.Sprintf("sandbox: tool %s: %v", name, err))
	}
	return t
}

// errNoThread is DeerFlow's text when a call has no thread.
const errNoThread = "Thread data not available for local sandbox"

// sandbox acquires the call's sandbox. A call without a thread gets an
// error result; a provider failure (bad ids, disk) is a Go error.
func (t *Tools) sandbox(ctx context.Context, call *tool.Call) (*Sandbox, *tool.Result, error) {
	if call == nil || call.ThreadID == "" {
		return nil, tool.Errorf("%s", errNoThread), nil
	}
	user := call.UserID
	if user == "" {
		user = "default"
	}
	sb, err := t.provider.Acquire(ctx, user, call.ThreadID)
	if err != nil {
		return nil, nil, fmt.Errorf("acquire sandbox: %w", err)
	}
	return sb, nil, nil
}

// pathError is the result for a path vpath refused.
func pathError(err error) *tool.Result {
	var ve *vpath.Error
	if errors.As(err, &ve) {
		return tool.Errorf("%s", ve.Msg)
	}
	return tool.Errorf("%s", err.Error())
}

// skillBlocked returns DeerFlow's error when p is inside a disabled skill.
func (t *Tools) skillBlocked(sb *Sandbox, p string) *tool.Result {
	if t.skills == nil {
		return nil
	}
	if name, off := t.skills.DisabledSkill(sb.user, p); off {
		if name == "" {
			name = "unknown"
		}
		return tool.Errorf("Skill '%s' is disabled. Access to its files is blocked. Enable the skill in settings before using it.", name)
	}
	return nil
}

// hiddenBySkill reports whether a listed virtual path is inside a
// disabled skill.
func (t *Tools) hiddenBySkill(sb *Sandbox, p string) bool {
	if t.skills == nil {
		return false
	}
	_, off := t.skills.DisabledSkill(sb.user, p)
	return off
}

// rewriteContent reports whether file content written by the agent has
// its virtual paths made host paths (and masked back on read), so that
// scripts run by host bash find their files. It is on only when host
// bash is allowed: otherwise nothing on the host reads those files and
// they stay exactly as written.
func (t *Tools) rewriteContent() bool { return t.cfg.IsHostBashAllowed() }

// effectiveMax is DeerFlow's max_results rule: the smaller of the
// requested and the configured value, each defaulting when <= 0 and
// capped at upper.
func effectiveMax(requested *int, configured, def, upper int) int {
	clamp := func(v int) int {
		if v <= 0 {
			return def
		}
		return min(v, upper)
	}
	r := def
	if requested != nil {
		r = clamp(*requested)
	}
	return min(r, clamp(configured))
}
