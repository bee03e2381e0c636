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

// skillTarget is the user and skill one skill_manage call works on.
type skillTarget struct {
	user, name string
	// threadID is the calling thread, nil outside a thread.
	threadID *string
}

// run validates the skill name, serialises the call with others on the
// same user and skill, and runs the action.
func (m *skillManager) run(ctx context.Context, call *tool.Call, in skillManageArgs) (string, error) {
	name, err := skills.ValidateName(in.Name)
	if err != nil {
		return "", valueErr("%s", err)
	}
	unlock := m.store.Lock(call.UserID, name)
	defer unlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	t := skillTarget{user: call.UserID, name: name}
	if call.ThreadID != "" {
		t.threadID = &call.ThreadID
	}
	switch in.Action {
	case "create":
		return m.create(ctx, t, in)
	case "edit":
		return m.edit(ctx, t, in)
	case "patch":
		return m.patch(ctx, t, in)
	case "delete":
		return m.deleteSkill(ctx, t)
	case "write_file":
		return m.writeFile(ctx, t, in)
	case "remove_file":
		return m.removeFile(ctx, t, in)
	}
	if m.store.PublicExists(ctx, name) {
		return "", valueErr("'%s' is a read-only skill (built-in or legacy shared). To customise it, create your own version with the same name.", name)
	}
	return "", valueErr("Unsupported action '%s'.", in.Action)
}

// record returns the history record of an agent's action on file of t,
// stamped with the current time.
func (m *skillManager) record(t skillTarget, action, file string, prev, next *string, scan any) skills.HistoryRecord {
	return skills.HistoryRecord{Action: action, Author: "agent", ThreadID: t.threadID, FilePath: file,
		PrevContent: prev, NewContent: next, Scanner: scan, TS: m.opts.Now().UTC().Format(time.RFC3339)}
}

// deletionDecision is the scanner record of a deletion, which is not
// scanned.
func deletionDecision() skills.Decision {
	return skills.Decision{Decision: skills.DecisionAllow, Reason: "Deletion requested."}
}

// create writes the SKILL.md of a new custom skill.
func (m *skillManager) create(ctx context.Context, t skillTarget, in skillManageArgs) (string, error) {
	if m.store.CustomExists(t.user, t.name) {
		return "", valueErr("Custom skill '%s' already exists.", t.name)
	}
	if in.Content == nil {
		return "", valueErr("content is required for create.")
	}
	scan, err := m.check(ctx, t.name, "", skills.SkillFile, *in.Content)
	if err != nil {
		return "", err
	}
	if err := m.write(t.user, t.name, skills.SkillFile, *in.Content, m.record(t, "create", skills.SkillFile, nil, in.Content, scan)); err != nil {
		return "", err
	}
	return fmt.Sprintf("Created custom skill '%s'.", t.name), nil
}

// edit replaces the SKILL.md of a custom skill.
func (m *skillManager) edit(ctx context.Context, t skillTarget, in skillManageArgs) (string, error) {
	if err := m.store.EnsureEditable(ctx, t.user, t.name); err != nil {
		return "", err
	}
	if in.Content == nil {
		return "", valueErr("content is required for edit.")
	}
	scan, err := m.check(ctx, t.name, "", skills.SkillFile, *in.Content)
	if err != nil {
		return "", err
	}
	prev, err := m.store.ReadCustom(t.user, t.name)
	if err != nil {
		return "", err
	}
	if err := m.write(t.user, t.name, skills.SkillFile, *in.Content, m.record(t, "edit", skills.SkillFile, &prev, in.Content, scan)); err != nil {
		return "", err
	}
	return fmt.Sprintf("Updated custom skill '%s'.", t.name), nil
}

// patch replaces the first occurrence of a text in the SKILL.md of a
// custom skill, or the expected number of them.
func (m *skillManager) patch(ctx context.Context, t skillTarget, in skillManageArgs) (string, error) {
	if err := m.store.EnsureEditable(ctx, t.user, t.name); err != nil {
		return "", err
	}
	if in.Find == nil || in.Replace == nil {
		return "", valueErr("find and replace are required for patch.")
	}
	prev, err := m.store.ReadCustom(t.user, t.name)
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
	scan, err := m.check(ctx, t.name, "", skills.SkillFile, next)
	if err != nil {
		return "", err
	}
	if err := m.write(t.user, t.name, skills.SkillFile, next, m.record(t, "patch", skills.SkillFile, &prev, &next, scan)); err != nil {
		return "", err
	}
	return fmt.Sprintf("Patched custom skill '%s' (%d replacement(s) applied, %d match(es) found).", t.name, n, found), nil
}

// deleteSkill records the deletion of a custom skill and then deletes it.
func (m *skillManager) deleteSkill(ctx context.Context, t skillTarget) (string, error) {
	if err := m.store.EnsureEditable(ctx, t.user, t.name); err != nil {
		return "", err
	}
	if err := m.store.AppendHistory(t.user, t.name, m.record(t, "delete", skills.SkillFile, nil, nil, deletionDecision())); err != nil {
		return "", err
	}
	if err := m.store.DeleteCustom(t.user, t.name); err != nil {
		return "", err
	}
	m.changed(t.user)
	return fmt.Sprintf("Deleted custom skill '%s'.", t.name), nil
}

// writeFile creates or replaces a supporting file of a custom skill.
func (m *skillManager) writeFile(ctx context.Context, t skillTarget, in skillManageArgs) (string, error) {
	if err := m.store.EnsureEditable(ctx, t.user, t.name); err != nil {
		return "", err
	}
	if in.Path == nil || in.Content == nil {
		return "", valueErr("path and content are required for write_file.")
	}
	p := *in.Path
	target, err := m.store.SupportFile(t.user, t.name, p, true)
	if err != nil {
		return "", valueErr("%s", err)
	}
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		return "", valueErr("Supporting file path '%s' is a directory, not a file.", p)
	}
	var prev *string
	if data, err := os.ReadFile(target); err == nil {
		s := string(data)
		prev = &s
	}
	scan, err := m.check(ctx, t.name, m.store.CustomDir(t.user, t.name), p, *in.Content)
	if err != nil {
		return "", err
	}
	if err := m.write(t.user, t.name, p, *in.Content, m.record(t, "write_file", p, prev, in.Content, scan)); err != nil {
		return "", err
	}
	return fmt.Sprintf("Wrote '%s' for custom skill '%s'.", p, t.name), nil
}

// removeFile removes a supporting file of a custom skill and records it.
func (m *skillManager) removeFile(ctx context.Context, t skillTarget, in skillManageArgs) (string, error) {
	if err := m.store.EnsureEditable(ctx, t.user, t.name); err != nil {
		return "", err
	}
	if in.Path == nil {
		return "", valueErr("path is required for remove_file.")
	}
	p := *in.Path
	prev, err := m.store.RemoveCustomFile(t.user, t.name, p)
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
	if err := m.store.AppendHistory(t.user, t.name, m.record(t, "remove_file", p, &prev, nil, deletionDecision())); err != nil {
		return "", err
	}
	m.changed(t.user)
	return fmt.Sprintf("Removed '%s' from custom skill '%s'.", p, t.name), nil
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
