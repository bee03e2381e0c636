package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/tool"
)

// SkillManageName is the name of the skill_manage tool.
const SkillManageName = "skill_manage"

//go:embed skill_manage.md
var skillManageDescription string

// SkillManageOptions configures NewSkillManage.
type SkillManageOptions struct {
	// Store holds the skills; required.
	Store *skills.Store
	// Model is the moderation model (skill_evolution.moderation_model_name,
	// or the default model); nil means the scan is unavailable, which
	// fails closed (see skills.Moderator.Scan).
	Model model.ChatModel
	// SecurityFailOpen is the negation of
	// skill_evolution.security_fail_closed (default false: fail closed).
	SecurityFailOpen bool
	// StaticScanDisabled is the negation of skill_scan.enabled (default
	// false: the static scan runs).
	StaticScanDisabled bool
	// OnChange, if set, is called after a successful write with the user
	// whose skills changed (to refresh cached prompt sections).
	OnChange func(user string)
	// Now returns the time stamped into history records; nil = time.Now.
	Now func() time.Time
	// Logger receives scan warnings; nil discards.
	Logger *slog.Logger
}

type skillManageArgs struct {
	Action        string  `json:"action" jsonschema:"One of create, patch, edit, delete, write_file, remove_file."`
	Name          string  `json:"name" jsonschema:"Skill name in hyphen-case."`
	Content       *string `json:"content,omitempty" jsonschema:"New file content for create, edit, or write_file."`
	Path          *string `json:"path,omitempty" jsonschema:"Supporting file path for write_file or remove_file."`
	Find          *string `json:"find,omitempty" jsonschema:"Existing text to replace for patch."`
	Replace       *string `json:"replace,omitempty" jsonschema:"Replacement text for patch."`
	ExpectedCount *int    `json:"expected_count,omitempty" jsonschema:"Optional expected number of replacements for patch."`
}

// skillManager runs skill_manage calls; it is immutable after
// NewSkillManage.
type skillManager struct {
	store     *skills.Store
	moderator *skills.Moderator
	opts      SkillManageOptions
	logger    *slog.Logger
}

// NewSkillManage returns the skill_manage tool (bound only when
// skill_evolution.enabled): create, edit, patch, delete, write_file and
// remove_file on the calling user's custom skills. Calls for one user and
// skill are serialised; each write is validated, statically scanned
// (a CRITICAL finding blocks before the model is asked), reviewed by the
// moderation model, written atomically and recorded in the skill's JSONL
// history. Failures are DeerFlow's raised-error results ("Error: Tool
// 'skill_manage' failed with ValueError: ...").
//
// NewSkillManage panics if opts.Store is nil (a wiring mistake).
func NewSkillManage(opts SkillManageOptions) *tool.Tool {
	if opts.Store == nil {
		panic("builtin.NewSkillManage: Store is nil")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &skillManager{
		store:     opts.Store,
		moderator: skills.NewModerator(opts.Model, skills.ModeratorOptions{FailOpen: opts.SecurityFailOpen, Logger: logger}),
		opts:      opts,
		logger:    logger,
	}
	return tool.New(SkillManageName, strings.TrimSpace(skillManageDescription), m.handle)
}

// userError is a failure the model can act on, with the Python exception
// class DeerFlow reports it as.
type userError struct {
	kind string
	msg  string
}

func (e *userError) Error() string { return e.msg }

func valueErr(format string, args ...any) error {
	return &userError{kind: "ValueError", msg: fmt.Sprintf(format, args...)}
}

func (m *skillManager) handle(ctx context.Context, call *tool.Call, in skillManageArgs) (*tool.Result, error) {
	msg, err := m.run(ctx, call, in)
	if err == nil {
		return tool.Text(msg), nil
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, err
	}
	var ue *userError
	switch {
	case errors.As(err, &ue):
		return tool.FailureResult(SkillManageName, ue.kind, ue.msg), nil
	case errors.Is(err, skills.ErrNotFound):
		return tool.FailureResult(SkillManageName, "FileNotFoundError", err.Error()), nil
	default:
		var pe *os.PathError
		if errors.As(err, &pe) {
			// Do not show host paths to the model.
			m.logger.Error("skill_manage: file system error", "err", err)
			return tool.FailureResult(SkillManageName, "OSError", pe.Op+": "+pe.Err.Error()), nil
		}
		return tool.FailureResult(SkillManageName, "ValueError", err.Error()), nil
	}
}

func (m *skillManager) run(ctx context.Context, call *tool.Call, in skillManageArgs) (string, error) {
	name, err := skills.ValidateName(in.Name)
	if err != nil {
		return "", valueErr("%s", err)
	}
	user := call.UserID
	unlock := m.store.Lock(user, name)
	defer unlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var threadID *string
	if call.ThreadID != "" {
		threadID = &call.ThreadID
	}
	rec := func(action, file string, prev, next *string, scan any) skills.HistoryRecord {
		return skills.HistoryRecord{Action: action, Author: "agent", ThreadID: threadID, FilePath: file,
			PrevContent: prev, NewContent: next, Scanner: scan, TS: m.opts.Now().UTC().Format(time.RFC3339)}
	}
	deletion := skills.Decision{Decision: skills.DecisionAllow, Reason: "Deletion requested."}
	s := m.store

	switch in.Action {
	case "create":
		if s.CustomExists(user, name) {
			return "", valueErr("Custom skill '%s' already exists.", name)
		}
		if in.Content == nil {
			return "", valueErr("content is required for create.")
		}
		scan, err := m.check(ctx, name, "", skills.SkillFile, *in.Content)
		if err != nil {
			return "", err
		}
		if err := m.write(user, name, skills.SkillFile, *in.Content, rec("create", skills.SkillFile, nil, in.Content, scan)); err != nil {
			return "", err
		}
		return fmt.Sprintf("Created custom skill '%s'.", name), nil

	case "edit":
		if err := s.EnsureEditable(ctx, user, name); err != nil {
			return "", err
		}
		if in.Content == nil {
			return "", valueErr("content is required for edit.")
		}
		scan, err := m.check(ctx, name, "", skills.SkillFile, *in.Content)
		if err != nil {
			return "", err
		}
		prev, err := s.ReadCustom(user, name)
		if err != nil {
			return "", err
		}
		if err := m.write(user, name, skills.SkillFile, *in.Content, rec("edit", skills.SkillFile, &prev, in.Content, scan)); err != nil {
			return "", err
		}
		return fmt.Sprintf("Updated custom skill '%s'.", name), nil

	case "patch":
		if err := s.EnsureEditable(ctx, user, name); err != nil {
			return "", err
		}
		if in.Find == nil || in.Replace == nil {
			return "", valueErr("find and replace are required for patch.")
		}
		prev, err := s.ReadCustom(user, name)
		if err != nil {
			return "", err
		}
		found := 0
		if *in.Find != "" {
			found = strings.Count(prev, *in.Find)
		}
		if found == 0 {
			return "", valueErr("Patch target not found in SKILL.md.")
		}
		if in.ExpectedCount != nil && found != *in.ExpectedCount {
			return "", valueErr("Expected %d replacements but found %d.", *in.ExpectedCount, found)
		}
		n := 1
		if in.ExpectedCount != nil {
			n = *in.ExpectedCount
		}
		next := strings.Replace(prev, *in.Find, *in.Replace, n)
		scan, err := m.check(ctx, name, "", skills.SkillFile, next)
		if err != nil {
			return "", err
		}
		if err := m.write(user, name, skills.SkillFile, next, rec("patch", skills.SkillFile, &prev, &next, scan)); err != nil {
			return "", err
		}
		return fmt.Sprintf("Patched custom skill '%s' (%d replacement(s) applied, %d match(es) found).", name, n, found), nil

	case "delete":
		if err := s.EnsureEditable(ctx, user, name); err != nil {
			return "", err
		}
		if err := s.AppendHistory(user, name, rec("delete", skills.SkillFile, nil, nil, deletion)); err != nil {
			return "", err
		}
		if err := s.DeleteCustom(user, name); err != nil {
			return "", err
		}
		m.changed(user)
		return fmt.Sprintf("Deleted custom skill '%s'.", name), nil

	case "write_file":
		if err := s.EnsureEditable(ctx, user, name); err != nil {
			return "", err
		}
		if in.Path == nil || in.Content == nil {
			return "", valueErr("path and content are required for write_file.")
		}
		p := *in.Path
		target, err := s.SupportFile(user, name, p, true)
		if err != nil {
			return "", valueErr("%s", err)
		}
		if fi, err := os.Stat(target); err == nil && fi.IsDir() {
			return "", valueErr("Supporting file path '%s' is a directory, not a file.", p)
		}
		var prev *string
		if data, err := os.ReadFile(target); err == nil {
			t := string(data)
			prev = &t
		}
		scan, err := m.check(ctx, name, s.CustomDir(user, name), p, *in.Content)
		if err != nil {
			return "", err
		}
		if err := m.write(user, name, p, *in.Content, rec("write_file", p, prev, in.Content, scan)); err != nil {
			return "", err
		}
		return fmt.Sprintf("Wrote '%s' for custom skill '%s'.", p, name), nil

	case "remove_file":
		if err := s.EnsureEditable(ctx, user, name); err != nil {
			return "", err
		}
		if in.Path == nil {
			return "", valueErr("path is required for remove_file.")
		}
		p := *in.Path
		prev, err := s.RemoveCustomFile(user, name, p)
		if err != nil {
			if errors.Is(err, skills.ErrNotFound) {
				return "", err
			}
			var pe *os.PathError
			if errors.As(err, &pe) {
				return "", err
			}
			return "", valueErr("%s", err)
		}
		if err := s.AppendHistory(user, name, rec("remove_file", p, &prev, nil, deletion)); err != nil {
			return "", err
		}
		m.changed(user)
		return fmt.Sprintf("Removed '%s' from custom skill '%s'.", p, name), nil
	}

	if s.PublicExists(ctx, name) {
		return "", valueErr("'%s' is a read-only skill (built-in or legacy shared). To customise it, create your own version with the same name.", name)
	}
	return "", valueErr("Unsupported action '%s'.", in.Action)
}

// check validates SKILL.md content, runs the static scan over the package
// as it would be after the write (dir is the existing package, "" for a
// new one) and then the moderation model. It returns the history's
// scanner record.
func (m *skillManager) check(ctx context.Context, name, dir, file, content string) (skills.Decision, error) {
	if file == skills.SkillFile {
		parsed, err := skills.ValidateContent(content)
		if err != nil {
			return skills.Decision{}, valueErr("%s", err)
		}
		if parsed != name {
			return skills.Decision{}, valueErr("Frontmatter name '%s' must match requested skill name '%s'.", parsed, name)
		}
	}
	var findings []skills.Finding
	if !m.opts.StaticScanDisabled {
		res, err := skills.ScanCandidate(dir, map[string]string{file: content})
		if err != nil {
			return skills.Decision{}, valueErr("Static security scan failed for skill '%s': %v", name, err)
		}
		if blocked := res.Critical(); len(blocked) > 0 {
			payload, _ := json.Marshal(map[string]any{"skill_name": name, "findings": blocked})
			return skills.Decision{}, valueErr("Static security scan blocked skill '%s': %s Findings: %s", name, skills.FormatFindings(blocked), payload)
		}
		if len(res.Errors) > 0 {
			m.logger.Warn("skill_manage: scanner errors", "skill", name, "errors", strings.Join(res.Errors, "; "))
		}
		if len(res.Findings) > 0 {
			m.logger.Warn("skill_manage: static scan warnings", "skill", name, "findings", skills.FormatFindings(res.Findings))
		}
		findings = res.Findings
	}
	executable := strings.Contains(file, "scripts/")
	d, err := m.moderator.Scan(ctx, content, executable, name+"/"+file, findings)
	if err != nil {
		return skills.Decision{}, err
	}
	if d.Decision == skills.DecisionBlock {
		return skills.Decision{}, valueErr("Security scan blocked the write: %s", d.Reason)
	}
	if executable && d.Decision != skills.DecisionAllow {
		return skills.Decision{}, valueErr("Security scan rejected executable content: %s", d.Reason)
	}
	d.StaticFindings = findings
	if d.StaticFindings == nil {
		d.StaticFindings = []skills.Finding{}
	}
	return d, nil
}

func (m *skillManager) write(user, name, file, content string, rec skills.HistoryRecord) error {
	if err := m.store.WriteCustomFile(user, name, file, content); err != nil {
		return err
	}
	if err := m.store.AppendHistory(user, name, rec); err != nil {
		return err
	}
	m.changed(user)
	return nil
}

func (m *skillManager) changed(user string) {
	if m.opts.OnChange != nil {
		m.opts.OnChange(user)
	}
}
